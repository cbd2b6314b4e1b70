#include "kernels/quantised_rows.hpp"

#include <algorithm>

#include "floating_point/ggml_blocks.hpp"
#include "kernels/multiversion.hpp"

namespace embed::detail {
namespace {

// Compiled for every instruction set (multiversion.hpp): the decoders are inlined into each copy.
EMBED_MULTIVERSION void dequantise_compiled(ElementType type, const std::byte* blocks, Index values, float* out) {
    decode_quantised_values(type, blocks, values, out);
}

}  // namespace

void dequantise_values(ElementType type, const std::byte* blocks, Index values, float* out) {
    dequantise_compiled(type, blocks, values, out);
}

Index rows_per_buffer(Index dim, Index values, Index most) {
    return std::clamp<Index>(values / std::max<Index>(dim, 1), 1, std::max<Index>(most, 1));
}

}  // namespace embed::detail
