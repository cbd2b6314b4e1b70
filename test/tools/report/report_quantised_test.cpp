// The built embed_report on quantised GGUF tables: analysed in their blocks, never widened, its JSON equals key
// by key the JSON of the same run on the table's widened F32 copy (test/tools/common/quantised_model.hpp), apart
// from the two keys that name the source and its precision: source.file and source.precision.

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

const std::set<std::string> kNamingTheSource = {"source.file", "source.precision"};

// embed_report with args in a fresh directory under dir, its JSON parsed.
Json report_json(const embed_test::TempDir& dir, const std::string& run, std::vector<std::string> args) {
    const std::filesystem::path out = dir.path() / run;
    std::filesystem::create_directory(out);
    const embed_test::ToolRun ran = embed_test::run_tool(EMBED_REPORT_EXE, out, args);
    EXPECT_EQ(ran.status, 0) << ran.err;
    return Json::parse(embed_test::read_file(out / "embed_report.json"));
}

// Q4_K (256-value blocks) and Q8_0 (32-value blocks), each with the tool's defaults and with other flags.
TEST(ReportQuantised, AQuantisedTableReportsAsItsWidenedCopy) {
    const embed_test::TempDir dir;
    for (const auto& [type, name, dim] : {std::tuple{embed::ElementType::q4_k, "q4_k", 256},
                                          std::tuple{embed::ElementType::q8_0, "q8_0", 64}}) {
        SCOPED_TRACE(name);
        const embed_test::QuantisedModel model = embed_test::write_quantised_model(
            dir, name, {{"token_embd.weight", type, embed::make_table(300, dim, 17)}}, 300, {});
        for (const std::vector<std::string>& flags :
             {std::vector<std::string>{}, std::vector<std::string>{"--probe", "11", "--k", "9", "--pick", "6",
                                                                   "--stretch-factor", "-2.5"}}) {
            std::vector<std::string> quantised = {"--table", model.quantised.string()};
            std::vector<std::string> widened = {"--table", model.widened.string()};
            quantised.insert(quantised.end(), flags.begin(), flags.end());
            widened.insert(widened.end(), flags.begin(), flags.end());
            const Json got = report_json(dir, std::string(name) + "_blocks" + std::to_string(flags.size()), quantised);
            const Json want = report_json(dir, std::string(name) + "_widened" + std::to_string(flags.size()), widened);
            EXPECT_EQ(got.at("source").at("precision"), name);
            EXPECT_EQ(want.at("source").at("precision"), "f32");
            EXPECT_EQ(got.at("source").at("tensor"), "token_embd.weight");
            ASSERT_TRUE(want.contains("tokens"));
            embed_test::expect_same_json_apart_from(got, want, kNamingTheSource);
        }
    }
}

}  // namespace
