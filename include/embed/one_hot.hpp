#pragma once
// Lookup as a matrix product: a one-hot row (V) times the table (V, d).
// It gives exactly the lookup's values at V * d multiplications per token.

#include "embed/types.hpp"

namespace embed {

/// Returns (V): 1.0 at token_id, 0.0 elsewhere.
RowVector one_hot(Index token_id, Index vocab);

/// vec is (V), matrix is (V, d), returns (d): out[c] = sum over r of vec[r] * matrix(r, c), all V * d products.
RowVector row_times_matrix(const RowVector& vec, const Table& matrix);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
RowVector row_times_matrix(const RowVector& vec, TableView matrix);

/// table is (V, d), ids is (n), returns (n, d): each id's one_hot row times the table, all V * d products taken
/// (the n rows as one matrix product; row i is row_times_matrix(one_hot(ids[i], V), table) bit for bit).
Table lookup_via_one_hot(const Table& table, Ids ids);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
Table lookup_via_one_hot(TableView table, Ids ids);

/// table is (V, d) of float32 or bfloat16, ids is (n), returns (n, d) in double: lookup_via_one_hot of the
/// widened table, bit for bit (every product is 1 or 0 times a stored value, summed in double).
template <NarrowScalar Scalar>
Table lookup_via_one_hot(const BasicTable<Scalar>& table, Ids ids);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
Table lookup_via_one_hot(BasicTableView<Scalar> table, Ids ids);

/// Multiplications the one-hot route spends on count tokens: V * d * count (lookup spends 0).
Index one_hot_mults(Index vocab, Index dim, Index count);

}  // namespace embed
