// Hugging Face checkpoint folders read by the file functions: config.json and
// model.safetensors, or model.safetensors.index.json and its shards. Every folder
// is built here byte by byte in a temporary directory; the tables it must load
// are made from the same numbers the test wrote, never read back through the
// loader. The hostile folders each name the file, the field and the value.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/io.hpp>

#include "file_bytes.hpp"
#include "table_files.hpp"

namespace {

using embed::FileFormatError;
using embed::Index;
using embed::Table;
using embed_test::TempDir;
using testing::HasSubstr;

/// One float32 tensor of a fixture: its values, row by row.
struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

/// A .safetensors file holding tensors as F32, in the given order, built from the format's description.
std::string safetensors_of(const std::vector<Tensor>& tensors) {
    std::string json = "{";
    embed_test::ByteWriter data;
    for (const Tensor& tensor : tensors) {
        const std::size_t begin = data.bytes.size();
        for (float v : tensor.values) data.f32(v);
        std::string dims;
        for (std::int64_t extent : tensor.shape) {
            if (!dims.empty()) dims += ',';
            dims += std::to_string(extent);
        }
        json += (json.size() > 1 ? "," : "") + std::string("\"") + tensor.name + R"(":{"dtype":"F32","shape":[)" +
                dims + R"(],"data_offsets":[)" + std::to_string(begin) + "," + std::to_string(data.bytes.size()) + "]}";
    }
    return embed_test::safetensors_file(json + "}", data.bytes);
}

/// The (rows, cols) table of values, filled by an explicit loop: the independent expectation.
Table expected_table(const Tensor& tensor) {
    Table table(tensor.shape[0], tensor.shape[1]);
    for (Index r = 0; r < table.rows(); ++r) {
        for (Index c = 0; c < table.cols(); ++c) {
            table(r, c) = static_cast<double>(tensor.values[static_cast<std::size_t>(r * table.cols() + c)]);
        }
    }
    return table;
}

bool same_bits(const Table& a, const Table& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// The fixture's numbers: a (4, 3) embedding, an output layer equal to it or not, a layer and a norm.
const Tensor embedding{"model.embed_tokens.weight", {4, 3}, {0.5f, -1.25f, 3.0f, 0.1f, -0.0f, 7.5f, 1e-3f, 2.0f,
                                                             -8.0f, 0.3f, 65504.0f, -2.5f}};
const Tensor layer{"model.layers.0.mlp.weight", {2, 2}, {1.0f, 2.0f, 3.0f, 4.0f}};
const Tensor norm{"model.norm.weight", {3}, {1.0f, 1.0f, 0.5f}};
Tensor lm_head_equal() { return {"lm_head.weight", embedding.shape, embedding.values}; }
Tensor lm_head_different() {
    Tensor head = lm_head_equal();
    head.values[7] = 2.25f;  // one value differs
    return head;
}

constexpr const char* shard1 = "model-00001-of-00003.safetensors";
constexpr const char* shard2 = "model-00002-of-00003.safetensors";
constexpr const char* shard3 = "model-00003-of-00003.safetensors";

/// A checkpoint folder "ckpt" inside a temporary directory.
class Folder {
public:
    Folder() { std::filesystem::create_directory(path()); }
    std::filesystem::path path() const { return root_.path() / "ckpt"; }
    std::filesystem::path write(const std::string& name, const std::string& bytes) const {
        return root_.write("ckpt/" + name, bytes);
    }
    const TempDir& root() const { return root_; }

private:
    TempDir root_;
};

/// An index whose weight_map lists entries in the order given.
std::string index_of(const std::vector<std::pair<std::string, std::string>>& weight_map) {
    std::string json = R"({"metadata": {"total_size": 104}, "weight_map": {)";
    for (std::size_t i = 0; i < weight_map.size(); ++i) {
        json += (i ? ", \"" : "\"") + weight_map[i].first + "\": \"" + weight_map[i].second + "\"";
    }
    return json + "}}";
}

/// Three shards: the layer in the first, the embedding in the middle one, the norm (and lm_head, when given)
/// in the last; the index lists them out of name order.
void write_three_shards(const Folder& folder, const std::optional<Tensor>& lm_head) {
    folder.write(shard1, safetensors_of({layer}));
    folder.write(shard2, safetensors_of({embedding}));
    std::vector<Tensor> last{norm};
    std::vector<std::pair<std::string, std::string>> weight_map{
        {norm.name, shard3}, {embedding.name, shard2}, {layer.name, shard1}};
    if (lm_head) {
        last.insert(last.begin(), *lm_head);
        weight_map.emplace_back(lm_head->name, shard3);
    }
    folder.write(shard3, safetensors_of(last));
    folder.write("model.safetensors.index.json", index_of(weight_map));
}

TEST(Checkpoint, ASingleFileFolderReadsItsModelSafetensors) {
    const Folder folder;
    folder.write("config.json", R"({"model_type": "llama", "tie_word_embeddings": true, "vocab_size": 4})");
    folder.write("model.safetensors", safetensors_of({layer, embedding, norm}));
    const Table expected = expected_table(embedding);
    EXPECT_TRUE(same_bits(embed::load_table(folder.path()), expected));
    const embed::TableF32 as_f32 = embed::load_table_f32(folder.path());
    EXPECT_TRUE(same_bits(as_f32.cast<double>(), expected));
    const embed::StoredTable stored = embed::load_stored_table(folder.path());
    ASSERT_TRUE(std::holds_alternative<embed::TableF32>(stored));
    EXPECT_TRUE(same_bits(std::get<embed::TableF32>(stored).cast<double>(), expected));
    EXPECT_TRUE(same_bits(embed::load_table(folder.path(), layer.name), expected_table(layer)));
    EXPECT_THAT([&] { (void)embed::load_table_bf16(folder.path()); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr("F32")));
    EXPECT_EQ(embed::chosen_tensor(folder.path()), embedding.name);

    const auto tying = embed::check_tying(folder.path());
    ASSERT_TRUE(tying.has_value());
    EXPECT_EQ(tying->embedding, embedding.name);
    EXPECT_EQ(tying->output, "");
    EXPECT_TRUE(tying->tied);
    EXPECT_EQ(tying->config_tied, std::optional<bool>(true));
    EXPECT_EQ(tying->config_vocab_size, std::optional<std::int64_t>(4));
    EXPECT_EQ(tying->disagreement, "");
}

TEST(Checkpoint, ThreeShardsReadAsOneFileWithTheEmbeddingInTheMiddleShard) {
    const Folder folder;
    write_three_shards(folder, lm_head_different());
    EXPECT_TRUE(same_bits(embed::load_table(folder.path()), expected_table(embedding)));
    EXPECT_TRUE(same_bits(embed::load_table(folder.path(), "lm_head.weight"), expected_table(lm_head_different())));
    EXPECT_TRUE(same_bits(embed::load_table_f32(folder.path(), layer.name).cast<double>(), expected_table(layer)));
    EXPECT_EQ(embed::chosen_tensor(folder.path()), embedding.name);

    // The shards in name order, each in its own file's order (a .safetensors header's, sorted by name).
    std::vector<std::string> names;
    for (const embed::TensorInfo& info : embed::list_tensors(folder.path())) names.push_back(info.name);
    EXPECT_EQ(names, (std::vector<std::string>{layer.name, embedding.name, "lm_head.weight", norm.name}));
    const auto infos = embed::list_tensors(folder.path());
    EXPECT_EQ(infos[1].shape, (std::vector<std::int64_t>{4, 3}));
    EXPECT_EQ(infos[3].shape, (std::vector<std::int64_t>{3}));
    EXPECT_FALSE(infos[3].loadable);

    EXPECT_THAT([&] { (void)embed::load_table(folder.path(), "absent.weight"); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr("has no tensor 'absent.weight'; it has 4 tensors")));
}

TEST(Checkpoint, TyingAcrossShardsComparesTheValuesAndReportsTheConfig) {
    struct Case {
        const char* what;
        std::optional<Tensor> lm_head;
        std::string config;
        bool tied;
        std::optional<bool> config_tied;
        std::string disagreement;  // a part of it; "" for none
    };
    const std::vector<Case> cases{
        {"tied by value, config tied", lm_head_equal(), R"({"tie_word_embeddings": true})", true, true, ""},
        {"untied, config untied", lm_head_different(), R"({"tie_word_embeddings": false})", false, false, ""},
        {"absent, config tied", std::nullopt, R"({"tie_word_embeddings": true})", true, true, ""},
        {"equal values, config untied", lm_head_equal(), R"({"tie_word_embeddings": false})", true, false, ""},
        {"config says nothing", lm_head_different(), R"({"vocab_size": 4})", false, std::nullopt, ""},
        {"config tied, lm_head differs", lm_head_different(), R"({"tie_word_embeddings": true})", false, true,
         R"(config.json's tie_word_embeddings is true, but "lm_head.weight" differs from "model.embed_tokens.weight")"},
        {"config untied, no lm_head", std::nullopt, R"({"tie_word_embeddings": false})", true, false,
         "config.json's tie_word_embeddings is false, but there is no output tensor"},
        {"text_config decides", std::nullopt, R"({"text_config": {"tie_word_embeddings": false}})", true, false,
         "config.json's text_config.tie_word_embeddings is false"},
        {"the two levels differ", lm_head_equal(),
         R"({"tie_word_embeddings": true, "text_config": {"tie_word_embeddings": false}})", true, std::nullopt,
         "config.json sets tie_word_embeddings true but text_config.tie_word_embeddings false"},
        {"text_config null", std::nullopt, R"({"tie_word_embeddings": true, "text_config": null})", true, true, ""},
    };
    for (const Case& c : cases) {
        const Folder folder;
        write_three_shards(folder, c.lm_head);
        folder.write("config.json", c.config);
        const auto tying = embed::check_tying(folder.path());
        ASSERT_TRUE(tying.has_value()) << c.what;
        EXPECT_EQ(tying->embedding, embedding.name) << c.what;
        EXPECT_EQ(tying->output, c.lm_head ? "lm_head.weight" : "") << c.what;
        EXPECT_EQ(tying->tied, c.tied) << c.what;
        EXPECT_EQ(tying->config_tied, c.config_tied) << c.what;
        if (c.disagreement.empty()) {
            EXPECT_EQ(tying->disagreement, "") << c.what;
        } else {
            EXPECT_THAT(tying->disagreement, HasSubstr(c.disagreement)) << c.what;
        }
    }
}

TEST(Checkpoint, WithoutConfigTheTensorsAloneDecide) {
    const Folder folder;
    write_three_shards(folder, lm_head_different());
    const auto tying = embed::check_tying(folder.path());
    ASSERT_TRUE(tying.has_value());
    EXPECT_FALSE(tying->tied);
    EXPECT_EQ(tying->config_tied, std::nullopt);
    EXPECT_EQ(tying->config_vocab_size, std::nullopt);
    EXPECT_EQ(tying->disagreement, "");
}

TEST(Checkpoint, VocabSizeAboveTheTableRowsIsAnErrorAndBelowIsPadding) {
    const Folder folder;
    write_three_shards(folder, lm_head_equal());
    folder.write("config.json", R"({"vocab_size": 3})");  // 4 rows: padded, fine
    EXPECT_TRUE(same_bits(embed::load_table(folder.path()), expected_table(embedding)));
    EXPECT_EQ(embed::check_tying(folder.path())->config_vocab_size, std::optional<std::int64_t>(3));

    const auto config = folder.write("config.json", R"({"vocab_size": 5})");
    for (const char* tensor : {"", "lm_head.weight", "model.embed_tokens.weight"}) {
        try {
            (void)embed::load_table(folder.path(), tensor);
            ADD_FAILURE() << "read '" << tensor << "' with vocab_size 5 and 4 rows";
        } catch (const FileFormatError& error) {
            EXPECT_EQ(error.file(), config);
            EXPECT_THAT(error.what(), HasSubstr("vocab_size is 5, but tensor '" +
                                                std::string(*tensor ? tensor : embedding.name.c_str())));
            EXPECT_THAT(error.what(), HasSubstr("has only 4 rows"));
        }
    }
    EXPECT_THROW((void)embed::check_tying(folder.path()), FileFormatError);
    EXPECT_THROW((void)embed::chosen_tensor(folder.path()), FileFormatError);
    // A tensor that is not the vocabulary's table is not held to vocab_size.
    EXPECT_TRUE(same_bits(embed::load_table(folder.path(), layer.name), expected_table(layer)));

    folder.write("config.json", R"({"vocab_size": 4, "text_config": {"vocab_size": 6}})");
    EXPECT_THAT([&] { (void)embed::load_table(folder.path()); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr("text_config.vocab_size is 6")));
}

TEST(Checkpoint, TheChoosingRuleRunsOverAllShards) {
    const Folder folder;
    const Tensor other{"transformer.wte.weight", {1, 2}, {1.0f, 2.0f}};
    folder.write(shard1, safetensors_of({other}));
    folder.write(shard2, safetensors_of({embedding}));
    folder.write("model.safetensors.index.json", index_of({{embedding.name, shard2}, {other.name, shard1}}));
    EXPECT_THAT([&] { (void)embed::chosen_tensor(folder.path()); },
                testing::ThrowsMessage<FileFormatError>(
                    HasSubstr(folder.path().string() + ": has 2 tensors named like a token embedding")));
    EXPECT_TRUE(same_bits(embed::load_table(folder.path(), other.name), expected_table(other)));
}

// Hugging Face's download cache keeps a snapshot folder of symbolic links into a blob store beside it.
TEST(Checkpoint, ShardsMayBeSymbolicLinksAsInTheDownloadCache) {
    const Folder folder;
    write_three_shards(folder, std::nullopt);
    const auto blob = folder.root().write("blob-of-shard-2", safetensors_of({embedding}));
    std::filesystem::remove(folder.path() / shard2);
    std::filesystem::create_symlink(blob, folder.path() / shard2);
    EXPECT_TRUE(same_bits(embed::load_table(folder.path()), expected_table(embedding)));
}

TEST(Checkpoint, SavingToAFolderIsAnInvalidArgumentAndWritesNothing) {
    const Folder folder;
    folder.write("model.safetensors", safetensors_of({embedding}));
    EXPECT_THAT([&] { embed::save_table(folder.path(), expected_table(layer)); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr(folder.path().string() + ": it is a directory")));
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder.path())) files.push_back(entry.path());
    EXPECT_EQ(files, std::vector<std::filesystem::path>{folder.path() / "model.safetensors"});
}

TEST(Checkpoint, AShardThatIsNotARegularFileIsAFilesystemError) {
    const Folder folder;
    write_three_shards(folder, std::nullopt);
    std::filesystem::remove(folder.path() / shard1);
    std::filesystem::create_directory(folder.path() / shard1);
    EXPECT_THROW((void)embed::load_table(folder.path()), std::filesystem::filesystem_error);
}

/// A hostile folder: the files to change in a good three-shard folder without lm_head ("" removes one), the file the error
/// must name (relative to the folder; "" for the folder itself) and parts its message must hold.
struct Hostile {
    const char* what;
    std::map<std::string, std::string> files;
    std::string named;
    std::vector<std::string> message;
};

std::vector<Hostile> hostile_folders() {
    const std::string index = "model.safetensors.index.json";
    const auto map_with = [&](const std::string& shard_name) {
        return index_of({{embedding.name, shard2}, {layer.name, shard_name}, {norm.name, shard3}});
    };
    const auto escape = [](std::string text) {  // a JSON string's content for a name holding '\'
        std::string out;
        for (char c : text) out += c == '\\' ? std::string("\\\\") : std::string(1, c);
        return out;
    };
    return {
        {"config not JSON", {{"config.json", "{\"vocab_size\": 4"}}, "config.json", {"is not valid JSON"}},
        {"config an array", {{"config.json", "[1, 2]"}}, "config.json", {"is [1,2], not a JSON object"}},
        {"tie a string", {{"config.json", R"({"tie_word_embeddings": "yes"})"}}, "config.json",
         {R"(tie_word_embeddings is "yes"; expected true or false)"}},
        {"tie null", {{"config.json", R"({"tie_word_embeddings": null})"}}, "config.json",
         {"tie_word_embeddings is null; expected true or false"}},
        {"tie a number", {{"config.json", R"({"tie_word_embeddings": 1})"}}, "config.json",
         {"tie_word_embeddings is 1; expected true or false"}},
        {"text_config tie a string", {{"config.json", R"({"text_config": {"tie_word_embeddings": "no"}})"}},
         "config.json", {R"(text_config.tie_word_embeddings is "no"; expected true or false)"}},
        {"text_config a number", {{"config.json", R"({"text_config": 5})"}}, "config.json",
         {"text_config is 5; expected an object or null"}},
        {"vocab negative", {{"config.json", R"({"vocab_size": -5})"}}, "config.json",
         {"vocab_size is -5; expected an integer in [1, 2^63)"}},
        {"vocab zero", {{"config.json", R"({"vocab_size": 0})"}}, "config.json", {"vocab_size is 0; expected"}},
        {"vocab fractional", {{"config.json", R"({"vocab_size": 3.5})"}}, "config.json", {"vocab_size is 3.5; expected"}},
        {"vocab a string", {{"config.json", R"({"vocab_size": "4"})"}}, "config.json", {R"(vocab_size is "4"; expected)"}},
        {"vocab past 2^63", {{"config.json", R"({"vocab_size": 18446744073709551615})"}}, "config.json",
         {"vocab_size is 18446744073709551615; expected"}},
        {"config key twice", {{"config.json", R"({"tie_word_embeddings": true, "tie_word_embeddings": false})"}},
         "config.json", {R"(has key "tie_word_embeddings" twice in the top-level object)"}},
        {"key twice in an array's object", {{"config.json", R"({"m": [{}, {"x": 1, "x": 2}]})"}}, "config.json",
         {R"(config.json has key "x" twice in m[1])"}},
        {"config nested deep", {{"config.json", std::string(100000, '[') + std::string(100000, ']')}}, "config.json",
         {"nests deeper than 32 levels"}},
        {"index not JSON", {{index, R"({"weight_map": {)"}}, index, {"is not valid JSON"}},
        {"index null", {{index, "null"}}, index, {"is null, not a JSON object"}},
        {"weight_map missing", {{index, R"({"metadata": {}})"}}, index, {R"(has no "weight_map")"}},
        {"weight_map an array", {{index, R"({"weight_map": ["a"]})"}}, index,
         {R"(weight_map is ["a"]; expected an object of tensor name -> shard file name)"}},
        {"weight_map empty", {{index, R"({"weight_map": {}})"}}, index, {"weight_map is {}; it names no tensor"}},
        {"weight_map value a number", {{index, R"({"weight_map": {"model.norm.weight": 7}})"}}, index,
         {R"(weight_map["model.norm.weight"] is 7; expected a string (a shard file name))"}},
        {"tensor named twice", {{index, R"({"weight_map": {"a": ")" + std::string(shard1) + R"(", "a": ")" +
                                            std::string(shard2) + R"("}})"}},
         index, {R"(model.safetensors.index.json has key "a" twice in weight_map)"}},
        {"index nested deep", {{index, R"({"metadata": )" + std::string(1000, '[') + std::string(1000, ']') + "}"}},
         index, {"nests deeper than 32 levels"}},
        {"shard outside the folder", {{index, map_with("../outside.safetensors")}}, index,
         {R"(weight_map["model.layers.0.mlp.weight"] is "../outside.safetensors"; a shard must be a file name)"}},
        {"shard an absolute path", {{index, map_with("/tmp/outside.safetensors")}}, index,
         {R"(is "/tmp/outside.safetensors"; a shard must be)"}},
        {"shard in a subfolder", {{index, map_with("sub/a.safetensors")}}, index, {R"(is "sub/a.safetensors"; a shard)"}},
        {"shard with a backslash", {{index, map_with(escape("sub\\a.safetensors"))}}, index,
         {R"(is "sub\\a.safetensors"; a shard)"}},
        {"shard not safetensors", {{index, map_with("config.json")}}, index,
         {R"(is "config.json"; a shard must be a file name in the checkpoint's folder (no '/' or '\') ending in .safetensors)"}},
        {"shard dot-dot", {{index, map_with("..")}}, index, {R"(is ".."; a shard)"}},
        {"shard file missing", {{shard1, ""}}, index,
         {R"(weight_map["model.layers.0.mlp.weight"] is ")" + std::string(shard1) + R"(", a shard that is not in)"}},
        {"shard lacks a tensor", {{shard3, safetensors_of({})}}, shard3,
         {R"(has no tensor "model.norm.weight", which model.safetensors.index.json's weight_map assigns to it)"}},
        {"tensor in the wrong shard", {{shard1, safetensors_of({layer, embedding})}}, shard1,
         {R"(holds tensor "model.embed_tokens.weight", which model.safetensors.index.json's weight_map assigns to ")" +
          std::string(shard2) + "\""}},
        {"tensor the index does not list", {{shard3, safetensors_of({norm, lm_head_equal()})}}, shard3,
         {R"(holds tensor "lm_head.weight", which model.safetensors.index.json's weight_map does not list)"}},
        {"shard not safetensors inside", {{shard2, "not a safetensors file"}}, shard2, {"safetensors header"}},
        {"neither weights file", {{index, ""}}, "",
         {"has neither model.safetensors nor model.safetensors.index.json"}},
        {"both weights files", {{"model.safetensors", safetensors_of({embedding})}}, "",
         {"has both model.safetensors and model.safetensors.index.json"}},
    };
}

TEST(Checkpoint, HostileFoldersAreRefusedNamingTheFileTheFieldAndTheValue) {
    for (const Hostile& c : hostile_folders()) {
        const Folder folder;
        write_three_shards(folder, std::nullopt);
        // A file the hostile names point at, so a missing check would read it rather than fail to open it.
        folder.root().write("outside.safetensors", safetensors_of({layer}));
        for (const auto& [name, bytes] : c.files) {
            if (bytes.empty()) {
                std::filesystem::remove(folder.path() / name);
            } else {
                folder.write(name, bytes);
            }
        }
        const std::filesystem::path named = c.named.empty() ? folder.path() : folder.path() / c.named;
        for (const char* function : {"load_table", "list_tensors", "check_tying"}) {
            try {
                if (function == std::string("load_table")) (void)embed::load_table(folder.path());
                if (function == std::string("list_tensors")) (void)embed::list_tensors(folder.path());
                if (function == std::string("check_tying")) (void)embed::check_tying(folder.path());
                ADD_FAILURE() << c.what << ": " << function << " read it";
            } catch (const FileFormatError& error) {
                EXPECT_EQ(error.file(), named) << c.what;
                EXPECT_THAT(error.what(), testing::StartsWith(named.string() + ": ")) << c.what;
                for (const std::string& part : c.message) EXPECT_THAT(error.what(), HasSubstr(part)) << c.what;
            } catch (const std::exception& error) {
                ADD_FAILURE() << c.what << ": " << function << " threw another exception: " << error.what();
            }
        }
    }
}

// The JSON files are read whole, so a file past the cap is refused by its size before a byte is read. The
// file is sparse: its size costs no disk.
TEST(Checkpoint, JsonFilesPastTheSizeCapAreRefusedByTheirSize) {
    for (const char* name : {"config.json", "model.safetensors.index.json"}) {
        const Folder folder;
        write_three_shards(folder, std::nullopt);
        const auto file = folder.write(name, "{}");
        std::filesystem::resize_file(file, std::uintmax_t{100'000'001});
        EXPECT_THAT([&] { (void)embed::load_table(folder.path()); },
                    testing::ThrowsMessage<FileFormatError>(HasSubstr(
                        file.string() + ": " + name + " has 100000001 bytes, above the limit of 100000000 bytes")))
            << name;
    }
}

}  // namespace
