#pragma once
// GGUF's metadata value types, numbered as the format numbers them, and the bytes a fixed-size one takes:
// one list for the reader (gguf.cpp), the writer (gguf_writer.cpp) and the model editor (edit_gguf.cpp).

#include <cstdint>

namespace embed::io::gguf {

/// A metadata value's type id as the file stores it (a uint32).
enum ValueType : std::uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};

/// Bytes of a fixed-size metadata value type; 0 for string and array, which carry their own lengths, and
/// for an id the format does not define.
inline std::uint64_t value_bytes(std::uint32_t type) {
    switch (type) {
        case u8: case i8: case boolean: return 1;
        case u16: case i16: return 2;
        case u32: case i32: case f32: return 4;
        case u64: case i64: case f64: return 8;
        default: return 0;
    }
}

}  // namespace embed::io::gguf
