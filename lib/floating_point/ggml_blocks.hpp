#pragma once
// ggml's block-quantised types, one block at a time, decoded as llama.cpp's reference dequantisation
// (dequantize_row_* in ggml-quants.c) does: fp16 scales widened to float32, then float32 products and
// differences in the same order, so the values agree bit for bit (the build keeps the compiler from fusing a
// product and a difference into one rounding, -ffp-contract=off). Each block's values are written with plain
// loops over runs of 16 or 32, which the compiler turns into vector code of the instruction set it compiles
// the caller for: every decoder is forced inline, so the kernels' multiversioned loops (lib/kernels:
// quantised_rows.cpp, quantised_kernels.cpp) get a copy per instruction set, and a block decoded into a
// small buffer is in L1 when the dot products read it. A number format, as half.hpp's: the file readers
// (lib/io/dequantise.cpp) decode with it too, compiled once for the baseline.
//
// Layouts, from ggml's published format (ggml-common.h); fp16 and multi-byte fields little-endian:
//   Q4_0  (32 values, 18 bytes): d, qs[16]                value (q - 8) * d
//   Q4_1  (32 values, 20 bytes): d, m, qs[16]             value q * d + m
//   Q5_0  (32 values, 22 bytes): d, qh[4], qs[16]         value (q - 16) * d, q's fifth bit from qh
//   Q5_1  (32 values, 24 bytes): d, m, qh[4], qs[16]      value q * d + m
//   Q8_0  (32 values, 34 bytes): d, int8 qs[32]           value q * d
//   Q2_K (256 values, 84 bytes): scales[16], qs[64], d, dmin
//   Q3_K (256 values, 110 bytes): hmask[32], qs[64], scales[12], d
//   Q4_K (256 values, 144 bytes): d, dmin, scales[12], qs[128]
//   Q5_K (256 values, 176 bytes): d, dmin, scales[12], qh[32], qs[128]
//   Q6_K (256 values, 210 bytes): ql[128], qh[64], int8 scales[16], d
// In the 32-value types a byte's low nibble is value j and its high nibble value j + 16.

#include <cstdint>
#include <cstring>
#include <utility>

#include "embed/element_type.hpp"
#include "embed/types.hpp"
#include "floating_point/half.hpp"

namespace embed::detail::block_decoders {

using Bytes = const unsigned char*;

/// The little-endian fp16 at p, widened exactly to float32.
[[gnu::always_inline]] inline float half_at(Bytes p) {
    return half_to_float(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}

/// An integer in the small range a quant takes, as the float32 equal to it.
[[gnu::always_inline]] inline float as_float(int q) { return static_cast<float>(q); }

/// A 32-value block's 16 bytes of nibbles as its 32 quants: low nibbles are values 0-15, high 16-31.
[[gnu::always_inline]] inline void split_nibbles(Bytes qs, std::uint8_t* q) {
    for (int j = 0; j < 16; ++j) q[j] = static_cast<std::uint8_t>(qs[j] & 0x0F);
    for (int j = 0; j < 16; ++j) q[j + 16] = static_cast<std::uint8_t>(qs[j] >> 4);
}

/// Q5's fifth bits (4 bytes, bit i for value i, little-endian) added to the nibbles as 16. Each byte is
/// repeated 8 times and tested against a mask per value, so the loop vectorises (a shift by a different
/// count per value would not, before AVX2).
[[gnu::always_inline]] inline void add_fifth_bits(Bytes qh, std::uint8_t* q) {
    static constexpr std::uint8_t bit_of_value[32] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128,
                                                      1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    std::uint8_t repeated[32];
    for (int i = 0; i < 32; ++i) repeated[i] = qh[i / 8];
    for (int i = 0; i < 32; ++i) {
        q[i] = static_cast<std::uint8_t>(q[i] | ((repeated[i] & bit_of_value[i]) != 0 ? 16 : 0));
    }
}

/// ggml's form for the types without a min: y = (q - offset) * d.
[[gnu::always_inline]] inline void times_scale(const std::uint8_t* q, int offset, float d, float* y) {
    for (int j = 0; j < 32; ++j) y[j] = as_float(q[j] - offset) * d;
}

/// ggml's form for the types with a min: y = q * d + m.
[[gnu::always_inline]] inline void times_scale_plus_min(const std::uint8_t* q, float d, float m, float* y) {
    for (int j = 0; j < 32; ++j) y[j] = as_float(q[j]) * d + m;
}

// The quants are unpacked first, as bytes (sixteen to a vector), then converted and scaled.

[[gnu::always_inline]] inline void q4_0_block(Bytes b, float* y) {
    std::uint8_t q[32];
    split_nibbles(b + 2, q);
    times_scale(q, 8, half_at(b), y);
}

[[gnu::always_inline]] inline void q4_1_block(Bytes b, float* y) {
    std::uint8_t q[32];
    split_nibbles(b + 4, q);
    times_scale_plus_min(q, half_at(b), half_at(b + 2), y);
}

[[gnu::always_inline]] inline void q5_0_block(Bytes b, float* y) {
    std::uint8_t q[32];
    split_nibbles(b + 6, q);
    add_fifth_bits(b + 2, q);
    times_scale(q, 16, half_at(b), y);
}

[[gnu::always_inline]] inline void q5_1_block(Bytes b, float* y) {
    std::uint8_t q[32];
    split_nibbles(b + 8, q);
    add_fifth_bits(b + 4, q);
    times_scale_plus_min(q, half_at(b), half_at(b + 2), y);
}

[[gnu::always_inline]] inline void q8_0_block(Bytes b, float* y) {
    const float d = half_at(b);
    const Bytes qs = b + 2;
    for (int j = 0; j < 32; ++j) y[j] = as_float(static_cast<std::int8_t>(qs[j])) * d;
}

/// Q2_K's and Q3_K's 2-bit quants: 256 values in two halves of 128, each from 32 bytes of qs holding four
/// 2-bit planes; plane p of byte l is value 32 * p + l of its half.
[[gnu::always_inline]] inline void split_planes(Bytes qs, std::uint8_t* q) {
    for (int half = 0; half < 2; ++half) {
        const Bytes qh = qs + 32 * half;
        std::uint8_t* out = q + 128 * half;
        for (int l = 0; l < 32; ++l) out[l] = static_cast<std::uint8_t>(qh[l] & 3);
        for (int l = 0; l < 32; ++l) out[l + 32] = static_cast<std::uint8_t>((qh[l] >> 2) & 3);
        for (int l = 0; l < 32; ++l) out[l + 64] = static_cast<std::uint8_t>((qh[l] >> 4) & 3);
        for (int l = 0; l < 32; ++l) out[l + 96] = static_cast<std::uint8_t>(qh[l] >> 6);
    }
}

/// 16 values dl * (q - offset) - ml, as Q2_K (offset 0) and Q3_K (ml 0: x - 0 is x, even for -0 and NaN)
/// write them; a function of its own so the loop is vectorised by itself, not as part of the runs around it.
[[gnu::always_inline]] inline void times_less_min16(const std::uint8_t* q, int offset, float dl, float ml, float* y) {
    for (int l = 0; l < 16; ++l) y[l] = dl * as_float(q[l] - offset) - ml;
}

[[gnu::always_inline]] inline void q2_k_block(Bytes b, float* y) {
    const Bytes scales = b;
    const float d = half_at(b + 80);
    const float min = half_at(b + 82);
    std::uint8_t q[256];
    split_planes(b + 16, q);
    // Each run of 16 values has a 4-bit scale (low nibble) and a 4-bit min (high nibble) of its own.
    for (int run = 0; run < 16; ++run) {
        const int sc = scales[run];
        const float dl = d * as_float(sc & 0x0F);
        const float ml = min * as_float(sc >> 4);
        times_less_min16(q + 16 * run, 0, dl, ml, y + 16 * run);
    }
}

/// Q3_K's 16 6-bit scales, sub-block k's low four bits from byte k mod 8 (low nibble for k < 8, high
/// for k >= 8) and its top two bits from byte 8 + k mod 4, two bits at 2 * (k / 4).
[[gnu::always_inline]] inline int q3_k_scale(Bytes s, int k) {
    const int low = k < 8 ? (s[k] & 0x0F) : (s[k - 8] >> 4);
    const int high = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
    return low | (high << 4);
}

[[gnu::always_inline]] inline void q3_k_block(Bytes b, float* y) {
    const Bytes hmask = b;
    const Bytes scales = b + 96;
    const float d_all = half_at(b + 108);
    // As Q2_K, with a third bit per value: bit i / 32 of hmask[i % 32]; a clear bit subtracts 4.
    std::uint8_t q[256];
    split_planes(b + 32, q);
    for (int bit = 0; bit < 8; ++bit) {
        for (int l = 0; l < 32; ++l) {
            q[32 * bit + l] = static_cast<std::uint8_t>(q[32 * bit + l] + ((hmask[l] & (1 << bit)) != 0 ? 4 : 0));
        }
    }
    for (int run = 0; run < 16; ++run) {
        const float dl = d_all * as_float(q3_k_scale(scales, run) - 32);
        times_less_min16(q + 16 * run, 4, dl, 0.0f, y + 16 * run);
    }
}

/// get_scale_min_k4: Q4_K's and Q5_K's 6-bit scale and min of sub-block j (0 to 7) from the 12 bytes s.
[[gnu::always_inline]] inline std::pair<int, int> scale_min_k4(int j, Bytes s) {
    if (j < 4) return {s[j] & 63, s[j + 4] & 63};
    return {(s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4)};
}

[[gnu::always_inline]] inline void q4_k_block(Bytes b, float* y) {
    const float d = half_at(b);
    const float min = half_at(b + 2);
    const Bytes scales = b + 4;
    // Four runs of 32 bytes: low nibbles are sub-block 2i, high nibbles sub-block 2i + 1.
    for (int i = 0; i < 4; ++i) {
        const Bytes q = b + 16 + 32 * i;
        const auto [sc1, m1_int] = scale_min_k4(2 * i, scales);
        const auto [sc2, m2_int] = scale_min_k4(2 * i + 1, scales);
        const float d1 = d * as_float(sc1);
        const float m1 = min * as_float(m1_int);
        const float d2 = d * as_float(sc2);
        const float m2 = min * as_float(m2_int);
        for (int l = 0; l < 32; ++l) y[l] = d1 * as_float(q[l] & 0x0F) - m1;
        for (int l = 0; l < 32; ++l) y[l + 32] = d2 * as_float(q[l] >> 4) - m2;
        y += 64;
    }
}

[[gnu::always_inline]] inline void q5_k_block(Bytes b, float* y) {
    const float d = half_at(b);
    const float min = half_at(b + 2);
    const Bytes scales = b + 4;
    const Bytes qh = b + 16;
    // As Q4_K, with a fifth bit per value from qh: bit 2i for the low nibbles, 2i + 1 for the high.
    for (int i = 0; i < 4; ++i) {
        const Bytes ql = b + 48 + 32 * i;
        const auto [sc1, m1_int] = scale_min_k4(2 * i, scales);
        const auto [sc2, m2_int] = scale_min_k4(2 * i + 1, scales);
        const float d1 = d * as_float(sc1);
        const float m1 = min * as_float(m1_int);
        const float d2 = d * as_float(sc2);
        const float m2 = min * as_float(m2_int);
        const int u1 = 1 << (2 * i);
        const int u2 = 2 << (2 * i);
        for (int l = 0; l < 32; ++l) y[l] = d1 * as_float((ql[l] & 0x0F) + ((qh[l] & u1) != 0 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) y[l + 32] = d2 * as_float((ql[l] >> 4) + ((qh[l] & u2) != 0 ? 16 : 0)) - m2;
        y += 64;
    }
}

/// 16 six-bit quants (0 to 63) less 32, times scale, as ggml's Q6_K writes them.
[[gnu::always_inline]] inline void q6_k_run(const std::uint8_t* q, float scale, float* y) {
    for (int l = 0; l < 16; ++l) y[l] = scale * as_float(q[l] - 32);
}

[[gnu::always_inline]] inline void q6_k_block(Bytes b, float* y) {
    const float d = half_at(b + 208);
    // Two halves of 128 values from 64 bytes of ql, 32 of qh and 8 scales. Quarter p (0 to 3) of a half:
    // the low (p < 2) or high nibbles of ql[32 * (p % 2) ...], qh's bits 2p and 2p + 1 on top, minus 32;
    // each run of 16 has its own int8 scale. The quants are unpacked as bytes first.
    for (int half = 0; half < 2; ++half) {
        const Bytes ql = b + 64 * half;
        const Bytes qh = b + 128 + 32 * half;
        const Bytes sc = b + 192 + 8 * half;
        std::uint8_t q[128];
        for (int l = 0; l < 32; ++l) q[l] = static_cast<std::uint8_t>((ql[l] & 0x0F) | ((qh[l] & 0x03) << 4));
        for (int l = 0; l < 32; ++l) q[l + 32] = static_cast<std::uint8_t>((ql[l + 32] & 0x0F) | ((qh[l] & 0x0C) << 2));
        for (int l = 0; l < 32; ++l) q[l + 64] = static_cast<std::uint8_t>((ql[l] >> 4) | (qh[l] & 0x30));
        for (int l = 0; l < 32; ++l) q[l + 96] = static_cast<std::uint8_t>((ql[l + 32] >> 4) | ((qh[l] & 0xC0) >> 2));
        // ggml writes d * sc * q: (d * sc) first, then times q.
        float scale[8];
        for (int run = 0; run < 8; ++run) scale[run] = d * as_float(static_cast<std::int8_t>(sc[run]));
        q6_k_run(q, scale[0], y);
        q6_k_run(q + 16, scale[1], y + 16);
        q6_k_run(q + 32, scale[2], y + 32);
        q6_k_run(q + 48, scale[3], y + 48);
        q6_k_run(q + 64, scale[4], y + 64);
        q6_k_run(q + 80, scale[5], y + 80);
        q6_k_run(q + 96, scale[6], y + 96);
        q6_k_run(q + 112, scale[7], y + 112);
        y += 128;
    }
}

}  // namespace embed::detail::block_decoders

namespace embed::detail {

/// One quantised type's block as a compile-time constant: its values, its bytes, and its decoder, which writes
/// the block at b as kValues float32s into y. (element_type.cpp's block_values and block_bytes give the same
/// sizes at run time; the kernels' tests check that they agree.)
template <ElementType T>
struct QuantBlock;

#define EMBED_QUANT_BLOCK(type, values, bytes)                                                        \
    template <>                                                                                      \
    struct QuantBlock<ElementType::type> {                                                           \
        static constexpr Index kValues = values;                                                     \
        static constexpr Index kBytes = bytes;                                                       \
        [[gnu::always_inline]] static void decode(const unsigned char* b, float* y) {                \
            block_decoders::type##_block(b, y);                                                      \
        }                                                                                            \
    };
EMBED_QUANT_BLOCK(q4_0, 32, 18)
EMBED_QUANT_BLOCK(q4_1, 32, 20)
EMBED_QUANT_BLOCK(q5_0, 32, 22)
EMBED_QUANT_BLOCK(q5_1, 32, 24)
EMBED_QUANT_BLOCK(q8_0, 32, 34)
EMBED_QUANT_BLOCK(q2_k, 256, 84)
EMBED_QUANT_BLOCK(q3_k, 256, 110)
EMBED_QUANT_BLOCK(q4_k, 256, 144)
EMBED_QUANT_BLOCK(q5_k, 256, 176)
EMBED_QUANT_BLOCK(q6_k, 256, 210)
#undef EMBED_QUANT_BLOCK

/// count values of T (whole blocks) from blocks into out, a block at a time.
template <ElementType T>
[[gnu::always_inline]] inline void decode_blocks(const std::byte* blocks, Index count, float* out) {
    using Block = QuantBlock<T>;
    const auto* b = reinterpret_cast<const unsigned char*>(blocks);
    for (Index at = 0; at < count; at += Block::kValues, b += Block::kBytes) Block::decode(b, out + at);
}

/// count values of type (whole blocks of it) from blocks into out; a type that is not block-quantised writes
/// nothing. Forced inline, so each caller's instruction set compiles it.
[[gnu::always_inline]] inline void decode_quantised_values(ElementType type, const std::byte* blocks, Index count,
                                                           float* out) {
    switch (type) {
        case ElementType::q4_0: return decode_blocks<ElementType::q4_0>(blocks, count, out);
        case ElementType::q4_1: return decode_blocks<ElementType::q4_1>(blocks, count, out);
        case ElementType::q5_0: return decode_blocks<ElementType::q5_0>(blocks, count, out);
        case ElementType::q5_1: return decode_blocks<ElementType::q5_1>(blocks, count, out);
        case ElementType::q8_0: return decode_blocks<ElementType::q8_0>(blocks, count, out);
        case ElementType::q2_k: return decode_blocks<ElementType::q2_k>(blocks, count, out);
        case ElementType::q3_k: return decode_blocks<ElementType::q3_k>(blocks, count, out);
        case ElementType::q4_k: return decode_blocks<ElementType::q4_k>(blocks, count, out);
        case ElementType::q5_k: return decode_blocks<ElementType::q5_k>(blocks, count, out);
        case ElementType::q6_k: return decode_blocks<ElementType::q6_k>(blocks, count, out);
        case ElementType::f64:
        case ElementType::f32:
        case ElementType::f16:
        case ElementType::bf16: break;
    }
}

}  // namespace embed::detail
