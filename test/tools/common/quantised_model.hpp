#pragma once
// A model for the tools' runs on quantised tables, written twice: once with its tensors in ggml's block types
// (encoded by save_table's reference quantiser) and once with the same tensors as F32, holding what
// load_table_f32 reads from the first (the widened tables). Both files carry one vocabulary (tok0, tok1, ...,
// the ids in `unused` of type unused), built byte by byte as gguf_model.hpp builds it. And the check the tools
// promise: their JSON on the first equals, key by key, their JSON on the second, apart from the keys that name
// the source and its precision.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/io.hpp>

#include "file_bytes.hpp"
#include "gguf_model.hpp"

namespace embed_test {

/// One tensor of the model: its name, the block type it is stored in (or f32, stored alike in both files), and
/// the values quantised into it.
struct QuantisedTensor {
    std::string name;
    embed::ElementType type;
    embed::Table values;
};

/// The two files of one model.
struct QuantisedModel {
    std::filesystem::path quantised;
    std::filesystem::path widened;
};

/// ggml's type id of the block types the tests use (ggml.h's enum ggml_type).
inline std::uint32_t ggml_id(embed::ElementType type) {
    switch (type) {
        case embed::ElementType::f32: return 0;
        case embed::ElementType::q8_0: return 8;
        case embed::ElementType::q4_k: return 12;
        case embed::ElementType::q6_k: return 14;
        default: throw std::invalid_argument("quantised_model.hpp: no ggml id listed for this type");
    }
}

/// A .gguf of tensors (name, ne = [d, V], ggml id, bytes) and the vocabulary of vocab tokens, unused as said.
inline std::string gguf_with_vocabulary(const std::vector<std::pair<GgufTensor, std::string>>& tensors,
                                        std::int64_t vocab, const std::set<std::int64_t>& unused) {
    ByteWriter meta;
    meta.gguf_string("tokenizer.ggml.tokens");
    meta.u32(9);  // array
    meta.u32(8);  // of strings
    meta.u64(static_cast<std::uint64_t>(vocab));
    for (std::int64_t id = 0; id < vocab; ++id) meta.gguf_string(gguf_model_token(id));
    meta.gguf_string("tokenizer.ggml.token_type");
    meta.u32(9);  // array
    meta.u32(5);  // of int32
    meta.u64(static_cast<std::uint64_t>(vocab));
    for (std::int64_t id = 0; id < vocab; ++id) meta.u32(unused.contains(id) ? 5 : 1);
    std::vector<GgufTensor> infos;
    std::string data;
    for (const auto& [info, bytes] : tensors) {
        data.append((32 - data.size() % 32) % 32, '\0');  // each tensor at the default alignment
        infos.push_back({info.name, info.ne, info.type, data.size()});
        data += bytes;
    }
    return gguf_file(infos, data, 2, meta.bytes);
}

/// Writes tensors quantised to dir/name.gguf and widened to dir/name_f32.gguf (see the top of this file).
inline QuantisedModel write_quantised_model(const TempDir& dir, const std::string& name,
                                            const std::vector<QuantisedTensor>& tensors, std::int64_t vocab,
                                            const std::set<std::int64_t>& unused) {
    std::vector<std::pair<GgufTensor, std::string>> quantised;
    std::vector<std::pair<GgufTensor, std::string>> widened;
    for (const QuantisedTensor& tensor : tensors) {
        const std::filesystem::path one = dir.path() / (name + "_" + tensor.name + ".gguf");
        embed::save_table(one, tensor.values, tensor.name, tensor.type);
        const std::vector<std::uint64_t> ne = {static_cast<std::uint64_t>(tensor.values.cols()),
                                               static_cast<std::uint64_t>(tensor.values.rows())};
        const embed::TableF32 values = embed::load_table_f32(one);
        std::string bytes(static_cast<std::size_t>(values.size()) * sizeof(float), '\0');
        std::memcpy(bytes.data(), values.data(), bytes.size());  // row-major, little-endian as GGUF's F32
        widened.push_back({{tensor.name, ne, 0, 0}, bytes});
        const embed::OpenedTable opened = embed::open_table(one);
        if (const auto* blocks = std::get_if<embed::QuantisedTable>(&opened.table)) {
            quantised.push_back({{tensor.name, ne, ggml_id(tensor.type), 0},
                                 std::string(reinterpret_cast<const char*>(blocks->data()),
                                             static_cast<std::size_t>(blocks->bytes()))});
        } else {
            quantised.push_back({{tensor.name, ne, ggml_id(tensor.type), 0}, bytes});
        }
        std::filesystem::remove(one);
    }
    return {dir.write(name + ".gguf", gguf_with_vocabulary(quantised, vocab, unused)),
            dir.write(name + "_f32.gguf", gguf_with_vocabulary(widened, vocab, unused))};
}

/// Every key of want is in got, in the same order, with the same value (compared as JSON text: numbers bit
/// for bit, NaN as null), and got has no other; except the keys listed in `naming_the_source` ("source.file":
/// a key of an object under a key), which are skipped. Objects are compared key by key down to those keys.
inline void expect_same_json_apart_from(const nlohmann::ordered_json& got, const nlohmann::ordered_json& want,
                                        const std::set<std::string>& naming_the_source,
                                        const std::string& path = "") {
    if (!want.is_object() || !got.is_object()) {
        EXPECT_EQ(got.dump(), want.dump()) << "at " << path;
        return;
    }
    std::vector<std::string> got_keys;
    std::vector<std::string> want_keys;
    for (const auto& item : got.items()) got_keys.push_back(item.key());
    for (const auto& item : want.items()) want_keys.push_back(item.key());
    EXPECT_EQ(got_keys, want_keys) << "keys at " << (path.empty() ? "the top" : path);
    for (const auto& item : want.items()) {
        const std::string key = path.empty() ? item.key() : path + "." + item.key();
        if (naming_the_source.contains(key) || !got.contains(item.key())) continue;
        expect_same_json_apart_from(got.at(item.key()), item.value(), naming_the_source, key);
    }
}

}  // namespace embed_test
