#pragma once
// The row edits of embed/edit.hpp without the copy of the whole table that they return: for edit_model,
// which holds the decoded table already and writes only the rows an edit changes (lib/io/edit_model_rows.cpp).
// resize_rows and reinitialise_rows are built on these, so both give the same rows bit for bit.

#include <cstdint>

#include "embed/edit.hpp"
#include "embed/types.hpp"

namespace embed::detail {

/// table is (V, d); returns the count rows (count, d) resize_rows(table, V + count, init, seed) appends.
/// count < 0 or no source row for mean or sampled: std::invalid_argument, as resize_rows.
template <class Scalar>
BasicTable<Scalar> appended_rows(BasicTableView<Scalar> table, Index count, RowInit init, std::uint64_t seed);

/// table is (V, d); sets its rows ids as reinitialise_rows(table, ids, init, seed) would return them, in place
/// (the other rows untouched). Errors as reinitialise_rows's, before any row changes.
template <class Scalar>
void reinitialise_rows_in_place(BasicTable<Scalar>& table, Ids ids, RowInit init, std::uint64_t seed);

}  // namespace embed::detail
