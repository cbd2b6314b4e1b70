// The Markdown and the SVG: structure, and that every number they share with
// the JSON is the JSON's own value.

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_in_markdown.hpp"
#include "print_inputs.hpp"
#include "report.hpp"

namespace {

using embed::Index;
using embed::report::ReportInputs;
using nlohmann::json;

}  // namespace

namespace {
using testing::HasSubstr;

std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix) {
    std::vector<std::string> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) found.push_back(line);
    }
    return found;
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

class ReportText : public testing::TestWithParam<ReportInputs> {};

TEST_P(ReportText, MarkdownHasTheFiveSpecifiedSectionsInOrder) {
    const std::string md = embed::report::render_markdown(embed::report::measure(GetParam()));
    EXPECT_EQ(lines_starting_with(md, "# ").size(), 1u);
    EXPECT_EQ(md.rfind("# ", 0), 0u) << "the title is the first line";
    EXPECT_THAT(lines_starting_with(md, "## "),
                testing::ElementsAre("## 무엇을 쟀나", "## 조회와 원-핫 곱은 같은 연산이다",
                                     "## 가중치를 묶으면 무엇이 줄어드나", "## 내적과 코사인이 갈리는 자리",
                                     "## √d 를 곱하면 무엇이 달라지나"));
}

TEST_P(ReportText, MarkdownShowsEveryJsonValueWithTheJsonsText) {
    const auto result = embed::report::measure(GetParam());
    const json j = json::parse(embed::report::render_json(result));
    const std::string md = embed::report::render_markdown(result);
    ASSERT_EQ(j.size(), 30u);
    for (const auto& [key, value] : j.items()) {
        EXPECT_THAT(md, HasSubstr(embed::report::testing_markdown::shown_in_markdown(key, value))) << key;
    }
}

TEST_P(ReportText, MarkdownNeighbourTableRowsFollowTheJsonLists) {
    const auto result = embed::report::measure(GetParam());
    const json j = json::parse(embed::report::render_json(result));
    const std::string md = embed::report::render_markdown(result);
    const auto rows = lines_starting_with(md, "| ");
    // j.at, not j[]: a missing or short list must fail here instead of making the loop check nothing.
    ASSERT_EQ(j.at("cos_neighbors").size(), static_cast<std::size_t>(GetParam().k));
    for (std::size_t i = 0; i < j.at("cos_neighbors").size(); ++i) {
        // Row i of the side-by-side table starts "| i | <cos id> (" (the stretched id is bold).
        const auto cell = [&](const char* key) {
            const std::string id = j[key][i].dump();
            return j[key][i] == j["stretch_target"] ? "**" + id + "**" : id;
        };
        const std::string row = "| " + std::to_string(i) + " | " + cell("cos_neighbors") + " (";
        const auto found = std::find_if(rows.begin(), rows.end(), [&](const std::string& r) { return r.rfind(row, 0) == 0; });
        ASSERT_NE(found, rows.end()) << row;
        EXPECT_THAT(*found, HasSubstr("| " + cell("dot_neighbors") + " ("));
        EXPECT_THAT(*found, HasSubstr("| " + cell("cos_after_stretch") + " ("));
        EXPECT_THAT(*found, HasSubstr("| " + cell("dot_after_stretch") + " ("));
    }
}

TEST_P(ReportText, MarkdownShowsMemoryAtThreeFormatsAndReferencesTheFigure) {
    const auto r = embed::report::measure(GetParam());
    const std::string md = embed::report::render_markdown(r);
    for (const char* name : {"f32", "bf16", "f16"}) EXPECT_THAT(md, HasSubstr(std::string("| ") + name + " ("));
    const Index fp32_untied = 2 * r.inputs.vocab * r.inputs.dim * 4;
    EXPECT_THAT(md, HasSubstr(std::to_string(fp32_untied) + " B"));
    EXPECT_THAT(md, HasSubstr("](embed_report.svg)"));
}

TEST_P(ReportText, SvgDrawsEveryOtherTokenTwiceAndMarksTheStretchedOne) {
    const auto r = embed::report::measure(GetParam());
    const std::string svg = embed::report::render_svg(r);
    EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
    EXPECT_THAT(svg, testing::EndsWith("</svg>\n"));
    EXPECT_EQ(count(svg, "r=\"2.2\""), 2 * static_cast<std::size_t>(r.inputs.vocab - 1));
    EXPECT_EQ(count(svg, ">token " + std::to_string(r.stretch_target) + "</text>"), 2u);
    EXPECT_THAT(svg, HasSubstr("cosine to probe " + std::to_string(r.inputs.probe)));
    EXPECT_THAT(svg, HasSubstr("dot product with probe " + std::to_string(r.inputs.probe)));
    EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
    EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Inputs, ReportText,
                         testing::Values(ReportInputs{}, ReportInputs{300, 24, 7, 11, 7, 2, 3.5, 3},
                                         ReportInputs{2, 1, 0, 0, 1, 0, 4.0, 1},
                                         ReportInputs{50, 8, 5, 49, 3, 1, -2.0, 1}));

TEST(ReportText, SqrtDSectionSaysWhenANarrowFormatRounds) {
    const std::string exact = embed::report::render_markdown(embed::report::measure(ReportInputs{}));
    EXPECT_EQ(count(exact, "(정확히 표현된다)"), 2u);
    const std::string rounded = embed::report::render_markdown(embed::report::measure({20, 10, 1, 0, 2, 0, 2.0, 2}));
    EXPECT_THAT(rounded, HasSubstr("bf16 으로 저장하면 3.15625 (상대 오차"));
    EXPECT_THAT(rounded, HasSubstr("fp16 으로 저장하면 3.162109375 (상대 오차"));
}

// Sum of the data-n counts of the density cells between two offsets of the SVG.
Index cell_tokens(const std::string& svg, std::size_t from, std::size_t to) {
    Index total = 0;
    const std::string key = "data-n=\"";
    for (auto at = svg.find(key, from); at < to; at = svg.find(key, at + 1)) {
        total += std::stoll(svg.substr(at + key.size()));
    }
    return total;
}

// Past 5000 other tokens the dots give way to density cells; the size must then
// stop growing with V while every other token is still counted in each panel.
TEST(ReportText, SvgOfALargeVocabularyCountsEveryTokenInCellsAndStaysSmall) {
    const ReportInputs in{200000, 2, 3, 17, 5, 2, 4.0, 2};
    const auto r = embed::report::measure(in);
    const std::string svg = embed::report::render_svg(r);
    EXPECT_LT(svg.size(), 5u << 20);
    EXPECT_LT(svg.size(), 300u << 10) << "a fixed grid, not one element per token";
    EXPECT_EQ(count(svg, "r=\"2.2\""), 0u) << "no dot per token";
    // The two panels' groups of cells, in order: each holds all V - 1 other tokens.
    const std::size_t first = svg.find("<g fill=\"#4d535b\">");
    const std::size_t second = svg.find("<g fill=\"#4d535b\">", first + 1);
    ASSERT_NE(second, std::string::npos);
    EXPECT_EQ(cell_tokens(svg, first, second), in.vocab - 1);
    EXPECT_EQ(cell_tokens(svg, second, svg.size()), in.vocab - 1);
    EXPECT_THAT(svg, HasSubstr("Grey cells hold the 199999 tokens other than probe 17"));
    // The points that carry the story are still drawn one by one: k cosine circles and k dot
    // squares per panel (plus one of each in the legend), and the stretched row in both panels.
    EXPECT_EQ(count(svg, "r=\"6\" fill=\"none\""), 2u * 5 + 1);
    EXPECT_EQ(count(svg, "width=\"9\" height=\"9\" fill=\"none\""), 2u * 5 + 1);
    EXPECT_EQ(count(svg, ">token " + std::to_string(r.stretch_target) + "</text>"), 2u);
    EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
    EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
}

TEST(ReportText, SvgSwitchesFromDotsToCellsJustPast5000OtherTokens) {
    const std::string at_limit = embed::report::render_svg(embed::report::measure({5001, 2, 1, 0, 3, 0, 2.0, 1}));
    EXPECT_EQ(count(at_limit, "r=\"2.2\""), 2u * 5000);
    EXPECT_EQ(count(at_limit, "data-n="), 0u);
    const std::string past = embed::report::render_svg(embed::report::measure({5002, 2, 1, 0, 3, 0, 2.0, 1}));
    EXPECT_EQ(count(past, "r=\"2.2\""), 0u);
    EXPECT_GT(count(past, "data-n="), 0u);
}

// With k in the thousands the marks would grow with k; each list marks its first 100 and says so.
TEST(ReportText, SvgMarksTheFirst100OfAVeryLongTopK) {
    const ReportInputs in{20000, 2, 5, 3, 15000, 120, 3.0, 1};
    const auto r = embed::report::measure(in);
    const std::string svg = embed::report::render_svg(r);
    EXPECT_LT(svg.size(), 300u << 10);
    EXPECT_EQ(count(svg, "r=\"6\" fill=\"none\""), 2u * 100 + 1);
    EXPECT_EQ(count(svg, "width=\"9\" height=\"9\" fill=\"none\""), 2u * 100 + 1);
    EXPECT_THAT(svg, HasSubstr("Circles and squares mark the first 100 of each top 15000"));
    EXPECT_EQ(count(svg, ">token " + std::to_string(r.stretch_target) + "</text>"), 2u)
        << "the stretched row (120th cosine neighbour, past the first 100) is still drawn";
}

}  // namespace
