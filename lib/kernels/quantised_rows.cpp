#include "kernels/quantised_rows.hpp"

#include <algorithm>

#include "kernels/block_decoders.hpp"
#include "kernels/multiversion.hpp"

namespace embed::detail {
namespace {

/// values values of T (whole blocks) from blocks into out, a block at a time.
template <ElementType T>
[[gnu::always_inline]] inline void decode_blocks(const std::byte* blocks, Index values, float* out) {
    using Block = QuantBlock<T>;
    const auto* b = reinterpret_cast<const unsigned char*>(blocks);
    for (Index at = 0; at < values; at += Block::kValues, b += Block::kBytes) Block::decode(b, out + at);
}

// Compiled for every instruction set (multiversion.hpp): the decoders are inlined into each copy.
EMBED_MULTIVERSION void dequantise_compiled(ElementType type, const std::byte* blocks, Index values, float* out) {
    switch (type) {
        case ElementType::q4_0: return decode_blocks<ElementType::q4_0>(blocks, values, out);
        case ElementType::q4_1: return decode_blocks<ElementType::q4_1>(blocks, values, out);
        case ElementType::q5_0: return decode_blocks<ElementType::q5_0>(blocks, values, out);
        case ElementType::q5_1: return decode_blocks<ElementType::q5_1>(blocks, values, out);
        case ElementType::q8_0: return decode_blocks<ElementType::q8_0>(blocks, values, out);
        case ElementType::q2_k: return decode_blocks<ElementType::q2_k>(blocks, values, out);
        case ElementType::q3_k: return decode_blocks<ElementType::q3_k>(blocks, values, out);
        case ElementType::q4_k: return decode_blocks<ElementType::q4_k>(blocks, values, out);
        case ElementType::q5_k: return decode_blocks<ElementType::q5_k>(blocks, values, out);
        case ElementType::q6_k: return decode_blocks<ElementType::q6_k>(blocks, values, out);
        case ElementType::f64:
        case ElementType::f32:
        case ElementType::f16:
        case ElementType::bf16: break;
    }
}

}  // namespace

void dequantise_values(ElementType type, const std::byte* blocks, Index values, float* out) {
    dequantise_compiled(type, blocks, values, out);
}

Index rows_per_buffer(Index dim, Index values, Index most) {
    return std::clamp<Index>(values / std::max<Index>(dim, 1), 1, std::max<Index>(most, 1));
}

}  // namespace embed::detail
