#pragma once
// Multiplying embeddings by sqrt(d): the size changes, the direction does not.

#include "embed/types.hpp"

namespace embed {

/// a is (d), returns sqrt(dot(a, a) / d); 0.0 for an empty vector.
double rms(Eigen::Ref<const Vector> a);

/// table is (V, d), ids is (n), returns (n, d): lookup(table, ids) times std::sqrt(dim).
Table scaled_lookup(const Table& table, Ids ids, Index dim);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
Table scaled_lookup(TableView table, Ids ids, Index dim);

/// table is (V, d) of float32 or bfloat16, ids is (n), returns (n, d) in double: the rows widened, then
/// times std::sqrt(dim), the same bits as scaled_lookup on the widened table (defined for both types).
template <NarrowScalar Scalar>
Table scaled_lookup(const BasicTable<Scalar>& table, Ids ids, Index dim);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
Table scaled_lookup(BasicTableView<Scalar> table, Ids ids, Index dim);

/// Rounds x to the nearest bfloat16 (ties to even) and returns that value as a double.
double round_to_bf16(double x);

/// Rounds x to the nearest IEEE half (fp16, ties to even) and returns that value as a double.
double round_to_fp16(double x);

}  // namespace embed
