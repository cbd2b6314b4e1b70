#pragma once
// Overflow-safe sizes of tensors described by a file, checked before use.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "io/formats.hpp"

namespace embed::io {

/// "(3, 4)": a shape as numpy prints it, for messages.
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + (shape.size() == 1 ? ",)" : ")");
}

/// The number of elements of shape, or FileFormatError naming what ("tensor 'x'") and its shape when a dimension is
/// negative or the product passes 2^63 - 1.
inline std::uint64_t element_count(const std::vector<std::int64_t>& shape, const std::string& what,
                                   const std::filesystem::path& file) {
    std::int64_t count = 1;
    for (const std::int64_t extent : shape) {
        if (extent < 0) {
            throw FileFormatError(file, what + " has negative dimension " + std::to_string(extent) +
                                            " in shape " + shape_text(shape));
        }
        if (__builtin_mul_overflow(count, extent, &count)) {
            throw FileFormatError(file, what + " has shape " + shape_text(shape) +
                                            ", whose element count does not fit in 64 bits");
        }
    }
    return static_cast<std::uint64_t>(count);
}

/// count * bytes_each, or FileFormatError naming the tensor when it passes 2^63 - 1.
inline std::uint64_t byte_count(std::uint64_t count, std::uint64_t bytes_each, const std::string& what,
                                const std::vector<std::int64_t>& shape, const std::filesystem::path& file) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, bytes_each, &bytes) ||
        bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw FileFormatError(file, what + " of shape " + shape_text(shape) + " needs " +
                                        std::to_string(count) + " x " + std::to_string(bytes_each) +
                                        " bytes, which does not fit in 64 bits");
    }
    return bytes;
}

}  // namespace embed::io
