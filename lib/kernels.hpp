#pragma once
// The one inner loop the scores share. Its summation order depends only on
// the length, never on where the data sits in memory or which thread runs it,
// so two equal rows always get bit-identical scores (Eigen's own dot peels to
// alignment, which would let duplicated rows at different addresses
// tie-break wrongly). The order: 8 lane sums over whole blocks of 8, the tail
// into lanes 0, 1, ..., then the lanes pairwise; put another way, lane j adds
// the products of values j, j + 8, j + 16, ... in turn, so a loop may start
// anywhere (dot_rows starts at a cache-line boundary) as long as each lane
// gets its values in that order. The lanes are one 8-double
// vector, which the compiler maps to 4 SSE, 2 AVX or 1 AVX-512 register;
// with -ffp-contract=off every lane does a rounded multiply then a rounded
// add, so every instruction set gives the same bits.

#include <cstring>

#include "embed/types.hpp"

// Fast math would let the compiler reorder these sums and drop the NaN checks. CMake builds the library
// with -fno-fast-math after the user's flags; a build that compiles these sources some other way stops here.
#if defined(__FAST_MATH__) || defined(__ASSOCIATIVE_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#error "embed's kernels must be compiled without -ffast-math, -Ofast, -fassociative-math or -ffinite-math-only"
#endif

namespace embed::detail {

/// Lanes of independent partial sums; a multiple of every SIMD width we target.
inline constexpr Index kLanes = 8;

/// Eight doubles as one value; element j is lane j.
typedef double Lanes __attribute__((vector_size(kLanes * sizeof(double))));

/// lane is (8), returns the lanes added pairwise: the last step of every dot product.
inline double sum_lanes_pairwise(const double* lane) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/// The same additions as sum_lanes_pairwise, done on the whole vector: adjacent lanes, then pairs of pairs.
/// The GEMM ends one dot product per output, where the scalar form cost about a tenth of the time.
inline double sum_lanes(const Lanes& acc) {
    const Lanes pairs = acc + __builtin_shufflevector(acc, acc, 1, 0, 3, 2, 5, 4, 7, 6);  // lane 2k: 2k + (2k + 1)
    const Lanes quads = pairs + __builtin_shufflevector(pairs, pairs, 2, 3, 0, 1, 6, 7, 4, 5);  // lanes 0 and 4
    return quads[0] + quads[4];
}

/// Ends a dot product: the tail of a and b (n - i values from i) into lanes 0, 1, ..., then the lanes pairwise.
inline double finish_lanes(const Lanes& acc, const double* a, const double* b, Index i, Index n) {
    if (i == n) return sum_lanes(acc);
    double lane[kLanes];
    std::memcpy(lane, &acc, sizeof lane);
    for (Index j = 0; i < n; ++i, ++j) lane[j] += a[i] * b[i];
    return sum_lanes_pairwise(lane);
}

/// a and b are (n), returns sum a[i] * b[i] in the fixed order above.
inline double dot_kernel(const double* a, const double* b, Index n) {
    Lanes acc = {};
    Index i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        Lanes x;
        Lanes y;
        std::memcpy(&x, a + i, sizeof x);
        std::memcpy(&y, b + i, sizeof y);
        acc += x * y;
    }
    return finish_lanes(acc, a, b, i, n);
}

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

/// A double table of at most this many bytes stays in every core's cache (half the smallest L2 we target):
/// batched logits then splits its hidden rows between the cores, not the table's rows.
inline constexpr Index kCachedTableBytes = Index{256} << 10;

/// Hidden rows per piece of that split: one register block of the GEMM's a rows (kARows in
/// packed_gemm.hpp). Larger pieces were slower on both cores at once though not on one (lib/logits.cpp).
inline constexpr Index kHiddenRowsPerGroup = 4;

}  // namespace embed::detail
