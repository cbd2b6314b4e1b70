#pragma once
// Lookup: turning token ids into vectors is a row gather, nothing more.

#include "embed/types.hpp"

namespace embed {

/// table is (V, d) of double, float32 or bfloat16 (owned or viewed), ids is (n), returns (n, d) of the
/// table's type: row ids[i] of table copied into row i, as stored.
template <TableOrView T>
BasicTable<typename T::Scalar> lookup(const T& table, Ids ids);

/// table is (V, d) of any stored type, ids is (n), out is (n, d) of the table's type and preallocated, possibly
/// a block of a larger row-major matrix: writes lookup(table, ids) into it, allocating nothing. A wrong id or
/// shape, or an out that overlaps the table, throws before anything is written.
template <TableOrView T>
void lookup_into(const T& table, Ids ids, Eigen::Ref<BasicTable<typename T::Scalar>> out);

/// Throws out_of_range naming the id unless 0 <= id < V for every id (V = vocab).
void check_ids(Ids ids, Index vocab);

}  // namespace embed
