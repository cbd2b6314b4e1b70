#pragma once
// The row kernels of lib/kernels/row_kernels.hpp for tables stored in float32 or
// bfloat16. Each stored value is widened to double (exact) and every product
// and sum is done in double in dot_kernel's order: lane j adds the products of
// values j, j + 8, j + 16, ... in turn, the tail goes into lanes 0, 1, ...,
// and the lanes are added pairwise. So every score is, bit for bit, the score
// of the same table widened to double, whatever the instruction set, the
// alignment or the thread count.

#include "embed/types.hpp"

namespace embed::detail {

/// rows is (count, dim) row-major, x is (dim), out is (count): out[t] = dot_kernel(row t widened, x). prefetch
/// false asks for nothing ahead whatever the streaming settings say (for a table in the caches).
void dot_rows(const float* rows, Index count, Index dim, const double* x, double* out, bool prefetch = true);
/// The same for bfloat16 rows.
void dot_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
              bool prefetch = true);

/// Like dot_rows, and also squares[t] = dot_kernel(row t widened, row t widened), from the same read of the row.
void dot_and_square_rows(const float* rows, Index count, Index dim, const double* x, double* out, double* squares,
                         bool prefetch = true);
/// The same for bfloat16 rows.
void dot_and_square_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                         double* squares, bool prefetch = true);

/// a is (n, dim) double, b is (m, dim) float32, both row-major; out(i, t) at out[i * out_stride + t] =
/// dot_kernel(a row i, b row t widened).
void dot_all_pairs(const double* a, Index n, const float* b, Index m, Index dim, double* out, Index out_stride);
/// The same for bfloat16 b rows.
void dot_all_pairs(const double* a, Index n, const Eigen::bfloat16* b, Index m, Index dim, double* out,
                   Index out_stride);

/// table is (vocab, dim) float32, ids is (n), out is (n, dim): one_hot_times_table of the widened table, bit for bit.
void one_hot_times_table(const float* table, Index vocab, Index dim, const Index* ids, Index n, double* out);
/// The same for a bfloat16 table.
void one_hot_times_table(const Eigen::bfloat16* table, Index vocab, Index dim, const Index* ids, Index n,
                         double* out);

/// Ids the narrow one-hot GEMMs compute together: split the ids in multiples of it.
Index one_hot_ids_per_block(const float* table);
Index one_hot_ids_per_block(const Eigen::bfloat16* table);

/// values is (count), out is (count): out[i] = values[i] widened to double, exactly.
void widen_values(const float* values, Index count, double* out);
/// The same for bfloat16 values.
void widen_values(const Eigen::bfloat16* values, Index count, double* out);

}  // namespace embed::detail
