// The built embed_scan, run as a user would in a fresh directory: a planted
// model (ordinary rows plus rows that never moved from a common start) in a
// .safetensors with a tokenizer.json beside it, the three files it writes,
// its refusals (exit 2, one line, earlier files untouched) and the
// all-or-nothing promise.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "file_bytes.hpp"
#include "gguf_model.hpp"
#include "tool_run.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using Index = std::int64_t;

const char* const kFiles[] = {"embed_scan.html", "embed_scan.json", "embed_scan.md"};

using embed_test::read_file;
using embed_test::ToolRun;
using embed_test::write_file;

// Runs the tool in dir with the given arguments.
ToolRun run_tool(const fs::path& dir, const std::vector<std::string>& args) {
    return embed_test::run_tool(EMBED_SCAN_EXE, dir, args);
}

std::vector<std::string> outputs_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("embed_scan", 0) == 0 || name.rfind(".embed_scan", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

constexpr Index kRows = 300;
constexpr Index kDim = 16;
constexpr Index kFirstPlanted = 280;   // rows 280-299 never moved from the common start
constexpr Index kFirstReserved = 290;  // rows 290-299 are reserved special tokens: the reference rows

// An untied model: ordinary rows spread out, planted rows a common start plus noise a thousand times smaller.
std::vector<float> planted_rows(std::uint32_t seed) {
    std::mt19937 random(seed);
    std::normal_distribution<float> spread(0.0f, 1.0f);
    std::vector<float> start(kDim);
    for (float& x : start) x = 0.02f * spread(random);
    std::vector<float> values(static_cast<std::size_t>(kRows * kDim));
    for (Index r = 0; r < kRows; ++r) {
        for (Index c = 0; c < kDim; ++c) {
            const auto i = static_cast<std::size_t>(r * kDim + c);
            values[i] = r >= kFirstPlanted ? start[static_cast<std::size_t>(c)] + 1e-5f * spread(random) : spread(random);
        }
    }
    return values;
}

std::string float_bytes(const std::vector<float>& values) {
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// prefix followed by n, built by appending: GCC 12 warns wrongly (-Wrestrict) about "x" + std::to_string.
std::string numbered(const char* prefix, std::uint64_t n) {
    std::string text = prefix;
    text += std::to_string(n);
    return text;
}

// model.safetensors with the embedding and lm_head, and a tokenizer.json: byte-level BPE, "Ġglitch<i>" for
// the planted ordinary rows (read " glitch<i>"), reserved special tokens for the reference rows.
void write_model(const fs::path& dir) {
    const std::string input = float_bytes(planted_rows(1));
    const std::string output = float_bytes(planted_rows(2));
    const std::string shape = numbered("[", kRows) + numbered(",", kDim) + "]";
    const std::string header = R"({"model.embed_tokens.weight":{"dtype":"F32","shape":)" + shape +
                               numbered(R"(,"data_offsets":[0,)", input.size()) +
                               R"(]},"lm_head.weight":{"dtype":"F32","shape":)" + shape +
                               numbered(R"(,"data_offsets":[)", input.size()) +
                               numbered(",", input.size() + output.size()) + "]}}";
    write_file(dir / "model.safetensors", embed_test::safetensors_file(header, input + output));
    nlohmann::json vocab = nlohmann::json::object();
    nlohmann::json added = nlohmann::json::array();
    for (Index id = 0; id < kRows; ++id) {
        const auto n = static_cast<std::uint64_t>(id);
        if (id >= kFirstReserved) {
            added.push_back(
                {{"id", id}, {"content", numbered("<|reserved_special_token_", n) + "|>"}, {"special", true}});
        } else if (id >= kFirstPlanted) {
            vocab[numbered("\u0120glitch", n)] = id;
        } else {
            vocab[numbered("w", n)] = id;
        }
    }
    const nlohmann::json tokenizer = {
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
        {"decoder", {{"type", "ByteLevel"}}},
        {"added_tokens", added}};
    write_file(dir / "tokenizer.json", tokenizer.dump());
}

TEST(ScanCli, APlantedModelsNeverMovedRowsAreAllCandidatesNamedByText) {
    embed_test::TempDir dir;
    write_model(dir.path());
    const ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors", "--percentile", "8"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "wrote ./embed_scan.json\nwrote ./embed_scan.md\nwrote ./embed_scan.html\n");
    const nlohmann::json scan = nlohmann::json::parse(read_file(dir.path() / "embed_scan.json"));
    EXPECT_EQ(scan["source"]["input_tensor"], "model.embed_tokens.weight");
    EXPECT_EQ(scan["source"]["output_tensor"], "lm_head.weight") << "the untied file's output, as check_tying names it";
    EXPECT_EQ(scan["tied"], false);
    EXPECT_EQ(scan["reference_from"], "unused tokens");
    std::vector<Index> reserved;
    for (Index id = kFirstReserved; id < kRows; ++id) reserved.push_back(id);
    EXPECT_EQ(scan["reference_ids"].get<std::vector<Index>>(), reserved);
    EXPECT_EQ(scan["main_indicator"], "output_distance");
    EXPECT_EQ(scan["principal_component"]["converged"], true) << "planted rows share one clear direction";
    const auto candidates = scan["candidates"].get<std::vector<Index>>();
    for (Index id = kFirstPlanted; id < kRows; ++id) {
        EXPECT_NE(std::find(candidates.begin(), candidates.end(), id), candidates.end()) << "planted row " << id;
    }
    for (const char* key : {"input_norm", "output_norm", "output_distance", "input_output_cosine"}) {
        EXPECT_EQ(scan[key].size(), static_cast<std::size_t>(kRows)) << key;
    }
    // Candidates by (indicator, id), all at or below the threshold.
    const double threshold = scan["threshold"].get<double>();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const double value = scan["output_distance"][static_cast<std::size_t>(candidates[i])].get<double>();
        EXPECT_LE(value, threshold);
        if (i > 0) {
            const double before = scan["output_distance"][static_cast<std::size_t>(candidates[i - 1])].get<double>();
            EXPECT_TRUE(before < value || (before == value && candidates[i - 1] < candidates[i])) << i;
        }
    }
    // Every candidate and reference id named by its text; the planted ordinary rows as a person reads them.
    std::set<Index> named;
    for (const auto& [key, text] : scan["tokens"].items()) named.insert(std::stoll(key));
    std::set<Index> shown(candidates.begin(), candidates.end());
    shown.insert(reserved.begin(), reserved.end());
    EXPECT_EQ(named, shown);
    EXPECT_EQ(scan["tokens"]["285"], " glitch285");
    EXPECT_EQ(scan["tokens"]["295"], "<|reserved_special_token_295|>");
    const std::string markdown = read_file(dir.path() / "embed_scan.md");
    EXPECT_THAT(markdown, HasSubstr("| 285 | \" glitch285\" |"));
    EXPECT_THAT(read_file(dir.path() / "embed_scan.html"), HasSubstr(" glitch285"));
}

TEST(ScanCli, ExplicitReferenceIdsAndNoneChooseTheMainIndicator) {
    embed_test::TempDir dir;
    write_model(dir.path());
    ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors", "--reference-ids", "290-292,299,291"});
    ASSERT_EQ(run.status, 0) << run.err;
    nlohmann::json scan = nlohmann::json::parse(read_file(dir.path() / "embed_scan.json"));
    EXPECT_EQ(scan["reference_ids"].get<std::vector<Index>>(), (std::vector<Index>{290, 291, 292, 299}));
    EXPECT_EQ(scan["reference_from"], "--reference-ids");
    run = run_tool(dir.path(), {"--table", "model.safetensors", "--reference-ids=none"});
    ASSERT_EQ(run.status, 0) << run.err;
    scan = nlohmann::json::parse(read_file(dir.path() / "embed_scan.json"));
    EXPECT_EQ(scan["main_indicator"], "input_norm");
    EXPECT_TRUE(scan["output_distance"].is_null());
    EXPECT_TRUE(scan["principal_component"].is_null());
}

TEST(ScanCli, ATiedTableScansOneTableWithoutTheInputOutputCosine) {
    embed_test::TempDir dir;
    write_model(dir.path());
    const ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors", "--output-tensor",
                                              "model.embed_tokens.weight", "--reference-ids", "290-299"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json scan = nlohmann::json::parse(read_file(dir.path() / "embed_scan.json"));
    EXPECT_EQ(scan["tied"], true);
    EXPECT_TRUE(scan["input_output_cosine"].is_null());
    EXPECT_EQ(scan["input_norm"], scan["output_norm"]);
}

TEST(ScanCli, HelpAndVersionExitZero) {
    embed_test::TempDir dir;
    ToolRun run = run_tool(dir.path(), {"--percentile", "900", "--help"});
    EXPECT_EQ(run.status, 0);
    EXPECT_THAT(run.out, HasSubstr("usage: embed_scan --table FILE[:TENSOR]"));
    run = run_tool(dir.path(), {"--version"});
    EXPECT_EQ(run.status, 0);
    EXPECT_THAT(run.out, testing::StartsWith("embed_scan "));
    EXPECT_TRUE(outputs_in(dir.path()).empty());
}

// Each bad argument: exit 2, one line naming the flag and the value, and the previous scan untouched.
TEST(ScanCli, BadArgumentsExitTwoWithOneLineAndLeaveEarlierFilesAlone) {
    embed_test::TempDir dir;
    write_model(dir.path());
    for (const char* name : kFiles) write_file(dir.path() / name, std::string("previous ") + name);
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{},
         "--table FILE[:TENSOR] is required: the input embedding table to scan (allowed: a .npy, .safetensors or "
         ".gguf file or a checkpoint folder)"},
        {{"--table", "model.safetensors", "--percentile", "101"}, "--percentile 101 must be a number in [0, 100]"},
        {{"--table", "model.safetensors", "--percentile", "nan"},
         "--percentile 'nan' is not a finite decimal number (allowed: a number in [0, 100])"},
        {{"--table", "model.safetensors", "--percentile=-1"}, "--percentile -1 must be a number in [0, 100]"},
        {{"--table", "model.safetensors", "--percentile"},
         "--percentile is missing its value P (allowed: a number in [0, 100])"},
        {{"--table", "model.safetensors", "--reference-ids", "5-3"},
         "--reference-ids '5-3' has the range '5-3', which runs backwards (allowed: comma-separated ids and inclusive "
         "ranges in [0, V) (177,178,180-187), or none)"},
        {{"--table", "model.safetensors", "--reference-ids", "1,,2"},
         "--reference-ids '1,,2' has an empty item (allowed: comma-separated ids and inclusive ranges in [0, V) "
         "(177,178,180-187), or none)"},
        {{"--table", "model.safetensors", "--reference-ids", "x"},
         "--reference-ids 'x' has 'x', which is not an id (allowed: comma-separated ids and inclusive ranges in [0, V) "
         "(177,178,180-187), or none)"},
        {{"--table", "model.safetensors", "--reference-ids", "10-300"},
         "--reference-ids has id 300, outside the table's rows [0, 300)"},
        {{"--table", "model.safetensors", "--bogus", "1"}, "unknown argument '--bogus' (see --help)"},
        {{"--table", "model.safetensors", "--table", "model.safetensors"}, "--table is given more than once"},
        {{"--table", "missing.safetensors"},
         "--table 'missing.safetensors' is not an existing file or folder (allowed: a .npy, .safetensors or .gguf "
         "file or a checkpoint folder)"},
        {{"--table", "model.safetensors", "--output-tensor", "nope"}, ""},  // the loader's message, checked below
    };
    for (const auto& [args, message] : cases) {
        const ToolRun run = run_tool(dir.path(), args);
        EXPECT_EQ(run.status, 2) << args.size();
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        if (!message.empty()) EXPECT_EQ(run.err, "embed_scan: " + message + "\n");
        else EXPECT_THAT(run.err, testing::StartsWith("embed_scan: --output-tensor 'nope' cannot be used: "));
    }
    for (const char* name : kFiles) EXPECT_EQ(read_file(dir.path() / name), std::string("previous ") + name);
}

// A file that cannot be replaced (a directory in its place): exit 1, nothing of the new scan appears.
TEST(ScanCli, WhenOneFileCannotBeWrittenNoneAppear) {
    embed_test::TempDir dir;
    write_model(dir.path());
    fs::create_directory(dir.path() / "embed_scan.md");
    write_file(dir.path() / "embed_scan.md" / "keep", "x");
    const ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors"});
    EXPECT_EQ(run.status, 1);
    EXPECT_EQ(outputs_in(dir.path()), std::vector<std::string>{"embed_scan.md"});
}


// ---- the inputs a scan reads: vocabularies of another length, two tables, other sources ----

namespace with_inputs {

using embed_test::gguf_model;
using embed_test::gguf_model_token;

nlohmann::json scan_json(const fs::path& dir) { return nlohmann::json::parse(read_file(dir / "embed_scan.json")); }

std::vector<Index> ids_from(Index first, Index end) {
    std::vector<Index> ids;
    for (Index id = first; id < end; ++id) ids.push_back(id);
    return ids;
}

// 40 rows, 30 tokens (25-29 unused): the unused tokens are the reference rows, and rows past the vocabulary
// are named "<no token N>" wherever the scan shows them.
TEST(ScanCli, AGgufVocabularyShorterThanItsTableNamesThePaddedRowsAsNoToken) {
    embed_test::TempDir dir;
    write_file(dir.path() / "m.gguf", gguf_model(40, 8, 30, {25, 26, 27, 28, 29}));
    ToolRun run = run_tool(dir.path(), {"--table", "m.gguf"});
    ASSERT_EQ(run.status, 0) << run.err;
    nlohmann::json scan = scan_json(dir.path());
    EXPECT_EQ(scan["reference_from"], "unused tokens");
    EXPECT_EQ(scan["reference_ids"].get<std::vector<Index>>(), ids_from(25, 30));
    EXPECT_EQ(scan["tokens"]["27"], "tok27");
    run = run_tool(dir.path(), {"--table", "m.gguf", "--reference-ids", "35-39"});
    ASSERT_EQ(run.status, 0) << run.err;
    scan = scan_json(dir.path());
    for (Index id = 35; id < 40; ++id) {
        EXPECT_EQ(scan["tokens"][std::to_string(id)], numbered("<no token ", static_cast<std::uint64_t>(id)) + ">");
    }
}

// 30 rows, 40 tokens (25-29 and 35-39 unused): the unused tokens past the table have no row and are dropped;
// naming such a row is refused.
TEST(ScanCli, AGgufVocabularyLongerThanItsTableUsesOnlyTheTokensWithARow) {
    embed_test::TempDir dir;
    write_file(dir.path() / "m.gguf", gguf_model(30, 8, 40, {25, 26, 27, 28, 29, 35, 36, 37, 38, 39}));
    ToolRun run = run_tool(dir.path(), {"--table", "m.gguf"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json scan = scan_json(dir.path());
    EXPECT_EQ(scan["vocab"], 30);
    EXPECT_EQ(scan["reference_ids"].get<std::vector<Index>>(), ids_from(25, 30));
    for (const auto& [key, text] : scan["tokens"].items()) {
        EXPECT_LT(std::stoll(key), 30) << key;
        EXPECT_EQ(text, gguf_model_token(std::stoll(key)));
    }
    run = run_tool(dir.path(), {"--table", "m.gguf", "--reference-ids", "36"});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(run.err, "embed_scan: --reference-ids has id 36, outside the table's rows [0, 30)\n");
}

// A .safetensors holding "embed" (rows, 4) and "head" (head_rows, 4), each in its own dtype ("F64", "F32" or
// "BF16"), with values k / 8 that every one of them holds exactly: embed (r, c) = ((3r + c) % 17 - 8) / 8,
// head (r, c) = ((5r + 2c) % 13 - 6) / 8.
double embed_value(Index r, Index c) { return static_cast<double>((3 * r + c) % 17 - 8) / 8.0; }
double head_value(Index r, Index c) { return static_cast<double>((5 * r + 2 * c) % 13 - 6) / 8.0; }

std::string stored_bytes(const std::string& dtype, Index rows, double (*value)(Index, Index)) {
    embed_test::ByteWriter out;
    for (Index r = 0; r < rows; ++r) {
        for (Index c = 0; c < 4; ++c) {
            const double x = value(r, c);
            if (dtype == "F64") out.f64(x);
            if (dtype == "F32") out.f32(static_cast<float>(x));
            if (dtype == "BF16") out.u16(std::bit_cast<std::uint32_t>(static_cast<float>(x)) >> 16);
        }
    }
    return out.bytes;
}

void write_two_tables(const fs::path& file, const std::string& embed_dtype, const std::string& head_dtype,
                      Index rows, Index head_rows) {
    const std::string embed = stored_bytes(embed_dtype, rows, embed_value);
    const std::string head = stored_bytes(head_dtype, head_rows, head_value);
    const std::string header = R"({"embed":{"dtype":")" + embed_dtype + numbered(R"(","shape":[)", static_cast<std::uint64_t>(rows)) +
                               numbered(R"(,4],"data_offsets":[0,)", embed.size()) + R"(]},"head":{"dtype":")" +
                               head_dtype + numbered(R"(","shape":[)", static_cast<std::uint64_t>(head_rows)) +
                               numbered(R"(,4],"data_offsets":[)", embed.size()) +
                               numbered(",", embed.size() + head.size()) + "]}}";
    write_file(file, embed_test::safetensors_file(header, embed + head));
}

// Norms by an explicit loop in double over the values the file holds.
double norm_of(double (*value)(Index, Index), Index r) {
    double sum = 0.0;
    for (Index c = 0; c < 4; ++c) sum += value(r, c) * value(r, c);
    return std::sqrt(sum);
}

TEST(ScanCli, TablesOfMixedPrecisionAreBothReadInOneTypeThatHoldsBoth) {
    embed_test::TempDir dir;
    struct Case {
        std::string embed, head, precision;
    };
    for (const Case& c : {Case{"F32", "BF16", "f32"}, Case{"BF16", "F32", "f32"}, Case{"F64", "BF16", "f64"},
                          Case{"BF16", "BF16", "bf16"}}) {
        write_two_tables(dir.path() / "two.safetensors", c.embed, c.head, 24, 24);
        const ToolRun run = run_tool(dir.path(), {"--table", "two.safetensors:embed", "--output-tensor", "head",
                                                  "--reference-ids", "3,5"});
        ASSERT_EQ(run.status, 0) << c.embed << " " << c.head << ": " << run.err;
        const nlohmann::json scan = scan_json(dir.path());
        EXPECT_EQ(scan["source"]["precision"], c.precision) << c.embed << " " << c.head;
        EXPECT_EQ(scan["tied"], false);
        for (Index r = 0; r < 24; ++r) {
            const auto i = static_cast<std::size_t>(r);
            EXPECT_NEAR(scan["input_norm"][i].get<double>(), norm_of(embed_value, r), 1e-6) << r;
            EXPECT_NEAR(scan["output_norm"][i].get<double>(), norm_of(head_value, r), 1e-6) << r;
        }
    }
}

// A scan compares input row i with output row i, so an output of another row count is refused, by name.
TEST(ScanCli, AnOutputTensorOfAnotherRowCountIsRefusedWithBothCounts) {
    embed_test::TempDir dir;
    write_two_tables(dir.path() / "two.safetensors", "F32", "F32", 24, 25);
    for (const char* name : kFiles) write_file(dir.path() / name, std::string("previous ") + name);
    const ToolRun run = run_tool(dir.path(), {"--table", "two.safetensors:embed", "--output-tensor=head"});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(run.err,
              "embed_scan: --output-tensor 'head' has 25 rows and the input 'embed' 24: a scan compares row by row "
              "(allowed: a tensor of the file with the input's row count)\n");
    for (const char* name : kFiles) EXPECT_EQ(read_file(dir.path() / name), std::string("previous ") + name);
}

TEST(ScanCli, TokenizerNamesTheRowsOfATableWithoutNamesOfItsOwn) {
    embed_test::TempDir dir;
    write_model(dir.path());
    fs::create_directory(dir.path() / "names");
    fs::rename(dir.path() / "tokenizer.json", dir.path() / "names" / "tok.json");
    ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors", "--reference-ids", "290-299"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_FALSE(scan_json(dir.path()).contains("tokens")) << "no names beside the table";
    run = run_tool(dir.path(), {"--table", "model.safetensors", "--tokenizer", "names/tok.json"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json scan = scan_json(dir.path());
    EXPECT_EQ(scan["reference_from"], "unused tokens") << "the reserved tokens of the named tokenizer";
    EXPECT_EQ(scan["tokens"]["295"], "<|reserved_special_token_295|>");
    run = run_tool(dir.path(), {"--table", "model.safetensors", "--tokenizer", "names/missing.json"});
    EXPECT_EQ(run.status, 2);
    EXPECT_THAT(run.err, testing::StartsWith("embed_scan: --tokenizer 'names/missing.json' cannot be used: "));
}

TEST(ScanCli, OutDirChoosesWhereTheFilesGo) {
    embed_test::TempDir dir;
    write_model(dir.path());
    fs::create_directory(dir.path() / "out");
    const ToolRun run = run_tool(dir.path(), {"--table", "model.safetensors", "--out-dir=out"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "wrote out/embed_scan.json\nwrote out/embed_scan.md\nwrote out/embed_scan.html\n");
    EXPECT_TRUE(outputs_in(dir.path()).empty()) << "nothing in the current directory";
    EXPECT_EQ(outputs_in(dir.path() / "out"), (std::vector<std::string>{"embed_scan.html", "embed_scan.json",
                                                                       "embed_scan.md"}));
    const ToolRun refused = run_tool(dir.path(), {"--table", "model.safetensors", "--out-dir", "missing"});
    EXPECT_EQ(refused.status, 2);
    EXPECT_EQ(refused.err,
              "embed_scan: --out-dir 'missing' does not exist (allowed: an existing, writable directory)\n");
}

// A checkpoint folder (model.safetensors and tokenizer.json in it) scans as its file does, names included.
TEST(ScanCli, ACheckpointFolderAsTableScansAsItsFileDoes) {
    embed_test::TempDir dir;
    fs::create_directory(dir.path() / "ckpt");
    write_model(dir.path() / "ckpt");
    ToolRun run = run_tool(dir.path(), {"--table", "ckpt/model.safetensors", "--percentile", "8"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json from_file = scan_json(dir.path());
    run = run_tool(dir.path(), {"--table", "ckpt", "--percentile", "8"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json from_folder = scan_json(dir.path());
    EXPECT_EQ(from_folder["source"]["file"], "ckpt");
    EXPECT_EQ(from_folder["source"]["input_tensor"], "model.embed_tokens.weight");
    EXPECT_EQ(from_folder["source"]["output_tensor"], "lm_head.weight");
    EXPECT_EQ(from_folder["source"]["precision"], "f32");
    EXPECT_EQ(from_folder["reference_from"], "unused tokens");
    for (const char* key : {"reference_ids", "candidates", "input_norm", "output_distance", "tokens"}) {
        EXPECT_EQ(from_folder[key], from_file[key]) << key;
    }
}

}  // namespace with_inputs

}  // namespace
