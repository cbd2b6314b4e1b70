#pragma once
// Writing a .gguf file (version 3, little-endian): the header, metadata key/values, one info per tensor,
// padding to the alignment, then each tensor's data at an aligned offset. The writer holds descriptions
// only; each tensor's bytes come from its callback when the file is written, so a table is encoded
// straight into the file and a tensor of another file can be copied through byte for byte.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "embed/element_type.hpp"

namespace embed::io {

/// One metadata key/value: GGUF's value type id (gguf_type: 4 uint32, 8 string, 9 array, ...) and the
/// value's bytes as the file stores them after the type (an array: element type, count, elements).
struct GgufMetadata {
    std::string key;
    std::uint32_t type = 0;
    std::string value;

    /// A uint32 value (type 4).
    static GgufMetadata u32(std::string key, std::uint32_t value);
    /// A string value (type 8).
    static GgufMetadata string(std::string key, const std::string& value);
    /// An array of strings (type 9 of 8).
    static GgufMetadata strings(std::string key, const std::vector<std::string>& values);
    /// An array of int32 (type 9 of 5).
    static GgufMetadata i32s(std::string key, const std::vector<std::int32_t>& values);
};

/// One tensor: its name, dimensions innermost first (a (V, d) table is ne = [d, V]), ggml type id, size in
/// bytes, and the callback that writes exactly those bytes.
struct GgufTensor {
    std::string name;
    std::vector<std::uint64_t> ne;
    std::uint32_t ggml_type = 0;
    std::uint64_t bytes = 0;
    std::function<void(std::ostream&)> write;
};

/// text as GGUF stores a string: its byte count (uint64, little-endian), then its bytes.
std::string gguf_string(const std::string& text);

/// ggml's type id for type: F64 28, F32 0, F16 1, BF16 30, Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8,
/// Q2_K 10 ... Q6_K 14.
std::uint32_t ggml_type_id(ElementType type);

/// A .gguf file in the making: metadata and tensors in the order added.
class GgufWriter {
public:
    /// Adds a key/value. general.alignment, if added, must be a uint32 power of two (std::invalid_argument
    /// otherwise) and sets the alignment; without it the alignment is GGUF's default, 32. A key added twice:
    /// std::invalid_argument.
    void add(GgufMetadata metadata);

    /// Adds a tensor; a name added twice: std::invalid_argument.
    void add(GgufTensor tensor);

    /// The file's bytes to out: header, metadata, tensor infos, padding, then each tensor's data padded to
    /// the alignment. A callback writing other than its tensor's bytes: std::logic_error.
    void write(std::ostream& out) const;

    /// The file, written atomically (io/atomic_file.hpp); before_rename (when given) runs once it is
    /// complete, before it is renamed into place, and may still refuse it by throwing.
    void write(const std::filesystem::path& file, const std::function<void()>& before_rename = {}) const;

private:
    std::vector<GgufMetadata> metadata_;
    std::vector<GgufTensor> tensors_;
    std::uint64_t alignment_ = 32;
};

}  // namespace embed::io
