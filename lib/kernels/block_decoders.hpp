#pragma once
// ggml's Q8_0, Q4_K and Q6_K blocks sixteen values at a time in a vector register, for the kernels' row
// loops (quantised_kernels.cpp); the block layouts and the one-block decoders they match value for value are
// lib/floating_point/ggml_blocks.hpp's.

#include <cstdint>
#include <cstring>

#include "floating_point/ggml_blocks.hpp"

// The chunks are 64-byte vectors passed between always-inlined functions of the kernel files that include
// this header, so the calling convention GCC warns about (-Wpsabi) never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {

// Q8_0, Q4_K and Q6_K also sixteen values at a time in a vector register, for the row loops that feed them
// straight to the dot products (quantised_kernels.cpp): the same float32 operations as the block decoders
// above, value for value, so the same bits, without the round trip through a buffer. Each type's Chunks
// holds what its block's chunks share (the scales, worked out once per block) and gives chunk c, values
// 16c to 16c + 15 of the block.
typedef float Floats16 __attribute__((vector_size(16 * sizeof(float))));
typedef std::int32_t Ints16 __attribute__((vector_size(16 * sizeof(std::int32_t))));
typedef std::uint8_t Bytes16 __attribute__((vector_size(16)));

namespace block_decoders {

/// The 16 bytes at p.
[[gnu::always_inline]] inline Bytes16 bytes16_at(Bytes p) {
    Bytes16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// 16 small integers as the float32s equal to them.
[[gnu::always_inline]] inline Floats16 as_floats(Ints16 q) { return __builtin_convertvector(q, Floats16); }

}  // namespace block_decoders

template <ElementType T>
struct QuantChunks;

// Q8_0: value q * d.
template <>
struct QuantChunks<ElementType::q8_0> {
    float d;
    QuantChunks() = default;
    [[gnu::always_inline]] explicit QuantChunks(const unsigned char* b) : d(block_decoders::half_at(b)) {}
    [[gnu::always_inline]] Floats16 chunk(const unsigned char* b, Index c) const {
        // The int8 quants offset by 128 into bytes 0 to 255, widened as unsigned and the offset taken off
        // again: the same integers, where GCC sign-extended bytes through 16-bit words in pieces.
        const Bytes16 offset = block_decoders::bytes16_at(b + 2 + 16 * c) ^ 0x80;
        return block_decoders::as_floats(__builtin_convertvector(offset, Ints16) - 128) * d;
    }
};

// Q4_K: sub-block s (32 values) is d * scale_s times its nibble, less dmin * min_s; chunk c is half of
// sub-block c / 2, whose nibbles are the low ones of 32-byte run c / 4 for even sub-blocks, the high ones
// for odd.
template <>
struct QuantChunks<ElementType::q4_k> {
    float scale[8];
    float min[8];
    QuantChunks() = default;
    [[gnu::always_inline]] explicit QuantChunks(const unsigned char* b) {
        const float d = block_decoders::half_at(b);
        const float dmin = block_decoders::half_at(b + 2);
        for (int j = 0; j < 8; ++j) {
            const auto [sc, m] = block_decoders::scale_min_k4(j, b + 4);
            scale[j] = d * block_decoders::as_float(sc);
            min[j] = dmin * block_decoders::as_float(m);
        }
    }
    [[gnu::always_inline]] Floats16 chunk(const unsigned char* b, Index c) const {
        const Index run = c / 4;
        const Index sub = c / 2;
        const Bytes16 q = block_decoders::bytes16_at(b + 16 + 32 * run + 16 * (c % 2));
        const Bytes16 nibble = (c / 2) % 2 == 0 ? (q & 0x0F) : (q >> 4);
        return scale[sub] * block_decoders::as_floats(__builtin_convertvector(nibble, Ints16)) - min[sub];
    }
};

// Q6_K: value (d * scale_run) * (q - 32), q's low four bits from ql and top two from qh, as q6_k_block
// unpacks them; chunk c is run c (16 values) of the block.
template <>
struct QuantChunks<ElementType::q6_k> {
    float scale[16];
    QuantChunks() = default;
    [[gnu::always_inline]] explicit QuantChunks(const unsigned char* b) {
        const float d = block_decoders::half_at(b + 208);
        for (int run = 0; run < 16; ++run) {
            scale[run] = d * block_decoders::as_float(static_cast<std::int8_t>(b[192 + run]));
        }
    }
    [[gnu::always_inline]] Floats16 chunk(const unsigned char* b, Index c) const {
        const Index half = c / 8;
        const Index quarter = (c % 8) / 2;  // p: which nibble of ql and which two bits of qh
        const Index at = 16 * (c % 2);      // l's first value within the quarter
        const Bytes16 ql = block_decoders::bytes16_at(b + 64 * half + 32 * (quarter % 2) + at);
        const Bytes16 qh = block_decoders::bytes16_at(b + 128 + 32 * half + at);
        const Bytes16 low = quarter < 2 ? (ql & 0x0F) : (ql >> 4);
        const Bytes16 high = static_cast<Bytes16>(((qh >> static_cast<int>(2 * quarter)) & 3) << 4);
        const Ints16 q = __builtin_convertvector(static_cast<Bytes16>(low | high), Ints16) - 32;
        return scale[c] * block_decoders::as_floats(q);
    }
};

}  // namespace embed::detail
