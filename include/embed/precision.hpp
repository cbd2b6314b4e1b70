#pragma once
// Tables stored in float32 or bfloat16, to double and back, and single values
// rounded to the narrow formats. Widening is exact; narrowing rounds each
// value once, to nearest with ties to even (as PyTorch's .to(torch.float32)
// and .to(torch.bfloat16) do).

#include "embed/types.hpp"

namespace embed {

/// table is (V, d) of float32 or bfloat16 (owned or viewed), returns (V, d) in double: every value exactly.
template <TableOrView T>
    requires NarrowScalar<typename T::Scalar>
Table to_double(const T& table);

/// table is (V, d) of double (owned or viewed), returns (V, d) in float32: each value rounded to the nearest
/// float32, ties to even; NaN (sign kept), infinities and signed zeros stay, tiny values become subnormals or
/// zero, values past float32's largest finite round to infinity.
template <TableOf<double> T>
TableF32 to_f32(const T& table);

/// table is (V, d) of double (owned or viewed), returns (V, d) in bfloat16: each value rounded once to the
/// nearest bfloat16, ties to even (not through float32, which would round twice); NaN (sign kept, quiet),
/// infinities and signed zeros stay, tiny values become subnormals or zero, values past bfloat16's largest
/// finite round to infinity.
template <TableOf<double> T>
TableBF16 to_bf16(const T& table);

/// Rounds x to the nearest bfloat16 (ties to even) and returns that value as a double.
double round_to_bf16(double x);

/// Rounds x to the nearest IEEE half (fp16, ties to even) and returns that value as a double.
double round_to_fp16(double x);

}  // namespace embed
