// Hugging Face's tokenizer.json (the `tokenizers` library's file): a JSON object
// whose "model" holds the vocabulary and whose "added_tokens" and "decoder" say
// what the other tokens are and how they read.
//   model.vocab:   BPE, WordPiece, WordLevel: an object token -> id; Unigram: a
//                  list of [token, score] pairs, the id being the position. A
//                  model without "type" (older files) is told by its vocab's kind.
//   added_tokens:  [{id, content, special, ...}], overriding or extending the
//                  vocab at their id: special -> control, else user_defined.
//   decoder:       ByteLevel -> byte_level; Metaspace, ByteFallback or a Replace
//                  of "▁" by " " -> sentencepiece; a Sequence reads as its
//                  members do (two different readings in one: an error); any
//                  other decoder (WordPiece, BPEDecoder, CTC, Fuse, Strip) or none
//                  -> as_stored.
// The model's unknown token (unk_token, or Unigram's unk_id) has type unknown;
// under the sentencepiece reading, a vocab token "<0xNN>" has type byte.
//
// The file is hostile: it is read under the one JSON policy (json_reading.hpp),
// and its id space may have at most as many holes as the file has tokens, plus
// max_spare_holes: every id lies below 2 x (entries of model.vocab and
// added_tokens) + max_spare_holes. So the memory a vocabulary takes is bounded
// by a small multiple of the file's size, where one token named with id
// 33,554,000 would otherwise make 33.5 million empty strings.

#include <algorithm>
#include <limits>
#include <map>

#include "embed/io.hpp"
#include "io/json_reading.hpp"
#include "io/vocabulary_files.hpp"

namespace embed::io {
namespace {

using Json = nlohmann::json;

/// Holes allowed beyond one per token: real files have none, or a few between the model's vocab and the
/// added tokens.
constexpr Index max_spare_holes = 1024;

/// "model.vocab[\"Ġking\"]": a field named by an object key, the key as JSON text.
std::string keyed(const std::string& field, const std::string& key) { return field + "[" + excerpt(Json(key)) + "]"; }

/// The file's top-level object with only what a vocabulary needs: the other top-level keys (normalizer,
/// pre_tokenizer, post_processor, ...) and model.merges are dropped while parsing, so they cost no memory.
Json parse_kept_parts(const ByteSource& source) {
    std::vector<std::string> path;  // the keys leading to the value being parsed
    const JsonFilter<Json> keep = [&](int depth, Json::parse_event_t event, Json& parsed) {
        if (event != Json::parse_event_t::key || depth > 2) return true;  // only keys at depth 1 and 2 are dropped
        path.resize(static_cast<std::size_t>(depth));
        path.back() = parsed.get<std::string>();
        if (depth == 1) return path[0] == "model" || path[0] == "added_tokens" || path[0] == "decoder";
        return !(depth == 2 && path[0] == "model" && path[1] == "merges");
    };
    return read_json<Json>(source, "tokenizer.json", keep);
}

/// Reads one tokenizer.json's vocabulary; every error names the file, the field and the value.
class TokenizerJson {
public:
    TokenizerJson(const Json& root, const std::filesystem::path& file) : root_(root), file_(file) {}

    Vocabulary read() {
        if (!root_.is_object()) fail("tokenizer.json is " + excerpt(root_) + ", not a JSON object");
        reading_ = reading_of_decoder();
        if (!root_.contains("model")) fail("has no vocabulary: no \"model\"");
        const Json& model = root_["model"];
        if (!model.is_object()) fail("model is " + excerpt(model) + ", not an object");
        id_limit_ = 2 * entries(model) + max_spare_holes;
        read_model_vocab(model);
        const std::vector<Index> unknown = unknown_ids(model);
        read_added_tokens();
        for (const Index id : unknown) types_[static_cast<std::size_t>(id)] = TokenType::unknown;
        if (reading_ == TokenReading::sentencepiece) mark_byte_tokens();
        return vocabulary();
    }

private:
    [[noreturn]] void fail(const std::string& message) const { throw FileFormatError(file_, message); }

    // --- the reading -------------------------------------------------------------------------------

    TokenReading reading_of_decoder() const {
        if (!root_.contains("decoder") || root_["decoder"].is_null()) return TokenReading::as_stored;
        return reading_of(root_["decoder"], "decoder").value_or(TokenReading::as_stored);
    }

    /// The reading one decoder implies, nullopt when it implies none.
    std::optional<TokenReading> reading_of(const Json& decoder, const std::string& field) const {
        if (!decoder.is_object()) fail(field + " is " + excerpt(decoder) + ", not an object");
        const auto type = decoder.find("type");
        if (type == decoder.end() || !type->is_string()) return std::nullopt;  // untyped: says nothing
        const std::string& name = type->get_ref<const std::string&>();
        if (name == "ByteLevel") return TokenReading::byte_level;
        if (name == "Metaspace" || name == "ByteFallback") return TokenReading::sentencepiece;
        if (name == "Replace" && replaces_metaspace(decoder)) return TokenReading::sentencepiece;
        if (name != "Sequence") return std::nullopt;
        const auto members = decoder.find("decoders");
        if (members == decoder.end() || !members->is_array()) {
            fail(field + ".decoders is " + (members == decoder.end() ? "absent" : excerpt(*members)) +
                 "; a Sequence decoder needs an array");
        }
        std::optional<TokenReading> found;
        std::string found_at;
        for (std::size_t i = 0; i < members->size(); ++i) {
            const std::string member = field + ".decoders[" + std::to_string(i) + "]";
            const std::optional<TokenReading> reading = reading_of((*members)[i], member);
            if (!reading) continue;
            if (found && *found != *reading) {
                fail(member + " reads tokens " + name_of(*reading) + " but " + found_at + " reads them " +
                     name_of(*found) + "; a decoder implies one reading");
            }
            found = reading;
            found_at = member;
        }
        return found;
    }

    /// Whether a Replace decoder turns "▁" into " " (how Llama's decoder spells Metaspace).
    static bool replaces_metaspace(const Json& decoder) {
        const auto pattern = decoder.find("pattern");
        const auto content = decoder.find("content");
        if (pattern == decoder.end() || content == decoder.end() || !pattern->is_object()) return false;
        const auto string = pattern->find("String");
        return string != pattern->end() && *string == "\u2581" && *content == " ";
    }

    static std::string name_of(TokenReading reading) {
        switch (reading) {
            case TokenReading::byte_level: return "byte_level";
            case TokenReading::sentencepiece: return "sentencepiece";
            case TokenReading::as_stored: break;
        }
        return "as_stored";
    }

    // --- the ids -----------------------------------------------------------------------------------

    /// How many tokens the file names at most: model.vocab's entries and added_tokens'.
    Index entries(const Json& model) const {
        std::size_t count = 0;
        if (const auto vocab = model.find("vocab"); vocab != model.end() && (vocab->is_object() || vocab->is_array())) {
            count += vocab->size();
        }
        if (const auto added = root_.find("added_tokens"); added != root_.end() && added->is_array()) {
            count += added->size();
        }
        return static_cast<Index>(count);
    }

    /// value as an id: an integer in [0, id_limit_), else FileFormatError naming field and value.
    Index id_of(const Json& value, const std::string& field) const {
        const bool integer = value.is_number_integer();  // true for unsigned too; false for 3.0 and 1e3
        if (integer && !value.is_number_unsigned() && value.get<std::int64_t>() < 0) {
            fail(field + " is " + excerpt(value) + "; ids are non-negative");
        }
        if (!integer || value.get<std::uint64_t>() >= static_cast<std::uint64_t>(id_limit_)) {
            fail(field + " is " + excerpt(value) + "; expected an integer id in [0, " + std::to_string(id_limit_) +
                 ") (the id space may have at most as many holes as the file has tokens, plus " +
                 std::to_string(max_spare_holes) + ")");
        }
        return static_cast<Index>(value.get<std::uint64_t>());
    }

    /// Puts token at id, growing the id space.
    void place(Index id, const std::string& token, TokenType type) {
        const auto slot = static_cast<std::size_t>(id);
        if (slot >= tokens_.size()) {
            tokens_.resize(slot + 1);
            types_.resize(slot + 1, TokenType::unused);
            placed_.resize(slot + 1, false);
            added_.resize(slot + 1, false);
        }
        tokens_[slot] = token;
        types_[slot] = type;
        placed_[slot] = true;
    }

    bool placed(Index id) const { return id < static_cast<Index>(tokens_.size()) && placed_[static_cast<std::size_t>(id)]; }

    void read_model_vocab(const Json& model) {
        if (!model.contains("vocab")) fail("has no vocabulary: model has no \"vocab\"");
        const Json& vocab = model["vocab"];
        const std::string type = model_type(model, vocab);
        if (type == "Unigram") {
            if (!vocab.is_array()) fail("model.vocab is " + excerpt(vocab) + "; a Unigram model's vocab is a list");
            for (std::size_t i = 0; i < vocab.size(); ++i) {
                const Json& pair = vocab[i];
                const std::string field = "model.vocab[" + std::to_string(i) + "]";
                if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_number()) {
                    fail(field + " is " + excerpt(pair) + "; expected a [token, score] pair");
                }
                place(id_of(Json(i), field), pair[0].get<std::string>(), TokenType::normal);
            }
            return;
        }
        if (!vocab.is_object()) {
            fail("model.vocab is " + excerpt(vocab) + "; a " + type + " model's vocab is an object token -> id");
        }
        for (const auto& [token, value] : vocab.items()) {
            const std::string field = keyed("model.vocab", token);
            const Index id = id_of(value, field);
            if (placed(id)) {
                fail(field + " is " + std::to_string(id) + ", the id " +
                     keyed("model.vocab", tokens_[static_cast<std::size_t>(id)]) + " already has");
            }
            place(id, token, TokenType::normal);
        }
    }

    /// model.type, or for a file without one, what its vocab's kind says.
    std::string model_type(const Json& model, const Json& vocab) const {
        const auto type = model.find("type");
        if (type == model.end()) return vocab.is_array() ? "Unigram" : "BPE";
        if (!type->is_string()) fail("model.type is " + excerpt(*type) + ", not a string");
        const std::string& name = type->get_ref<const std::string&>();
        if (name != "BPE" && name != "WordPiece" && name != "WordLevel" && name != "Unigram") {
            fail("model.type is " + excerpt(*type) + "; supported: BPE, WordPiece, WordLevel, Unigram");
        }
        return name;
    }

    /// The ids of the model's unknown token: unk_token's (a string; null or absent: none), or Unigram's unk_id.
    std::vector<Index> unknown_ids(const Json& model) const {
        std::vector<Index> ids;
        if (const auto unk_id = model.find("unk_id"); unk_id != model.end() && !unk_id->is_null()) {
            const Index id = id_of(*unk_id, "model.unk_id");
            if (!placed(id)) {
                fail("model.unk_id is " + std::to_string(id) + ", an id model.vocab does not hold");
            }
            ids.push_back(id);
        }
        if (const auto unk = model.find("unk_token"); unk != model.end() && !unk->is_null()) {
            if (!unk->is_string()) fail("model.unk_token is " + excerpt(*unk) + "; expected a string or null");
            for (std::size_t id = 0; id < tokens_.size(); ++id) {
                if (placed_[id] && tokens_[id] == unk->get_ref<const std::string&>()) {
                    ids.push_back(static_cast<Index>(id));
                }
            }
        }
        return ids;
    }

    void read_added_tokens() {
        const auto added = root_.find("added_tokens");
        if (added == root_.end() || added->is_null()) return;
        if (!added->is_array()) fail("added_tokens is " + excerpt(*added) + ", not a list");
        std::map<Index, std::string> added_at;  // id -> the field that added it, for clashes among added tokens
        for (std::size_t i = 0; i < added->size(); ++i) {
            const Json& entry = (*added)[i];
            const std::string field = "added_tokens[" + std::to_string(i) + "]";
            if (!entry.is_object()) fail(field + " is " + excerpt(entry) + ", not an object");
            const auto id_value = entry.find("id");
            const auto content = entry.find("content");
            const auto special = entry.find("special");
            if (id_value == entry.end()) fail(field + " has no \"id\"");
            if (content == entry.end() || !content->is_string()) {
                fail(field + ".content is " + (content == entry.end() ? "absent" : excerpt(*content)) +
                     "; expected a string");
            }
            const bool is_special = special != entry.end() && !special->is_null();
            if (is_special && !special->is_boolean()) {
                fail(field + ".special is " + excerpt(*special) + "; expected true or false");
            }
            const Index id = id_of(*id_value, field + ".id");
            const std::string& token = content->get_ref<const std::string&>();
            if (const auto earlier = added_at.find(id); earlier != added_at.end()) {
                if (tokens_[static_cast<std::size_t>(id)] != token) {
                    fail(field + ".id is " + std::to_string(id) + ", the id " + earlier->second +
                         " already has for another token");
                }
            }
            added_at[id] = field;
            place(id, token, is_special && special->get<bool>() ? TokenType::control : TokenType::user_defined);
            added_[static_cast<std::size_t>(id)] = true;
        }
    }

    /// SentencePiece's byte tokens "<0xNN>" in the model's vocab (not added tokens) have type byte.
    void mark_byte_tokens() {
        for (std::size_t id = 0; id < tokens_.size(); ++id) {
            if (placed_[id] && !added_[id] && sentencepiece_byte(tokens_[id])) types_[id] = TokenType::byte;
        }
    }

    Vocabulary vocabulary() {
        if (tokens_.empty()) fail("has no vocabulary: model.vocab and added_tokens hold no token");
        std::vector<bool> missing(tokens_.size());
        for (std::size_t id = 0; id < tokens_.size(); ++id) missing[id] = !placed_[id];
        return Vocabulary(std::move(tokens_), std::move(types_), reading_, std::move(missing));
    }

    const Json& root_;
    const std::filesystem::path& file_;
    Index id_limit_ = 0;
    TokenReading reading_ = TokenReading::as_stored;
    std::vector<std::string> tokens_;
    std::vector<TokenType> types_;  // unused where no token is placed
    std::vector<bool> placed_;      // false for a hole
    std::vector<bool> added_;       // whether added_tokens placed the id
};

}  // namespace

Vocabulary parse_tokenizer_json(const ByteSource& source) {
    const Json root = parse_kept_parts(source);
    return TokenizerJson(root, source.path()).read();
}

}  // namespace embed::io
