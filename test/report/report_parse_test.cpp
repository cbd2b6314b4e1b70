// parse_command_line() called directly: flags land in the right fields, and
// refusals name the flag, the value and what was allowed.

#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli.hpp"

namespace {

using embed::report::Command;
using testing::HasSubstr;

Command parse(std::vector<std::string_view> args) { return embed::report::parse_command_line(args); }

TEST(ReportParse, NoFlagsGiveTheContractsRunInTheCurrentDirectory) {
    const Command c = parse({});
    EXPECT_EQ(c.action, Command::Action::run);
    EXPECT_EQ(c.out_dir, ".");
    EXPECT_EQ(c.inputs.vocab, 512);
    EXPECT_EQ(c.inputs.probe, 137);
    EXPECT_EQ(c.inputs.pick, 4);
}

TEST(ReportParse, EveryFlagSetsItsOwnField) {
    const Command c = parse({"--out-dir", "x", "--vocab", "300", "--dim", "24", "--seed", "18446744073709551615",
                             "--probe", "11", "--k", "7", "--pick", "2", "--stretch-factor", "3.5", "--growth", "3"});
    EXPECT_EQ(c.out_dir, "x");
    EXPECT_EQ(c.inputs.vocab, 300);
    EXPECT_EQ(c.inputs.dim, 24);
    EXPECT_EQ(c.inputs.seed, 18446744073709551615ULL);
    EXPECT_EQ(c.inputs.probe, 11);
    EXPECT_EQ(c.inputs.k, 7);
    EXPECT_EQ(c.inputs.pick, 2);
    EXPECT_EQ(c.inputs.stretch_factor, 3.5);
    EXPECT_EQ(c.inputs.growth, 3);
}

TEST(ReportParse, HelpAndVersionWinWithoutValidatingTheRest) {
    EXPECT_EQ(parse({"--help"}).action, Command::Action::help);
    EXPECT_EQ(parse({"--version"}).action, Command::Action::version);
}

TEST(ReportParse, StretchFactorAcceptsExponentsAndNegatives) {
    EXPECT_EQ(parse({"--stretch-factor", "-2.5e0"}).inputs.stretch_factor, -2.5);
    EXPECT_EQ(parse({"--stretch-factor", "0"}).inputs.stretch_factor, 0.0);
}

TEST(ReportParse, RefusalsNameFlagValueAndRange) {
    EXPECT_THAT([] { parse({"--probe", "600"}); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("--probe 600 is outside the vocabulary [0, 512)")));
    EXPECT_THAT([] { parse({"--vocab", "9223372036854775808"}); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("--vocab 9223372036854775808 is out of range")));
    EXPECT_THAT([] { parse({"--dim", " 5"}); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("--dim ' 5' is not a decimal integer")));
    EXPECT_THAT([] { parse({"--seed", "+5"}); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("--seed '+5' is not a decimal integer")));
}

TEST(ReportParse, UsageNamesEveryDefault) {
    const std::string usage = embed::report::usage_text();
    EXPECT_THAT(usage, HasSubstr("(default: 512)"));
    EXPECT_THAT(usage, HasSubstr("(default: 64)"));
    EXPECT_THAT(usage, HasSubstr("(default: 20260917)"));
    EXPECT_THAT(usage, HasSubstr("(default: 137)"));
    EXPECT_THAT(usage, HasSubstr("(default: 4.0)"));
}

}  // namespace
