// Hugging Face's .safetensors: an 8-byte little-endian header length, a JSON
// object {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
// {...}}, then the data section the offsets point into. As the reference
// implementation does, the tensors' byte ranges must tile the data section
// exactly: no gaps, no overlaps, nothing after the last.
//
// The tensors are listed in the order of the header's keys, as the file writes
// them: the JSON object the parser builds keeps its keys sorted, so the order
// is recorded while parsing. (Not by data offset: tensors of zero bytes share
// one, and the header is what a reader of the file sees.)

#include <algorithm>
#include <limits>
#include <string_view>

#include "io/byte_reader.hpp"
#include "io/formats.hpp"
#include "io/json_reading.hpp"
#include "io/sizes.hpp"

namespace embed::io {
namespace {

/// A tensor's rank; far above any real one, and it keeps a hostile shape array from being copied whole.
constexpr std::size_t max_dimensions = 64;

/// Element type (empty for one the decoder does not read) and bytes per element of a safetensors dtype;
/// FileFormatError for names it does not define.
std::pair<std::optional<ElementType>, std::uint64_t> dtype_of(const std::string& dtype, const std::string& tensor,
                                                              const std::filesystem::path& file) {
    static constexpr std::pair<std::string_view, ElementType> readable[] = {
        {"F64", ElementType::f64}, {"F32", ElementType::f32}, {"F16", ElementType::f16}, {"BF16", ElementType::bf16}};
    for (const auto& [name, type] : readable) {
        if (dtype == name) return {type, static_cast<std::uint64_t>(block_bytes(type))};
    }
    // Types safetensors defines but a table never comes in: listed, never loaded.
    if (dtype == "I64" || dtype == "U64") return {std::nullopt, 8};
    if (dtype == "I32" || dtype == "U32") return {std::nullopt, 4};
    if (dtype == "I16" || dtype == "U16") return {std::nullopt, 2};
    if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E5M2" || dtype == "F8_E4M3") {
        return {std::nullopt, 1};
    }
    throw FileFormatError(file, "tensor '" + tensor + "' has unknown dtype '" + dtype + "'");
}

/// A JSON number that is a non-negative integer below 2^63, or FileFormatError naming the field.
std::int64_t non_negative(const nlohmann::json& value, const std::string& field, const std::filesystem::path& file) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max()) {
        return value.get<std::int64_t>();
    }
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0) return value.get<std::int64_t>();
    throw FileFormatError(file, field + " is " + excerpt(value) + "; expected an integer in [0, 2^63)");
}

/// One header entry checked on its own: dtype known, shape sane, offsets consistent with shape x dtype.
TensorEntry entry_of(const std::string& name, const nlohmann::json& info, std::uint64_t data_start,
                     std::uint64_t data_size, const std::filesystem::path& file) {
    const std::string where = "tensor '" + name + "'";
    if (!info.is_object()) throw FileFormatError(file, where + " is " + std::string(info.type_name()) + ", not an object");
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
        if (!info.contains(key)) throw FileFormatError(file, where + " has no \"" + key + "\"");
    }
    const nlohmann::json& dtype = info["dtype"];
    const nlohmann::json& shape = info["shape"];
    const nlohmann::json& offsets = info["data_offsets"];
    if (!dtype.is_string()) throw FileFormatError(file, where + " dtype is " + excerpt(dtype) + ", not a string");
    if (!shape.is_array()) throw FileFormatError(file, where + " shape is " + excerpt(shape) + ", not an array");
    if (shape.size() > max_dimensions) {
        throw FileFormatError(file, where + " shape has " + std::to_string(shape.size()) + " dimensions; at most " +
                                        std::to_string(max_dimensions) + " are read");
    }
    if (!offsets.is_array() || offsets.size() != 2) {
        throw FileFormatError(file, where + " data_offsets is " + excerpt(offsets) +
                                        ", not an array [begin, end]");
    }
    TensorEntry entry;
    entry.name = name;
    entry.dtype = dtype.get<std::string>();
    std::uint64_t element_size = 0;
    std::tie(entry.type, element_size) = dtype_of(entry.dtype, name, file);
    for (std::size_t i = 0; i < shape.size(); ++i) {
        entry.shape.push_back(non_negative(shape[i], where + " shape[" + std::to_string(i) + "]", file));
    }
    const std::uint64_t count = element_count(entry.shape, where, file);
    const std::uint64_t bytes = byte_count(count, element_size, where, entry.shape, file);
    const auto begin = static_cast<std::uint64_t>(non_negative(offsets[0], where + " data_offsets[0]", file));
    const auto end = static_cast<std::uint64_t>(non_negative(offsets[1], where + " data_offsets[1]", file));
    if (end < begin || end > data_size) {
        throw FileFormatError(file, where + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                        "] are not a range inside the data section of " + std::to_string(data_size) +
                                        " bytes");
    }
    if (end - begin != bytes) {
        throw FileFormatError(file, where + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                        "] hold " + std::to_string(end - begin) + " bytes, but shape " +
                                        shape_text(entry.shape) + " of " + entry.dtype + " needs " +
                                        std::to_string(bytes));
    }
    entry.offset = data_start + begin;
    entry.size = bytes;
    return entry;
}

/// Throws FileFormatError unless the entries' ranges, sorted, follow each other exactly and end at data_size.
void require_tiling(std::vector<TensorEntry> entries, std::uint64_t data_start, std::uint64_t data_size,
                    const std::filesystem::path& file) {
    std::ranges::sort(entries, {}, [](const TensorEntry& e) { return std::pair(e.offset, e.size); });
    std::uint64_t expected = data_start;
    const TensorEntry* previous = nullptr;
    for (const TensorEntry& entry : entries) {
        if (entry.offset < expected) {
            throw FileFormatError(file, "tensors '" + previous->name + "' and '" + entry.name +
                                            "' overlap at data offset " + std::to_string(entry.offset - data_start));
        }
        if (entry.offset > expected) {
            throw FileFormatError(file, "data offsets [" + std::to_string(expected - data_start) + ", " +
                                            std::to_string(entry.offset - data_start) +
                                            ") belong to no tensor (before '" + entry.name + "')");
        }
        expected = entry.offset + entry.size;
        previous = &entry;
    }
    if (expected != data_start + data_size) {
        throw FileFormatError(file, "the data section has " + std::to_string(data_size) + " bytes but its tensors cover " +
                                        std::to_string(expected - data_start));
    }
}

}  // namespace

Contents parse_safetensors(const ByteSource& source) {
    const std::filesystem::path& file = source.path();
    ByteReader reader(source);
    const std::uint64_t header_length = reader.u64("safetensors header length");
    constexpr std::string_view what = "safetensors header";
    if (header_length > max_json_bytes) {
        // Refused before the header is read, as parse_json would refuse it once read.
        reader.fail(std::string(what) + " has " + std::to_string(header_length) + " bytes, above the limit of " +
                    std::to_string(max_json_bytes) + " bytes for any JSON read");
    }
    const Bytes header_bytes = reader.take(header_length, "safetensors header");
    const std::string_view text(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size());
    // The top-level keys as the header writes them. (nlohmann::ordered_json would keep them too, but finds
    // each key by a linear search while parsing: quadratic in a hostile header's millions of keys.)
    std::vector<std::string> key_order;
    const JsonFilter<nlohmann::json> watch = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (depth == 1 && event == nlohmann::json::parse_event_t::key) key_order.push_back(parsed.get<std::string>());
        return true;
    };
    const nlohmann::json header = parse_json(text, file, what, watch);
    if (!header.is_object()) {
        reader.fail("safetensors header is " + std::string(header.type_name()) + ", not a JSON object");
    }
    const std::uint64_t data_start = reader.position();
    const std::uint64_t data_size = reader.remaining();
    Contents contents;
    for (const std::string& name : key_order) {  // each once: the JSON reader refused a repeated key
        if (name == "__metadata__") continue;  // free-form strings; nothing a table needs
        contents.tensors.push_back(entry_of(name, header.at(name), data_start, data_size, file));
    }
    require_tiling(contents.tensors, data_start, data_size, file);
    return contents;
}

}  // namespace embed::io
