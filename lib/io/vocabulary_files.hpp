#pragma once
// The vocabulary readers: a .gguf's tokenizer metadata (tokenizer.ggml.*) and a
// Hugging Face tokenizer.json, each read from a ByteSource (the file, or a
// fuzzer's input) into a Vocabulary. load_vocabulary picks one by the path.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embed/vocabulary.hpp"
#include "io/byte_source.hpp"

namespace embed::io {

/// A .gguf's tokenizer metadata as stored, nothing interpreted yet.
struct GgufTokenizer {
    bool has_tokens = false;          ///< whether tokenizer.ggml.tokens is present
    std::vector<std::string> tokens;  ///< tokenizer.ggml.tokens
    bool has_types = false;           ///< whether tokenizer.ggml.token_type is present
    std::vector<std::int32_t> types;  ///< tokenizer.ggml.token_type
    std::string model;                ///< tokenizer.ggml.model; "" when absent
};

/// Reads a .gguf's header and metadata from source, keeping the tokenizer keys; errors name source.path().
GgufTokenizer parse_gguf_tokenizer(const ByteSource& source);

/// The vocabulary of the .gguf in source: its tokens, their types and the reading tokenizer.ggml.model names.
Vocabulary gguf_vocabulary(const ByteSource& source);

/// The vocabulary of the tokenizer.json in source (model.vocab, added_tokens, the reading the decoder implies).
Vocabulary parse_tokenizer_json(const ByteSource& source);

/// The byte NN when token is exactly "<0xNN>" (two hex digits, either case): SentencePiece's byte tokens.
std::optional<std::uint8_t> sentencepiece_byte(std::string_view token);

}  // namespace embed::io
