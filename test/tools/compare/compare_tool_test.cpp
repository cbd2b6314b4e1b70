// embed_compare: the JSON and the Markdown are two views of one run (every number printed in the Markdown is
// the JSON's), the moved rows are the planted ones with their cosines recomputed here by explicit loops, and
// the built tool exits 0 / 1 / 2 as documented, writing all three files or none.

#include <cmath>
#include <filesystem>
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

}  // namespace
