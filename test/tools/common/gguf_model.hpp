#pragma once
// A small GGUF model for the tools' tests, built byte by byte from the format
// (test/support/file_bytes.hpp): an F32 token_embd.weight of `rows` rows, and
// a vocabulary of its own (tokenizer.ggml.tokens "tok0", "tok1", ... and their
// token types) that may be shorter or longer than the table.

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "file_bytes.hpp"

namespace embed_test {

/// Value (r, c) of the model's table: spread-out numbers every row differs in, exact in float32.
inline float gguf_model_value(std::int64_t r, std::int64_t c) {
    return static_cast<float>(((r * 37 + c * 11) % 29) - 14) / 8.0f;
}

/// "tok" followed by id, built by appending: GCC 12 warns wrongly (-Wrestrict) about "tok" + std::to_string.
inline std::string gguf_model_token(std::int64_t id) {
    std::string token = "tok";
    token += std::to_string(id);
    return token;
}

/// A .gguf with token_embd.weight (rows, dim) of gguf_model_value and a vocabulary of vocab_size tokens
/// gguf_model_token(id), each of type normal (1) except the ids in unused (type unused, 5).
inline std::string gguf_model(std::int64_t rows, std::int64_t dim, std::int64_t vocab_size,
                              const std::set<std::int64_t>& unused) {
    ByteWriter meta;
    meta.gguf_string("tokenizer.ggml.tokens");
    meta.u32(9);  // array
    meta.u32(8);  // of strings
    meta.u64(static_cast<std::uint64_t>(vocab_size));
    for (std::int64_t id = 0; id < vocab_size; ++id) meta.gguf_string(gguf_model_token(id));
    meta.gguf_string("tokenizer.ggml.token_type");
    meta.u32(9);  // array
    meta.u32(5);  // of int32
    meta.u64(static_cast<std::uint64_t>(vocab_size));
    for (std::int64_t id = 0; id < vocab_size; ++id) meta.u32(unused.contains(id) ? 5 : 1);
    ByteWriter data;
    for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c = 0; c < dim; ++c) data.f32(gguf_model_value(r, c));
    }
    const std::vector<GgufTensor> tensors = {
        {"token_embd.weight", {static_cast<std::uint64_t>(dim), static_cast<std::uint64_t>(rows)}, 0, 0}};
    return gguf_file(tensors, data.bytes, 2, meta.bytes);
}

}  // namespace embed_test
