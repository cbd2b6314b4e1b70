// edit_model on small .gguf files built here with lib/io's writer: the rewritten file read back by our
// readers, its bytes compared with the source's, re-initialised and added rows against explicit loops.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <embed/embed.hpp>

#include "defaults_after.hpp"
#include "file_bytes.hpp"
#include "tokenizer_files.hpp"
// encode_rows.hpp and gguf_writer.hpp before formats.hpp, whose io::ElementType would hide embed's.
#include "io/encode_rows.hpp"
#include "io/gguf_writer.hpp"
#include "io/byte_source.hpp"
#include "io/formats.hpp"
#include "io/edit_source_check.hpp"

namespace {

using embed::ElementType;
using embed::Index;
using embed::ModelEdits;
using embed::TableF32;
using embed_test::TempDir;

constexpr Index kRows = 12;
constexpr Index kWidth = 256;  // one Q6_K block per row

std::string file_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TableF32 random_table(Index rows, Index cols, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    TableF32 table(rows, cols);
    for (Index i = 0; i < rows; ++i) {
        for (Index j = 0; j < cols; ++j) table(i, j) = value(generator);
    }
    return table;
}

std::string encoded(const TableF32& table, ElementType type) {
    std::ostringstream out;
    embed::io::write_rows(out, embed::view_of(table), type, false);
    return out.str();
}

embed::io::GgufTensor tensor_of(const std::string& name, std::vector<std::uint64_t> ne, ElementType type,
                                const std::string& bytes) {
    return {name, std::move(ne), embed::io::ggml_type_id(type), bytes.size(),
            [bytes](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); }};
}

/// A llama-shaped model in miniature: a Q6_K token embedding, an untied F32 output, a norm vector and an
/// int8 tensor (a type edit_model cannot decode, so only copy), with tokens, types and scores.
struct SmallModel {
    TableF32 embedding = random_table(kRows, kWidth, 1);
    TableF32 output = random_table(kRows, kWidth, 2);
    std::filesystem::path write(const TempDir& dir) const {
        embed::io::GgufWriter writer;
        writer.add(embed::io::GgufMetadata::string("general.architecture", "llama"));
        writer.add(embed::io::GgufMetadata::u32("general.alignment", 64));
        writer.add(embed::io::GgufMetadata::u32("llama.vocab_size", kRows));
        writer.add(embed::io::GgufMetadata::string("tokenizer.ggml.model", "llama"));
        std::vector<std::string> tokens;
        std::vector<std::int32_t> types;
        for (Index i = 0; i < kRows; ++i) {
            tokens.push_back(i == 3 ? "<unused0>" : "tok" + std::to_string(i));
            types.push_back(i == 3 ? 5 : 1);
        }
        writer.add(embed::io::GgufMetadata::strings("tokenizer.ggml.tokens", tokens));
        writer.add(embed::io::GgufMetadata::i32s("tokenizer.ggml.token_type", types));
        embed_test::ByteWriter scores;
        scores.u32(6);
        scores.u64(kRows);
        for (Index i = 0; i < kRows; ++i) scores.f32(static_cast<float>(-i));
        writer.add(embed::io::GgufMetadata{"tokenizer.ggml.scores", 9, scores.bytes});
        writer.add(tensor_of("token_embd.weight", {kWidth, kRows}, ElementType::q6_k, encoded(embedding, ElementType::q6_k)));
        writer.add(tensor_of("blk.0.attn_norm.weight", {kWidth}, ElementType::f32, encoded(random_table(1, kWidth, 3), ElementType::f32)));
        writer.add(embed::io::GgufTensor{"blk.0.int8", {5}, 24, 5, [](std::ostream& out) { out.write("\1\2\3\4\5", 5); }});
        writer.add(tensor_of("output.weight", {kWidth, kRows}, ElementType::f32, encoded(output, ElementType::f32)));
        const std::filesystem::path file = dir.path() / "model.gguf";
        writer.write(file);
        return file;
    }
};

/// Each tensor's bytes in file, by name.
std::map<std::string, std::string> tensor_bytes(const std::filesystem::path& file) {
    const embed::io::FileSource source(file);
    std::map<std::string, std::string> out;
    const bool gguf = file.extension() == ".gguf";
    for (const embed::io::TensorEntry& entry :
         (gguf ? embed::io::parse_gguf(source) : embed::io::parse_safetensors(source)).tensors) {
        std::string bytes(entry.size, '\0');
        source.read(entry.offset, entry.size, reinterpret_cast<std::byte*>(bytes.data()));
        out[entry.name] = bytes;
    }
    return out;
}

/// The mean of the rows of table not in skip, summed in double in ascending row order, rounded to float.
std::vector<float> mean_of_rows(const TableF32& table, const std::set<Index>& skip) {
    std::vector<float> mean(static_cast<std::size_t>(table.cols()));
    for (Index j = 0; j < table.cols(); ++j) {
        double sum = 0.0;
        Index count = 0;
        for (Index i = 0; i < table.rows(); ++i) {
            if (skip.contains(i)) continue;
            sum += static_cast<double>(table(i, j));
            ++count;
        }
        mean[static_cast<std::size_t>(j)] = static_cast<float>(sum / static_cast<double>(count));
    }
    return mean;
}

TEST(EditModel, ReinitialisedQ6KRowsKeepEveryOtherByte) {
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    const std::string source_before = file_bytes(source);
    const std::filesystem::path destination = dir.path() / "edited.gguf";
    ModelEdits edits;
    edits.reinitialise = {7, 2, 7};
    const embed::EditRecord record = embed::edit_model(source, destination, edits);

    EXPECT_EQ(record.rows_before, kRows);
    EXPECT_EQ(record.rows_after, kRows);
    EXPECT_EQ(record.rows_reinitialised, (std::vector<Index>{2, 7}));
    EXPECT_EQ(record.type, ElementType::q6_k);
    EXPECT_FALSE(record.tied);
    EXPECT_EQ(file_bytes(source), source_before);

    const auto before = tensor_bytes(source);
    const auto after = tensor_bytes(destination);
    ASSERT_EQ(after.size(), before.size());
    EXPECT_EQ(after.at("blk.0.attn_norm.weight"), before.at("blk.0.attn_norm.weight"));
    EXPECT_EQ(after.at("blk.0.int8"), before.at("blk.0.int8"));
    const std::size_t block = 210;
    const std::string& old_rows = before.at("token_embd.weight");
    const std::string& new_rows = after.at("token_embd.weight");
    ASSERT_EQ(new_rows.size(), block * kRows);
    for (Index i = 0; i < kRows; ++i) {
        const bool changed = i == 2 || i == 7;
        EXPECT_EQ(new_rows.substr(static_cast<std::size_t>(i) * block, block) ==
                      old_rows.substr(static_cast<std::size_t>(i) * block, block),
                  !changed)
            << "row " << i;
    }

    // The re-initialised rows: the mean of the other rows as the source's reader gives them, quantised.
    const TableF32 stored = embed::load_table_f32(source, "token_embd.weight");
    const std::vector<float> mean = mean_of_rows(stored, {2, 7});
    const TableF32 mean_row = Eigen::Map<const TableF32>(mean.data(), 1, kWidth);
    EXPECT_EQ(new_rows.substr(2 * block, block), encoded(mean_row, ElementType::q6_k));
    EXPECT_EQ(new_rows.substr(7 * block, block), encoded(mean_row, ElementType::q6_k));

    // The untied output table: the same rows from its own rows, exactly (f32).
    const TableF32 output = embed::load_table_f32(destination, "output.weight");
    const std::vector<float> output_mean = mean_of_rows(model.output, {2, 7});
    for (Index i = 0; i < kRows; ++i) {
        for (Index j = 0; j < kWidth; ++j) {
            const float want = i == 2 || i == 7 ? output_mean[static_cast<std::size_t>(j)] : model.output(i, j);
            ASSERT_EQ(output(i, j), want) << i << ", " << j;
        }
    }
    EXPECT_EQ(embed::load_vocabulary(destination).size(), kRows);
}

TEST(EditModel, AddedTokensAndPaddingGrowTheVocabularyToTheRows) {
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    const std::filesystem::path destination = dir.path() / "grown.gguf";
    ModelEdits edits;
    edits.add_tokens = {"<|im_start|>", "naïve", "<|im_end|>"};
    edits.special = true;
    edits.pad_to_multiple_of = 8;
    const embed::EditRecord record = embed::edit_model(source, destination, edits);
    EXPECT_EQ(record.rows_after, 16);
    ASSERT_EQ(record.tokens_added.size(), 3U);
    EXPECT_EQ(record.tokens_added[1].id, kRows + 1);
    EXPECT_EQ(record.tokens_added[1].text, "naïve");

    const embed::Vocabulary vocabulary = embed::load_vocabulary(destination);
    ASSERT_EQ(vocabulary.size(), 16);
    EXPECT_EQ(vocabulary.find("naïve"), (std::vector<Index>{kRows + 1}));
    EXPECT_EQ(vocabulary.find("<|im_end|>"), (std::vector<Index>{kRows + 2}));
    EXPECT_EQ(vocabulary.type(kRows), embed::TokenType::control);
    EXPECT_EQ(vocabulary.token(15), "[PAD15]");
    EXPECT_EQ(vocabulary.type(15), embed::TokenType::unused);
    EXPECT_EQ(vocabulary.token(5), "tok5");

    const std::vector<embed::TensorInfo> tensors = embed::list_tensors(destination);
    for (const embed::TensorInfo& info : tensors) {
        if (info.name == "token_embd.weight" || info.name == "output.weight") {
            EXPECT_EQ(info.shape, (std::vector<std::int64_t>{16, kWidth})) << info.name;
        }
    }
    const TableF32 output = embed::load_table_f32(destination, "output.weight");
    const std::vector<float> mean = mean_of_rows(model.output, {});
    for (Index i = kRows; i < 16; ++i) {
        for (Index j = 0; j < kWidth; ++j) ASSERT_EQ(output(i, j), mean[static_cast<std::size_t>(j)]);
    }
    // llama.vocab_size follows the rows; a key read by our GGUF metadata reader would say so: check the bytes.
    const std::string bytes = file_bytes(destination);
    embed_test::ByteWriter want;
    want.gguf_string("llama.vocab_size");
    want.u32(4);
    want.u32(16);
    EXPECT_NE(bytes.find(want.bytes), std::string::npos);
}

TEST(EditModel, ATypeAskedForRewritesEveryRow) {
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    ModelEdits edits;
    edits.type = ElementType::f32;
    const embed::EditRecord record = embed::edit_model(source, dir.path() / "f32.gguf", edits);
    EXPECT_EQ(record.type, ElementType::f32);
    const TableF32 before = embed::load_table_f32(source, "token_embd.weight");
    const TableF32 after = embed::load_table_f32(dir.path() / "f32.gguf", "token_embd.weight");
    EXPECT_EQ(after, before);
}

TEST(EditModel, RefusalsWriteNothing) {
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    const std::string source_before = file_bytes(source);
    const std::filesystem::path destination = dir.path() / "out.gguf";
    const auto refused = [&](const ModelEdits& edits, const std::filesystem::path& to) {
        SCOPED_TRACE(to.string());
        EXPECT_ANY_THROW(embed::edit_model(source, to, edits));
        EXPECT_EQ(file_bytes(source), source_before);
        EXPECT_FALSE(std::filesystem::exists(destination));
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.gguf.tmp-embed"));
    };
    refused({}, source);
    ModelEdits existing;
    existing.add_tokens = {"tok4"};
    refused(existing, destination);
    ModelEdits twice;
    twice.add_tokens = {"new", "new"};
    refused(twice, destination);
    ModelEdits out_of_range;
    out_of_range.reinitialise = {kRows};
    EXPECT_THROW(embed::edit_model(source, destination, out_of_range), std::out_of_range);
    ModelEdits negative_k;
    negative_k.pad_to_multiple_of = -2;
    refused(negative_k, destination);
    ModelEdits every_row;
    for (Index i = 0; i < kRows; ++i) every_row.reinitialise.push_back(i);
    refused(every_row, destination);
    EXPECT_FALSE(std::filesystem::exists(destination));

    const std::filesystem::path occupied = dir.write("occupied.gguf", "keep");
    EXPECT_THROW(embed::edit_model(source, occupied, {}), std::invalid_argument);
    EXPECT_EQ(file_bytes(occupied), "keep");

    ModelEdits allowed;
    allowed.add_tokens = {"tok4"};
    allowed.allow_duplicates = true;
    EXPECT_EQ(embed::edit_model(source, destination, allowed).tokens_added.at(0).id, kRows);
}

/// edit_model run in a child whose files may not grow past 4096 bytes (a disk that fills: EFBIG, SIGXFSZ
/// ignored); the child's exit status: 0 when it threw filesystem_error, 1 when it wrote, 2 another error.
int status_with_full_disk(const std::filesystem::path& source, const std::filesystem::path& destination,
                          const ModelEdits& edits) {
    const pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        setrlimit(RLIMIT_FSIZE, &limit);
        try {
            embed::edit_model(source, destination, edits);
        } catch (const std::filesystem::filesystem_error&) {
            _exit(0);
        } catch (...) {
            _exit(2);
        }
        _exit(1);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

TEST(EditModel, ADiskThatFillsLeavesNoDestination) {
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    const std::string source_before = file_bytes(source);
    const std::filesystem::path destination = dir.path() / "full.gguf";
    EXPECT_EQ(status_with_full_disk(source, destination, {}), 0);
    EXPECT_FALSE(std::filesystem::exists(destination));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "full.gguf.tmp-embed"));
    EXPECT_EQ(file_bytes(source), source_before);
}

/// A GPT-2-shaped checkpoint in miniature: wte (5, 4) of row i = [i + j / 8], a layer norm, tied (no
/// lm_head), tokenizer.json of 5 tokens (4 in the model's vocab, <|endoftext|> added). sharded: the two
/// tensors in two shards with an index.
std::filesystem::path write_folder(const TempDir& dir, bool sharded) {
    const std::filesystem::path folder = dir.path() / (sharded ? "sharded" : "gpt2");
    std::filesystem::create_directory(folder);
    embed_test::ByteWriter wte;
    for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 4; ++j) wte.f32(static_cast<float>(i) + static_cast<float>(j) / 8.0f);
    }
    embed_test::ByteWriter norm;
    for (int j = 0; j < 4; ++j) norm.f32(1.5f + static_cast<float>(j));
    const std::string wte_info = R"("transformer.wte.weight":{"dtype":"F32","shape":[5,4],"data_offsets":[0,80]})";
    const std::string norm_info = R"("transformer.h.0.ln_1.weight":{"dtype":"F32","shape":[4],"data_offsets":)";
    const auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(folder / name, std::ios::binary) << bytes;
    };
    if (sharded) {
        write("model-00001-of-00002.safetensors", embed_test::safetensors_file("{" + wte_info + "}", wte.bytes));
        write("model-00002-of-00002.safetensors",
              embed_test::safetensors_file("{" + norm_info + "[0,16]}}", norm.bytes));
        write("model.safetensors.index.json",
              R"({"metadata":{"total_size":96},"weight_map":{"transformer.wte.weight":"model-00001-of-00002.safetensors",)"
              R"("transformer.h.0.ln_1.weight":"model-00002-of-00002.safetensors"}})");
    } else {
        write("model.safetensors", embed_test::safetensors_file(
                                       R"({"__metadata__":{"format":"pt"},)" + wte_info + "," + norm_info + "[80,96]}}",
                                       wte.bytes + norm.bytes));
    }
    write("config.json", R"({"model_type":"gpt2","vocab_size":5,"n_embd":4,"tie_word_embeddings":true})");
    write("tokenizer.json", embed_test::bpe_byte_level_json());
    write("tokenizer_config.json", R"({"added_tokens_decoder":{"4":{"content":"<|endoftext|>","special":true}}})");
    write("README.md", "a model card");
    return folder;
}

TEST(EditModel, CheckpointFolderGainsSpecialTokensAndPadding) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "one file");
        TempDir dir;
        const std::filesystem::path source = write_folder(dir, sharded);
        const std::filesystem::path destination = dir.path() / "edited";
        ModelEdits edits;
        edits.add_tokens = {"<|user|>", "<|assistant|>", "<|end|>"};
        edits.special = true;
        edits.pad_to_multiple_of = 64;
        const embed::EditRecord record = embed::edit_model(source, destination, edits);
        EXPECT_EQ(record.rows_before, 5);
        EXPECT_EQ(record.rows_after, 64);
        EXPECT_TRUE(record.tied);
        ASSERT_EQ(record.tokens_added.size(), 3U);
        EXPECT_EQ(record.tokens_added[0].id, 5);

        const std::vector<embed::TensorInfo> tensors = embed::list_tensors(destination);
        ASSERT_EQ(tensors.size(), 2U);  // still tied: no lm_head appears
        const embed::Table table = embed::load_table(destination);
        ASSERT_EQ(table.rows(), 64);
        for (Index i = 0; i < 64; ++i) {
            for (Index j = 0; j < 4; ++j) {
                double mean = 0.0;
                for (int r = 0; r < 5; ++r) mean += static_cast<double>(static_cast<float>(r) + static_cast<float>(j) / 8.0f);
                const float want = i < 5 ? static_cast<float>(i) + static_cast<float>(j) / 8.0f
                                         : static_cast<float>(mean / 5.0);
                ASSERT_EQ(table(i, j), static_cast<double>(want)) << i << ", " << j;
            }
        }
        const std::optional<embed::Tying> tying = embed::check_tying(destination);
        ASSERT_TRUE(tying.has_value());
        EXPECT_EQ(tying->config_vocab_size, 64);
        const embed::Vocabulary vocabulary = embed::load_vocabulary(destination);
        EXPECT_EQ(vocabulary.find("<|assistant|>"), (std::vector<Index>{6}));
        EXPECT_EQ(vocabulary.size(), 8);  // padding rows get no token
        const std::string tokenizer_config = file_bytes(destination / "tokenizer_config.json");
        EXPECT_NE(tokenizer_config.find("\"7\""), std::string::npos);
        EXPECT_NE(tokenizer_config.find("<|end|>"), std::string::npos);
        EXPECT_EQ(file_bytes(destination / "README.md"), "a model card");
        if (sharded) {
            EXPECT_EQ(file_bytes(destination / "model-00002-of-00002.safetensors"),
                      file_bytes(source / "model-00002-of-00002.safetensors"));
            EXPECT_NE(file_bytes(destination / "model.safetensors.index.json").find("\"total_size\": 1040"),
                      std::string::npos);  // 64 x 4 x 4 + 16
        } else {
            EXPECT_EQ(tensor_bytes(destination / "model.safetensors").at("transformer.h.0.ln_1.weight"),
                      tensor_bytes(source / "model.safetensors").at("transformer.h.0.ln_1.weight"));
        }
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "edited.tmp-embed"));
        ModelEdits existing;
        existing.add_tokens = {"<|endoftext|>"};
        EXPECT_THROW(embed::edit_model(source, dir.path() / "again", existing), std::invalid_argument);
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "again"));
    }
}

TEST(EditModel, UnderTrainedRowsAreTheScansCandidates) {
    TempDir dir;
    SmallModel model;
    model.output.row(9).setConstant(1e-6f);  // a row that never learned: tiny in the output table
    model.embedding.row(9).setConstant(1e-6f);
    const std::filesystem::path source = model.write(dir);
    ModelEdits edits;
    edits.reinitialise_under_trained = true;
    edits.reinitialise = {0};
    const embed::EditRecord record = embed::edit_model(source, dir.path() / "out.gguf", edits);
    embed::ScanOptions options;
    options.reference_ids = {3};  // the <unused0> token, of type unused
    const embed::VocabularyScan scan = embed::scan_vocabulary(embed::load_table(source, "token_embd.weight"),
                                                              embed::load_table(source, "output.weight"), options);
    std::set<Index> want(scan.candidates.begin(), scan.candidates.end());
    want.insert(0);
    ASSERT_FALSE(scan.candidates.empty());
    EXPECT_EQ(record.rows_reinitialised, std::vector<Index>(want.begin(), want.end()));
}

TEST(EditModel, ADiskThatFillsLeavesNoFolder) {
    TempDir dir;
    const std::filesystem::path source = write_folder(dir, true);
    const std::filesystem::path destination = dir.path() / "full";
    ModelEdits edits;
    edits.pad_to_multiple_of = 1024;  // a shard of 16 KiB
    EXPECT_EQ(status_with_full_disk(source, destination, edits), 0);
    EXPECT_FALSE(std::filesystem::exists(destination));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "full.tmp-embed"));
    EXPECT_EQ(embed::list_tensors(source).size(), 2U);
}

TEST(EditModel, TheSameFileAtOneTwoAndSevenThreads) {
    const embed_test::DefaultsAfter restore;
    TempDir dir;
    const SmallModel model;
    const std::filesystem::path source = model.write(dir);
    ModelEdits edits;
    edits.add_tokens = {"new"};
    edits.pad_to_multiple_of = 5;
    edits.reinitialise = {1, 8};
    edits.init = embed::RowInit::sampled;
    edits.seed = 3;
    std::vector<std::string> files;
    for (const int threads : {1, 2, 7}) {
        embed::detail::set_worker_count(threads);
        const std::filesystem::path destination = dir.path() / ("threads" + std::to_string(threads) + ".gguf");
        embed::edit_model(source, destination, edits);
        files.push_back(file_bytes(destination));
    }
    EXPECT_EQ(files[1], files[0]);
    EXPECT_EQ(files[2], files[0]);
}

TEST(EditModel, AnUntiedFolderEditsItsOutputFromItsOwnRows) {
    TempDir dir;
    const std::filesystem::path source = dir.path() / "untied";
    std::filesystem::create_directory(source);
    embed_test::ByteWriter data;
    for (int i = 0; i < 8; ++i) data.f32(static_cast<float>(i));        // embed_tokens (4, 2): row i = [2i, 2i + 1]
    for (int i = 0; i < 8; ++i) data.f32(static_cast<float>(-3 * i));   // lm_head (4, 2)
    std::ofstream(source / "model.safetensors", std::ios::binary) << embed_test::safetensors_file(
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[4,2],"data_offsets":[0,32]},)"
        R"("lm_head.weight":{"dtype":"F32","shape":[4,2],"data_offsets":[32,64]}})",
        data.bytes);
    std::ofstream(source / "config.json") << R"({"text_config":{"vocab_size":4,"tie_word_embeddings":false}})";
    std::ofstream(source / "tokenizer.json") << embed_test::word_level_with(R"("a":0,"b":1,"c":2,"d":3)");
    ModelEdits edits;
    edits.reinitialise = {2};
    edits.add_tokens = {"e"};
    const embed::EditRecord record = embed::edit_model(source, dir.path() / "out", edits);
    EXPECT_FALSE(record.tied);
    EXPECT_EQ(record.rows_after, 5);
    const embed::Table output = embed::load_table(dir.path() / "out", "lm_head.weight");
    // Row 2 is the mean of rows 0, 1, 3; row 4 the mean of rows 0..3 after that.
    const double reinitialised[2] = {-3.0 * (0 + 2 + 6) / 3.0, -3.0 * (1 + 3 + 7) / 3.0};
    for (int j = 0; j < 2; ++j) {
        const double row2 = static_cast<double>(static_cast<float>(reinitialised[j]));
        EXPECT_EQ(output(2, j), row2);
        const double sum = -3.0 * j + -3.0 * (2 + j) + row2 + -3.0 * (6 + j);
        EXPECT_EQ(output(4, j), static_cast<double>(static_cast<float>(sum / 4.0)));
        EXPECT_EQ(output(1, j), -3.0 * (2 + j));
    }
    const std::optional<embed::Tying> tying = embed::check_tying(dir.path() / "out");
    ASSERT_TRUE(tying.has_value());
    EXPECT_EQ(tying->config_vocab_size, 5);  // text_config's
}

/// Sets the hook edit_model calls just before it checks its source, for one test; the default (none) after.
struct SourceCheckHook {
    explicit SourceCheckHook(std::function<void(const std::filesystem::path&)> hook) {
        embed::io::detail::set_before_source_check(std::move(hook));
    }
    ~SourceCheckHook() { embed::io::detail::set_before_source_check({}); }
    SourceCheckHook(const SourceCheckHook&) = delete;
    SourceCheckHook& operator=(const SourceCheckHook&) = delete;
};

/// Ways a file changes while it is read: each leaves a different trace (time, size, identity).
const std::vector<std::pair<std::string, std::function<void(const std::filesystem::path&)>>>& changes() {
    static const std::vector<std::pair<std::string, std::function<void(const std::filesystem::path&)>>> all = {
        {"modified", [](const std::filesystem::path& file) {
             // Same size, a later time: the clock moved on, as it does for a rewrite in place.
             std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) + std::chrono::seconds(1));
         }},
        {"went from", [](const std::filesystem::path& file) { std::ofstream(file, std::ios::app) << 'x'; }},
        {"replaced", [](const std::filesystem::path& file) {
             std::filesystem::path copy = file;
             copy += ".new";
             std::filesystem::copy_file(file, copy);
             std::filesystem::last_write_time(copy, std::filesystem::last_write_time(file));
             std::filesystem::rename(copy, file);
         }},
    };
    return all;
}

// The source changes after the destination's bytes are written and before they are renamed into place (the
// hook runs at that moment, so no race decides the outcome): the edit is refused with a FileFormatError naming
// the source and what changed, and leaves neither the destination nor its temporary.
TEST(EditModel, ASourceThatChangesWhileItIsReadIsRefused) {
    for (const auto& named_change : changes()) {
        const std::string& what = named_change.first;
        const std::function<void(const std::filesystem::path&)>& change = named_change.second;
        for (const bool folder : {false, true}) {
            SCOPED_TRACE(what + (folder ? " folder" : " gguf"));
            TempDir dir;
            const std::filesystem::path source = folder ? write_folder(dir, true) : SmallModel().write(dir);
            const std::filesystem::path changed = folder ? source / "model-00002-of-00002.safetensors" : source;
            const std::filesystem::path destination = dir.path() / (folder ? "out" : "out.gguf");
            int calls = 0;
            const SourceCheckHook hook([&](const std::filesystem::path& checked) {
                EXPECT_EQ(checked, source);
                ++calls;
                change(changed);
            });
            ModelEdits edits;
            edits.add_tokens = {"new"};
            try {
                embed::edit_model(source, destination, edits);
                ADD_FAILURE() << "the edit of a changed source was written";
            } catch (const embed::FileFormatError& error) {
                EXPECT_EQ(error.file(), source);
                const std::string message = error.what();
                EXPECT_NE(message.find("changed while it was being edited"), std::string::npos) << message;
                EXPECT_NE(message.find(what), std::string::npos) << message;
                if (folder) {
                    EXPECT_NE(message.find("model-00002-of-00002.safetensors"), std::string::npos) << message;
                }
                EXPECT_EQ(message.find('\n'), std::string::npos);
            }
            EXPECT_EQ(calls, 1);
            EXPECT_FALSE(std::filesystem::exists(destination));
            EXPECT_FALSE(std::filesystem::exists(dir.path() / (folder ? "out.tmp-embed" : "out.gguf.tmp-embed")));
        }
    }
}

// A file added to a source folder during the edit is a change too; an unchanged source is written as ever,
// the check having run once.
TEST(EditModel, AFileAddedToTheFolderIsAChangeAndAnUnchangedSourceIsWritten) {
    TempDir dir;
    const std::filesystem::path source = write_folder(dir, false);
    {
        const SourceCheckHook hook([&](const std::filesystem::path&) { std::ofstream(source / "late.txt") << "late"; });
        try {
            embed::edit_model(source, dir.path() / "out", {});
            ADD_FAILURE() << "the edit of a changed folder was written";
        } catch (const embed::FileFormatError& error) {
            EXPECT_NE(std::string(error.what()).find("late.txt was added"), std::string::npos) << error.what();
        }
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
    }
    std::filesystem::remove(source / "late.txt");
    int calls = 0;
    const SourceCheckHook hook([&](const std::filesystem::path&) { ++calls; });
    embed::edit_model(source, dir.path() / "out", {});
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / "model.safetensors"));
}

// A destination inside the source folder would be copied into itself: refused before anything is written.
TEST(EditModel, ADestinationInsideTheSourceFolderIsRefused) {
    TempDir dir;
    const std::filesystem::path source = write_folder(dir, false);
    try {
        embed::edit_model(source, source / "edited", {});
        ADD_FAILURE() << "a destination inside the source was accepted";
    } catch (const std::invalid_argument& error) {
        EXPECT_NE(std::string(error.what()).find("inside the source folder"), std::string::npos) << error.what();
    }
    EXPECT_FALSE(std::filesystem::exists(source / "edited"));
    EXPECT_FALSE(std::filesystem::exists(source / "edited.tmp-embed"));
}

}  // namespace
