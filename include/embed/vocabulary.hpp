#pragma once
// Token names: what string each row of a table stands for. A tokenizer stores
// its tokens in its own spelling (GPT-2's byte-level "Ġking", SentencePiece's
// "▁king" and "<0x0A>"); `text` reads them as a person does (" king", "\n"),
// always as valid UTF-8, so a report can name a row by what it means.
//
// Reading rules (TokenReading): byte_level decodes each character through the
// inverse of GPT-2's bytes-to-unicode map; sentencepiece reads "▁" as a space
// and "<0xNN>" as the byte NN; as_stored leaves the token as it is. In every
// reading, bytes that do not form valid UTF-8 read as "<0xNN>" (upper-case
// hex, one per byte). Added tokens (types user_defined and control) read as
// stored in every reading, as llama.cpp and Hugging Face show them: an added
// "héllo wörld" in a byte-level vocabulary reads "héllo wörld".
//
// Ids no token holds: a hole in a tokenizer's id space is `missing`, its token
// "" and its type unused (no tokenizer can emit it, so its row is never trained
// as an input); its text and row_name read "<no token N>". A table with more
// rows than the vocabulary (padding) has no token for the rows past the end:
// row_name reads those "<no token N>" too.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "embed/types.hpp"

namespace embed {

/// A token's kind, as GGUF's tokenizer.ggml.token_type numbers them (1-6); 0 or no type reads as normal.
enum class TokenType { normal, unknown, control, user_defined, unused, byte };

/// How Vocabulary::text reads a token as stored: GPT-2's byte-level BPE, SentencePiece, or as stored.
enum class TokenReading { as_stored, byte_level, sentencepiece };

/// The tokens of a model: id -> token as stored, its readable text and its type.
class Vocabulary {
public:
    /// An empty vocabulary (size 0).
    Vocabulary() = default;

    /// tokens (n) as stored; types (n, or empty: all normal); missing (n, or empty: none) marks ids no token
    /// holds. Lengths that differ: invalid_argument naming both.
    Vocabulary(std::vector<std::string> tokens, std::vector<TokenType> types, TokenReading reading,
               std::vector<bool> missing = {});

    /// Number of ids, holes included: one more than the largest id.
    Index size() const noexcept { return static_cast<Index>(tokens_.size()); }

    /// Token id as stored ("Ġking", "▁king", "<0x0A>"; "" for a missing id); id outside [0, size): out_of_range.
    const std::string& token(Index id) const;

    /// Token id as a person reads it, valid UTF-8 (" king", "\n", "<no token N>" for a missing id); an added
    /// token (type user_defined or control) as stored, whatever the reading.
    std::string text(Index id) const;

    /// Token id's type (unused for a missing id); id outside [0, size): out_of_range.
    TokenType type(Index id) const;

    /// Whether no token holds id (a hole in the tokenizer's id space); id outside [0, size): out_of_range.
    bool missing(Index id) const;

    /// Every id whose token or text equals s, ascending (duplicates kept; missing ids never match).
    std::vector<Index> find(std::string_view s) const;

    /// How text() reads the tokens.
    TokenReading reading() const noexcept { return reading_; }

private:
    void check_id(Index id) const;
    /// How text() reads a token of type: as stored for an added token (user_defined, control), else reading().
    TokenReading reading_of(TokenType type) const;

    std::vector<std::string> tokens_;
    std::vector<std::string> texts_;
    std::vector<TokenType> types_;
    std::vector<bool> missing_;
    TokenReading reading_ = TokenReading::as_stored;
};

/// The vocabulary in source: a .gguf (tokenizer.ggml.tokens, tokenizer.ggml.token_type, tokenizer.ggml.model),
/// a tokenizer.json, or a Hugging Face checkpoint directory holding one. No vocabulary in it: FileFormatError.
Vocabulary load_vocabulary(const std::filesystem::path& source);

/// token (as stored) read the way reading says, as valid UTF-8 (the rule Vocabulary::text applies).
std::string read_token(std::string_view token, TokenReading reading);

/// Row id's name for a report: vocabulary.text(id) for an id it holds, "<no token N>" for a row past its end
/// (a table padded beyond the vocabulary); id < 0: out_of_range.
std::string row_name(const Vocabulary& vocabulary, Index id);

}  // namespace embed
