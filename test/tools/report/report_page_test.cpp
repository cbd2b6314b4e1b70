// Every number in the report's tables, read back as a reader sees it and
// compared with the JSON of the same run: the Markdown's tables (parameters,
// memory, the four ranked lists with their scores) and the page's (its
// numbers, the four ranked lists). Scores, which the JSON does not hold, are
// computed again by loops over the table (loop_reference.hpp).

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loop_reference.hpp"
#include "page_tables.hpp"
#include "print_inputs.hpp"
#include "report.hpp"

namespace {

using namespace embed::report::testing_loops;
using embed::report::ReportInputs;
using embed_test::shows_rounded;
using nlohmann::json;

const char* const kLists[] = {"cos_neighbors", "dot_neighbors", "cos_after_stretch", "dot_after_stretch"};

// What list key ranks by and on which table: cosine or dot, before or after the stretch.
struct ListScore {
    bool cosine;
    bool stretched;
};

ListScore score_of(const std::string& list) {
    return {list.rfind("cos", 0) == 0, list.find("after_stretch") != std::string::npos};
}

// The score the loops give id in list key of the run whose table is t.
double loop_score(const Table& t, const Table& stretched, const ReportInputs& in, const std::string& list, Index id) {
    const ListScore score = score_of(list);
    const Table& table = score.stretched ? stretched : t;
    return score.cosine ? loop_cosine(table, in.probe, id) : loop_dot(table, in.probe, id);
}

// A printed score against the loop's, allowing the library's own summation order (1e-12) on top of the
// printing's rounding (half_unit).
testing::AssertionResult near_loop(double shown, double loop, double half_unit) {
    const double allowed = half_unit + 1e-12 * std::max(1.0, std::fabs(loop));
    if (std::fabs(shown - loop) <= allowed) return testing::AssertionSuccess();
    return testing::AssertionFailure() << shown << " is not " << loop << " within " << allowed;
}

class ReportPage : public testing::TestWithParam<ReportInputs> {};

// The number after "`key` = " in a Markdown cell, which must be the key's JSON text.
void expect_keyed(const std::string& cell, const json& j, const std::string& key) {
    EXPECT_EQ(cell, "`" + key + "` = " + j.at(key).dump());
}

TEST_P(ReportPage, MarkdownParameterTableIsTheJsons) {
    const auto r = embed::report::measure(GetParam());
    const json j = json::parse(embed::report::render_json(r));
    const auto tables = embed_test::markdown_tables(embed::report::render_markdown(r));
    ASSERT_EQ(tables.size(), 3u) << "parameters, memory, neighbours";
    const auto& params = tables[0];
    ASSERT_EQ(params.headings.size(), 3u);
    EXPECT_EQ(params.headings[1], "어휘 " + j.at("vocab").dump());
    expect_keyed(params.headings[2].substr(std::string("어휘 ").size()), j, "bigger_vocab");
    ASSERT_EQ(params.rows.size(), 3u);
    expect_keyed(params.rows[0][1], j, "tied_params");
    expect_keyed(params.rows[0][2], j, "bigger_tied");
    expect_keyed(params.rows[1][1], j, "untied_params");
    expect_keyed(params.rows[1][2], j, "bigger_untied");
    expect_keyed(params.rows[2][1], j, "saved");
    EXPECT_EQ(params.rows[2][2],
              std::to_string(j.at("bigger_untied").get<std::int64_t>() - j.at("bigger_tied").get<std::int64_t>()));
}

// "N B" or "N B (x.y UNIT)": N the bytes, x.y the bytes in the largest binary unit they reach, 1 decimal.
void expect_bytes(const std::string& cell, std::int64_t bytes) {
    const std::string plain = std::to_string(bytes) + " B";
    ASSERT_EQ(cell.rfind(plain, 0), 0u) << cell << " should start with " << plain;
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int unit = 0;
    double scaled = static_cast<double>(bytes);
    while (scaled >= 1024.0 && unit < 6) scaled /= 1024.0, ++unit;
    if (unit == 0) {
        EXPECT_EQ(cell, plain);
        return;
    }
    const std::string rest = cell.substr(plain.size());
    const std::string suffix = std::string(" ") + units[unit] + ")";
    ASSERT_EQ(rest.rfind(" (", 0), 0u) << cell;
    ASSERT_GT(rest.size(), suffix.size() + 2) << cell;
    ASSERT_EQ(rest.substr(rest.size() - suffix.size()), suffix) << cell;
    const std::string number = rest.substr(2, rest.size() - 2 - suffix.size());
    ASSERT_EQ(number.size() - number.find('.'), 2u) << cell << ": one decimal";
    EXPECT_LE(std::fabs(std::stod(number) - scaled), 0.05 + 1e-9) << cell;
}

TEST_P(ReportPage, MarkdownMemoryTableIsTheJsonsParametersTimesEachFormatsBytes) {
    const auto r = embed::report::measure(GetParam());
    const json j = json::parse(embed::report::render_json(r));
    const auto tables = embed_test::markdown_tables(embed::report::render_markdown(r));
    ASSERT_EQ(tables.size(), 3u);
    const auto& memory = tables[1];
    const std::vector<std::pair<std::string, std::int64_t>> formats = {{"f32 (4 B)", 4}, {"bf16 (2 B)", 2}, {"f16 (2 B)", 2}};
    ASSERT_EQ(memory.rows.size(), formats.size());
    const char* keys[] = {"tied_params", "untied_params", "bigger_tied", "bigger_untied"};
    for (std::size_t f = 0; f < formats.size(); ++f) {
        ASSERT_EQ(memory.rows[f].size(), 5u);
        EXPECT_EQ(memory.rows[f][0], formats[f].first);
        for (std::size_t c = 0; c < 4; ++c) {
            expect_bytes(memory.rows[f][c + 1], j.at(keys[c]).get<std::int64_t>() * formats[f].second);
        }
    }
}

TEST_P(ReportPage, MarkdownNeighbourScoresAreTheLoopsToSixDecimals) {
    const ReportInputs in = GetParam();
    const auto r = embed::report::measure(in);
    const json j = json::parse(embed::report::render_json(r));
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const Table stretched = loop_stretch(t, j.at("stretch_target").get<Index>(), in.stretch_factor);
    const auto tables = embed_test::markdown_tables(embed::report::render_markdown(r));
    ASSERT_EQ(tables.size(), 3u);
    const auto& ranked = tables[2];
    ASSERT_EQ(ranked.rows.size(), static_cast<std::size_t>(in.k));
    for (std::size_t i = 0; i < ranked.rows.size(); ++i) {
        ASSERT_EQ(ranked.rows[i].size(), 5u);
        EXPECT_EQ(ranked.rows[i][0], std::to_string(i));
        for (std::size_t l = 0; l < 4; ++l) {
            const std::string& cell = ranked.rows[i][l + 1];
            const Index id = j.at(kLists[l]).at(i).get<Index>();
            const std::string shown_id = id == j.at("stretch_target") ? "**" + std::to_string(id) + "**" : std::to_string(id);
            ASSERT_EQ(cell.rfind(shown_id + " (", 0), 0u) << cell;
            const std::string score = cell.substr(shown_id.size() + 2, cell.size() - shown_id.size() - 3);
            ASSERT_EQ(cell.back(), ')') << cell;
            ASSERT_EQ(score.size() - score.find('.'), 7u) << cell << ": 6 decimals";
            EXPECT_TRUE(near_loop(std::stod(score), loop_score(t, stretched, in, kLists[l], id), 0.5e-6))
                << kLists[l] << " row " << i;
        }
    }
}

TEST_P(ReportPage, PageNumbersAreTheJsonsFractionsRoundedWithTheirTextAsTitle) {
    const auto r = embed::report::measure(GetParam());
    const std::string json_text = embed::report::render_json(r);
    const json j = json::parse(json_text);
    const auto numbers = embed_test::html_table(embed::report::render_html(r, json_text, embed::report::render_svg(r)),
                                                "numbers");
    ASSERT_EQ(numbers.rows.size(), j.size());
    std::size_t row = 0;
    const auto in_file_order = nlohmann::ordered_json::parse(json_text);
    for (const auto& [key, value] : in_file_order.items()) {
        const auto& cells = numbers.rows[row++];
        ASSERT_EQ(cells.size(), 2u);
        EXPECT_EQ(cells[0].text, key);
        if (value.is_number_float()) {
            EXPECT_TRUE(shows_rounded(cells[1].text, value.get<double>())) << key;
            if (cells[1].text != value.dump()) {
                EXPECT_EQ(cells[1].attribute("title"), value.dump()) << key;
            }
        } else {
            EXPECT_EQ(cells[1].text, value.dump()) << key;
            EXPECT_FALSE(cells[1].has("title")) << key;
        }
    }
}

// The page's four ranked tables: rank, id (the JSON's list), the text only with token names, and the score,
// rounded for reading, in full in data-value and title, both the loops' value.
void expect_ranked_tables(const embed::report::ReportResult& r, const ReportInputs& in, bool named) {
    const std::string json_text = embed::report::render_json(r);
    const json j = json::parse(json_text);
    const std::string html = embed::report::render_html(r, json_text, embed::report::render_svg(r));
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const Table stretched = loop_stretch(t, j.at("stretch_target").get<Index>(), in.stretch_factor);
    for (const char* list : kLists) {
        const auto table = embed_test::html_table(html, list);
        const std::string score_heading = score_of(list).cosine ? "cosine" : "dot";
        const std::vector<std::string> headings =
            named ? std::vector<std::string>{"rank", "id", "text", score_heading}
                  : std::vector<std::string>{"rank", "id", score_heading};
        ASSERT_EQ(table.headings, headings) << list;
        ASSERT_EQ(table.rows.size(), j.at(list).size()) << list;
        for (std::size_t i = 0; i < table.rows.size(); ++i) {
            const auto& cells = table.rows[i];
            const Index id = j.at(list).at(i).get<Index>();
            EXPECT_EQ(cells.at(0).text, std::to_string(i + 1));
            EXPECT_EQ(cells.at(1).text, std::to_string(id));
            if (named) {
                EXPECT_EQ(cells.at(2).text, j.at("tokens").at(std::to_string(id)).get<std::string>());
            }
            const auto& score = cells.back();
            const double full = embed_test::full_value(score.attribute("data-value"));
            const double loop = loop_score(t, stretched, in, list, id);
            EXPECT_TRUE(near_loop(full, loop, 0.0)) << list << " row " << i;
            EXPECT_TRUE(shows_rounded(score.text, full)) << list << " row " << i;
            if (score.has("title")) {
                EXPECT_EQ(embed_test::full_value(score.attribute("title")), full);
            } else {
                EXPECT_EQ(std::stod(score.text), full) << list << " row " << i << ": rounded without a title";
            }
        }
    }
}

TEST_P(ReportPage, PageRankedTablesShowTheJsonsIdsAndTheLoopsScoresWithoutAnEmptyTextColumn) {
    expect_ranked_tables(embed::report::measure(GetParam()), GetParam(), false);
}

TEST_P(ReportPage, PageRankedTablesHaveATextColumnWithTokenNames) {
    auto r = embed::report::measure(GetParam());
    // Names for every id the lists show, some with markup and a '|', as a vocabulary may hold them.
    for (const auto* list : {&r.cos_neighbors, &r.dot_neighbors, &r.cos_after_stretch, &r.dot_after_stretch}) {
        for (const auto& n : *list) r.tokens[n.id] = "t<" + std::to_string(n.id) + ">|";
    }
    r.tokens[r.inputs.probe] = "probe";
    r.tokens[r.logit_argmax] = "argmax";
    expect_ranked_tables(r, GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Inputs, ReportPage,
                         testing::Values(ReportInputs{}, ReportInputs{300, 24, 7, 11, 7, 2, 3.5, 3},
                                         ReportInputs{2, 1, 0, 0, 1, 0, 4.0, 1},
                                         ReportInputs{50, 8, 5, 49, 3, 1, -2.0, 1},
                                         ReportInputs{64, 3, 1, 5, 63, 10, 0.0, 5}));

}  // namespace
