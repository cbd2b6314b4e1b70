#pragma once
// Values to the bits a file stores them as: IEEE half and bfloat16 rounded once to nearest even, and
// ggml's block-quantised types as ggml's reference quantisers (quantize_row_*_ref in ggml-quants.c) make
// them, float32 arithmetic in their order, so a file written here is what llama.cpp's own reference
// would write for the same float32 values.
//
// Where ggml's C leaves a conversion undefined (a float outside int8's range or NaN cast to an integer, as
// a scale of 1/subnormal can give), the value is what x86-64's conversion gives, as llama.cpp built there
// computes it: the 32-bit truncating conversion (INT32_MIN when out of range or NaN), then its low 8 bits.

#include <cstddef>
#include <cstdint>
#include <span>

#include "embed/element_type.hpp"

namespace embed::io {

/// x rounded once to the nearest IEEE half, ties to even, as its 16 bits: subnormals kept, a magnitude
/// rounding past 65504 becomes infinity, infinities stay, NaN becomes the quiet NaN 0x7E00 with x's sign.
std::uint16_t half_bits(double x);

/// x rounded once to the nearest bfloat16, ties to even, as its 16 bits: past the largest finite,
/// infinity; NaN becomes the quiet NaN 0x7FC0 with x's sign.
std::uint16_t bfloat16_bits(double x);

/// count values x (a multiple of type's block_values) as type's blocks, count / block_values *
/// block_bytes bytes into out, by ggml's reference quantiser for type. type must be quantised.
void quantise(ElementType type, const float* x, std::size_t count, std::byte* out);

/// Byte offsets, within one block of quantised type, of its fp16 scales (d, and dmin or m where it has
/// one): where a value too large for the type shows, as an infinite scale.
std::span<const int> half_scale_offsets(ElementType type);

}  // namespace embed::io
