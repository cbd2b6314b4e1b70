// Token names: the Vocabulary class and the rules that read a stored token as text.
//
// GPT-2's byte-level BPE stores each byte of a token as one printable
// character: the bytes that are printable in Latin-1 ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves, and the 68 others (controls, space,
// DEL, NBSP, soft hyphen), in increasing order, become U+0100, U+0101, ...,
// U+0143. Reading inverts that map. A character outside it (a token the
// tokenizer added in plain text, "<｜end｜>") keeps its UTF-8 as it is; a stored
// byte that is not valid UTF-8 is no character at all and reads as "<0xNN>".
// Added tokens (types user_defined and control) read as stored in every reading.

#include <array>
#include <optional>
#include <stdexcept>

#include "checks.hpp"
#include "embed/vocabulary.hpp"
#include "io/vocabulary_files.hpp"

namespace embed {
namespace {

/// Length of the valid UTF-8 sequence starting at text[at], or 0 when there is none: strict, so overlong
/// forms, surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated sequences are all invalid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char second_min = 0x80;
    unsigned char second_max = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) second_min = 0xA0;  // below: an overlong form of a 2-byte sequence
        if (lead == 0xED) second_max = 0x9F;  // above: a surrogate
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) second_min = 0x90;  // below: overlong
        if (lead == 0xF4) second_max = 0x8F;  // above: past U+10FFFF
    } else {
        return 0;  // a continuation byte, C0/C1 (always overlong) or F5..FF (always past U+10FFFF)
    }
    if (text.size() - at < length) return 0;
    if (byte(at + 1) < second_min || byte(at + 1) > second_max) return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
    }
    return length;
}

/// The code point of the valid sequence of length bytes at text[at].
char32_t code_point(std::string_view text, std::size_t at, std::size_t length) {
    static constexpr std::array<unsigned char, 5> lead_bits{0, 0x7F, 0x1F, 0x0F, 0x07};
    char32_t value = static_cast<unsigned char>(text[at]) & lead_bits[length];
    for (std::size_t i = 1; i < length; ++i) value = (value << 6) | (static_cast<unsigned char>(text[at + i]) & 0x3F);
    return value;
}

/// "<0xNN>", upper-case hex.
std::string hex_byte(unsigned char byte) {
    static constexpr char digits[] = "0123456789ABCDEF";
    return std::string("<0x") + digits[byte >> 4] + digits[byte & 0xF] + ">";
}

/// bytes as valid UTF-8: every byte that is not part of a valid sequence becomes "<0xNN>".
std::string valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t at = 0; at < bytes.size();) {
        if (const std::size_t length = utf8_sequence_length(bytes, at); length != 0) {
            out.append(bytes.substr(at, length));
            at += length;
        } else {
            out += hex_byte(static_cast<unsigned char>(bytes[at]));
            ++at;
        }
    }
    return out;
}

/// Whether GPT-2's map leaves byte b as the character of the same number (printable in Latin-1).
constexpr bool stands_for_itself(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

/// The inverse of GPT-2's bytes-to-unicode map: code point -> byte, -1 for code points it never produces.
/// The map's image is U+0021..U+0143, so a table of 0x144 entries covers it.
constexpr std::array<int, 0x144> byte_of_code_point() {
    std::array<int, 0x144> inverse{};
    for (int& entry : inverse) entry = -1;
    unsigned next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
        if (stands_for_itself(b)) {
            inverse[b] = static_cast<int>(b);
        } else {
            inverse[next++] = static_cast<int>(b);
        }
    }
    return inverse;
}

/// token read through the inverse of GPT-2's map, one byte per character (see the file's comment).
std::string byte_level_bytes(std::string_view token) {
    static constexpr std::array<int, 0x144> inverse = byte_of_code_point();
    std::string out;
    for (std::size_t at = 0; at < token.size();) {
        const std::size_t length = utf8_sequence_length(token, at);
        if (length == 0) {
            out += hex_byte(static_cast<unsigned char>(token[at]));
            ++at;
            continue;
        }
        const char32_t c = code_point(token, at, length);
        if (c < inverse.size() && inverse[c] >= 0) {
            out += static_cast<char>(inverse[c]);
        } else {
            out.append(token.substr(at, length));
        }
        at += length;
    }
    return out;
}

/// token read the SentencePiece way: "<0xNN>" is the byte NN, every "▁" (U+2581) a space.
std::string sentencepiece_bytes(std::string_view token) {
    if (const std::optional<std::uint8_t> byte = io::sentencepiece_byte(token)) return std::string(1, static_cast<char>(*byte));
    static constexpr std::string_view lower_one_eighth_block = "\xE2\x96\x81";
    std::string out;
    for (std::size_t at = 0; at < token.size();) {
        if (token.substr(at, lower_one_eighth_block.size()) == lower_one_eighth_block) {
            out += ' ';
            at += lower_one_eighth_block.size();
        } else {
            out += token[at++];
        }
    }
    return out;
}

/// "<no token N>": what a missing id or a row past the vocabulary reads as.
std::string no_token(Index id) { return "<no token " + std::to_string(id) + ">"; }

}  // namespace

std::string read_token(std::string_view token, TokenReading reading) {
    switch (reading) {
        case TokenReading::byte_level: return valid_utf8(byte_level_bytes(token));
        case TokenReading::sentencepiece: return valid_utf8(sentencepiece_bytes(token));
        case TokenReading::as_stored: break;
    }
    return valid_utf8(token);
}

Vocabulary::Vocabulary(std::vector<std::string> tokens, std::vector<TokenType> types, TokenReading reading,
                       std::vector<bool> missing)
    : tokens_(std::move(tokens)), types_(std::move(types)), missing_(std::move(missing)), reading_(reading) {
    const std::size_t n = tokens_.size();
    if (!types_.empty() && types_.size() != n) {
        throw std::invalid_argument("Vocabulary: types has length " + std::to_string(types_.size()) +
                                    ", tokens has length " + std::to_string(n) + " (types may also be empty)");
    }
    if (!missing_.empty() && missing_.size() != n) {
        throw std::invalid_argument("Vocabulary: missing has length " + std::to_string(missing_.size()) +
                                    ", tokens has length " + std::to_string(n) + " (missing may also be empty)");
    }
    if (missing_.empty()) missing_.assign(n, false);
    const bool types_given = !types_.empty();
    if (!types_given) types_.assign(n, TokenType::normal);
    // A hole has no token and can never be emitted; a caller that says otherwise has mixed two lists up.
    for (std::size_t id = 0; id < n; ++id) {
        if (!missing_[id]) continue;
        if (!tokens_[id].empty()) {
            throw std::invalid_argument("Vocabulary: id " + std::to_string(id) + " is missing but has token '" +
                                        valid_utf8(tokens_[id]) + "'; a missing id's token is \"\"");
        }
        if (types_given && types_[id] != TokenType::unused) {
            throw std::invalid_argument("Vocabulary: id " + std::to_string(id) +
                                        " is missing but its type is not unused");
        }
        types_[id] = TokenType::unused;
    }
    texts_.resize(n);
    for (std::size_t id = 0; id < n; ++id) {
        if (!missing_[id]) texts_[id] = read_token(tokens_[id], reading_of(types_[id]));  // a missing id's: on demand
    }
}

TokenReading Vocabulary::reading_of(TokenType type) const {
    // Added tokens are stored as their text in every kind of tokenizer, and read so by llama.cpp's
    // token_to_piece and Hugging Face's decoders: "héllo wörld", not its bytes mapped through GPT-2's table.
    const bool added = type == TokenType::user_defined || type == TokenType::control;
    return added ? TokenReading::as_stored : reading_;
}

void Vocabulary::check_id(Index id) const { detail::require_token(id, size()); }

const std::string& Vocabulary::token(Index id) const {
    check_id(id);
    return tokens_[static_cast<std::size_t>(id)];
}

std::string Vocabulary::text(Index id) const {
    check_id(id);
    return missing_[static_cast<std::size_t>(id)] ? no_token(id) : texts_[static_cast<std::size_t>(id)];
}

TokenType Vocabulary::type(Index id) const {
    check_id(id);
    return types_[static_cast<std::size_t>(id)];
}

bool Vocabulary::missing(Index id) const {
    check_id(id);
    return missing_[static_cast<std::size_t>(id)];
}

std::vector<Index> Vocabulary::find(std::string_view s) const {
    std::vector<Index> ids;
    for (std::size_t id = 0; id < tokens_.size(); ++id) {
        if (!missing_[id] && (tokens_[id] == s || texts_[id] == s)) ids.push_back(static_cast<Index>(id));
    }
    return ids;
}

std::string row_name(const Vocabulary& vocabulary, Index id) {
    if (id < 0) {
        throw std::out_of_range("row " + std::to_string(id) + " is negative; rows are numbered from 0");
    }
    return id < vocabulary.size() ? vocabulary.text(id) : no_token(id);
}

}  // namespace embed
