#pragma once
// Lookup as a matrix product: a one-hot row (V) times the table (V, d).
// It gives exactly the lookup's values at V * d multiplications per token.

#include "embed/types.hpp"

namespace embed {

/// Returns (V): 1.0 at token_id, 0.0 elsewhere.
RowVector one_hot(Index token_id, Index vocab);

/// vec is (V), matrix is (V, d) of double (owned or viewed), returns (d): out[c] = sum over r of
/// vec[r] * matrix(r, c), all V * d products.
template <TableOf<double> T>
RowVector row_times_matrix(const RowVector& vec, const T& matrix);

/// table is (V, d) of double, float32 or bfloat16 (owned or viewed), ids is (n), returns (n, d) in double: each
/// id's one_hot row times the table, all V * d products taken (the n rows as one matrix product; row i is
/// row_times_matrix(one_hot(ids[i], V), table) bit for bit); a narrow table gives the widened table's bits.
template <TableOrView T>
Table lookup_via_one_hot(const T& table, Ids ids);

/// Multiplications the one-hot route spends on count tokens: V * d * count (lookup spends 0).
Index one_hot_mults(Index vocab, Index dim, Index count);

}  // namespace embed
