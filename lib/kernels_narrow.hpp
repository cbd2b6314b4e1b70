#pragma once
// The row kernels of lib/kernels.hpp for tables stored in float32 or
// bfloat16. Each stored value is widened to double (exact) and every product
// and sum is done in double in dot_kernel's order: lane j adds the products of
// values j, j + 8, j + 16, ... in turn, the tail goes into lanes 0, 1, ...,
// and the lanes are added pairwise. So every score is, bit for bit, the score
// of the same table widened to double, whatever the instruction set, the
// alignment or the thread count.

#include "embed/types.hpp"

namespace embed::detail {

/// rows is (count, dim) row-major, x is (dim), out is (count): out[t] = dot_kernel(row t widened, x).
void dot_rows(const float* rows, Index count, Index dim, const double* x, double* out);
/// The same for bfloat16 rows.
void dot_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out);

/// Like dot_rows, and also squares[t] = dot_kernel(row t widened, row t widened), from the same read of the row.
void dot_and_square_rows(const float* rows, Index count, Index dim, const double* x, double* out, double* squares);
/// The same for bfloat16 rows.
void dot_and_square_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                         double* squares);

/// values is (count), out is (count): out[i] = values[i] widened to double, exactly.
void widen_values(const float* values, Index count, double* out);
/// The same for bfloat16 values.
void widen_values(const Eigen::bfloat16* values, Index count, double* out);

}  // namespace embed::detail
