// The built embed_scan on quantised GGUF models: scanned in their blocks, never widened, its JSON equals key by
// key the JSON of the same run on the model's widened F32 copy (test/tools/common/quantised_model.hpp), apart
// from the two keys that name the source and its precision: source.file and source.precision.

#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/table.hpp>

#include "quantised_model.hpp"
#include "tool_run.hpp"

namespace {

using embed::Index;
using embed::Table;
using Json = nlohmann::ordered_json;

const std::set<std::string> kNamingTheSource = {"source.file", "source.precision"};

// (rows, dim): make_table's rows, the last `planted` of them one start plus noise too small for the blocks to
// keep (rows that never moved), so the scan has candidates to find.
Table planted_table(Index rows, Index dim, Index planted, std::uint64_t seed) {
    Table t = embed::make_table(rows, dim, seed);
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<double> noise(-1e-6, 1e-6);
    for (Index r = rows - planted; r < rows; ++r) {
        for (Index c = 0; c < dim; ++c) t(r, c) = 0.01 * static_cast<double>(c % 7) + noise(random);
    }
    return t;
}

// embed_scan --table FILE in a fresh directory under dir, its JSON parsed.
Json scan_json(const embed_test::TempDir& dir, const std::filesystem::path& file, const std::string& run) {
    const std::filesystem::path out = dir.path() / run;
    std::filesystem::create_directory(out);
    const embed_test::ToolRun ran = embed_test::run_tool(EMBED_SCAN_EXE, out, {"--table", file.string()});
    EXPECT_EQ(ran.status, 0) << ran.err;
    return Json::parse(embed_test::read_file(out / "embed_scan.json"));
}

// A Q4_K embedding beside a Q6_K output (llama.cpp's Q4_K_M pair), its unused tokens the reference rows.
TEST(ScanQuantised, AQ4KEmbeddingBesideAQ6KOutputScansAsItsWidenedCopy) {
    const embed_test::TempDir dir;
    const std::set<std::int64_t> unused = {290, 291, 292, 293, 294};
    const embed_test::QuantisedModel model = embed_test::write_quantised_model(
        dir, "model",
        {{"token_embd.weight", embed::ElementType::q4_k, planted_table(300, 256, 12, 1)},
         {"output.weight", embed::ElementType::q6_k, planted_table(300, 256, 12, 2)}},
        300, unused);
    const Json got = scan_json(dir, model.quantised, "blocks");
    const Json want = scan_json(dir, model.widened, "widened");
    EXPECT_EQ(got.at("source").at("precision"), "q4_k/q6_k");
    EXPECT_EQ(want.at("source").at("precision"), "f32");
    EXPECT_EQ(got.at("source").at("file"), model.quantised.string());
    EXPECT_EQ(want.at("source").at("output_tensor"), "output.weight");
    EXPECT_EQ(want.at("reference_ids"), Json(std::vector<Index>(unused.begin(), unused.end())));
    ASSERT_FALSE(want.at("output_distance").is_null());
    ASSERT_FALSE(want.at("input_output_cosine").is_null());
    ASSERT_FALSE(want.at("candidates").empty());
    embed_test::expect_same_json_apart_from(got, want, kNamingTheSource);
}

// One Q8_0 table serving as input and output (tied): the same, without the cosine.
TEST(ScanQuantised, ATiedQ80TableScansAsItsWidenedCopy) {
    const embed_test::TempDir dir;
    const embed_test::QuantisedModel model = embed_test::write_quantised_model(
        dir, "tied", {{"token_embd.weight", embed::ElementType::q8_0, planted_table(260, 64, 8, 3)}}, 260,
        {250, 251, 252});
    const Json got = scan_json(dir, model.quantised, "blocks");
    const Json want = scan_json(dir, model.widened, "widened");
    EXPECT_EQ(got.at("source").at("precision"), "q8_0");
    EXPECT_EQ(want.at("tied"), true);
    ASSERT_FALSE(want.at("output_distance").is_null());
    embed_test::expect_same_json_apart_from(got, want, kNamingTheSource);
}

// A quantised embedding beside a float32 output cannot be scanned in one stored type without widening: both
// are read as float32, and the run is the widened copy's.
TEST(ScanQuantised, AQuantisedEmbeddingBesideAFloat32OutputIsWidenedWithIt) {
    const embed_test::TempDir dir;
    const embed_test::QuantisedModel model = embed_test::write_quantised_model(
        dir, "mixed",
        {{"token_embd.weight", embed::ElementType::q4_k, planted_table(200, 256, 6, 4)},
         {"output.weight", embed::ElementType::f32, planted_table(200, 256, 6, 5)}},
        200, {195, 196});
    const Json got = scan_json(dir, model.quantised, "mixed");
    const Json want = scan_json(dir, model.widened, "widened");
    EXPECT_EQ(got.at("source").at("precision"), "f32");
    ASSERT_FALSE(want.at("input_output_cosine").is_null());
    embed_test::expect_same_json_apart_from(got, want, kNamingTheSource);
}

}  // namespace
