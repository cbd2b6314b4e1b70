// The README's flag table and synopsis against the flag table in the code, so
// the two cannot drift apart: a flag added, renamed or re-ranged in one place
// and not the other fails here.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli.hpp"
#include "flags.hpp"

namespace {

std::string readme() {
    std::ifstream in(EMBED_SOURCE_DIR "/README.md");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The README rows of the report's flag table: every line that starts "| `--".
std::vector<std::string> readme_flag_rows(const std::string& text) {
    std::vector<std::string> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("| `--", 0) == 0) rows.push_back(line);
    }
    return rows;
}

// "| `--probe ID` | token to measure | in [0, V) | `137` |", as the README writes a row.
std::string row_for(const embed::report::Flag& flag) {
    return "| `" + std::string(flag.name) + " " + std::string(flag.metavar) + "` | " + std::string(flag.meaning) +
           " | " + std::string(flag.allowed) + " | `" + embed::report::default_text(flag) + "` |";
}

TEST(ReportReadme, FlagTableListsEveryValuedFlagOfTheCodeWithItsRuleAndDefault) {
    const std::string text = readme();
    ASSERT_FALSE(text.empty()) << "cannot read " EMBED_SOURCE_DIR "/README.md";
    std::vector<std::string> expected;
    for (const embed::report::Flag& flag : embed::report::flag_table()) {
        if (!flag.metavar.empty()) expected.push_back(row_for(flag));
    }
    EXPECT_EQ(readme_flag_rows(text), expected);
}

TEST(ReportReadme, SynopsisIsTheUsageTextsOwn) {
    EXPECT_THAT(readme(), testing::HasSubstr("```\n" + embed::report::usage_synopsis() + "```\n"));
}

}  // namespace
