#pragma once
// 16-bit floats widened exactly to double. Every IEEE half and every bfloat16
// is a double, so the conversion loses nothing: it is bit arithmetic, not rounding.

#include <bit>
#include <cstdint>

namespace embed::detail {

/// IEEE 754 binary16 (sign, 5 exponent bits, 10 fraction bits) as the equal double; NaN payloads kept.
inline double half_to_double(std::uint16_t bits) {
    const std::uint64_t sign = static_cast<std::uint64_t>(bits >> 15) << 63;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    std::uint64_t fraction = bits & 0x3FFu;
    if (exponent == 0x1F) {  // infinity or NaN: all-ones exponent, fraction moved to the top
        return std::bit_cast<double>(sign | (0x7FFull << 52) | (fraction << 42));
    }
    if (exponent == 0) {
        if (fraction == 0) return std::bit_cast<double>(sign);  // +0.0 or -0.0
        // Subnormal: fraction * 2^-24. Normalise so the leading one becomes the implicit bit.
        int shift = 0;
        while ((fraction & 0x400u) == 0) {
            fraction <<= 1;
            ++shift;
        }
        fraction &= 0x3FFu;
        const std::uint64_t biased = static_cast<std::uint64_t>(1023 - 15 + 1 - shift);
        return std::bit_cast<double>(sign | (biased << 52) | (fraction << 42));
    }
    const std::uint64_t biased = exponent + (1023u - 15u);
    return std::bit_cast<double>(sign | (biased << 52) | (fraction << 42));
}

/// IEEE binary16 as the equal float32 (every half is one); NaN payloads kept, as half_to_double's.
inline float half_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t fraction = bits & 0x3FFu;
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (fraction << 13));
    if (exponent == 0) {
        // Zero or subnormal: fraction * 2^-24, exact in float32 (a normal number there).
        const float magnitude = static_cast<float>(fraction) * 0x1p-24f;
        return sign != 0 ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + (127u - 15u)) << 23) | (fraction << 13));
}

/// bfloat16 (the top half of an IEEE binary32) as the equal double.
inline double bfloat16_to_double(std::uint16_t bits) {
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

}  // namespace embed::detail
