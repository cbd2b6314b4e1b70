// embed_compare: the JSON and the Markdown are two views of one run (every number printed in the Markdown is
// the JSON's), the moved rows are the planted ones with their cosines recomputed here by explicit loops, and
// the built tool exits 0 / 1 / 2 as documented, writing all three files or none.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/io.hpp>
#include <embed/table.hpp>

#include "compare_run.hpp"
#include "numbers.hpp"
#include "tool_run.hpp"
#include "verdict.hpp"

namespace {

using embed::Index;
using embed::Table;
using namespace embed::compare_tool;
using testing::HasSubstr;

class CompareTool : public testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("compare_tool_" + std::to_string(::getpid()) + "_" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        a_ = embed::make_table(60, 6, 1);
        b_ = a_;
        b_.row(7) = embed::make_table(1, 6, 2).row(0);
        b_.row(30) *= -1.0;
        embed::save_table(dir_ / "a.npy", a_);
        embed::save_table(dir_ / "b.npy", b_);
        std::ostringstream vocab;
        vocab << R"({"model": {"type": "WordLevel", "unk_token": "t0", "vocab": {)";
        for (int i = 0; i < 60; ++i) vocab << (i > 0 ? ", " : "") << "\"t" << i << "\": " << i;
        vocab << R"(}}, "added_tokens": [], "decoder": null})";
        embed_test::write_file(dir_ / "tokenizer.json", vocab.str());
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    CompareCommand command() const {
        CompareCommand c;
        c.a = (dir_ / "a.npy").string();
        c.b = (dir_ / "b.npy").string();
        c.a_tokenizer = (dir_ / "tokenizer.json").string();
        c.probes = 12;
        c.k = 4;
        c.out_dir = dir_.string();
        return c;
    }

    std::filesystem::path dir_;
    Table a_;
    Table b_;
};

double loop_cosine(const Table& x, const Table& y, Index row) {
    double dot = 0;
    double xx = 0;
    double yy = 0;
    for (Index c = 0; c < x.cols(); ++c) {
        dot += x(row, c) * y(row, c);
        xx += x(row, c) * x(row, c);
        yy += y(row, c) * y(row, c);
    }
    return dot / std::sqrt(xx * yy);
}

// The cells of the Markdown table row that starts with "| first |".
std::vector<std::string> table_row(const std::string& md, const std::string& first) {
    std::istringstream lines(md);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("| " + first + " |", 0) != 0) continue;
        std::vector<std::string> cells;
        std::istringstream parts(line.substr(1));
        std::string cell;
        while (std::getline(parts, cell, '|')) cells.push_back(cell.substr(1, cell.size() - 2));
        return cells;
    }
    return {};
}

TEST_F(CompareTool, MovedRowsAreThePlantedOnesByText) {
    const CompareRun run = run_compare(command());
    const nlohmann::json j = nlohmann::json::parse(render_compare_json(run));
    ASSERT_EQ(j["moved"].size(), 60U);
    // Row 30 was negated (cosine -1), row 7 replaced; every other row is unchanged (cosine 1).
    EXPECT_EQ(j["moved"][0]["a"], 30);
    EXPECT_EQ(j["moved"][0]["text"], "t30");
    EXPECT_NEAR(j["moved"][0]["row_cosine"].get<double>(), -1.0, 1e-15);
    EXPECT_EQ(j["moved"][1]["a"], 7);
    EXPECT_EQ(j["moved"][1]["text"], "t7");
    EXPECT_NEAR(j["moved"][1]["row_cosine"].get<double>(), loop_cosine(a_, b_, 7), 1e-14);
    EXPECT_NEAR(j["moved"][2]["row_cosine"].get<double>(), 1.0, 1e-14);
    EXPECT_FALSE(j.contains("row_cosine"));
    EXPECT_FALSE(j.contains("pairs"));
    EXPECT_EQ(j["matched"], 60);
    EXPECT_EQ(j["probe_ids"].size(), 12U);
}

TEST_F(CompareTool, EveryMarkdownNumberIsTheJsonsNumber) {
    const CompareRun run = run_compare(command());
    const nlohmann::json j = nlohmann::json::parse(render_compare_json(run));
    const std::string md = render_compare_markdown(run);
    for (const char* measure : {"row_cosine", "norm_a", "norm_b", "relative_change"}) {
        const std::vector<std::string> cells = table_row(md, measure);
        ASSERT_EQ(cells.size(), 6U) << measure;
        const char* levels[] = {"1", "5", "50", "95", "99"};
        for (int i = 0; i < 5; ++i) {
            EXPECT_EQ(cells[static_cast<std::size_t>(i + 1)], number(j["percentiles"][measure][levels[i]].get<double>()))
                << measure << " " << levels[i];
        }
    }
    for (std::size_t rank = 1; rank <= 20; ++rank) {
        const std::vector<std::string> cells = table_row(md, std::to_string(rank));
        ASSERT_EQ(cells.size(), 6U) << rank;
        const nlohmann::json& moved = j["moved"][rank - 1];
        EXPECT_EQ(cells[1], std::to_string(moved["a"].get<Index>()));
        EXPECT_EQ(cells[3], moved["text"].dump());  // the text as a JSON string
        EXPECT_EQ(cells[4], number(moved["row_cosine"].get<double>()));
        EXPECT_EQ(cells[5], number(moved["relative_change"].get<double>()));
    }
    double sum = 0;
    for (const auto& x : j["neighbour_overlap"]) sum += x.get<double>();
    EXPECT_THAT(md, HasSubstr("mean " + number(sum / static_cast<double>(j["neighbour_overlap"].size()))));
    EXPECT_THAT(md, HasSubstr("top-1 agreement " + number(j["top1_agreement"].get<double>())));
    EXPECT_THAT(md, HasSubstr("mean KL divergence " + number(j["kl_divergence"].get<double>())));
    EXPECT_THAT(md, HasSubstr("largest logit difference " + number(j["max_abs_logit_diff"].get<double>())));
    const std::string html = render_compare_html(run);
    EXPECT_THAT(html, HasSubstr("t30"));
    EXPECT_THAT(html, HasSubstr("<svg"));
}

TEST_F(CompareTool, TheToolWritesAllThreeOrNoneAndExitsAsDocumented) {
    const embed_test::ToolRun ok = embed_test::run_tool(EMBED_COMPARE_EXE, dir_,
        {"a.npy", "b.npy", "--align", "orthogonal", "--probes=5", "--k", "3", "--a-tokenizer", "tokenizer.json"});
    ASSERT_EQ(ok.status, 0) << ok.err;
    const std::string before = embed_test::read_file(dir_ / JSON_FILE);
    EXPECT_THAT(before, HasSubstr("\"align\": \"orthogonal\""));
    EXPECT_FALSE(embed_test::read_file(dir_ / MARKDOWN_FILE).empty());
    EXPECT_FALSE(embed_test::read_file(dir_ / HTML_FILE).empty());
    const embed_test::ToolRun bad = embed_test::run_tool(EMBED_COMPARE_EXE, dir_, {"a.npy", "b.npy", "--k", "0"});
    EXPECT_EQ(bad.status, 2);
    EXPECT_THAT(bad.err, HasSubstr("--k 0 must be an integer >= 1"));
    EXPECT_EQ(embed_test::run_tool(EMBED_COMPARE_EXE, dir_, {"a.npy", "b.npy", "--match", "cosine"}).status, 2);
    EXPECT_EQ(embed_test::run_tool(EMBED_COMPARE_EXE, dir_, {"a.npy"}).status, 2);
    // A file the readers refuse is a bad argument, as in every tool on the frame.
    const embed_test::ToolRun missing = embed_test::run_tool(EMBED_COMPARE_EXE, dir_, {"a.npy", "gone.npy"});
    EXPECT_EQ(missing.status, 2);
    EXPECT_THAT(missing.err, HasSubstr("B 'gone.npy' cannot be used"));
    EXPECT_EQ(embed_test::read_file(dir_ / JSON_FILE), before);
}

// A comparison of n pairs with the given measures, by hand: what the verdict reads from it.
embed::TableComparison comparison_of(const std::vector<double>& cosine, const std::vector<double>& change,
                                     const std::vector<double>& norm_a, const std::vector<double>& norm_b) {
    embed::TableComparison c;
    const auto vector_of = [](const std::vector<double>& values) {
        embed::Vector v(static_cast<Index>(values.size()));
        for (std::size_t i = 0; i < values.size(); ++i) v[static_cast<Index>(i)] = values[i];
        return v;
    };
    c.matched = static_cast<Index>(cosine.size());
    c.row_cosine = vector_of(cosine);
    c.relative_change = vector_of(change);
    c.norm_a = vector_of(norm_a);
    c.norm_b = vector_of(norm_b);
    return c;
}

TEST(CompareVerdict, ClassesEachPairByItsThresholdsAndSaysSoInWords) {
    const double nan = std::nan("");
    // identical at the threshold; both rows zero (cosine 0, change NaN) identical; close at cosine 0.99 exactly;
    // moved just below it; a zero row of a alone moved; NaN moved.
    embed::TableComparison c = comparison_of({1.0, 0.0, 0.99, 0.98999, 0.0, nan},
                                             {1e-5, nan, 0.1, 0.1, nan, nan},
                                             {1.0, 0.0, 1.0, 1.0, 0.0, nan},
                                             {1.0, 0.0, 1.0, 1.0, 2.0, 1.0});
    const std::vector<PairChange> expected = {PairChange::identical, PairChange::identical, PairChange::close,
                                              PairChange::moved,     PairChange::moved,     PairChange::moved};
    for (Index p = 0; p < 6; ++p) EXPECT_EQ(change_of(c, p), expected[static_cast<std::size_t>(p)]) << p;
    Verdict v = verdict_of(c);
    EXPECT_EQ(v.summary, "3 of 6 rows moved, the others identical or close");
    EXPECT_EQ(std::vector<Index>({v.identical, v.close, v.moved}), std::vector<Index>({2, 1, 3}));
    c.rotation = Table::Identity(2, 2);
    EXPECT_EQ(verdict_of(c).summary, "3 of 6 rows moved after alignment, the others identical or close");

    EXPECT_EQ(verdict_of(comparison_of({1.0, 1.0}, {0.0, 2e-5}, {1.0, 1.0}, {1.0, 1.0})).summary, "close");
    EXPECT_EQ(verdict_of(comparison_of({1.0, 1.0}, {0.0, 0.0}, {1.0, 1.0}, {1.0, 1.0})).summary, "identical");
    EXPECT_EQ(verdict_of(comparison_of({1.0, 0.5}, {0.0, 0.9}, {1.0, 1.0}, {1.0, 1.0})).summary,
              "1 of 2 rows moved, the others identical");
    EXPECT_EQ(verdict_of(comparison_of({0.999, 0.5}, {0.01, 0.9}, {1.0, 1.0}, {1.0, 1.0})).summary,
              "1 of 2 rows moved, the others close");
    EXPECT_EQ(verdict_of(comparison_of({0.5}, {0.9}, {1.0}, {1.0})).summary, "1 of 1 rows moved");
    embed::TableComparison aligned = comparison_of({1.0}, {0.0}, {1.0}, {1.0});
    aligned.rotation = Table::Identity(2, 2);
    EXPECT_EQ(verdict_of(aligned).summary, "identical after alignment");

    embed::TableComparison widths = comparison_of({1.0}, {0.0}, {1.0}, {1.0});
    widths.row_cosine.reset();
    widths.relative_change.reset();
    EXPECT_EQ(verdict_of(widths).summary, "the tables differ in width");
    EXPECT_EQ(verdict_of(comparison_of({}, {}, {}, {})).summary, "no rows paired");
}

TEST_F(CompareTool, TablesOfDifferentWidthsHaveNoRowVerdict) {
    embed::save_table(dir_ / "narrow.npy", Table(a_.leftCols(4)));
    CompareCommand c = command();
    c.b = (dir_ / "narrow.npy").string();
    const CompareRun run = run_compare(c);
    const nlohmann::json j = nlohmann::json::parse(render_compare_json(run));
    EXPECT_EQ(j["verdict"]["summary"], "the tables differ in width");
    EXPECT_EQ(j["verdict"]["moved"], 0);
    const std::string html = render_compare_html(run);
    EXPECT_THAT(html, HasSubstr("the tables differ in width"));
    EXPECT_THAT(html, testing::Not(HasSubstr("cosine-histogram")));
    EXPECT_THAT(html, HasSubstr("norm-scatter"));
}

// --- the scan's candidates: under-trained rows planted in A, some of them trained in B ---

// Ordinary rows are Gaussian; an under-trained row is a shared tiny start plus noise of 1e-6, as the scan's
// tests plant them (test/api/scan_test.cpp): never moved from where it began.
Table planted_table(Index rows, Index dim, const std::set<Index>& untrained, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::normal_distribution<double> normal;
    std::mt19937_64 start_random(99);  // one start for every table, so A's and B's planted rows agree
    Table t(rows, dim);
    std::vector<double> start(static_cast<std::size_t>(dim));
    for (double& x : start) x = 0.01 * normal(start_random);
    for (Index i = 0; i < rows; ++i) {
        for (Index c = 0; c < dim; ++c) {
            t(i, c) = untrained.contains(i) ? start[static_cast<std::size_t>(c)] + 1e-6 * normal(random)
                                            : normal(random);
        }
    }
    return t;
}

// The scatter's circles: each one's classes and its rows (data-a, data-b; -1 when absent).
struct Circle {
    std::set<std::string> classes;
    Index a = -1;
    Index b = -1;
};

std::string attribute(const std::string& tag, const std::string& name) {
    const std::string key = " " + name + "=\"";
    const std::size_t at = tag.find(key);
    if (at == std::string::npos) return {};
    const std::size_t start = at + key.size();
    return tag.substr(start, tag.find('"', start) - start);
}

std::vector<Circle> scatter_circles(const std::string& html) {
    const std::size_t svg = html.find("id=\"norm-scatter\"");
    EXPECT_NE(svg, std::string::npos);
    const std::size_t end = html.find("</svg>", svg);
    std::vector<Circle> circles;
    for (std::size_t at = html.find("<circle", svg); at < end; at = html.find("<circle", at + 1)) {
        const std::string tag = html.substr(at, html.find("/>", at) - at);
        Circle circle;
        std::istringstream classes(attribute(tag, "class"));
        for (std::string name; classes >> name;) circle.classes.insert(name);
        if (const std::string a = attribute(tag, "data-a"); !a.empty()) circle.a = std::stoll(a);
        if (const std::string b = attribute(tag, "data-b"); !b.empty()) circle.b = std::stoll(b);
        circles.push_back(std::move(circle));
    }
    return circles;
}

// The rows (data-a or data-b) of the circles of class name, each as often as it is drawn.
std::multiset<Index> marked(const std::vector<Circle>& circles, const std::string& name, bool side_a) {
    std::multiset<Index> rows;
    for (const Circle& circle : circles) {
        if (circle.classes.contains(name)) rows.insert(side_a ? circle.a : circle.b);
    }
    return rows;
}

std::vector<Index> sorted_ids(const nlohmann::json& ids) {
    std::vector<Index> out = ids.get<std::vector<Index>>();
    std::sort(out.begin(), out.end());
    return out;
}

// A has 298 rows, 6 of them never trained: 3 reserved tokens (the scan's reference rows) and 3 others. B is A
// fine-tuned: 2 of those 3 trained, and 2 tokens added (rows 298 and 299) still at their start. Both scans pick
// floor(0.02 * (V - 1)) + 1 = 6 candidates (numpy's linear percentile), which are then exactly the planted rows.
class CompareScan : public testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("compare_scan_" + std::to_string(::getpid()) + "_" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        const std::set<Index> reserved = {290, 291, 292};
        std::set<Index> untrained_a = reserved;
        untrained_a.insert({10, 50, 200});
        std::set<Index> untrained_b = reserved;
        untrained_b.insert({200, 298, 299});
        embed::save_table(dir_ / "a.npy", planted_table(298, 16, untrained_a, 1));
        Table b = planted_table(300, 16, untrained_b, 2);
        const Table a = embed::load_table(dir_ / "a.npy");
        for (Index i = 0; i < 298; ++i) {  // B keeps A's rows but the trained ones (10, 50)
            if (i != 10 && i != 50) b.row(i) = a.row(i);
        }
        embed::save_table(dir_ / "b.npy", b);
        std::ostringstream vocab;
        vocab << R"({"model": {"type": "WordLevel", "unk_token": "t0", "vocab": {)";
        for (Index i = 0; i < 300; ++i) {
            vocab << (i > 0 ? ", " : "") << (reserved.contains(i) ? "\"<reserved_" : "\"t") << i
                  << (reserved.contains(i) ? ">" : "") << "\": " << i;
        }
        vocab << R"(}}, "added_tokens": [)";
        for (const Index id : reserved) {
            vocab << (id > 290 ? ", " : "") << R"({"id": )" << id << R"(, "content": "<reserved_)" << id
                  << R"(>", "special": true})";
        }
        vocab << R"(], "decoder": null})";
        // Not beside the tables, which would make it their own token names.
        std::filesystem::create_directories(dir_ / "names");
        embed_test::write_file(dir_ / "names" / "tokenizer.json", vocab.str());
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    CompareCommand command(bool named) const {
        CompareCommand c;
        c.a = (dir_ / "a.npy").string();
        c.b = (dir_ / "b.npy").string();
        if (named) {
            c.a_tokenizer = (dir_ / "names" / "tokenizer.json").string();
            c.b_tokenizer = c.a_tokenizer;
        }
        c.probes = 10;
        c.k = 3;
        c.out_dir = dir_.string();
        return c;
    }

    std::filesystem::path dir_;
};

TEST_F(CompareScan, CandidatesAreThePlantedRowsAndTheScatterMarksExactlyThem) {
    for (const bool named : {true, false}) {
        SCOPED_TRACE(named ? "with token names" : "without token names");
        const CompareRun run = run_compare(command(named));
        const nlohmann::json j = nlohmann::json::parse(render_compare_json(run));
        const nlohmann::json& a = j["scan"]["a"];
        const nlohmann::json& b = j["scan"]["b"];
        // With token names the reserved tokens are the reference rows; without, the lowest input norms decide.
        EXPECT_EQ(a["main_indicator"], named ? "output_distance" : "input_norm");
        EXPECT_EQ(a["reference_count"], named ? 3 : 0);
        EXPECT_EQ(b["reference_from"], named ? "unused tokens" : "none");
        EXPECT_EQ(sorted_ids(a["candidates"]), (std::vector<Index>{10, 50, 200, 290, 291, 292}));
        EXPECT_EQ(sorted_ids(b["candidates"]), (std::vector<Index>{200, 290, 291, 292, 298, 299}));
        // A's candidates are all paired (by id); the two trained moved. B's added rows have no pair in A.
        EXPECT_EQ(a["paired"], 6);
        EXPECT_EQ(a["moved"], (std::vector<Index>{10, 50}));
        EXPECT_EQ(b["paired"], 4);
        EXPECT_EQ(b["moved"], std::vector<Index>{});
        const std::string md = render_compare_markdown(run);
        EXPECT_THAT(md, HasSubstr("- A: 6 candidates"));
        EXPECT_THAT(md, HasSubstr("; 6 paired, 2 of them moved: 10 50\n"));
        EXPECT_THAT(md, HasSubstr("- B: 6 candidates"));
        EXPECT_THAT(md, HasSubstr("; 4 paired, 0 of them moved\n"));
        // The page: one circle per pair, A's candidates ringed by their a-row, B's by their b-row, and the moved
        // rows (the two trained ones) still marked as moved, each once.
        const std::vector<Circle> circles = scatter_circles(render_compare_html(run));
        EXPECT_EQ(circles.size(), 298U);
        EXPECT_EQ(marked(circles, "candidate-a", true), (std::multiset<Index>{10, 50, 200, 290, 291, 292}));
        EXPECT_EQ(marked(circles, "candidate-b", false), (std::multiset<Index>{200, 290, 291, 292}));
        EXPECT_EQ(marked(circles, "moved", true), (std::multiset<Index>{10, 50}));
    }
}

TEST_F(CompareScan, ATableOfOneRowIsScannedToo) {
    // The library defines the scan for any size: one row is its own 2nd percentile, so it is the one candidate.
    embed::save_table(dir_ / "one.npy", Table(embed::make_table(1, 16, 3)));
    CompareCommand c = command(false);
    c.a = c.b = (dir_ / "one.npy").string();
    const nlohmann::json j = nlohmann::json::parse(render_compare_json(run_compare(c)));
    EXPECT_EQ(j["scan"]["a"]["candidates"], std::vector<Index>{0});
    EXPECT_EQ(j["scan"]["a"]["moved"], std::vector<Index>{});
}

}  // namespace
