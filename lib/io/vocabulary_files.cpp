// load_vocabulary: which reader a path goes to, and what a .gguf's tokenizer
// metadata means as a Vocabulary.
//
// A .gguf (by extension, case-insensitive) is read for tokenizer.ggml.tokens;
// any other file named *.json is read as a tokenizer.json; a directory is a
// Hugging Face checkpoint whose vocabulary is its tokenizer.json. A file of
// any other extension (a .safetensors, a .npy) has no vocabulary:
// FileFormatError, as load_vocabulary promises.

#include <algorithm>
#include <cctype>

#include "embed/io.hpp"
#include "io/vocabulary_files.hpp"

namespace embed {
namespace io {
namespace {

/// GGUF's token type numbers (llama.cpp's llama_token_type): 0 undefined (read as normal), 1 normal,
/// 2 unknown, 3 control, 4 user_defined, 5 unused, 6 byte; FileFormatError for any other.
TokenType gguf_token_type(std::int32_t value, std::size_t id, const std::filesystem::path& file) {
    switch (value) {
        case 0:
        case 1: return TokenType::normal;
        case 2: return TokenType::unknown;
        case 3: return TokenType::control;
        case 4: return TokenType::user_defined;
        case 5: return TokenType::unused;
        case 6: return TokenType::byte;
        default: break;
    }
    throw FileFormatError(file, "metadata 'tokenizer.ggml.token_type'[" + std::to_string(id) + "] is " +
                                    std::to_string(value) + "; expected 0 to 6 (undefined, normal, unknown, "
                                    "control, user_defined, unused, byte)");
}

/// The reading tokenizer.ggml.model implies: "gpt2" byte-level BPE; "llama" (SentencePiece BPE) and "t5"
/// (SentencePiece Unigram) spell spaces "▁" and bytes "<0xNN>"; anything else ("bert", "rwkv", none) as stored.
TokenReading gguf_reading(const std::string& model) {
    if (model == "gpt2") return TokenReading::byte_level;
    if (model == "llama" || model == "t5") return TokenReading::sentencepiece;
    return TokenReading::as_stored;
}

/// The file's extension, lower-cased.
std::string lower_extension(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    std::ranges::transform(extension, extension.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension;
}

}  // namespace

std::optional<std::uint8_t> sentencepiece_byte(std::string_view token) {
    if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return std::nullopt;
    const auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int high = digit(token[3]);
    const int low = digit(token[4]);
    if (high < 0 || low < 0) return std::nullopt;
    return static_cast<std::uint8_t>(high * 16 + low);
}


Vocabulary gguf_vocabulary(const ByteSource& source) {
    const std::filesystem::path& file = source.path();
    GgufTokenizer tokenizer = parse_gguf_tokenizer(source);
    if (!tokenizer.has_tokens) throw FileFormatError(file, "has no vocabulary: no metadata 'tokenizer.ggml.tokens'");
    if (tokenizer.tokens.empty()) throw FileFormatError(file, "has no vocabulary: 'tokenizer.ggml.tokens' is empty");
    std::vector<TokenType> types;
    if (tokenizer.has_types) {
        if (tokenizer.types.size() != tokenizer.tokens.size()) {
            throw FileFormatError(file, "metadata 'tokenizer.ggml.token_type' has " +
                                            std::to_string(tokenizer.types.size()) + " entries but " +
                                            "'tokenizer.ggml.tokens' has " + std::to_string(tokenizer.tokens.size()));
        }
        types.reserve(tokenizer.types.size());
        for (std::size_t id = 0; id < tokenizer.types.size(); ++id) {
            types.push_back(gguf_token_type(tokenizer.types[id], id, file));
        }
    }
    return Vocabulary(std::move(tokenizer.tokens), std::move(types), gguf_reading(tokenizer.model));
}

}  // namespace io

Vocabulary load_vocabulary(const std::filesystem::path& source) {
    if (std::filesystem::is_directory(source)) {
        const std::filesystem::path tokenizer = source / "tokenizer.json";
        if (!std::filesystem::exists(tokenizer)) {
            throw FileFormatError(source, "has no vocabulary: a checkpoint directory's vocabulary is its "
                                          "tokenizer.json, and there is none");
        }
        return io::parse_tokenizer_json(io::FileSource(tokenizer));
    }
    const std::string extension = io::lower_extension(source);
    if (extension == ".gguf") return io::gguf_vocabulary(io::FileSource(source));
    if (extension == ".json") return io::parse_tokenizer_json(io::FileSource(source));
    // A table file (.safetensors, .npy) or any other: the file itself has no vocabulary to give.
    throw FileFormatError(source, "has no vocabulary: a file with extension '" + extension + "' holds none; a "
                                  "vocabulary is read from a .gguf, a tokenizer .json or a checkpoint directory");
}

}  // namespace embed
