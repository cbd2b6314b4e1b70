#pragma once
// The ggml block-quantised types, worked out one value at a time straight from the published format
// (ggml-common.h's block layouts, ggml-quants.c's dequantisation order): the test's own reference, written
// apart from lib/io/dequantise.cpp. Each value is float32 arithmetic in ggml's order: fp16 scales widened,
// then the products (scale times the sub-block's integer scale) first, the quant times that next, and
// the min subtracted (or added) last.

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace embed_test {

/// One ggml type as the format describes it: id, name, values and bytes per block, and where its fp16
/// fields (the scales d and mins) sit in a block.
struct GgmlQuantType {
    std::uint32_t id;
    std::string name;
    int block_values;
    int block_bytes;
    std::vector<int> half_fields;
};

/// The ten quantised types the reader decodes.
inline const std::vector<GgmlQuantType>& ggml_quant_types() {
    static const std::vector<GgmlQuantType> types{
        {2, "Q4_0", 32, 18, {0}},      {3, "Q4_1", 32, 20, {0, 2}},     {6, "Q5_0", 32, 22, {0}},
        {7, "Q5_1", 32, 24, {0, 2}},   {8, "Q8_0", 32, 34, {0}},        {10, "Q2_K", 256, 84, {80, 82}},
        {11, "Q3_K", 256, 110, {108}}, {12, "Q4_K", 256, 144, {0, 2}},  {13, "Q5_K", 256, 176, {0, 2}},
        {14, "Q6_K", 256, 210, {208}},
    };
    return types;
}

/// An IEEE binary16 as float32, from its three fields (every half is a float32).
inline float reference_half(std::uint16_t bits) {
    const bool negative = (bits & 0x8000) != 0;
    const int exponent = (bits >> 10) & 0x1F;
    const int fraction = bits & 0x3FF;
    if (exponent == 31) {
        if (fraction == 0) return std::bit_cast<float>(negative ? 0xFF800000u : 0x7F800000u);
        const std::uint32_t sign = negative ? 0x80000000u : 0u;
        return std::bit_cast<float>(sign | 0x7F800000u | (static_cast<std::uint32_t>(fraction) << 13));
    }
    // value = (exponent == 0 ? fraction : 1024 + fraction) * 2^(max(exponent, 1) - 25), exact in float32.
    const float significand = static_cast<float>(exponent == 0 ? fraction : 1024 + fraction);
    float scale = 0x1p-24f;
    for (int e = 1; e < exponent; ++e) scale *= 2.0f;
    const float magnitude = significand * scale;
    return negative ? -magnitude : magnitude;
}

/// Byte i of a block.
inline int byte_at(const std::uint8_t* block, int i) { return block[i]; }

/// The fp16 at byte offset of a block, little-endian.
inline float half_field(const std::uint8_t* block, int offset) {
    return reference_half(static_cast<std::uint16_t>(block[offset] | (block[offset + 1] << 8)));
}

inline float f(int q) { return static_cast<float>(q); }

/// Sub-block j's (scale, min) in Q4_K and Q5_K: 6 bits each, packed in 12 bytes. Sub-blocks 0-3 have
/// theirs in the low 6 bits of bytes j (scale) and j + 4 (min); sub-blocks 4-7 take their low 4 bits
/// from byte j + 4's nibbles (scale low, min high) and their top 2 from the top bits of bytes j - 4
/// (scale) and j (min).
inline void k4_scale_min(const std::uint8_t* s, int j, int& scale, int& min) {
    if (j < 4) {
        scale = s[j] % 64;
        min = s[j + 4] % 64;
    } else {
        scale = s[j + 4] % 16 + (s[j - 4] / 64) * 16;
        min = s[j + 4] / 16 + (s[j] / 64) * 16;
    }
}

/// Q3_K's scale of sub-block k (0-15) as stored, 0 to 63: the low 4 bits in byte k % 8 (low nibble for
/// k < 8, high for the rest), the top 2 in byte 8 + k % 4 at bit 2 * (k / 4).
inline int q3_k_scale(const std::uint8_t* s, int k) {
    const int low = k < 8 ? s[k] % 16 : s[k - 8] / 16;
    const int high = (s[8 + k % 4] >> (2 * (k / 4))) % 4;
    return low + 16 * high;
}

/// Value i of one block of type name, as ggml computes it.
inline float reference_value(const std::string& name, const std::uint8_t* b, int i) {
    if (name == "Q4_0" || name == "Q4_1" || name == "Q5_0" || name == "Q5_1") {
        // 16 bytes of nibbles: value i < 16 is byte i's low nibble, value i >= 16 byte i - 16's high nibble.
        const bool has_min = name == "Q4_1" || name == "Q5_1";
        const bool five_bit = name[1] == '5';
        const int qs = (has_min ? 4 : 2) + (five_bit ? 4 : 0);
        int q = i < 16 ? b[qs + i] % 16 : b[qs + i - 16] / 16;
        if (five_bit) {
            const int qh = has_min ? 4 : 2;
            q += ((b[qh + i / 8] >> (i % 8)) & 1) * 16;  // bit i of the little-endian 32 bits
        }
        const float d = half_field(b, 0);
        if (has_min) return f(q) * d + half_field(b, 2);
        return f(q - (five_bit ? 16 : 8)) * d;
    }
    if (name == "Q8_0") return f(static_cast<std::int8_t>(b[2 + i])) * half_field(b, 0);
    if (name == "Q2_K" || name == "Q3_K") {
        // 256 values in two halves of 128; in a half, value r takes bits 2 * (r / 32) of qs byte r % 32.
        const int qs = name == "Q2_K" ? 16 : 32;
        const int q2 = (b[qs + 32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
        const int sub = i / 16;
        if (name == "Q2_K") {
            const int packed = b[sub];  // low nibble the scale, high nibble the min
            const float dl = half_field(b, 80) * f(packed % 16);
            const float ml = half_field(b, 82) * f(packed / 16);
            return dl * f(q2) - ml;
        }
        // hmask byte i % 32, bit i / 32: clear means 4 is subtracted.
        const bool high = ((b[i % 32] >> (i / 32)) & 1) != 0;
        const float dl = half_field(b, 108) * f(q3_k_scale(b + 96, sub) - 32);
        return dl * f(q2 - (high ? 0 : 4));
    }
    if (name == "Q4_K" || name == "Q5_K") {
        // Four runs of 32 bytes; run i / 64 holds values 64 * run + l (low nibble) and + 32 (high nibble).
        const bool five_bit = name == "Q5_K";
        const int qs = five_bit ? 48 : 16;
        const int byte = b[qs + 32 * (i / 64) + i % 32];
        int q = (i % 64) < 32 ? byte % 16 : byte / 16;
        if (five_bit && ((b[16 + i % 32] >> (i / 32)) & 1) != 0) q += 16;
        int scale = 0;
        int min = 0;
        k4_scale_min(b + 4, i / 32, scale, min);
        const float d1 = half_field(b, 0) * f(scale);
        const float m1 = half_field(b, 2) * f(min);
        return d1 * f(q) - m1;
    }
    // Q6_K: in half h = i / 128, part p = (i % 128) / 32, position l = i % 32: the low (p < 2) or high
    // nibble of ql[64h + 32(p % 2) + l], bits 2p, 2p+1 of qh[32h + l] on top, minus 32; int8 scale i / 16.
    const int h = i / 128;
    const int p = (i % 128) / 32;
    const int l = i % 32;
    const int byte = b[64 * h + 32 * (p % 2) + l];
    const int low = p < 2 ? byte % 16 : byte / 16;
    const int top = (b[128 + 32 * h + l] >> (2 * p)) & 3;
    const int q = low + 16 * top - 32;
    const float scaled = half_field(b, 208) * f(static_cast<std::int8_t>(b[192 + i / 16]));
    return scaled * f(q);
}

/// count values (whole blocks) of type name stored at blocks, one value at a time.
inline std::vector<float> reference_values(const GgmlQuantType& type, const std::string& blocks) {
    std::vector<float> values;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(blocks.data());
    const std::size_t count = blocks.size() / static_cast<std::size_t>(type.block_bytes);
    for (std::size_t block = 0; block < count; ++block) {
        for (int i = 0; i < type.block_values; ++i) {
            values.push_back(reference_value(type.name, bytes + block * static_cast<std::size_t>(type.block_bytes), i));
        }
    }
    return values;
}

}  // namespace embed_test
