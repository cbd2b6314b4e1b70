#pragma once
// The writers' one byte encoder: an unsigned value as the little-endian bytes every format we write uses.

#include <cstdint>
#include <string>

namespace embed::io {

/// value's low `bytes` bytes, least significant first (bytes in [0, 8]).
inline std::string little_endian(std::uint64_t value, int bytes) {
    std::string out;
    for (int i = 0; i < bytes; ++i, value >>= 8) out += static_cast<char>(value & 0xFF);
    return out;
}

}  // namespace embed::io
