// Every number embed_scan prints, read back from its Markdown and its page and
// compared with the JSON of the same run: each cell of the candidates' and
// the reference rows' tables (6 significant digits, the full value in the
// cell's data-value and title), the page's numbers, and the histogram (its
// bins, the candidates' colour, the threshold line, the NaN count) parsed from
// the SVG. NaN and infinities, which the JSON holds as null, are told apart by
// loops over the table the test wrote: they must read "NaN", "+inf", "-inf".

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "file_bytes.hpp"
#include "page_tables.hpp"
#include "tool_run.hpp"

namespace {

namespace fs = std::filesystem;
using embed_test::HtmlTable;
using embed_test::read_file;
using embed_test::shows_rounded;
using nlohmann::json;
using testing::HasSubstr;
using testing::Not;
using Index = std::int64_t;
using Rows = std::vector<std::vector<double>>;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A table of V rows: ordinary rows spread out by a small generator, rows from first_planted on a common start
// plus noise a thousand times smaller (never moved), then the planted non-finite entries.
Rows planted_table(int rows, int dim, int first_planted, std::uint32_t seed) {
    std::uint32_t state = seed;
    const auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / 16777216.0 * 2.0 - 1.0;
    };
    std::vector<double> start(static_cast<std::size_t>(dim));
    for (double& x : start) x = 0.02 * next();
    Rows table(static_cast<std::size_t>(rows), std::vector<double>(static_cast<std::size_t>(dim)));
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < dim; ++c) {
            const auto i = static_cast<std::size_t>(c);
            table[static_cast<std::size_t>(r)][i] = r >= first_planted ? start[i] + 1e-5 * next() : next();
        }
    }
    return table;
}

// pieces as one string, built by appending: GCC 12 warns wrongly (-Wrestrict) about "x" + std::to_string.
std::string joined(std::initializer_list<std::string> pieces) {
    std::string text;
    for (const std::string& piece : pieces) text += piece;
    return text;
}

std::string f64_bytes(const Rows& table) {
    std::string bytes;
    for (const auto& row : table) {
        const std::size_t at = bytes.size();
        bytes.resize(at + row.size() * sizeof(double));
        std::memcpy(bytes.data() + at, row.data(), row.size() * sizeof(double));
    }
    return bytes;
}

// A row's L2 norm by a plain loop: +inf for a row holding an infinity, NaN for one holding NaN.
double loop_norm(const std::vector<double>& row) {
    double sum = 0.0;
    for (const double x : row) sum += x * x;
    return std::sqrt(sum);
}

// A planted untied model: input and output tables in model.safetensors (float64) and a tokenizer.json beside
// it whose texts hold '|', markup and a quote, so the Markdown's and the page's escaping are read back too.
struct Model {
    Rows input;
    Rows output;
};

constexpr int kRows = 48, kDim = 5, kFirstPlanted = 40;

Model write_model(const fs::path& dir) {
    Model model{planted_table(kRows, kDim, kFirstPlanted, 11), planted_table(kRows, kDim, kFirstPlanted, 12)};
    model.input[45][2] = kInf;  // a reference row whose input norm is +inf
    model.output[46][0] = kNaN;  // a reference row left out of the mean: NaN distance
    model.input[3][1] = -kInf;
    const std::string input = f64_bytes(model.input);
    const std::string output = f64_bytes(model.output);
    const std::string shape = joined({"[", std::to_string(kRows), ",", std::to_string(kDim), "]"});
    const std::string header = R"({"model.embed_tokens.weight":{"dtype":"F64","shape":)" + shape +
                               R"(,"data_offsets":[0,)" + std::to_string(input.size()) +
                               R"(]},"lm_head.weight":{"dtype":"F64","shape":)" + shape + R"(,"data_offsets":[)" +
                               std::to_string(input.size()) + "," + std::to_string(input.size() + output.size()) +
                               "]}}";
    embed_test::write_file(dir / "model.safetensors", embed_test::safetensors_file(header, input + output));
    json vocab = json::object();
    for (int id = 0; id < kRows; ++id) {
        std::string token = joined({"w", std::to_string(id)});
        if (id % 3 == 0) token += "|pipe";
        if (id % 5 == 0) token += "<b>\"";
        vocab[token] = id;
    }
    const json tokenizer = {{"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "w0"}}}};
    embed_test::write_file(dir / "tokenizer.json", tokenizer.dump());
    return model;
}

// One finished run: its three files, and per row the loops' norms (to tell a null's NaN from its infinity).
struct ScanFiles {
    json scan;
    std::string markdown;
    std::string html;
    std::vector<double> input_norm;
    std::vector<double> output_norm;

    std::vector<Index> ids(const char* key) const { return scan.at(key).get<std::vector<Index>>(); }
};

ScanFiles run_scan(const fs::path& dir, const std::vector<std::string>& args, const Rows& input, const Rows& output) {
    const embed_test::ToolRun tool = embed_test::run_tool(EMBED_SCAN_EXE, dir, args);
    EXPECT_EQ(tool.status, 0) << tool.err;
    ScanFiles run{json::parse(read_file(dir / "embed_scan.json")), read_file(dir / "embed_scan.md"),
            read_file(dir / "embed_scan.html"), {}, {}};
    for (const auto& row : input) run.input_norm.push_back(loop_norm(row));
    for (const auto& row : output) run.output_norm.push_back(loop_norm(row));
    return run;
}

// The value a table must show for indicator key at row id: the JSON's number, or for its null what the loops
// say (a norm's +inf or NaN; the distance and the cosine of a row holding NaN or an infinity are NaN).
double expected_value(const ScanFiles& run, const std::string& key, Index id) {
    const json& value = run.scan.at(key).at(static_cast<std::size_t>(id));
    if (!value.is_null()) return value.get<double>();
    if (key == "input_norm") return run.input_norm[static_cast<std::size_t>(id)];
    if (key == "output_norm") return run.output_norm[static_cast<std::size_t>(id)];
    return kNaN;
}

// The indicators the run has, the main one first: the Markdown's and the page's numeric columns.
std::vector<std::string> indicators(const json& scan, bool main_first) {
    std::vector<std::string> keys;
    if (main_first) keys.push_back(scan.at("main_indicator"));
    for (const char* key : {"input_norm", "output_norm", "output_distance", "input_output_cosine"}) {
        if (!scan.at(key).is_null() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    return keys;
}

bool same_number(double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b; }

// A numeric cell of the page: its text rounded from value, its data-value value in full, and a title in full
// whenever the text alone does not read back as the value.
void expect_number_cell(const embed_test::HtmlCell& cell, double value, const std::string& where) {
    EXPECT_TRUE(shows_rounded(cell.text, value)) << where;
    ASSERT_TRUE(cell.has("data-value")) << where;
    EXPECT_TRUE(same_number(embed_test::full_value(cell.attribute("data-value")), value))
        << where << ": data-value " << cell.attribute("data-value") << ", the JSON " << value;
    if (cell.has("title")) {
        EXPECT_TRUE(same_number(embed_test::full_value(cell.attribute("title")), value)) << where;
    } else {
        EXPECT_TRUE(same_number(embed_test::full_value(cell.text), value)) << where << ": rounded without a title";
    }
}

void expect_markdown_matches(const ScanFiles& run) {
    const auto tables = embed_test::markdown_tables(run.markdown);
    ASSERT_EQ(tables.size(), 1u) << run.markdown;
    const auto& table = tables[0];
    const bool named = run.scan.contains("tokens");
    std::vector<std::string> headings = {"rank", "id"};
    if (named) headings.push_back("token");
    const auto numeric = indicators(run.scan, true);
    headings.insert(headings.end(), numeric.begin(), numeric.end());
    EXPECT_EQ(table.headings, headings) << "each indicator once, the main one first";
    const auto candidates = run.ids("candidates");
    ASSERT_EQ(table.rows.size(), std::min<std::size_t>(candidates.size(), 500));
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const auto& cells = table.rows[r];
        ASSERT_EQ(cells.size(), headings.size()) << "row " << r;
        const Index id = candidates[r];
        EXPECT_EQ(cells[0], std::to_string(r + 1));
        EXPECT_EQ(cells[1], std::to_string(id));
        std::size_t c = 2;
        if (named) {
            EXPECT_EQ(cells[c++], run.scan["tokens"][std::to_string(id)].dump()) << "row " << r;
        }
        for (const auto& key : numeric) {
            EXPECT_TRUE(shows_rounded(cells[c++], expected_value(run, key, id))) << "row " << r << ", " << key;
        }
    }
}

void expect_page_table_matches(const ScanFiles& run, const std::string& table_id, const std::vector<Index>& ids) {
    const HtmlTable table = embed_test::html_table(run.html, table_id);
    const bool named = run.scan.contains("tokens");
    std::vector<std::string> headings = {"id"};
    if (named) headings.push_back("token");
    const auto numeric = indicators(run.scan, false);
    headings.insert(headings.end(), numeric.begin(), numeric.end());
    EXPECT_EQ(table.headings, headings) << table_id << ": no empty column";
    ASSERT_EQ(table.rows.size(), ids.size()) << table_id;
    for (std::size_t r = 0; r < ids.size(); ++r) {
        const auto& cells = table.rows[r];
        ASSERT_EQ(cells.size(), headings.size());
        const std::string where = table_id + " row " + std::to_string(r);
        EXPECT_EQ(cells[0].text, std::to_string(ids[r])) << where;
        expect_number_cell(cells[0], static_cast<double>(ids[r]), where + " id");
        std::size_t c = 1;
        if (named) {
            EXPECT_EQ(cells[c++].text, run.scan["tokens"][std::to_string(ids[r])].get<std::string>()) << where;
        }
        for (const auto& key : numeric) expect_number_cell(cells[c++], expected_value(run, key, ids[r]), where + " " + key);
    }
}

// What a null threshold stands for, from the documented rule that the candidates are the rows at or below
// it: +inf when there are candidates (no number is above it), NaN when there are none.
double threshold_if_null(const ScanFiles& run) { return run.scan.at("candidates").empty() ? kNaN : kInf; }

// The page's numbers section against the JSON: its scalars rounded with the full value as title, null (no
// finite value) as the loops or the rule say.
void expect_page_numbers_match(const ScanFiles& run) {
    const HtmlTable table = embed_test::html_table(run.html, "numbers");
    std::map<std::string, embed_test::HtmlCell> shown;
    for (const auto& row : table.rows) {
        ASSERT_EQ(row.size(), 2u);
        shown[row[0].text] = row[1];
    }
    for (const char* key : {"vocab", "dim", "output_dim"}) EXPECT_EQ(shown.at(key).text, run.scan[key].dump()) << key;
    const auto number = [&](const std::string& name, const json& value, double if_null) {
        const double expected = value.is_null() ? if_null : value.get<double>();
        const embed_test::HtmlCell& cell = shown.at(name);
        EXPECT_TRUE(shows_rounded(cell.text, expected)) << name;
        if (cell.has("title")) {
            EXPECT_TRUE(same_number(embed_test::full_value(cell.attribute("title")), expected)) << name;
        } else {
            EXPECT_TRUE(same_number(embed_test::full_value(cell.text), expected)) << name << ": rounded without a title";
        }
    };
    number("percentile", run.scan["percentile"], kNaN);
    number("threshold", run.scan["threshold"], threshold_if_null(run));
    if (!run.scan["principal_component"].is_null()) {
        for (const char* key : {"eigenvalue", "gap", "error_bound"}) {
            number(std::string("principal_component.") + key, run.scan["principal_component"][key], kNaN);
        }
    }
    EXPECT_EQ(shown.at("candidates").text, std::to_string(run.scan["candidates"].size()) + " rows");
}

// The histogram's geometry (histogram.hpp): a 760 x 300 canvas, the plot from x 60 to 740 and y 36 to 252.
constexpr double kPlotLeft = 60, kPlotWidth = 680, kPlotBottom = 252, kPlotHeight = 216;
constexpr int kBins = 60;

double attribute_number(const std::string& element, const std::string& name) {
    std::smatch found;
    if (!std::regex_search(element, found, std::regex(" " + name + "=\"([^\"]*)\""))) return kNaN;
    return std::stod(found[1]);
}

// The main indicator's finite values in 60 equal bins from the smallest to the largest, split into the
// candidates (by the JSON's list) and the others, against the rects the SVG draws.
void expect_histogram_matches(const ScanFiles& run) {
    const std::size_t from = run.html.find("<svg");
    ASSERT_NE(from, std::string::npos);
    const std::string svg = run.html.substr(from, run.html.find("</svg>", from) - from);
    const json& values = run.scan.at(run.scan.at("main_indicator").get<std::string>());
    const auto candidates = run.ids("candidates");
    const std::set<Index> candidate_set(candidates.begin(), candidates.end());
    double low = kInf, high = -kInf;
    std::size_t not_finite = 0;
    for (const auto& value : values) {
        if (value.is_null()) {
            ++not_finite;
            continue;
        }
        low = std::min(low, value.get<double>());
        high = std::max(high, value.get<double>());
    }
    const double span = high > low ? high - low : 1.0;
    std::vector<long long> wanted[2] = {std::vector<long long>(kBins, 0), std::vector<long long>(kBins, 0)};
    for (std::size_t id = 0; id < values.size(); ++id) {
        if (values[id].is_null()) continue;
        const int bin = std::clamp(static_cast<int>((values[id].get<double>() - low) / span * kBins), 0, kBins - 1);
        ++wanted[candidate_set.count(static_cast<Index>(id)) ? 0 : 1][static_cast<std::size_t>(bin)];
    }
    long long tallest = 1;
    for (int b = 0; b < kBins; ++b) tallest = std::max(tallest, wanted[0][static_cast<std::size_t>(b)] + wanted[1][static_cast<std::size_t>(b)]);

    std::vector<long long> drawn[2] = {std::vector<long long>(kBins, 0), std::vector<long long>(kBins, 0)};
    const std::regex rect_pattern(R"re(<rect class="(candidates|others)"[^>]*/>)re");
    for (std::sregex_iterator it(svg.begin(), svg.end(), rect_pattern), end; it != end; ++it) {
        const std::string rect = (*it)[0];
        const bool candidate = (*it)[1] == "candidates";
        const int bin = static_cast<int>(attribute_number(rect, "data-bin"));
        const auto n = static_cast<long long>(attribute_number(rect, "data-n"));
        ASSERT_TRUE(bin >= 0 && bin < kBins) << rect;
        drawn[candidate ? 0 : 1][static_cast<std::size_t>(bin)] = n;
        EXPECT_THAT(rect, HasSubstr(candidate ? "fill=\"#c0392b\"" : "fill=\"#8a9bb0\"")) << "candidates in red";
        EXPECT_NEAR(attribute_number(rect, "x"), kPlotLeft + bin * kPlotWidth / kBins, 0.006) << rect;
        EXPECT_NEAR(attribute_number(rect, "height"), static_cast<double>(n) / static_cast<double>(tallest) * kPlotHeight,
                    0.006)
            << rect;
        // The candidates' part stands on the axis, the others' on top of it.
        const double below = candidate ? 0.0 : static_cast<double>(wanted[0][static_cast<std::size_t>(bin)]) /
                                                    static_cast<double>(tallest) * kPlotHeight;
        EXPECT_NEAR(attribute_number(rect, "y") + attribute_number(rect, "height"), kPlotBottom - below, 0.012) << rect;
    }
    EXPECT_EQ(drawn[0], wanted[0]) << "candidates per bin";
    EXPECT_EQ(drawn[1], wanted[1]) << "other rows per bin";
    EXPECT_THAT(svg, HasSubstr(joined({"; ", std::to_string(not_finite), " NaN or infinite not drawn)"})));
    EXPECT_EQ(svg.find("no finite value to draw") != std::string::npos, not_finite == values.size());

    std::smatch line;
    const bool has_line = std::regex_search(svg, line, std::regex(R"(<line class="threshold"[^>]*/>)"));
    const json& threshold = run.scan.at("threshold");
    ASSERT_EQ(has_line, threshold.is_number()) << "a threshold line exactly when the threshold is finite";
    if (has_line) {
        const double x = std::clamp(kPlotLeft + (threshold.get<double>() - low) / span * kPlotWidth, kPlotLeft,
                                    kPlotLeft + kPlotWidth);
        EXPECT_NEAR(attribute_number(line[0], "x1"), x, 0.006);
        EXPECT_NEAR(attribute_number(line[0], "x2"), x, 0.006);
    }
}

void expect_every_printed_number_matches(const ScanFiles& run) {
    expect_markdown_matches(run);
    expect_page_table_matches(run, "candidates", run.ids("candidates"));
    if (!run.scan["reference_ids"].empty()) expect_page_table_matches(run, "references", run.ids("reference_ids"));
    expect_page_numbers_match(run);
    expect_histogram_matches(run);
}

TEST(ScanOutputs, WithReferenceRowsEveryPrintedNumberIsTheJsons) {
    embed_test::TempDir dir;
    const Model model = write_model(dir.path());
    const ScanFiles run = run_scan(dir.path(), {"--table", "model.safetensors", "--reference-ids", "44-47", "--percentile", "30"},
                             model.input, model.output);
    ASSERT_EQ(run.scan["main_indicator"], "output_distance");
    ASSERT_TRUE(run.scan["input_output_cosine"].is_array()) << "untied: all four indicators";
    ASSERT_TRUE(run.scan["output_distance"][46].is_null()) << "the NaN row";
    ASSERT_TRUE(run.scan["input_norm"][45].is_null()) << "the +inf row";
    expect_every_printed_number_matches(run);
    const HtmlTable references = embed_test::html_table(run.html, "references");
    EXPECT_EQ(references.rows[1][references.column("input_norm")].text, "+inf") << "row 45";
    EXPECT_EQ(references.rows[2][references.column("output_distance")].text, "NaN") << "row 46";
}

// Ranked by input_norm (no reference rows) at percentile 100: every row but the NaN one is a candidate, the
// +inf row last, and the threshold is +inf (null in the JSON).
TEST(ScanOutputs, RankedByInputNormTheColumnIsShownOnceAndInfinitiesReadAsSuch) {
    embed_test::TempDir dir;
    Model model = write_model(dir.path());
    const ScanFiles run = run_scan(dir.path(), {"--table", "model.safetensors", "--reference-ids", "none", "--percentile", "100"},
                             model.input, model.output);
    ASSERT_EQ(run.scan["main_indicator"], "input_norm");
    ASSERT_TRUE(run.scan["threshold"].is_null());
    expect_every_printed_number_matches(run);
    const auto tables = embed_test::markdown_tables(run.markdown);
    ASSERT_EQ(tables.size(), 1u);
    EXPECT_EQ(std::count(tables[0].headings.begin(), tables[0].headings.end(), "input_norm"), 1);
    EXPECT_THAT(run.markdown, HasSubstr("| +inf |"));
    EXPECT_THAT(run.html, HasSubstr("<td>+inf</td>")) << "the threshold";
    EXPECT_THAT(run.html, Not(HasSubstr(">inf<")));
}

// A .npy without names, each row +inf or NaN: no finite value to draw, every row counted as not drawn, no
// token column anywhere.
TEST(ScanOutputs, ATableWithNoFiniteValueDrawsNoBarAndSaysSo) {
    embed_test::TempDir dir;
    const Rows table = {{kInf, 1.0}, {kNaN, 0.0}, {1.0, -kInf}, {kNaN, kNaN}, {kInf, kNaN}};
    embed_test::write_file(dir.path() / "t.npy",
                           embed_test::npy_file("<f8", false, "(5, 2)", f64_bytes(table)));
    const ScanFiles run = run_scan(dir.path(), {"--table", "t.npy", "--reference-ids", "none"}, table, table);
    ASSERT_FALSE(run.scan.contains("tokens"));
    expect_every_printed_number_matches(run);
    EXPECT_THAT(run.html, Not(HasSubstr("<rect class=")));
    EXPECT_THAT(run.html, HasSubstr("; 5 NaN or infinite not drawn)"));
}

}  // namespace
