// parse_command_line() called directly on whole command lines as users type
// them: flags land in the right fields in either spelling, --help and --version
// win anywhere, and every refusal is checked word for word, with the value
// and the allowed range it states.

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli.hpp"
#include "flags.hpp"
#include "fresh_dir.hpp"
#include "tool_run.hpp"

namespace {

namespace fs = std::filesystem;
using embed::report::Command;
using embed::report::FreshDir;
using testing::HasSubstr;

Command parse(const std::vector<std::string>& args) {
    const std::vector<std::string_view> views(args.begin(), args.end());
    return embed::report::parse_command_line(views);
}

// The one line a refused command line gives, or a note that it was accepted.
std::string refusal(const std::vector<std::string>& args) {
    return embed_test::refusal_of([&] { parse(args); });
}

TEST(ReportParse, NoFlagsGiveTheExercisesRunInTheCurrentDirectory) {
    const Command c = parse({});
    EXPECT_EQ(c.action, Command::Action::run);
    EXPECT_EQ(c.out_dir, ".");
    EXPECT_EQ(c.inputs.vocab, 512);
    EXPECT_EQ(c.inputs.dim, 64);
    EXPECT_EQ(c.inputs.seed, 20260917u);
    EXPECT_EQ(c.inputs.probe, 137);
    EXPECT_EQ(c.inputs.k, 5);
    EXPECT_EQ(c.inputs.pick, 4);
    EXPECT_EQ(c.inputs.stretch_factor, 4.0);
    EXPECT_EQ(c.inputs.growth, 2);
}

TEST(ReportParse, AFullLineMixingBothSpellingsSetsEveryField) {
    FreshDir dir;
    const Command c = parse({"--out-dir=" + dir.path().string(), "--vocab", "300", "--dim=24", "--seed",
                             "18446744073709551615", "--probe=11", "--k", "+7", "--pick=2", "--stretch-factor",
                             "3.5", "--growth=+3"});
    EXPECT_EQ(c.action, Command::Action::run);
    EXPECT_EQ(c.out_dir, dir.path().string());
    EXPECT_EQ(c.inputs.vocab, 300);
    EXPECT_EQ(c.inputs.dim, 24);
    EXPECT_EQ(c.inputs.seed, 18446744073709551615ULL);
    EXPECT_EQ(c.inputs.probe, 11);
    EXPECT_EQ(c.inputs.k, 7);
    EXPECT_EQ(c.inputs.pick, 2);
    EXPECT_EQ(c.inputs.stretch_factor, 3.5);
    EXPECT_EQ(c.inputs.growth, 3);
}

TEST(ReportParse, FlagOrderDoesNotMatterForRangesThatDependOnOtherFlags) {
    // --probe 99 and --pick 8 are valid only given --vocab 100 and --k 9, which come after them.
    const Command c = parse({"--probe", "99", "--pick=8", "--k", "9", "--vocab=100"});
    EXPECT_EQ(c.inputs.vocab, 100);
    EXPECT_EQ(c.inputs.probe, 99);
    EXPECT_EQ(c.inputs.k, 9);
    EXPECT_EQ(c.inputs.pick, 8);
}

TEST(ReportParse, EqualsSplitsAtTheFirstEqualsSign) {
    FreshDir dir;
    fs::create_directory(dir / "a=b");
    EXPECT_EQ(parse({"--out-dir=" + (dir / "a=b")}).out_dir, (dir / "a=b"));
}

// Every field of a Command compared, so a flag stored in the wrong field, or dropped, shows.
void expect_same_command(const Command& got, const Command& want, const std::string& line) {
    EXPECT_EQ(got.action, want.action) << line;
    EXPECT_EQ(got.out_dir, want.out_dir) << line;
    EXPECT_EQ(got.table, want.table) << line;
    EXPECT_EQ(got.inputs.vocab, want.inputs.vocab) << line;
    EXPECT_EQ(got.inputs.dim, want.inputs.dim) << line;
    EXPECT_EQ(got.inputs.seed, want.inputs.seed) << line;
    EXPECT_EQ(got.inputs.probe, want.inputs.probe) << line;
    EXPECT_EQ(got.inputs.k, want.inputs.k) << line;
    EXPECT_EQ(got.inputs.pick, want.inputs.pick) << line;
    EXPECT_EQ(got.inputs.stretch_factor, want.inputs.stretch_factor) << line;
    EXPECT_EQ(got.inputs.growth, want.inputs.growth) << line;
    EXPECT_EQ(got.inputs.source.has_value(), want.inputs.source.has_value()) << line;
    EXPECT_EQ(got.tokenizer, want.tokenizer) << line;
    EXPECT_EQ(got.probe_token, want.probe_token) << line;
}

// Each valued flag alone, in both spellings, with a value that is neither its default nor any other
// flag's value: it must land in its own field and leave every other field at its default.
TEST(ReportParse, EachValuedFlagAloneSetsItsOwnFieldAndNoOther) {
    FreshDir dir;
    const std::string out_dir = dir.path().string();
    struct Case {
        std::string value;
        std::function<void(Command&)> expected;  // what the flag changes in the default command
    };
    const std::map<std::string, Case> cases = {
        {"--out-dir", {out_dir, [&](Command& c) { c.out_dir = out_dir; }}},
        {"--table", {"model.safetensors:wte", [](Command& c) { c.table = "model.safetensors:wte"; }}},
        {"--vocab", {"300", [](Command& c) { c.inputs.vocab = 300; }}},
        {"--dim", {"24", [](Command& c) { c.inputs.dim = 24; }}},
        {"--seed", {"18446744073709551615", [](Command& c) { c.inputs.seed = 18446744073709551615ULL; }}},
        {"--probe", {"11", [](Command& c) { c.inputs.probe = 11; }}},
        {"--tokenizer", {"tokenizer.json", [](Command& c) { c.tokenizer = "tokenizer.json"; }}},
        {"--probe-token", {"\u0120king", [](Command& c) { c.probe_token = "\u0120king"; }}},
        {"--k", {"7", [](Command& c) { c.inputs.k = 7; }}},
        {"--pick", {"2", [](Command& c) { c.inputs.pick = 2; }}},
        {"--stretch-factor", {"3.5", [](Command& c) { c.inputs.stretch_factor = 3.5; }}},
        {"--growth", {"3", [](Command& c) { c.inputs.growth = 3; }}},
    };
    const Command defaults = parse({});
    std::size_t valued_flags = 0;
    for (const embed::report::Flag& flag : embed::report::flag_table()) {
        if (flag.metavar.empty()) continue;
        ++valued_flags;
        const std::string name(flag.name);
        const auto found = cases.find(name);
        ASSERT_NE(found, cases.end()) << name << " is a valued flag this test has no case for";
        ASSERT_NE(found->second.value, embed::report::default_text(flag)) << name;
        Command want = defaults;
        found->second.expected(want);
        const std::string& value = found->second.value;
        for (const auto& args : {std::vector<std::string>{name, value}, std::vector<std::string>{name + "=" + value}}) {
            expect_same_command(parse(args), want, args[0]);
        }
    }
    EXPECT_EQ(valued_flags, cases.size()) << "every case names a flag of the table";
}

TEST(ReportParse, HelpAnywhereWinsEvenAfterABadFlagOrValue) {
    EXPECT_EQ(parse({"--help"}).action, Command::Action::help);
    EXPECT_EQ(parse({"-h"}).action, Command::Action::help);
    EXPECT_EQ(parse({"--frobnicate", "--help"}).action, Command::Action::help);
    EXPECT_EQ(parse({"--vocab", "abc", "--help"}).action, Command::Action::help);
    EXPECT_EQ(parse({"--vocab=1", "--probe", "900", "--help", "--k"}).action, Command::Action::help);
    EXPECT_EQ(parse({"--out-dir", "/does/not/exist", "-h"}).action, Command::Action::help);
}

TEST(ReportParse, VersionAnywhereWinsAndTheFirstOfHelpAndVersionIsTaken) {
    EXPECT_EQ(parse({"--seed", "-1", "--version"}).action, Command::Action::version);
    EXPECT_EQ(parse({"--version", "--help"}).action, Command::Action::version);
    EXPECT_EQ(parse({"--vocab=7", "--help", "--version"}).action, Command::Action::help);
}

TEST(ReportParse, HelpAsAnAttachedValueIsAValueNotARequest) {
    EXPECT_EQ(refusal({"--out-dir=--help"}),
              "--out-dir '--help' does not exist (allowed: an existing, writable directory)");
    EXPECT_EQ(refusal({"--help=yes"}), "--help takes no value");
    EXPECT_EQ(refusal({"--version="}), "--version takes no value");
}

TEST(ReportParse, NumbersMayCarryALeadingPlusAsStrtodAndStrtollAllow) {
    const Command c = parse({"--vocab", "+40", "--probe=+3", "--seed", "+5", "--stretch-factor=+2"});
    EXPECT_EQ(c.inputs.vocab, 40);
    EXPECT_EQ(c.inputs.probe, 3);
    EXPECT_EQ(c.inputs.seed, 5u);
    EXPECT_EQ(c.inputs.stretch_factor, 2.0);
    EXPECT_EQ(refusal({"--vocab", "+-40"}), "--vocab '+-40' is not a decimal integer (allowed: at least 2)");
    EXPECT_EQ(refusal({"--vocab", "++40"}), "--vocab '++40' is not a decimal integer (allowed: at least 2)");
    EXPECT_EQ(refusal({"--vocab", "+"}), "--vocab '+' is not a decimal integer (allowed: at least 2)");
}

TEST(ReportParse, StretchFactorAcceptsExponentsNegativesAndZero) {
    EXPECT_EQ(parse({"--stretch-factor", "-2.5e0"}).inputs.stretch_factor, -2.5);
    EXPECT_EQ(parse({"--stretch-factor", "0"}).inputs.stretch_factor, 0.0);
    EXPECT_EQ(parse({"--stretch-factor", ".5"}).inputs.stretch_factor, 0.5);
}

// A decimal below the smallest subnormal is still a finite number; it rounds to
// zero (keeping its sign) exactly as strtod rounds it, and the JSON shows the 0.
TEST(ReportParse, AStretchFactorTooSmallForADoubleRoundsAsStrtodRoundsIt) {
    const double tiny = parse({"--stretch-factor=1e-400"}).inputs.stretch_factor;
    EXPECT_EQ(tiny, 0.0);
    EXPECT_FALSE(std::signbit(tiny));
    const double negative_tiny = parse({"--stretch-factor", "-1e-400"}).inputs.stretch_factor;
    EXPECT_EQ(negative_tiny, 0.0);
    EXPECT_TRUE(std::signbit(negative_tiny));
    EXPECT_EQ(parse({"--stretch-factor", "4.9e-324"}).inputs.stretch_factor,
              std::numeric_limits<double>::denorm_min());
    EXPECT_EQ(parse({"--stretch-factor", "1e-310"}).inputs.stretch_factor, std::strtod("1e-310", nullptr));
}

TEST(ReportParse, AStretchFactorTooLargeForADoubleIsRefusedAsSuch) {
    EXPECT_EQ(refusal({"--stretch-factor", "1e999"}),
              "--stretch-factor 1e999 is past the largest double, about 1.8e308 (allowed: a finite number)");
    EXPECT_EQ(refusal({"--stretch-factor=-1e999"}),
              "--stretch-factor -1e999 is past the largest double, about 1.8e308 (allowed: a finite number)");
    EXPECT_EQ(refusal({"--stretch-factor", "inf"}),
              "--stretch-factor 'inf' is not a finite decimal number (allowed: a finite number)");
    EXPECT_EQ(refusal({"--stretch-factor", "nan"}),
              "--stretch-factor 'nan' is not a finite decimal number (allowed: a finite number)");
    EXPECT_EQ(refusal({"--stretch-factor", "4x"}),
              "--stretch-factor '4x' is not a finite decimal number (allowed: a finite number)");
}

TEST(ReportParse, RangeRefusalsStateTheValueTheRuleAndWhatItMeansForThisLine) {
    EXPECT_EQ(refusal({"--probe", "600"}), "--probe 600 must be in [0, V) = [0, 512)");
    EXPECT_EQ(refusal({"--vocab=100", "--probe", "100"}), "--probe 100 must be in [0, V) = [0, 100)");
    EXPECT_EQ(refusal({"--vocab", "100"}), "--probe 137 must be in [0, V) = [0, 100)");
    EXPECT_EQ(refusal({"--vocab", "40", "--probe=3", "--k", "40"}), "--k 40 must be in [1, V) = [1, 40)");
    EXPECT_EQ(refusal({"--k=3", "--pick", "3"}), "--pick 3 must be in [0, K) = [0, 3)");
    EXPECT_EQ(refusal({"--pick", "3", "--k=3"}), "--pick 3 must be in [0, K) = [0, 3)");
    EXPECT_EQ(refusal({"--k", "2"}), "--pick 4 must be in [0, K) = [0, 2)");
    EXPECT_EQ(refusal({"--vocab", "1", "--probe", "0"}), "--vocab 1 must be at least 2");
    EXPECT_EQ(refusal({"--dim=0"}), "--dim 0 must be at least 1");
    EXPECT_EQ(refusal({"--growth", "-3"}), "--growth -3 must be at least 1");
    EXPECT_EQ(refusal({"--seed", "-1"}), "--seed -1 must be in [0, 2^64), decimal");
    EXPECT_EQ(refusal({"--seed=18446744073709551616"}), "--seed 18446744073709551616 must be in [0, 2^64), decimal");
}

TEST(ReportParse, CrossFlagLimitsNameBothFlagsAndTheirValues) {
    EXPECT_EQ(refusal({"--vocab", "100000", "--dim=100000"}),
              "--vocab 100000 times --dim 100000 is more than the 2^25 = 33554432 entries a generated table may have");
    EXPECT_EQ(refusal({"--vocab", "2", "--probe", "0", "--k", "1", "--pick", "0", "--growth", "9223372036854775807"}),
              "--growth 9223372036854775807 with V = 2 and d = 64 gives parameter or byte counts past 2^63 - 1");
}

TEST(ReportParse, MalformedNumbersAreRefusedWithTheTextAsGiven) {
    EXPECT_EQ(refusal({"--vocab", "9223372036854775808"}),
              "--vocab 9223372036854775808 is outside the 64-bit integer range (allowed: at least 2)");
    EXPECT_EQ(refusal({"--dim", " 5"}), "--dim ' 5' is not a decimal integer (allowed: at least 1)");
    EXPECT_EQ(refusal({"--vocab=5.0"}), "--vocab '5.0' is not a decimal integer (allowed: at least 2)");
    EXPECT_EQ(refusal({"--seed", "0x10"}), "--seed '0x10' is not a decimal integer (allowed: in [0, 2^64), decimal)");
    EXPECT_EQ(refusal({"--seed="}), "--seed '' is not a decimal integer (allowed: in [0, 2^64), decimal)");
    EXPECT_EQ(refusal({"--seed", "12abc"}), "--seed '12abc' is not a decimal integer (allowed: in [0, 2^64), decimal)");
}

TEST(ReportParse, UnknownRepeatedAndValuelessFlagsAreRefused) {
    EXPECT_EQ(refusal({"--vocab", "40", "--frobnicate"}), "unknown argument '--frobnicate' (see --help)");
    EXPECT_EQ(refusal({"--vocab-size=5"}), "unknown argument '--vocab-size=5' (see --help)");
    EXPECT_EQ(refusal({"stray"}), "unknown argument 'stray' (see --help)");
    EXPECT_EQ(refusal({"-k=3"}), "unknown argument '-k=3' (see --help)");
    EXPECT_EQ(refusal({"--k", "3", "--k=4"}), "--k is given more than once");
    EXPECT_EQ(refusal({"--dim", "8", "--probe"}), "--probe is missing its value ID (allowed: in [0, V))");
}

TEST(ReportParse, AnOutDirThatCannotTakeTheFilesIsABadArgument) {
    FreshDir dir;
    const std::string missing = (dir / "missing");
    EXPECT_EQ(refusal({"--vocab", "40", "--probe", "3", "--out-dir", missing}),
              "--out-dir '" + missing + "' does not exist (allowed: an existing, writable directory)");
    std::ofstream(dir / "plain") << "x";
    EXPECT_EQ(refusal({"--out-dir=" + (dir / "plain")}),
              "--out-dir '" + (dir / "plain") + "' is not a directory (allowed: an existing, writable directory)");
    EXPECT_EQ(refusal({"--out-dir="}), "--out-dir '' does not exist (allowed: an existing, writable directory)");
}

// The refusal args get from a process that is not root: root may write into any directory, so as root
// (CI runs so) the parse runs in a forked child that has given up root for nobody (65534) first.
std::string refusal_without_root(const std::vector<std::string>& args) {
    if (::geteuid() != 0) return refusal(args);
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return "(no pipe)";
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(pipe_fds[0]);
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
        const std::string message = refusal(args);
        const bool written = ::write(pipe_fds[1], message.data(), message.size()) ==
                             static_cast<ssize_t>(message.size());
        ::_exit(written ? 0 : 4);
    }
    ::close(pipe_fds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(got));
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return "(the child ended with status " + std::to_string(status) + ")";
    }
    return message;
}

TEST(ReportParse, AnOutDirWithoutWritePermissionIsABadArgument) {
    FreshDir dir;
    // Readable and searchable by everyone, so nobody reaches the locked directory and finds it read-only.
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    const fs::path locked = dir.path() / "locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    EXPECT_EQ(refusal_without_root({"--out-dir", locked.string()}),
              "--out-dir '" + locked.string() +
                  "' is not writable: Permission denied (allowed: an existing, writable directory)");
}

TEST(ReportParse, UsageNamesEveryDefaultAndBothSpellings) {
    const std::string usage = embed::report::usage_text();
    EXPECT_THAT(usage, HasSubstr("(default: 512)"));
    EXPECT_THAT(usage, HasSubstr("(default: 64)"));
    EXPECT_THAT(usage, HasSubstr("(default: 20260917)"));
    EXPECT_THAT(usage, HasSubstr("(default: 137)"));
    EXPECT_THAT(usage, HasSubstr("(default: 4.0)"));
    EXPECT_THAT(usage, HasSubstr("--flag=VALUE"));
    for (const embed::report::Flag& flag : embed::report::flag_table()) {
        EXPECT_THAT(usage, HasSubstr(std::string(flag.name))) << flag.name;
        if (!flag.metavar.empty()) {
            EXPECT_THAT(usage, HasSubstr(std::string(flag.allowed))) << flag.name;
        }
    }
}

}  // namespace

// The probe is named once: by id or by token, never both (which one would win is a guess).
TEST(ReportParse, ProbeAndProbeTokenTogetherAreRefused) {
    EXPECT_EQ(refusal({"--probe", "3", "--probe-token", "king"}),
              "--probe-token and --probe both name the probe: give one");
    EXPECT_EQ(refusal({"--probe-token=king", "--probe=3"}), "--probe-token and --probe both name the probe: give one");
}
