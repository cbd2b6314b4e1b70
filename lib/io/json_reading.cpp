// The one JSON reader (see json_reading.hpp): a checking pass through nlohmann's SAX interface, which
// builds nothing and knows where it is (for messages), then the parse that builds the value.

#include "io/json_reading.hpp"

#include <unordered_set>
#include <vector>

#include "embed/io.hpp"

namespace embed::io {
namespace {

/// Whether key can be written after a dot in a field name (model.vocab) rather than in brackets.
bool plain_key(std::string_view key) {
    if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
    for (const char c : key) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!letter) return false;
    }
    return true;
}

/// The checking pass: nesting, string and key lengths, repeated keys, and nlohmann's own syntax errors,
/// each a FileFormatError naming the field where it happened.
class PolicyCheck {
public:
    PolicyCheck(const std::filesystem::path& file, std::string_view what) : file_(file), what_(what) {}

    bool null() { return scalar(); }
    bool boolean(bool) { return scalar(); }
    bool number_integer(nlohmann::json::number_integer_t) { return scalar(); }
    bool number_unsigned(nlohmann::json::number_unsigned_t) { return scalar(); }
    bool number_float(nlohmann::json::number_float_t, const std::string&) { return scalar(); }
    bool binary(nlohmann::json::binary_t&) { return scalar(); }

    bool string(std::string& value) {
        begin_value();
        if (value.size() > max_json_string_bytes) {
            fail("has a string of " + std::to_string(value.size()) + " bytes at " + field(open_.size()) +
                 "; strings are read up to " + std::to_string(max_json_string_bytes) + " bytes");
        }
        end_value();
        return true;
    }

    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& key) {
        Frame& object = open_.back();
        if (key.size() > max_json_string_bytes) {
            fail("has a key of " + std::to_string(key.size()) + " bytes in " + object_field() +
                 "; keys are read up to " + std::to_string(max_json_string_bytes) + " bytes");
        }
        if (!object.keys.insert(key).second) fail("has key " + json_quoted(key) + " twice in " + object_field());
        object.key = key;
        object.awaiting_value = true;
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& error) {
        const bool in_key = !open_.empty() && open_.back().object && !open_.back().awaiting_value;
        fail(std::string("is not valid JSON ") + (in_key ? "in a key of " + object_field() : "at " + field(open_.size())) +
             ": " + error.what());
    }

private:
    /// One object or array being read: where in it the parser is, and an object's keys so far.
    struct Frame {
        bool object = false;
        bool awaiting_value = false;  // an object's key has been read, its value not yet finished
        std::string key;
        std::size_t index = 0;  // an array's current element
        std::size_t count = 0;  // an array's elements so far
        std::unordered_set<std::string> keys;
    };

    [[noreturn]] void fail(const std::string& message) const {
        throw FileFormatError(file_, std::string(what_) + " " + message);
    }

    bool scalar() {
        begin_value();
        end_value();
        return true;
    }

    void begin_value() {
        if (open_.empty() || open_.back().object) return;
        open_.back().index = open_.back().count++;
    }

    void end_value() {
        if (!open_.empty() && open_.back().object) open_.back().awaiting_value = false;
    }

    bool open(bool object) {
        begin_value();
        if (open_.size() >= static_cast<std::size_t>(max_json_depth)) {
            fail("nests deeper than " + std::to_string(max_json_depth) + " levels, the most any JSON is read with");
        }
        open_.emplace_back().object = object;
        return true;
    }

    bool close() {
        open_.pop_back();
        end_value();
        return true;
    }

    /// The field the first frames of the path lead to: "model.vocab", "m[1]", "weight_map[\"a.b\"]".
    std::string field(std::size_t frames) const {
        std::string text;
        for (std::size_t i = 0; i < frames; ++i) {
            const Frame& frame = open_[i];
            // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "[" + string + "]".
            if (!frame.object) {
                text.append(1, '[').append(std::to_string(frame.index)).append(1, ']');
            } else if (frame.awaiting_value && plain_key(frame.key)) {
                if (!text.empty()) text.append(1, '.');
                text.append(frame.key);
            } else if (frame.awaiting_value) {
                text.append(1, '[').append(json_quoted(frame.key)).append(1, ']');
            }
        }
        return text.empty() ? "the top level" : text;
    }

    /// The innermost open object, named by its field ("the top-level object" for the outermost).
    std::string object_field() const {
        return open_.size() <= 1 ? std::string("the top-level object") : field(open_.size() - 1);
    }

    const std::filesystem::path& file_;
    std::string_view what_;
    std::vector<Frame> open_;
};

[[noreturn]] void too_big(std::uint64_t bytes, const std::filesystem::path& file, std::string_view what) {
    throw FileFormatError(file, std::string(what) + " has " + std::to_string(bytes) + " bytes, above the limit of " +
                                    std::to_string(max_json_bytes) + " bytes for any JSON read");
}

}  // namespace

template <class Json>
Json parse_json(std::string_view text, const std::filesystem::path& file, std::string_view what,
                const JsonFilter<Json>& keep) {
    if (text.size() > max_json_bytes) too_big(text.size(), file, what);
    PolicyCheck check(file, what);
    nlohmann::json::sax_parse(text.begin(), text.end(), &check);
    try {
        return keep ? Json::parse(text.begin(), text.end(), keep) : Json::parse(text.begin(), text.end());
    } catch (const typename Json::exception& error) {
        throw FileFormatError(file, std::string(what) + " is not valid JSON: " + error.what());
    }
}

std::string read_json_text(const ByteSource& source, std::string_view what) {
    if (source.size() > max_json_bytes) too_big(source.size(), source.path(), what);
    std::string text(static_cast<std::size_t>(source.size()), '\0');
    source.read(0, text.size(), reinterpret_cast<std::byte*>(text.data()));
    return text;
}

template <class Json>
Json read_json(const ByteSource& source, std::string_view what, const JsonFilter<Json>& keep) {
    return parse_json<Json>(read_json_text(source, what), source.path(), what, keep);
}

template <class Json>
std::string excerpt(const Json& value) {
    std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() <= 80) return text;
    std::size_t cut = 80;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut) + "...";
}

std::string json_quoted(std::string_view text) { return excerpt(nlohmann::json(std::string(text))); }

template nlohmann::json parse_json(std::string_view, const std::filesystem::path&, std::string_view,
                                   const JsonFilter<nlohmann::json>&);
template nlohmann::ordered_json parse_json(std::string_view, const std::filesystem::path&, std::string_view,
                                           const JsonFilter<nlohmann::ordered_json>&);
template nlohmann::json read_json(const ByteSource&, std::string_view, const JsonFilter<nlohmann::json>&);
template nlohmann::ordered_json read_json(const ByteSource&, std::string_view,
                                          const JsonFilter<nlohmann::ordered_json>&);
template std::string excerpt(const nlohmann::json&);
template std::string excerpt(const nlohmann::ordered_json&);

}  // namespace embed::io
