// The shared command-line frame (tools/common/command_line.hpp) on a made-up
// tool with what no tool of today has: two positional arguments (as
// embed_compare A B will), a required flag and a switch. Every refusal is
// checked word for word; the usage text against the table it is made from.

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "command_line.hpp"
#include "tool_run.hpp"

namespace {

using embed::tools::Request;
using testing::HasSubstr;

struct Options {
    std::string first;
    std::string second;
    std::int64_t count = 3;
    double factor = 0.5;
    std::optional<std::string> name;
    bool quiet = false;
    bool finished = false;
};

using Row = embed::tools::Argument<Options>;

// A count must be positive: the kind of check a row's parse makes.
void parse_count(Options& options, const Row& flag, std::string_view value) {
    options.count = embed::tools::integer_argument(flag, value);
    if (options.count < 1) throw std::invalid_argument(std::string(flag.name) + " " + std::string(value) + " must be " +
                                                       std::string(flag.allowed));
}

const embed::tools::CommandLine<Options>& toy() {
    static const embed::tools::CommandLine<Options> line{
        "toy",
        "1.2.3",
        "Compares A with B.\n",
        "A note after the options.\n",
        {
            {{"", "A", "the first table", "a .npy file", ""},
             [](Options& o, const Row&, std::string_view v) { o.first = std::string(v); }},
            {{"", "B", "the second table", "a .npy file", ""},
             [](Options& o, const Row&, std::string_view v) { o.second = std::string(v); }},
            {{"--name", "TEXT", "what to call it", "any text", "", true},
             [](Options& o, const Row&, std::string_view v) { o.name = std::string(v); }},
            {{"--count", "N", "how many", "at least 1", "3"}, parse_count},
            {{"--factor", "F", "how much", "a finite number", "0.5"},
             [](Options& o, const Row& flag, std::string_view v) { o.factor = embed::tools::number_argument(flag, v); }},
            {{"--quiet", "", "say less", "", ""}, [](Options& o, const Row&, std::string_view) { o.quiet = true; }},
        },
        [](Options& o, const std::set<std::string_view>& given) {
            o.finished = true;
            if (o.first == o.second) throw std::invalid_argument("A and B are the same file '" + o.first + "'");
            if (given.contains("--quiet") && o.count > 5) throw std::invalid_argument("--quiet allows --count up to 5");
        }};
    return line;
}

Options parse(const std::vector<std::string>& args, Request expected = Request::run) {
    const std::vector<std::string_view> views(args.begin(), args.end());
    Options options;
    EXPECT_EQ(embed::tools::parse_command_line(toy(), std::span<const std::string_view>(views), options), expected);
    return options;
}

std::string refusal(const std::vector<std::string>& args) {
    return embed_test::refusal_of([&] { parse(args); });
}

TEST(CommandLine, PositionalArgumentsAndFlagsInEitherSpellingAndAnyOrder) {
    const Options o = parse({"--count", "4", "a.npy", "--name=x=y", "b.npy", "--factor=-2.5e0", "--quiet"});
    EXPECT_EQ(o.first, "a.npy");
    EXPECT_EQ(o.second, "b.npy");
    EXPECT_EQ(o.count, 4);
    EXPECT_EQ(o.name, "x=y") << "split at the first '='";
    EXPECT_EQ(o.factor, -2.5);
    EXPECT_TRUE(o.quiet);
    EXPECT_TRUE(o.finished);
    const Options defaults = parse({"a.npy", "b.npy", "--name", "n"});
    EXPECT_EQ(defaults.count, 3);
    EXPECT_EQ(defaults.factor, 0.5);
    EXPECT_FALSE(defaults.quiet);
}

TEST(CommandLine, HelpAndVersionWinAnywhereTheFirstOfThem) {
    EXPECT_FALSE(parse({"--count", "x", "--bogus", "--help"}, Request::help).finished);
    parse({"-h"}, Request::help);
    parse({"a.npy", "--version", "--help"}, Request::version);
    parse({"--help", "--version"}, Request::help);
    EXPECT_EQ(refusal({"--help=yes"}), "--help takes no value");
    EXPECT_EQ(refusal({"--version="}), "--version takes no value");
}

TEST(CommandLine, EveryRefusalIsOneLineNamingTheArgumentTheValueAndWhatIsAllowed) {
    EXPECT_EQ(refusal({"a.npy", "b.npy"}), "--name TEXT is required: what to call it (allowed: any text)");
    EXPECT_EQ(refusal({"--name", "n", "a.npy"}), "B is required: the second table (allowed: a .npy file)");
    EXPECT_EQ(refusal({"--name", "n"}), "A is required: the first table (allowed: a .npy file)");
    EXPECT_EQ(refusal({"--name", "n", "a", "b", "c"}), "unexpected argument 'c': only A B are taken (see --help)");
    EXPECT_EQ(refusal({"--name", "n", "a", "b", "--bogus=1"}), "unknown argument '--bogus=1' (see --help)");
    EXPECT_EQ(refusal({"a", "b", "--name"}), "--name is missing its value TEXT (allowed: any text)");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--name=m"}), "--name is given more than once");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--quiet=yes"}), "--quiet takes no value");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--count", "0"}), "--count 0 must be at least 1");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--count", "2.5"}),
              "--count '2.5' is not a decimal integer (allowed: at least 1)");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--count=99999999999999999999"}),
              "--count 99999999999999999999 is outside the 64-bit integer range (allowed: at least 1)");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--factor", "nan"}),
              "--factor 'nan' is not a finite decimal number (allowed: a finite number)");
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--factor", "1e999"}),
              "--factor 1e999 is past the largest double, about 1.8e308 (allowed: a finite number)");
    EXPECT_EQ(refusal({"a", "a", "--name", "n"}), "A and B are the same file 'a'") << "the tool's own check runs last";
    EXPECT_EQ(refusal({"a", "b", "--name", "n", "--quiet", "--count", "6"}), "--quiet allows --count up to 5");
}

// A lone "-" is a value by habit (standard input), so it is a positional argument, not a flag.
TEST(CommandLine, ALoneDashIsAPositionalArgument) {
    const Options o = parse({"-", "b.npy", "--name", "n"});
    EXPECT_EQ(o.first, "-");
}

TEST(CommandLine, UsageIsMadeFromTheTable) {
    const std::string usage = embed::tools::usage_text(toy());
    EXPECT_THAT(usage, testing::StartsWith("usage: toy A B --name TEXT [--count N] [--factor F] [--quiet] [--help] "
                                           "[--version]\n\nCompares A with B.\n"));
    // The column is two past the widest left part, "  --name TEXT" (13 characters): 15.
    EXPECT_THAT(usage, HasSubstr("  A            the first table,\n"
                                 "               a .npy file (required)\n"));
    EXPECT_THAT(usage, HasSubstr("  --count N    how many,\n"
                                 "               at least 1 (default: 3)\n"));
    EXPECT_THAT(usage, HasSubstr("  --quiet      say less\n"));
    EXPECT_THAT(usage, HasSubstr("  -h, --help   print this text and exit\n"));
    EXPECT_THAT(usage, HasSubstr("\nA note after the options.\n"));
    EXPECT_THAT(usage, HasSubstr("exit status: 0 "));
}

TEST(CommandLine, ASynopsisWrapsBefore90ColumnsUnderTheProgramName) {
    const embed::tools::ArgumentText long_flag{"--a-rather-long-flag-name", "SOME_LONG_VALUE", "m", "x", "1"};
    const std::vector<const embed::tools::ArgumentText*> rows(4, &long_flag);
    const std::string synopsis = embed::tools::usage_synopsis("prog", rows);
    std::size_t start = 0;
    for (std::size_t end; (end = synopsis.find('\n', start)) != std::string::npos; start = end + 1) {
        EXPECT_LE(end - start, 90u) << synopsis;
        if (start > 0) {
            EXPECT_EQ(synopsis.substr(start, 6), "     [") << synopsis;
        }
    }
}

TEST(CommandLine, AReasonIsShownOnOneLine) {
    EXPECT_EQ(embed::tools::one_line("a\nb\r\nc"), "a b  c");
}

}  // namespace
