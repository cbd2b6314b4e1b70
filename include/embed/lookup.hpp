#pragma once
// Lookup: turning token ids into vectors is a row gather, nothing more.

#include <type_traits>

#include "embed/types.hpp"

namespace embed {

/// table is (V, d), ids is (n), returns (n, d): row ids[i] of table copied into row i.
Table lookup(const Table& table, Ids ids);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
Table lookup(TableView table, Ids ids);

/// table is (V, d), ids is (n), out is (n, d) and preallocated, possibly a block of a larger row-major matrix:
/// writes lookup(table, ids) into it, allocating nothing. A wrong id or shape, or an out that overlaps the
/// table, throws before anything is written.
void lookup_into(const Table& table, Ids ids, Eigen::Ref<Table> out);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
void lookup_into(TableView table, Ids ids, Eigen::Ref<Table> out);

// The same on float32 and bfloat16 tables (defined in the library for both): the rows come back in the
// table's own type, copied as they are stored.

/// table is (V, d) of float32 or bfloat16, ids is (n), returns (n, d) of the same type: row ids[i] copied into row i.
template <NarrowScalar Scalar>
BasicTable<Scalar> lookup(const BasicTable<Scalar>& table, Ids ids);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
BasicTable<Scalar> lookup(BasicTableView<Scalar> table, Ids ids);

/// table is (V, d) of float32 or bfloat16, ids is (n), out is (n, d) of the same type and preallocated:
/// writes lookup(table, ids) into it, allocating nothing, with lookup_into's checks.
template <NarrowScalar Scalar>
void lookup_into(const BasicTable<Scalar>& table, Ids ids, std::type_identity_t<Eigen::Ref<BasicTable<Scalar>>> out);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
void lookup_into(BasicTableView<Scalar> table, Ids ids, std::type_identity_t<Eigen::Ref<BasicTable<Scalar>>> out);

/// Throws out_of_range naming the id unless 0 <= id < V for every id (V = vocab).
void check_ids(Ids ids, Index vocab);

}  // namespace embed
