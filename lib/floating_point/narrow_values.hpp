#pragma once
// One value of a narrow table to double and back. Widening is exact (every
// float32 and bfloat16 is a double); narrowing rounds once, to nearest with
// ties to even, as PyTorch's .to(dtype) does.

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>

#include "embed/precision.hpp"
#include "embed/types.hpp"

namespace embed::detail {

/// The 16 bits of a bfloat16 (Eigen keeps them in its public member `value`).
inline std::uint16_t bits_of(Eigen::bfloat16 value) { return value.value; }

/// value exactly, as a double.
inline double widen(float value) { return static_cast<double>(value); }

/// value exactly, as a double: a bfloat16 is the top half of a float32.
inline double widen(Eigen::bfloat16 value) {
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits_of(value)) << 16));
}

/// value itself: lets code written for every table type widen a double table's values too.
inline double widen(double value) { return value; }

/// x rounded to the nearest float32, ties to even (the hardware conversion in its default mode).
inline float narrow_to_f32(double x) { return static_cast<float>(x); }

/// x rounded to the nearest bfloat16, ties to even; NaN stays NaN with its sign, infinities stay.
/// Eigen's own conversion goes through float32 first, which rounds twice and can land one step off
/// (a double just above a bfloat16 tie rounds to the tie in float32, then to even).
inline Eigen::bfloat16 narrow_to_bf16(double x) {
    const auto as_float = static_cast<float>(x);
    // Exact in float32 (always so for a table that came from float32): one rounding, float32 to bfloat16.
    if (static_cast<double>(as_float) == x || std::isnan(x)) return Eigen::bfloat16(as_float);
    // round_to_bf16's value is a bfloat16, so the two conversions after it are exact.
    return Eigen::bfloat16(static_cast<float>(round_to_bf16(x)));
}

/// x rounded to Scalar: the narrowing above for float32 and bfloat16, x itself for double.
template <class Scalar>
Scalar narrow_to(double x) {
    if constexpr (std::same_as<Scalar, float>) {
        return narrow_to_f32(x);
    } else if constexpr (std::same_as<Scalar, Eigen::bfloat16>) {
        return narrow_to_bf16(x);
    } else {
        return x;
    }
}

}  // namespace embed::detail
