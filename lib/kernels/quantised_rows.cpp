#include "kernels/quantised_rows.hpp"

#include <algorithm>

#include "io/dequantise.hpp"

namespace embed::detail {

void dequantise_values(ElementType type, const std::byte* blocks, Index values, float* out) {
    io::dequantise(type, blocks, static_cast<std::uint64_t>(values), out);
}

Index rows_per_buffer(Index dim, Index values, Index most) {
    return std::clamp<Index>(values / std::max<Index>(dim, 1), 1, std::max<Index>(most, 1));
}

}  // namespace embed::detail
