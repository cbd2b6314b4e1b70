#pragma once
// Tables stored in float32 or bfloat16, to double and back. Widening is
// exact; narrowing rounds each value once, to nearest with ties to even (as
// PyTorch's .to(torch.float32) and .to(torch.bfloat16) do).

#include "embed/types.hpp"

namespace embed {

/// table is (V, d) of float32 or bfloat16, returns (V, d) in double: every value exactly (defined for both types).
template <NarrowScalar Scalar>
Table to_double(const BasicTable<Scalar>& table);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
Table to_double(BasicTableView<Scalar> table);

/// table is (V, d), returns (V, d) in float32: each value rounded to the nearest float32, ties to even;
/// NaN (sign kept), infinities and signed zeros stay, tiny values become subnormals or zero, values past
/// float32's largest finite round to infinity.
TableF32 to_f32(const Table& table);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
TableF32 to_f32(TableView table);

/// table is (V, d), returns (V, d) in bfloat16: each value rounded once to the nearest bfloat16, ties to
/// even (not through float32, which would round twice); NaN (sign kept, quiet), infinities and signed zeros
/// stay, tiny values become subnormals or zero, values past bfloat16's largest finite round to infinity.
TableBF16 to_bf16(const Table& table);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
TableBF16 to_bf16(TableView table);

}  // namespace embed
