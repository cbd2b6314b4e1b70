#pragma once
// The row loops of double tables, defined in row_kernels.cpp: each is compiled
// for every instruction set (multiversion.hpp) and gives dot_kernel's sums bit for bit.

#include "embed/types.hpp"
#include "kernels/base.hpp"

namespace embed::detail {

// The loops below run over many rows; each is compiled for AVX-512, AVX2 and
// the baseline and picked at load time. Every score is dot_kernel's, bit for bit.

/// rows is (count, dim) row-major, x is (dim), out is (count): out[t] = dot_kernel(row t, x). prefetch
/// false asks for nothing ahead whatever the streaming settings say (for a table in the caches).
void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out, bool prefetch = true);

/// Like dot_rows, and also squares[t] = dot_kernel(row t, row t), from the same read of the row.
void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares, bool prefetch = true);

/// a is (n, dim), b is (m, dim), both row-major; out(i, t) at out[i * out_stride + t] = dot_kernel(a row i, b row t).
void dot_all_pairs(const double* a, Index n, const double* b, Index m, Index dim, double* out, Index out_stride);

/// table is (vocab, dim) row-major, ids is (n) ids in [0, vocab), out is (n, dim) row-major: row i is
/// one_hot(ids[i]) times the table, all vocab * dim products, each sum over the rows in order from 0.0.
void one_hot_times_table(const double* table, Index vocab, Index dim, const Index* ids, Index n, double* out);

/// Ids one_hot_times_table computes together on this CPU (table's type picks the kernel): split the ids in
/// multiples of it, so no block is part empty.
Index one_hot_ids_per_block(const double* table);

/// True where dot_all_pairs runs its AVX-512 kernel (packed_gemm.hpp) for every stored type.
bool all_pairs_on_avx512();

}  // namespace embed::detail
