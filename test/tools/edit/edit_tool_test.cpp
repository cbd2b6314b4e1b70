// embed_edit run as a user would, on small .gguf files and checkpoint folders in fresh directories: the
// summary and the JSON against values worked out here, the destination read back (tokens by text, rows,
// padding, re-initialised and added rows against explicit loops, the stored bytes of every other row), each
// refusal (exit 2, one line, nothing written, the source as it was) and a disk that fills (exit 1, no
// destination). The token-list readers are called directly.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/embed.hpp>

#include "command.hpp"
#include "file_bytes.hpp"
#include "gguf_model.hpp"
#include "tokenizer_files.hpp"
#include "tool_run.hpp"
#include "io/byte_source.hpp"
#include "io/formats.hpp"

namespace {

using embed::Index;
using embed_test::read_file;
using embed_test::TempDir;
using embed_test::ToolRun;
using testing::HasSubstr;
using testing::StartsWith;

constexpr Index kRows = 10;
constexpr Index kWidth = 4;

ToolRun run_edit(const std::filesystem::path& dir, const std::vector<std::string>& args) {
    return embed_test::run_tool(EMBED_EDIT_EXE, dir, args);
}

/// The source model: token_embd.weight (10, 4) of gguf_model_value, tokens tok0 ... tok9, all normal.
std::filesystem::path write_gguf(const TempDir& dir) {
    return dir.write("model.gguf", embed_test::gguf_model(kRows, kWidth, kRows, {}));
}

/// The stored bytes of rows [first, first + count) of file's tensor name (any format lib/io parses).
std::string row_bytes(const std::filesystem::path& file, const std::string& name, Index first, Index count) {
    const embed::io::FileSource source(file);
    const embed::io::Contents contents = file.extension() == ".gguf" ? embed::io::parse_gguf(source)
                                                                      : embed::io::parse_safetensors(source);
    for (const embed::io::TensorEntry& entry : contents.tensors) {
        if (entry.name != name) continue;
        const std::uint64_t row = entry.size / static_cast<std::uint64_t>(entry.shape.at(0));
        std::string bytes(static_cast<std::size_t>(row * static_cast<std::uint64_t>(count)), '\0');
        source.read(entry.offset + row * static_cast<std::uint64_t>(first), bytes.size(),
                    reinterpret_cast<std::byte*>(bytes.data()));
        return bytes;
    }
    throw std::runtime_error("no tensor " + name + " in " + file.string());
}

/// The mean of rows of table (value(r, c)) not in skip, summed in double in ascending order, rounded to float.
template <class Value>
std::vector<float> mean_without(Index rows, const std::set<Index>& skip, Value value) {
    std::vector<float> mean;
    for (Index c = 0; c < kWidth; ++c) {
        double sum = 0.0;
        Index count = 0;
        for (Index r = 0; r < rows; ++r) {
            if (skip.contains(r)) continue;
            sum += static_cast<double>(value(r, c));
            ++count;
        }
        mean.push_back(static_cast<float>(sum / static_cast<double>(count)));
    }
    return mean;
}

/// Every name in dir (recursively) with its bytes: what a refused run must leave exactly as it was.
std::map<std::string, std::string> everything_in(const std::filesystem::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        files[entry.path().lexically_relative(dir).string()] = entry.is_regular_file() ? read_file(entry.path()) : "(dir)";
    }
    return files;
}

// Tokens added (one with an escaped comma), padding to a multiple and rows re-initialised, on a .gguf: the
// summary names each token by text; the file read back has the tokens by text, the padding placeholders, the
// re-initialised rows as the mean of the others and the new rows as the mean of all rows after that, and
// every other row's stored bytes as in the source.
TEST(EditTool, GgufGainsTokensPaddingAndFreshRows) {
    TempDir dir;
    const std::filesystem::path source = write_gguf(dir);
    const std::string source_bytes = read_file(source);
    const ToolRun run = run_edit(dir.path(), {"--table", "model.gguf", "--out", "edited.gguf", "--add-tokens",
                                              "a\\,b,<|x|>", "--pad-to-multiple-of", "8", "--reinitialise", "6,2,5-6"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.err, "");
    EXPECT_EQ(run.out,
              "edited model.gguf into edited.gguf\n"
              "rows: 10 before, 16 after\n"
              "tokens added: 2 tokens\n"
              "  10 \"a,b\"\n"
              "  11 \"<|x|>\"\n"
              "rows re-initialised: 3 rows\n"
              "  2 \"tok2\"\n"
              "  5 \"tok5\"\n"
              "  6 \"tok6\"\n"
              "element type written: f32\n"
              "tied: yes (one table is input and output)\n"
              "wrote edited.gguf\n");
    EXPECT_EQ(read_file(source), source_bytes);

    const std::filesystem::path edited = dir.path() / "edited.gguf";
    const embed::TableF32 table = embed::load_table_f32(edited);
    ASSERT_EQ(table.rows(), 16);
    ASSERT_EQ(table.cols(), kWidth);
    const std::set<Index> fresh = {2, 5, 6};
    const std::vector<float> fresh_row = mean_without(kRows, fresh, embed_test::gguf_model_value);
    const auto after_reinitialising = [&](Index r, Index c) {
        return fresh.contains(r) ? fresh_row[static_cast<std::size_t>(c)] : embed_test::gguf_model_value(r, c);
    };
    const std::vector<float> new_row = mean_without(kRows, {}, after_reinitialising);
    for (Index r = 0; r < 16; ++r) {
        for (Index c = 0; c < kWidth; ++c) {
            const float want = r < kRows ? after_reinitialising(r, c) : new_row[static_cast<std::size_t>(c)];
            EXPECT_EQ(table(r, c), want) << r << ", " << c;
        }
    }
    for (const auto& [first, count] : std::vector<std::pair<Index, Index>>{{0, 2}, {3, 2}, {7, 3}}) {
        EXPECT_EQ(row_bytes(edited, "token_embd.weight", first, count), row_bytes(source, "token_embd.weight", first, count))
            << "rows from " << first;
    }
    const embed::Vocabulary vocabulary = embed::load_vocabulary(edited);
    ASSERT_EQ(vocabulary.size(), 16);
    EXPECT_EQ(vocabulary.find("a,b"), std::vector<Index>{10});
    EXPECT_EQ(vocabulary.find("<|x|>"), std::vector<Index>{11});
    EXPECT_EQ(vocabulary.type(10), embed::TokenType::user_defined);
    EXPECT_EQ(vocabulary.token(15), "[PAD15]");
    EXPECT_EQ(vocabulary.type(12), embed::TokenType::unused);
    EXPECT_EQ(vocabulary.token(3), "tok3");
}

// --json prints the edit record and nothing else; tokens from a file (a byte-order mark, a CRLF line, a last
// line without its end), added as control tokens, the table rewritten as f16: every value rounded once from
// float32 (Eigen's half, not ours), the new rows the float32 mean rounded to half.
TEST(EditTool, JsonRecordOfATokenFileAndANewType) {
    TempDir dir;
    write_gguf(dir);
    dir.write("tokens.txt", "\xEF\xBB\xBF\xC3\xA9t\xC3\xA9\r\n <s2>\ntail");
    const ToolRun run = run_edit(dir.path(), {"--table", "model.gguf", "--out", "half.gguf", "--add-tokens-file",
                                              "tokens.txt", "--special", "--type", "F16", "--json", "--init", "mean"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.err, "");
    const nlohmann::ordered_json record = nlohmann::ordered_json::parse(run.out);  // nothing but the record
    const nlohmann::ordered_json want = {
        {"source", "model.gguf"},
        {"destination", "half.gguf"},
        {"rows_before", 10},
        {"rows_after", 13},
        {"tokens_added", {{{"id", 10}, {"text", "\xC3\xA9t\xC3\xA9"}}, {{"id", 11}, {"text", " <s2>"}}, {{"id", 12}, {"text", "tail"}}}},
        {"rows_reinitialised", nlohmann::ordered_json::array()},
        {"type", "f16"},
        {"tied", true},
        {"tokens", nlohmann::ordered_json::object()},
    };
    EXPECT_EQ(record, want) << record.dump(2);

    const std::filesystem::path edited = dir.path() / "half.gguf";
    EXPECT_EQ(embed::list_tensors(edited).at(0).dtype, "F16");
    const embed::Table table = embed::load_table(edited);
    ASSERT_EQ(table.rows(), 13);
    const std::vector<float> new_row = mean_without(kRows, {}, embed_test::gguf_model_value);
    for (Index r = 0; r < 13; ++r) {
        for (Index c = 0; c < kWidth; ++c) {
            const float value = r < kRows ? embed_test::gguf_model_value(r, c) : new_row[static_cast<std::size_t>(c)];
            EXPECT_EQ(table(r, c), static_cast<double>(static_cast<float>(Eigen::half(value)))) << r << ", " << c;
        }
    }
    const embed::Vocabulary vocabulary = embed::load_vocabulary(edited);
    EXPECT_EQ(vocabulary.find(" <s2>"), std::vector<Index>{11});
    EXPECT_EQ(vocabulary.type(12), embed::TokenType::control);
}

/// An untied checkpoint folder: model.embed_tokens.weight (6, 4) of row i = [i + c / 8] and lm_head.weight
/// (6, 4) of -3 times that, word-level tokens a ... f, config.json's vocab_size 6.
std::filesystem::path write_folder(const TempDir& dir) {
    const std::filesystem::path folder = dir.path() / "ckpt";
    std::filesystem::create_directory(folder);
    embed_test::ByteWriter data;
    for (const float sign : {1.0f, -3.0f}) {
        for (int r = 0; r < 6; ++r) {
            for (int c = 0; c < 4; ++c) data.f32(sign * (static_cast<float>(r) + static_cast<float>(c) / 8.0f));
        }
    }
    std::ofstream(folder / "model.safetensors", std::ios::binary) << embed_test::safetensors_file(
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[6,4],"data_offsets":[0,96]},)"
        R"("lm_head.weight":{"dtype":"F32","shape":[6,4],"data_offsets":[96,192]}})",
        data.bytes);
    std::ofstream(folder / "config.json") << R"({"vocab_size":6,"tie_word_embeddings":false})";
    std::ofstream(folder / "tokenizer.json") << embed_test::word_level_with(R"("a":0,"b":1,"c":2,"d":3,"e":4,"f":5)");
    return folder;
}

// A checkpoint folder, untied: both tables edited, each from its own rows; the summary says so.
TEST(EditTool, UntiedFolderEditsBothTables) {
    TempDir dir;
    const std::filesystem::path source = write_folder(dir);
    const auto before = everything_in(source);
    const ToolRun run = run_edit(dir.path(), {"--table", "ckpt", "--out", "out", "--add-tokens", "x,y",
                                              "--pad-to-multiple-of", "4", "--reinitialise", "1"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out,
              "edited ckpt into out\n"
              "rows: 6 before, 8 after\n"
              "tokens added: 2 tokens\n"
              "  6 \"x\"\n"
              "  7 \"y\"\n"
              "rows re-initialised: 1 row\n"
              "  1 \"b\"\n"
              "element type written: f32\n"
              "tied: no (the output table edited alike, from its own rows)\n"
              "wrote out\n");
    EXPECT_EQ(everything_in(source), before);
    const std::filesystem::path out = dir.path() / "out";
    for (const auto& [name, sign_of_table] : std::vector<std::pair<std::string, float>>{
             {"model.embed_tokens.weight", 1.0f}, {"lm_head.weight", -3.0f}}) {
        SCOPED_TRACE(name);
        const float sign = sign_of_table;  // a structured binding cannot be captured before C++20's Clang 16
        const auto value = [sign](Index r, Index c) { return sign * (static_cast<float>(r) + static_cast<float>(c) / 8.0f); };
        const embed::TableF32 table = embed::load_table_f32(out, name);
        ASSERT_EQ(table.rows(), 8);
        const std::vector<float> row1 = mean_without(6, {1}, value);
        const auto reinitialised = [&](Index r, Index c) { return r == 1 ? row1[static_cast<std::size_t>(c)] : value(r, c); };
        const std::vector<float> added = mean_without(6, {}, reinitialised);
        for (Index r = 0; r < 8; ++r) {
            for (Index c = 0; c < kWidth; ++c) {
                EXPECT_EQ(table(r, c), r < 6 ? reinitialised(r, c) : added[static_cast<std::size_t>(c)]) << r << ", " << c;
            }
        }
        EXPECT_EQ(row_bytes(out / "model.safetensors", name, 2, 4), row_bytes(source / "model.safetensors", name, 2, 4));
    }
    const embed::Vocabulary vocabulary = embed::load_vocabulary(out);
    EXPECT_EQ(vocabulary.find("y"), std::vector<Index>{7});
    const std::optional<embed::Tying> tying = embed::check_tying(out);
    ASSERT_TRUE(tying.has_value());
    EXPECT_FALSE(tying->tied);
    EXPECT_EQ(tying->config_vocab_size, 8);
}

struct Refusal {
    std::vector<std::string> args;
    std::string says;  // a part of the one line on stderr
};

/// A directory holding model.gguf, the folder ckpt, an earlier file exists.gguf, a table table.npy and a
/// token file with a blank line gaps.txt: what the refusals are tried against.
class EditRefusals : public testing::Test {
protected:
    void SetUp() override {
        write_gguf(dir_);
        write_folder(dir_);
        dir_.write("exists.gguf", "an earlier file");
        dir_.write("table.npy", embed_test::npy_file("<f4", false, "(1, 1)", std::string(4, '\0')));
        dir_.write("gaps.txt", "one\n\ntwo\n");
    }

    /// The edit of model.gguf into new.gguf with more arguments.
    static std::vector<std::string> with(const std::vector<std::string>& more) {
        std::vector<std::string> args = {"--table", "model.gguf", "--out", "new.gguf"};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }

    // Each refusal exits 2 with one line "embed_edit: ..." on stderr, prints nothing on stdout, and leaves the
    // directory (sources, earlier files) byte for byte as it was: no destination, no temporary.
    void expect_refused(const std::vector<Refusal>& refusals) const {
        const auto before = everything_in(dir_.path());
        for (const Refusal& refusal : refusals) {
            std::string shown;
            for (const std::string& arg : refusal.args) shown += arg + " ";
            SCOPED_TRACE(shown);
            const ToolRun run = run_edit(dir_.path(), refusal.args);
            EXPECT_EQ(run.status, 2);
            EXPECT_THAT(run.err, StartsWith("embed_edit: "));
            EXPECT_THAT(run.err, HasSubstr(refusal.says));
            EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
            EXPECT_EQ(run.out, "");
            EXPECT_EQ(everything_in(dir_.path()), before);
        }
    }

    TempDir dir_;
};

TEST_F(EditRefusals, SourcesAndDestinations) {
    expect_refused({
        {{"--table", "model.gguf", "--out", "exists.gguf", "--pad-to-multiple-of", "4"}, "--out 'exists.gguf' exists"},
        {{"--table", "model.gguf", "--out", "model.gguf", "--pad-to-multiple-of", "4"}, "--out 'model.gguf' is the source --table"},
        {{"--table", "ckpt", "--out", "ckpt/inside", "--pad-to-multiple-of", "4"}, "lies inside the source folder ckpt"},
        {{"--table", "model.gguf", "--out", "no/such/dir.gguf", "--pad-to-multiple-of", "4"}, "--out 'no/such' does not exist"},
        {{"--table", "table.npy", "--out", "t2.npy", "--pad-to-multiple-of", "4"}, "--table 'table.npy' is a table file, not a model"},
        {{"--table", "absent.gguf", "--out", "new.gguf", "--pad-to-multiple-of", "4"}, "--table 'absent.gguf' does not exist"},
        {{"--table", "gaps.txt", "--out", "new.gguf", "--pad-to-multiple-of", "4"}, "--table 'gaps.txt' is neither a .gguf file nor a folder"},
        {{"--table", "exists.gguf", "--out", "new.gguf", "--pad-to-multiple-of", "4"}, "--table 'exists.gguf' cannot be used"},
        {{"--out", "new.gguf", "--pad-to-multiple-of", "4"}, "--table"},
    });
}

TEST_F(EditRefusals, TokensToAdd) {
    expect_refused({
        {with({"--add-tokens", "tok3"}), "token to add 'tok3' already exists as id 3"},
        {with({"--add-tokens", "x,y,x"}), "token to add 'x' is given twice"},
        {with({"--add-tokens", "a,,b"}), "--add-tokens 'a,,b' has an empty token (token 2)"},
        {with({"--add-tokens", "a\\b"}), "has a backslash that is not followed by ',' or '\\'"},
        {with({"--add-tokens", "\xC0\x80"}), "is not UTF-8"},
        {with({"--add-tokens", "a", "--add-tokens-file", "gaps.txt"}), "--add-tokens and --add-tokens-file are both given"},
        {with({"--add-tokens-file", "gaps.txt"}), "--add-tokens-file 'gaps.txt' has an empty line 2"},
        {with({"--add-tokens-file", "missing.txt"}), "--add-tokens-file 'missing.txt' is not a readable file"},
        {with({"--special", "--pad-to-multiple-of", "4"}), "--special is about tokens to add"},
    });
}

TEST_F(EditRefusals, RowsAndPadding) {
    expect_refused({
        {with({"--reinitialise", "10"}), "--reinitialise has id 10, outside the table's rows [0, 10)"},
        {with({"--reinitialise", "3-9223372036854775806"}), "--reinitialise has id 9223372036854775806, outside"},
        {with({"--reinitialise", "5-3"}), "--reinitialise '5-3' has the range '5-3', which runs backwards"},
        {with({"--reinitialise", "0-9"}), "needs at least one source row"},
        {with({"--pad-to-multiple-of", "0"}), "--pad-to-multiple-of 0 must be an integer >= 1"},
        {with({"--pad-to-multiple-of", "-3"}), "--pad-to-multiple-of -3 must be an integer >= 1"},
        {with({"--init", "median", "--pad-to-multiple-of", "4"}), "--init 'median' is not a rule (allowed: mean, sampled or zeros)"},
        {with({"--seed", "-1", "--pad-to-multiple-of", "4"}), "--seed -1 must be"},
    });
}

TEST_F(EditRefusals, TypesAndNoEdit) {
    expect_refused({
        {with({"--type", "q9_9"}), "--type 'q9_9' is not an element type"},
        {with({"--type", "q8_0"}), "not a multiple of q8_0's block of 32"},
        {{"--table", "ckpt", "--out", "out", "--type", "q4_k"}, "type q4_k cannot be written to .safetensors"},
        {with({}), "nothing to edit"},
        {with({"--type", "same", "--init", "zeros"}), "nothing to edit"},
    });
}

// A disk that fills while the destination is written (a file-size limit: EFBIG, with SIGXFSZ ignored as a
// shell's trap leaves it for the tool): exit 1, one line naming the write, no destination, no temporary.
TEST(EditTool, ADiskThatFillsExitsOneAndLeavesNoDestination) {
    TempDir dir;
    write_gguf(dir);
    dir.write("limited.sh", "trap '' XFSZ\nulimit -f 4\nexec \"$@\"\n");
    const auto before = everything_in(dir.path());
    const ToolRun run = embed_test::run_tool("/bin/sh", dir.path(), {"limited.sh", EMBED_EDIT_EXE, "--table", "model.gguf",
                                                                      "--out", "big.gguf", "--pad-to-multiple-of", "4096"});
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_THAT(run.err, StartsWith("embed_edit: "));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(everything_in(dir.path()), before);
}

// Rows past what memory holds (a multiple near 2^63): exit 1, a line saying so, nothing written, and no
// token name made for each row first.
TEST(EditTool, AnEditTooLargeForMemoryExitsOne) {
    TempDir dir;
    write_gguf(dir);
    const auto before = everything_in(dir.path());
    const ToolRun run = run_edit(dir.path(), {"--table", "model.gguf", "--out", "huge.gguf", "--pad-to-multiple-of",
                                              "9223372036854775807"});
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_EQ(run.err, "embed_edit: the edited tables of 'model.gguf' do not fit in memory (--pad-to-multiple-of "
                       "9223372036854775807 makes them at least that many rows)\n");
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(everything_in(dir.path()), before);
}

/// A .gguf of token_embd.weight (2, 32) F32 whose (1, 3) is value, tokens tok0 and tok1.
std::string gguf_with_value(float value) {
    embed_test::ByteWriter meta;
    meta.gguf_string("tokenizer.ggml.tokens");
    meta.u32(9);
    meta.u32(8);
    meta.u64(2);
    meta.gguf_string("tok0");
    meta.gguf_string("tok1");
    embed_test::ByteWriter data;
    for (int i = 0; i < 64; ++i) data.f32(i == 32 + 3 ? value : static_cast<float>(i % 7) / 4.0f);
    return embed_test::gguf_file({{"token_embd.weight", {32, 2}, 0, 0}}, data.bytes, 1, meta.bytes);
}

// Values the type asked for cannot hold, and NaN: a value past f16's range is refused (exit 2, naming row
// and column, nothing written); NaN is a value like any other, carried into the mean of the new row.
TEST(EditTool, OverflowIsRefusedAndNanCarriedIntoTheMean) {
    TempDir dir;
    dir.write("big.gguf", gguf_with_value(1e6f));
    dir.write("nan.gguf", gguf_with_value(std::numeric_limits<float>::quiet_NaN()));
    const auto before = everything_in(dir.path());
    const ToolRun big = run_edit(dir.path(), {"--table", "big.gguf", "--out", "half.gguf", "--type", "f16"});
    EXPECT_EQ(big.status, 2);
    EXPECT_THAT(big.err, StartsWith("embed_edit: value 1e+06 at row 1, column 3 overflows f16"));
    EXPECT_EQ(everything_in(dir.path()), before);
    const ToolRun nan = run_edit(dir.path(), {"--table", "nan.gguf", "--out", "grown.gguf", "--add-tokens", "new"});
    ASSERT_EQ(nan.status, 0) << nan.err;
    const embed::Table table = embed::load_table(dir.path() / "grown.gguf");
    ASSERT_EQ(table.rows(), 3);
    EXPECT_TRUE(std::isnan(table(2, 3)));
    EXPECT_EQ(table(2, 0), static_cast<double>(static_cast<float>((0.0 + 32 % 7 / 4.0) / 2.0)));
}

// --init sampled and --seed reach edit_model as given: the file is byte for byte the library's own edit with
// the same rule and seed (the rule itself is checked against CPython in resize_test), and another seed gives
// other rows.
TEST(EditTool, SampledRowsFollowTheSeed) {
    TempDir dir;
    write_gguf(dir);
    const ToolRun run = run_edit(dir.path(), {"--table", "model.gguf", "--out", "tool.gguf", "--add-tokens", "s",
                                              "--reinitialise", "4", "--init", "sampled", "--seed", "18446744073709551615"});
    ASSERT_EQ(run.status, 0) << run.err;
    embed::ModelEdits edits;
    edits.add_tokens = {"s"};
    edits.reinitialise = {4};
    edits.init = embed::RowInit::sampled;
    edits.seed = 18446744073709551615ULL;
    embed::edit_model(dir.path() / "model.gguf", dir.path() / "library.gguf", edits);
    EXPECT_EQ(read_file(dir.path() / "tool.gguf"), read_file(dir.path() / "library.gguf"));
    ASSERT_EQ(run_edit(dir.path(), {"--table", "model.gguf", "--out", "other.gguf", "--add-tokens", "s",
                                    "--reinitialise", "4", "--init", "sampled", "--seed", "1"}).status, 0);
    EXPECT_NE(row_bytes(dir.path() / "other.gguf", "token_embd.weight", 10, 1),
              row_bytes(dir.path() / "tool.gguf", "token_embd.weight", 10, 1));
}

// --reinitialise under-trained: the rows are the scan's candidates on the source's table with its unused
// token (id 3, a row that never moved from near zero) as reference, each named in the JSON's tokens.
TEST(EditTool, UnderTrainedRowsAreTheScansCandidatesNamedByText) {
    TempDir dir;
    embed_test::ByteWriter meta;
    meta.gguf_string("tokenizer.ggml.tokens");
    meta.u32(9);
    meta.u32(8);
    meta.u64(kRows);
    for (Index id = 0; id < kRows; ++id) meta.gguf_string(embed_test::gguf_model_token(id));
    meta.gguf_string("tokenizer.ggml.token_type");
    meta.u32(9);
    meta.u32(5);
    meta.u64(kRows);
    for (Index id = 0; id < kRows; ++id) meta.u32(id == 3 ? 5 : 1);
    embed_test::ByteWriter data;
    for (Index r = 0; r < kRows; ++r) {
        for (Index c = 0; c < kWidth; ++c) data.f32(r == 3 || r == 8 ? 1e-6f * static_cast<float>(c + 1) : embed_test::gguf_model_value(r, c));
    }
    const std::filesystem::path source = dir.write(
        "model.gguf", embed_test::gguf_file({{"token_embd.weight", {kWidth, kRows}, 0, 0}}, data.bytes, 2, meta.bytes));
    const ToolRun run = run_edit(dir.path(), {"--table", "model.gguf", "--out", "fixed.gguf", "--reinitialise",
                                              "under-trained", "--init", "zeros", "--json"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json record = nlohmann::json::parse(run.out);
    embed::ScanOptions options;
    options.reference_ids = {3};
    const embed::Table table = embed::load_table(source);
    const embed::VocabularyScan scan = embed::scan_vocabulary(table, table, options);
    std::set<Index> want(scan.candidates.begin(), scan.candidates.end());
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(record["rows_reinitialised"].get<std::vector<Index>>(), std::vector<Index>(want.begin(), want.end()));
    nlohmann::json names = nlohmann::json::object();
    for (const Index id : want) names[std::to_string(id)] = embed_test::gguf_model_token(id);
    EXPECT_EQ(record["tokens"], names);
    const embed::Table fixed = embed::load_table(dir.path() / "fixed.gguf");
    for (const Index id : want) EXPECT_TRUE(fixed.row(id).isZero(0.0)) << id;
}

// The token list: commas split, "\," and "\\" escape; UTF-8 checked; the token file: lines, CRLF, a
// byte-order mark, a blank line refused.
TEST(EditTool, TokenListsAndFilesReadAsDocumented) {
    using embed::edit_tool::read_token_file;
    using embed::edit_tool::split_token_list;
    using embed::edit_tool::valid_utf8;
    using embed_test::refusal_of;
    const embed::tools::ArgumentText flag{"--add-tokens", "LIST", "tokens", "comma-separated", ""};
    EXPECT_EQ(split_token_list(flag, "a,b"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(split_token_list(flag, "x\\,y, z\\\\"), (std::vector<std::string>{"x,y", " z\\"}));
    EXPECT_EQ(split_token_list(flag, "\\,"), (std::vector<std::string>{","}));
    EXPECT_EQ(refusal_of([&] { split_token_list(flag, "\\\\,"); }),
              "--add-tokens '\\\\,' has an empty token (token 2) (allowed: comma-separated)");
    EXPECT_THAT(refusal_of([&] { split_token_list(flag, ""); }), HasSubstr("has an empty token (token 1)"));
    EXPECT_THAT(refusal_of([&] { split_token_list(flag, "a\\"); }), HasSubstr("has a backslash"));
    EXPECT_THAT(refusal_of([&] { split_token_list(flag, "a,\xED\xA0\x80"); }), HasSubstr("is not UTF-8"));

    EXPECT_TRUE(valid_utf8("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
    EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));       // a surrogate
    EXPECT_FALSE(valid_utf8("\xE0\x80\x80"));       // an overlong form
    EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));   // past U+10FFFF
    EXPECT_FALSE(valid_utf8("\xC3"));               // cut short
    EXPECT_FALSE(valid_utf8("\x80"));               // a continuation byte alone

    TempDir dir;
    const embed::tools::ArgumentText file_flag{"--add-tokens-file", "F", "tokens", "lines", ""};
    EXPECT_EQ(read_token_file(file_flag, dir.write("a.txt", "a\r\nb")), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(read_token_file(file_flag, dir.write("b.txt", "\xEF\xBB\xBF\xC3\xA9\n")), (std::vector<std::string>{"\xC3\xA9"}));
    EXPECT_EQ(read_token_file(file_flag, dir.write("c.txt", "a,b\n c \n")), (std::vector<std::string>{"a,b", " c "}));
    EXPECT_THAT(refusal_of([&] { read_token_file(file_flag, dir.write("d.txt", "a\n\n")); }), HasSubstr("has an empty line 2"));
    EXPECT_THAT(refusal_of([&] { read_token_file(file_flag, dir.write("e.txt", "")); }), HasSubstr("holds no tokens"));
    EXPECT_THAT(refusal_of([&] { read_token_file(file_flag, dir.write("f.txt", "ok\n\xFF\n")); }),
                HasSubstr("has line 2, which is not UTF-8"));
}

}  // namespace
