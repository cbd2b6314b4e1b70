#pragma once
// Growing, padding and re-initialising a table's rows, for a vocabulary that gains tokens or has rows that
// never learned anything. Each function returns a new table of the argument's stored type (double, float32
// or bfloat16) and leaves the argument as it was.
//
// New values come from a set of source rows (all the old rows when growing, the rows not listed when
// re-initialising), by one of three rules:
//   mean     every new row is the mean of the source rows: each column summed in double over the rows in
//            ascending order, divided by their count, rounded once to the table's type. For a double
//            table this is numpy's table.mean(axis=0); for float32 table.mean(axis=0, dtype=float64)
//            rounded to float32.
//   sampled  transformers' mean-resizing rule (_init_added_embeddings_weights_with_mean): each new row is
//            drawn from the multivariate normal with the source rows' mean m and covariance
//            S = 1e-9 * C, C = (X - m)^T (X - m) / n (divided by n, as transformers does), all in double;
//            row = m + L z, L the Cholesky factor of S, z (d) standard normals. Where S is not positive
//            definite (a Cholesky pivot <= 0 or not finite: one source row, a column that never varies,
//            d > n, NaN) every new row is the mean instead, as transformers falls back (decided in double,
//            as torch decides it: a covariance singular only up to rounding may pass). The z are drawn
//            from CPython's random.Random(seed) by random.normalvariate(0.0, 1.0) (the ratio-of-uniforms
//            method, whose value is plain arithmetic on random(), so Python rebuilds them bit for bit): new
//            row r's column c is draw r * d + c. The sums (mean, C, Cholesky, L z) run in fixed order, so
//            the rows are the same for one seed at any thread count.
//   zeros    every new row is zeros.
// NaN or infinity in a source row propagates into the mean (IEEE arithmetic); sampled then falls back to it.
//
// An untied model's output table is edited to the same row count by calling the same function on it: its
// new rows are computed from its own rows.

#include <cstdint>
#include <string_view>

#include "embed/types.hpp"

namespace embed {

/// How new or re-initialised rows are filled (see the comment at the top of this header).
enum class RowInit : std::uint8_t { mean, sampled, zeros };

/// The rule's name: "mean", "sampled" or "zeros".
std::string_view row_init_name(RowInit init);

/// The rule named name ("mean", "sampled" or "zeros", lower case); any other text throws
/// std::invalid_argument naming it and the allowed names.
RowInit parse_row_init(std::string_view name);

/// table is (V, d) of any stored type, returns (rows, d) of the same type: rows < V keeps the first rows
/// (cuts from the end), rows > V keeps every row and adds rows - V rows by init from all V old rows.
/// rows < 0: std::invalid_argument. Growing a table of no rows by mean or sampled: std::invalid_argument
/// (there is nothing to take the mean of); by zeros it is fine.
template <TableOrView T>
BasicTable<typename T::Scalar> resize_rows(const T& table, Index rows, RowInit init = RowInit::mean,
                                           std::uint64_t seed = 0);

/// table is (V, d), returns (V', d): V' the smallest multiple of k that is >= V (V itself when it already
/// is one; 0 rows stay 0), the new rows as resize_rows adds them. k <= 0: std::invalid_argument; a V' past
/// 2^63 - 1: std::overflow_error; a table too large to allocate: std::bad_alloc (as for resize_rows).
template <TableOrView T>
BasicTable<typename T::Scalar> pad_to_multiple_of(const T& table, Index k, RowInit init = RowInit::mean,
                                                  std::uint64_t seed = 0);

/// table is (V, d), ids is (n), returns a copy (V, d) whose rows ids are set by init from the rows not in
/// ids (the source rows); other rows are copied bit for bit. Duplicate ids count once; the new rows are
/// filled in ascending id order (sampled: the smallest id takes the first d draws). An id outside [0, V):
/// std::out_of_range naming it. Every row listed, with mean or sampled: std::invalid_argument (no row
/// is left to take the mean of); zeros is fine. No ids: a copy.
template <TableOrView T>
BasicTable<typename T::Scalar> reinitialise_rows(const T& table, Ids ids, RowInit init = RowInit::mean,
                                                 std::uint64_t seed = 0);

}  // namespace embed
