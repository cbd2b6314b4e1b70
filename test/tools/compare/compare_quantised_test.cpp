// The built embed_compare on quantised GGUF tables: compared in their blocks, never widened, its JSON equals key
// by key the JSON of the same run on the tables' widened F32 copies (test/tools/common/quantised_model.hpp),
// apart from the two keys that name the sources: a.file and b.file (the JSON names no precision).

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/table.hpp>

#include "quantised_model.hpp"
#include "tool_run.hpp"

namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kNamingTheSource = {"a.file", "b.file"};

// embed_compare A B with flags in a fresh directory under dir, its JSON parsed.
Json compare_json(const embed_test::TempDir& dir, const std::string& run, const std::filesystem::path& a,
                  const std::filesystem::path& b, const std::vector<std::string>& flags) {
    const std::filesystem::path out = dir.path() / run;
    std::filesystem::create_directory(out);
    std::vector<std::string> args = {a.string(), b.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const embed_test::ToolRun ran = embed_test::run_tool(EMBED_COMPARE_EXE, out, args);
    EXPECT_EQ(ran.status, 0) << ran.err;
    return Json::parse(embed_test::read_file(out / "embed_compare.json"));
}

// A Q4_K table against a Q6_K one of nearby values (fewer rows), aligned, by id and by text.
TEST(CompareQuantised, QuantisedTablesCompareAsTheirWidenedCopies) {
    const embed_test::TempDir dir;
    const embed::Table base = embed::make_table(300, 256, 21);
    const embed::Table moved = base.topRows(280) + 0.05 * embed::make_table(280, 256, 22);
    const embed_test::QuantisedModel a =
        embed_test::write_quantised_model(dir, "a", {{"token_embd.weight", embed::ElementType::q4_k, base}}, 300, {});
    const embed_test::QuantisedModel b =
        embed_test::write_quantised_model(dir, "b", {{"token_embd.weight", embed::ElementType::q6_k, moved}}, 280, {});
    for (const std::vector<std::string>& flags :
         {std::vector<std::string>{"--align", "orthogonal", "--probes", "40", "--k", "7"},
          std::vector<std::string>{"--match", "text", "--probes", "25", "--seed", "3"}}) {
        SCOPED_TRACE(flags.front());
        const Json got = compare_json(dir, "blocks_" + flags.front(), a.quantised, b.quantised, flags);
        const Json want = compare_json(dir, "widened_" + flags.front(), a.widened, b.widened, flags);
        EXPECT_EQ(got.at("a").at("file"), a.quantised.string());
        ASSERT_FALSE(want.at("top1_agreement").is_null());
        ASSERT_FALSE(want.at("moved").empty());
        embed_test::expect_same_json_apart_from(got, want, kNamingTheSource);
    }
}

}  // namespace
