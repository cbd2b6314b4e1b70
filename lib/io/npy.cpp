// numpy's .npy: magic "\x93NUMPY", a version, a header length, then a Python
// dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
// spaces and a newline, then the raw array. The dict is parsed by a small literal
// parser that accepts only strings, True/False and tuples of integers: nothing
// is ever evaluated or unpickled.

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>

#include "io/byte_reader.hpp"
#include "io/formats.hpp"
#include "io/sizes.hpp"

namespace embed::io {
namespace {

/// A value of the header dict: one of the three kinds numpy writes.
struct HeaderValue {
    std::optional<std::string> text;
    std::optional<bool> flag;
    std::optional<std::vector<std::int64_t>> tuple;
};

/// Parses the header dict literal, refusing anything numpy's own header would not contain.
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::filesystem::path& file) : text_(text), file_(file) {}

    std::map<std::string, HeaderValue> dict() {
        std::map<std::string, HeaderValue> items;
        expect('{');
        while (true) {
            skip_space();
            if (peek() == '}') break;
            std::string key = string_literal("a dict key");
            expect(':');
            HeaderValue value = value_for(key);
            if (!items.emplace(key, std::move(value)).second) fail("key '" + key + "' appears twice");
            skip_space();
            if (peek() == ',') {
                ++at_;
                continue;
            }
            if (peek() != '}') fail_found("',' or '}'");
        }
        ++at_;
        skip_space();
        if (at_ != text_.size()) fail_found("only spaces after the dict");
        return items;
    }

private:
    HeaderValue value_for(const std::string& key) {
        skip_space();
        HeaderValue value;
        const char c = peek();
        if (c == '\'' || c == '"') {
            value.text = string_literal("the value of '" + key + "'");
        } else if (c == '(') {
            value.tuple = integer_tuple(key);
        } else if (text_.substr(at_).starts_with("True")) {
            value.flag = true;
            at_ += 4;
        } else if (text_.substr(at_).starts_with("False")) {
            value.flag = false;
            at_ += 5;
        } else {
            fail("the value of '" + key + "' starts with " + describe(c) +
                 "; only strings, True, False and tuples of integers are read (never anything to evaluate)");
        }
        return value;
    }

    std::string string_literal(const std::string& what) {
        skip_space();
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail_found("a quoted string for " + what);
        const std::size_t end = text_.find(quote, at_ + 1);
        if (end == std::string_view::npos) fail(what + " has no closing quote");
        std::string value(text_.substr(at_ + 1, end - at_ - 1));
        if (value.find('\\') != std::string::npos) fail(what + " '" + value + "' contains an escape");
        at_ = end + 1;
        return value;
    }

    std::vector<std::int64_t> integer_tuple(const std::string& key) {
        expect('(');
        std::vector<std::int64_t> values;
        while (true) {
            skip_space();
            if (peek() == ')') break;
            values.push_back(integer(key));
            skip_space();
            if (peek() == ',') {
                ++at_;
                continue;
            }
            if (peek() != ')') fail_found("',' or ')' in '" + key + "'");
        }
        ++at_;
        return values;
    }

    std::int64_t integer(const std::string& key) {
        const bool negative = peek() == '-';  // read, so the message can say it is negative
        if (negative) ++at_;
        const std::size_t digits_start = at_;
        while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
        const std::string_view digits = text_.substr(digits_start, at_ - digits_start);
        if (digits.empty()) fail_found("an integer in '" + key + "'");
        std::uint64_t magnitude = 0;
        for (const char digit : digits) {
            const auto value = static_cast<std::uint64_t>(digit - '0');
            if (magnitude > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - value) / 10) {
                fail("'" + key + "' holds " + std::string(digits) + ", past 2^63 - 1");
            }
            magnitude = magnitude * 10 + value;
        }
        const auto value = static_cast<std::int64_t>(magnitude);
        return negative ? -value : value;
    }

    void expect(char c) {
        skip_space();
        if (peek() != c) fail_found(std::string("'") + c + "'");
        ++at_;
    }

    void skip_space() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t')) ++at_;
    }

    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

    std::string describe(char c) const {
        if (at_ >= text_.size()) return "the end of the header";
        if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
        return "byte " + std::to_string(static_cast<unsigned char>(c));
    }

    [[noreturn]] void fail_found(const std::string& expected) const {
        fail("expected " + expected + " at header offset " + std::to_string(at_) + ", found " + describe(peek()));
    }

    [[noreturn]] void fail(const std::string& message) const {
        throw FileFormatError(file_, "npy header: " + message);
    }

    std::string_view text_;
    const std::filesystem::path& file_;
    std::size_t at_ = 0;
};

/// The element type a descr such as '<f4' names, and its byte order; FileFormatError for anything else.
std::pair<ElementType, bool> element_type_of(const std::string& descr, const std::filesystem::path& file) {
    const bool known_order = descr.size() == 3 && (descr[0] == '<' || descr[0] == '>');
    const std::string kind = known_order ? descr.substr(1) : "";
    if (kind == "f8" || kind == "f4" || kind == "f2") {
        const ElementType type =
            kind == "f8" ? ElementType::f64 : kind == "f4" ? ElementType::f32 : ElementType::f16;
        return {type, descr[0] == '>'};
    }
    std::string message = "npy header: 'descr' is '" + descr +
                          "'; supported: '<f8', '>f8', '<f4', '>f4', '<f2', '>f2' (float64, float32, float16)";
    if (descr.find('O') != std::string::npos) message += "; object arrays are never unpickled";
    throw FileFormatError(file, message);
}

}  // namespace

Contents parse_npy(const ByteSource& source) {
    const std::filesystem::path& file = source.path();
    ByteReader reader(source);
    static constexpr std::string_view magic = "\x93NUMPY";
    if (reader.text(magic.size(), "npy magic") != magic) {
        reader.fail("does not start with the npy magic \\x93NUMPY");
    }
    const std::uint8_t major = reader.u8("npy major version");
    const std::uint8_t minor = reader.u8("npy minor version");
    if (major < 1 || major > 3 || minor != 0) {
        reader.fail("npy version " + std::to_string(major) + "." + std::to_string(minor) +
                    " is not supported; supported: 1.0, 2.0, 3.0");
    }
    // Version 1.0 stores the header length in 2 bytes; 2.0 and 3.0 (UTF-8 header) in 4.
    const std::uint64_t header_length = major == 1 ? reader.u16("npy header length") : reader.u32("npy header length");
    const std::string header = reader.text(header_length, "npy header");
    const auto items = HeaderParser(header, file).dict();

    for (const auto& [key, value] : items) {
        if (key != "descr" && key != "fortran_order" && key != "shape") {
            reader.fail("npy header: unexpected key '" + key + "'; expected exactly descr, fortran_order, shape");
        }
    }
    const auto field = [&](const char* key) -> const HeaderValue& {
        const auto found = items.find(key);
        if (found == items.end()) reader.fail(std::string("npy header: key '") + key + "' is missing");
        return found->second;
    };
    const HeaderValue& descr = field("descr");
    const HeaderValue& fortran = field("fortran_order");
    const HeaderValue& shape = field("shape");
    if (!descr.text) reader.fail("npy header: 'descr' is not a string");
    if (!fortran.flag) reader.fail("npy header: 'fortran_order' is not True or False");
    if (!shape.tuple) reader.fail("npy header: 'shape' is not a tuple");

    TensorEntry entry;
    entry.dtype = *descr.text;
    std::tie(entry.type, entry.big_endian) = element_type_of(entry.dtype, file);
    entry.fortran_order = *fortran.flag;
    entry.shape = *shape.tuple;
    if (entry.shape.size() != 2) {
        reader.fail("npy shape " + shape_text(entry.shape) + " has " + std::to_string(entry.shape.size()) +
                    " dimensions; a table needs 2");
    }
    const std::uint64_t count = element_count(entry.shape, "the npy array", file);
    const auto width = static_cast<std::uint64_t>(block_bytes(*entry.type));
    entry.size = byte_count(count, width, "the npy array", entry.shape, file);
    entry.offset = reader.position();
    if (entry.size != reader.remaining()) {
        reader.fail("npy data of shape " + shape_text(entry.shape) + " and dtype '" + entry.dtype + "' needs " +
                    std::to_string(entry.size) + " bytes, but the file has " + std::to_string(reader.remaining()) +
                    " after the header");
    }
    return Contents{{entry}};
}

}  // namespace embed::io
