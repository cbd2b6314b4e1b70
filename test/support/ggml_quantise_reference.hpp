#pragma once
// ggml's simple block quantisers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) worked out one value at a time from the
// published algorithm (ggml-quants.c's quantize_row_*_ref, ggml-common.h's layouts): the test's own
// reference, written apart from lib/io/quantise.cpp. Scales are float32; each quant is the float32
// expression truncated toward zero (or roundf for Q8_0), then capped; fp16 fields rounded to nearest even
// by integer arithmetic here. For rows of ordinary values, whose quants stay in range.

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace embed_test {

/// x (a float32 value) rounded to the nearest IEEE half, ties to even, by integer arithmetic on its bits.
inline std::uint16_t reference_half_bits(float x) {
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000);
    const int exponent = static_cast<int>((b >> 23) & 0xFF);
    const std::uint32_t fraction = b & 0x7FFFFF;
    if (exponent == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00 | (fraction != 0 ? 0x200 : 0));
    if (exponent == 0 && fraction == 0) return sign;
    // |x| = m * 2^e, m an integer of up to 24 bits.
    const std::uint64_t m = exponent == 0 ? fraction : (fraction | 0x800000);
    const int e = exponent == 0 ? -149 : exponent - 150;
    // Half's last bit is worth 2^(max(floor(log2|x|), -14) - 10).
    const int top = e + 63 - std::countl_zero(m);
    const int last = std::max(top, -14) - 10;
    std::uint64_t q = 0;
    if (last <= e) {
        q = m << (e - last);
    } else {
        const int shift = last - e;
        q = shift >= 64 ? 0 : m >> shift;
        const std::uint64_t rest = shift >= 64 ? m : m - (q << shift);
        const std::uint64_t half = shift >= 65 ? 0 : std::uint64_t{1} << (shift - 1);
        if (shift < 65 && (rest > half || (rest == half && (q & 1) != 0))) ++q;
    }
    // q * 2^last: q < 2^10 is a subnormal (last = -24), 2^11 carries into the next exponent.
    int biased = last + 10 + 15;
    if (q == (std::uint64_t{1} << 11)) {
        q >>= 1;
        ++biased;
    }
    if (q < (std::uint64_t{1} << 10)) return static_cast<std::uint16_t>(sign | q);
    if (biased >= 31) return static_cast<std::uint16_t>(sign | 0x7C00);
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint64_t>(biased) << 10) | (q - 1024));
}

inline void push_half(std::string& out, float x) {
    const std::uint16_t bits = reference_half_bits(x);
    out += static_cast<char>(bits & 0xFF);
    out += static_cast<char>(bits >> 8);
}

/// Quant j of the 4- and 5-bit types goes to byte j % 16, low nibble for j < 16 and high for the rest; the
/// 5-bit types keep each quant's bit 4 in bit j of a 32-bit little-endian word.
inline void push_nibbles(std::string& out, const std::vector<int>& q, bool five_bit) {
    if (five_bit) {
        std::uint32_t high = 0;
        for (int j = 0; j < 32; ++j) high |= static_cast<std::uint32_t>((q[static_cast<std::size_t>(j)] >> 4) & 1) << j;
        for (int b = 0; b < 4; ++b) out += static_cast<char>((high >> (8 * b)) & 0xFF);
    }
    for (int j = 0; j < 16; ++j) {
        const int low = q[static_cast<std::size_t>(j)] & 0xF;
        const int upper = q[static_cast<std::size_t>(j + 16)] & 0xF;
        out += static_cast<char>(low | (upper << 4));
    }
}

/// One block (32 values x) of type name ("Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1") as ggml's reference stores it.
inline std::string reference_quantised_block(const std::string& name, const float* x) {
    std::string out;
    std::vector<int> q(32);
    if (name == "Q8_0") {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d == 0.0f ? 0.0f : 1.0f / d;
        push_half(out, d);
        for (int j = 0; j < 32; ++j) out += static_cast<char>(static_cast<std::int8_t>(std::round(x[j] * id)));
        return out;
    }
    const bool five_bit = name[1] == '5';
    if (name == "Q4_0" || name == "Q5_0") {
        // The signed value of largest magnitude, the first one on a tie, maps to -8 (or -16).
        float extreme = 0.0f;
        for (int j = 0; j < 32; ++j) {
            if (std::fabs(x[j]) > std::fabs(extreme)) extreme = x[j];
        }
        const float levels = five_bit ? 16.0f : 8.0f;
        const float d = extreme / -levels;
        const float id = d == 0.0f ? 0.0f : 1.0f / d;
        push_half(out, d);
        for (int j = 0; j < 32; ++j) {
            q[static_cast<std::size_t>(j)] = std::min(five_bit ? 31 : 15, static_cast<int>(x[j] * id + (levels + 0.5f)));
        }
        push_nibbles(out, q, five_bit);
        return out;
    }
    float min = x[0];
    float max = x[0];
    for (int j = 1; j < 32; ++j) {
        min = std::min(min, x[j]);
        max = std::max(max, x[j]);
    }
    const float d = (max - min) / (five_bit ? 31.0f : 15.0f);
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    push_half(out, d);
    push_half(out, min);
    for (int j = 0; j < 32; ++j) {
        const int level = static_cast<int>((x[j] - min) * id + 0.5f);
        q[static_cast<std::size_t>(j)] = five_bit ? level : std::min(15, level);
    }
    push_nibbles(out, q, five_bit);
    return out;
}

}  // namespace embed_test
