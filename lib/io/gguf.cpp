// llama.cpp's .gguf, versions 2 and 3 (little-endian): "GGUF", a version, the
// tensor and metadata counts, the metadata as typed key-value pairs, one info
// per tensor (name, dimensions innermost first, ggml type, offset), padding to
// the alignment (general.alignment, default 32), then the data section the
// offsets point into. Every length and count is checked against what is left
// of the file before it is used.

#include <algorithm>
#include <limits>
#include <set>

#include "io/byte_reader.hpp"
#include "io/formats.hpp"
#include "io/gguf_values.hpp"
#include "io/sizes.hpp"
#include "io/vocabulary_files.hpp"

namespace embed::io {
namespace {

constexpr std::uint64_t default_alignment = 32;
/// ggml tensors have at most four dimensions.
constexpr std::uint32_t max_dimensions = 4;

using namespace gguf;  // the metadata value types (gguf_type) and their sizes

/// A ggml tensor type: its name, how many values a block holds, and a block's bytes (0: size unknown here).
struct GgmlType {
    std::string name;
    std::optional<ElementType> element;  ///< empty: a type the decoder does not read
    std::uint64_t block_values = 1;
    std::uint64_t block_bytes = 0;
};

/// A ggml type the decoder reads: its block facts are the library's (element_type.hpp).
GgmlType readable(std::string name, ElementType type) {
    return {std::move(name), type, static_cast<std::uint64_t>(block_values(type)),
            static_cast<std::uint64_t>(block_bytes(type))};
}

/// Every ggml type id the format defines: its name, and for those with a layout their block's values and
/// bytes, so every such tensor's byte range is checked. Ids ggml removed keep their name with size 0 (their
/// range is only checked to start inside the data section); ids ggml never had are "ggml type N".
GgmlType ggml_type(std::uint32_t id) {
    switch (id) {
        case 0: return readable("F32", ElementType::f32);
        case 1: return readable("F16", ElementType::f16);
        case 2: return readable("Q4_0", ElementType::q4_0);
        case 3: return readable("Q4_1", ElementType::q4_1);
        case 4: return {"Q4_2", std::nullopt, 1, 0};  // removed from ggml
        case 5: return {"Q4_3", std::nullopt, 1, 0};  // removed from ggml
        case 6: return readable("Q5_0", ElementType::q5_0);
        case 7: return readable("Q5_1", ElementType::q5_1);
        case 8: return readable("Q8_0", ElementType::q8_0);
        case 9: return {"Q8_1", std::nullopt, 32, 36};
        case 10: return readable("Q2_K", ElementType::q2_k);
        case 11: return readable("Q3_K", ElementType::q3_k);
        case 12: return readable("Q4_K", ElementType::q4_k);
        case 13: return readable("Q5_K", ElementType::q5_k);
        case 14: return readable("Q6_K", ElementType::q6_k);
        case 15: return {"Q8_K", std::nullopt, 256, 292};
        case 16: return {"IQ2_XXS", std::nullopt, 256, 66};
        case 17: return {"IQ2_XS", std::nullopt, 256, 74};
        case 18: return {"IQ3_XXS", std::nullopt, 256, 98};
        case 19: return {"IQ1_S", std::nullopt, 256, 50};
        case 20: return {"IQ4_NL", std::nullopt, 32, 18};
        case 21: return {"IQ3_S", std::nullopt, 256, 110};
        case 22: return {"IQ2_S", std::nullopt, 256, 82};
        case 23: return {"IQ4_XS", std::nullopt, 256, 136};
        case 24: return {"I8", std::nullopt, 1, 1};
        case 25: return {"I16", std::nullopt, 1, 2};
        case 26: return {"I32", std::nullopt, 1, 4};
        case 27: return {"I64", std::nullopt, 1, 8};
        case 28: return readable("F64", ElementType::f64);
        case 29: return {"IQ1_M", std::nullopt, 256, 56};
        case 30: return readable("BF16", ElementType::bf16);
        case 31: return {"Q4_0_4_4", std::nullopt, 1, 0};  // removed from ggml
        case 32: return {"Q4_0_4_8", std::nullopt, 1, 0};  // removed from ggml
        case 33: return {"Q4_0_8_8", std::nullopt, 1, 0};  // removed from ggml
        case 34: return {"TQ1_0", std::nullopt, 256, 54};
        case 35: return {"TQ2_0", std::nullopt, 256, 66};
        case 36: return {"IQ4_NL_4_4", std::nullopt, 1, 0};  // removed from ggml
        case 37: return {"IQ4_NL_4_8", std::nullopt, 1, 0};  // removed from ggml
        case 38: return {"IQ4_NL_8_8", std::nullopt, 1, 0};  // removed from ggml
        case 39: return {"MXFP4", std::nullopt, 32, 17};
        default: return {"ggml type " + std::to_string(id), std::nullopt, 1, 0};
    }
}

/// Reads the file's header, metadata and tensor infos in order.
class GgufParser {
public:
    explicit GgufParser(const ByteSource& source) : reader_(source), file_(source.path()) {}

    Contents parse() {
        read_header();
        for (std::uint64_t i = 0; i < metadata_count_; ++i) read_metadata(i);
        std::vector<TensorEntry> tensors;
        std::vector<std::uint64_t> relative_offsets;
        std::set<std::string> names;
        for (std::uint64_t i = 0; i < tensor_count_; ++i) {
            auto [entry, offset] = read_tensor_info(i);
            if (!names.insert(entry.name).second) reader_.fail("tensor '" + entry.name + "' appears twice");
            tensors.push_back(std::move(entry));
            relative_offsets.push_back(offset);
        }
        place_in_data_section(tensors, relative_offsets);
        return Contents{std::move(tensors)};
    }

    /// The header and metadata only, keeping the tokenizer keys: a vocabulary needs no tensor.
    GgufTokenizer parse_tokenizer() {
        GgufTokenizer tokenizer;
        tokenizer_ = &tokenizer;
        read_header();
        for (std::uint64_t i = 0; i < metadata_count_; ++i) read_metadata(i);
        tokenizer_ = nullptr;
        return tokenizer;
    }

private:
    void read_header() {
        if (reader_.text(4, "GGUF magic") != "GGUF") reader_.fail("does not start with the GGUF magic");
        const std::uint32_t version = reader_.u32("GGUF version");
        if (version == 0x02000000 || version == 0x03000000) {
            reader_.fail("GGUF version field reads " + std::to_string(version) +
                         ": a big-endian GGUF file, which this reader does not support");
        } else if (version != 2 && version != 3) {
            reader_.fail("GGUF version " + std::to_string(version) + " is not supported; supported: 2, 3");
        }
        tensor_count_ = reader_.u64("GGUF tensor count");
        metadata_count_ = reader_.u64("GGUF metadata count");
    }

    std::string gguf_string(const std::string& field) {
        const std::uint64_t length = reader_.u64(field + " length");
        return reader_.text(length, field);
    }

    void read_metadata(std::uint64_t index) {
        const std::string key = gguf_string("metadata key " + std::to_string(index));
        if (!keys_.insert(key).second) reader_.fail("metadata key '" + key + "' appears twice");
        const std::uint32_t type = reader_.u32("type of metadata '" + key + "'");
        if (key == "general.alignment") {
            read_alignment(type);
        } else if (tokenizer_ != nullptr && key.starts_with("tokenizer.ggml.")) {
            read_tokenizer_value(key, type);
        } else {
            skip_value(type, "metadata '" + key + "'", true);
        }
    }

    void read_alignment(std::uint32_t type) {
        if (type != u32) {
            reader_.fail("metadata 'general.alignment' has value type " + std::to_string(type) +
                         "; expected 4 (uint32)");
        }
        alignment_ = reader_.u32("metadata 'general.alignment'");
        if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
            reader_.fail("metadata 'general.alignment' is " + std::to_string(alignment_) +
                         "; expected a power of two");
        }
    }

    /// Keeps tokenizer.ggml.tokens, .token_type and .model, each checked for its type; skips the other keys.
    void read_tokenizer_value(const std::string& key, std::uint32_t type) {
        const std::string field = "metadata '" + key + "'";
        if (key == "tokenizer.ggml.tokens") {
            tokenizer_->tokens = read_string_array(type, field);
            tokenizer_->has_tokens = true;
        } else if (key == "tokenizer.ggml.token_type") {
            tokenizer_->types = read_i32_array(type, field);
            tokenizer_->has_types = true;
        } else if (key == "tokenizer.ggml.model") {
            if (type != string) {
                reader_.fail(field + " has value type " + std::to_string(type) + "; expected 8 (string)");
            }
            tokenizer_->model = gguf_string(field);
        } else {
            skip_value(type, field, true);
        }
    }

    /// An array of strings, its count checked against the file (each string takes at least its 8-byte
    /// length) before anything is allocated.
    std::vector<std::string> read_string_array(std::uint32_t type, const std::string& field) {
        const std::uint64_t count = array_header(type, string, "8 (string)", field);
        if (count > reader_.remaining() / 8) {
            reader_.fail(field + " array of " + std::to_string(count) + " strings needs at least " +
                         "8 bytes each, but the file has " + std::to_string(reader_.remaining()) + " bytes left");
        }
        std::vector<std::string> values;
        values.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t i = 0; i < count; ++i) values.push_back(gguf_string(field + "[" + std::to_string(i) + "]"));
        return values;
    }

    /// An array of int32, its bytes checked against the file before anything is allocated.
    std::vector<std::int32_t> read_i32_array(std::uint32_t type, const std::string& field) {
        const std::uint64_t count = array_header(type, i32, "5 (int32)", field);
        if (count > reader_.remaining() / 4) {
            reader_.fail(field + " array of " + std::to_string(count) + " values of 4 bytes runs past the end " +
                         "of the file (" + std::to_string(reader_.remaining()) + " bytes left)");
        }
        std::vector<std::int32_t> values(static_cast<std::size_t>(count));
        for (std::int32_t& value : values) value = static_cast<std::int32_t>(reader_.u32(field));
        return values;
    }

    /// Reads an array's element type and count, failing unless it is an array of element.
    std::uint64_t array_header(std::uint32_t type, std::uint32_t element, const char* element_name,
                               const std::string& field) {
        if (type != array) {
            reader_.fail(field + " has value type " + std::to_string(type) + "; expected 9 (array)");
        }
        const std::uint32_t found = reader_.u32(field + " array type");
        if (found != element) {
            reader_.fail(field + " is an array of value type " + std::to_string(found) + "; expected " +
                         element_name);
        }
        return reader_.u64(field + " array count");
    }

    /// Skips one value of type; arrays may hold any type but another array.
    void skip_value(std::uint32_t type, const std::string& field, bool arrays_allowed) {
        if (const std::uint64_t bytes = value_bytes(type); bytes != 0) {
            reader_.skip(bytes, field);
        } else if (type == string) {
            reader_.skip(reader_.u64(field + " string length"), field + " string");
        } else if (type == array && arrays_allowed) {
            skip_array(field);
        } else if (type == array) {
            reader_.fail(field + " is an array of arrays, which GGUF readers do not accept");
        } else {
            reader_.fail(field + " has unknown value type " + std::to_string(type) + "; known: 0 to 12");
        }
    }

    void skip_array(const std::string& field) {
        const std::uint32_t type = reader_.u32(field + " array type");
        const std::uint64_t count = reader_.u64(field + " array count");
        if (const std::uint64_t bytes = value_bytes(type); bytes != 0) {
            // count * bytes without overflow: compare against what is left instead.
            if (count > reader_.remaining() / bytes) {
                reader_.fail(field + " array of " + std::to_string(count) + " values of " + std::to_string(bytes) +
                             " bytes runs past the end of the file (" + std::to_string(reader_.remaining()) +
                             " bytes left)");
            }
            reader_.skip(count * bytes, field);
            return;
        }
        if (type != string) {
            skip_value(type, field + " element", false);  // says what is wrong with the element type
        }
        // Every string takes at least its 8-byte length, so a hostile count ends at the end of the file.
        for (std::uint64_t i = 0; i < count; ++i) skip_value(type, field + "[" + std::to_string(i) + "]", false);
    }

    std::pair<TensorEntry, std::uint64_t> read_tensor_info(std::uint64_t index) {
        TensorEntry entry;
        entry.name = gguf_string("tensor " + std::to_string(index) + " name");
        const std::string where = "tensor '" + entry.name + "'";
        const std::uint32_t dimensions = reader_.u32(where + " dimension count");
        if (dimensions > max_dimensions) {
            reader_.fail(where + " has " + std::to_string(dimensions) + " dimensions; ggml allows at most " +
                         std::to_string(max_dimensions));
        }
        std::vector<std::int64_t> innermost_first;
        for (std::uint32_t i = 0; i < dimensions; ++i) {
            const std::uint64_t extent = reader_.u64(where + " ne[" + std::to_string(i) + "]");
            if (extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                reader_.fail(where + " ne[" + std::to_string(i) + "] is " + std::to_string(extent) +
                             ", past 2^63 - 1");
            }
            innermost_first.push_back(static_cast<std::int64_t>(extent));
        }
        entry.shape.assign(innermost_first.rbegin(), innermost_first.rend());
        const std::uint32_t type_id = reader_.u32(where + " type");
        const GgmlType type = ggml_type(type_id);
        entry.dtype = type.name;
        entry.type = type.element;
        const std::uint64_t count = element_count(entry.shape, where, file_);
        if (type.block_bytes != 0) {
            const std::int64_t row = innermost_first.empty() ? 1 : innermost_first.front();
            if (static_cast<std::uint64_t>(row) % type.block_values != 0) {
                reader_.fail(where + " of type " + type.name + " has ne[0] = " + std::to_string(row) +
                             ", not a multiple of its block of " + std::to_string(type.block_values));
            }
            entry.size = byte_count(count / type.block_values, type.block_bytes, where, entry.shape, file_);
        } else {
            unsized_.insert(entry.name);
        }
        const std::uint64_t offset = reader_.u64(where + " offset");
        return {std::move(entry), offset};
    }

    /// Sets each entry's absolute offset, checking it against the alignment, the data section and the others.
    void place_in_data_section(std::vector<TensorEntry>& tensors, const std::vector<std::uint64_t>& offsets) {
        const std::uint64_t end_of_infos = reader_.position();
        const std::uint64_t file_size = end_of_infos + reader_.remaining();
        const std::uint64_t data_start = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
        if (tensors.empty()) return;
        if (data_start > file_size) {
            reader_.fail("the data section would start at offset " + std::to_string(data_start) +
                         ", past the end of the file at " + std::to_string(file_size));
        }
        const std::uint64_t data_size = file_size - data_start;
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            TensorEntry& entry = tensors[i];
            const std::string where = "tensor '" + entry.name + "'";
            if (offsets[i] % alignment_ != 0) {
                reader_.fail(where + " offset " + std::to_string(offsets[i]) + " is not a multiple of the alignment " +
                             std::to_string(alignment_));
            }
            if (offsets[i] > data_size || entry.size > data_size - offsets[i]) {
                reader_.fail(where + " at data offset " + std::to_string(offsets[i]) + " with " +
                             std::to_string(entry.size) + " bytes runs past the data section of " +
                             std::to_string(data_size) + " bytes");
            }
            entry.offset = data_start + offsets[i];
        }
        require_apart(tensors);
    }

    /// Throws unless no two tensors share a byte. A tensor of unknown size only has its start checked.
    void require_apart(const std::vector<TensorEntry>& tensors) const {
        std::vector<const TensorEntry*> sorted;
        for (const TensorEntry& entry : tensors) sorted.push_back(&entry);
        std::ranges::sort(sorted, {}, [](const TensorEntry* e) { return std::pair(e->offset, e->size); });
        const TensorEntry* reaching = nullptr;  // the tensor whose bytes reach furthest so far
        for (const TensorEntry* entry : sorted) {
            if (reaching != nullptr && entry->offset < reaching->offset + reaching->size &&
                (entry->size != 0 || ggml_unsized(*entry))) {
                reader_.fail("tensors '" + reaching->name + "' and '" + entry->name + "' overlap: the first holds " +
                             "file bytes [" + std::to_string(reaching->offset) + ", " +
                             std::to_string(reaching->offset + reaching->size) + "), the second starts at " +
                             std::to_string(entry->offset));
            }
            if (reaching == nullptr || entry->offset + entry->size > reaching->offset + reaching->size) {
                reaching = entry;
            }
        }
    }

    bool ggml_unsized(const TensorEntry& entry) const { return unsized_.contains(entry.name); }

    ByteReader reader_;
    const std::filesystem::path& file_;
    std::uint64_t tensor_count_ = 0;
    std::uint64_t metadata_count_ = 0;
    std::uint64_t alignment_ = default_alignment;
    std::set<std::string> keys_;
    GgufTokenizer* tokenizer_ = nullptr;  // where parse_tokenizer keeps the tokenizer keys; null otherwise
    std::set<std::string> unsized_;  ///< tensors of a type whose layout is unknown here
};

}  // namespace

Contents parse_gguf(const ByteSource& source) { return GgufParser(source).parse(); }

GgufTokenizer parse_gguf_tokenizer(const ByteSource& source) { return GgufParser(source).parse_tokenizer(); }

}  // namespace embed::io
