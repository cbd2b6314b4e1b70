#pragma once
// The explicit one-hot product (lookup_via_one_hot) as a GEMM: n one-hot rows
// (n x V) times the table (V x d), every one of the n * V * d products taken.
// Internal; included only by the kernel files, whose multiversioned functions
// inline it once per instruction set and table type.
//
// Each output sums over the table's rows in order from 0.0, one product at a
// time, as row_times_matrix does, so row i is row_times_matrix(one_hot(ids[i]),
// table) bit for bit: 0 * x is a zero (or NaN for an infinite or NaN x), 1 * x
// is x. The table is read as it is stored, along d: a register block holds 5
// ids' sums for 8 columns, a value of the one-hot rows is broadcast, and two
// Quads of a table row give 10 products. Measured on Zen 3, 64 ids on 512 x 64,
// 2 threads: 0.12-0.15 ms, against 0.49 ms for the blocks of batched logits
// over the table's columns it replaces, and 0.13-0.22 ms for numpy's
// one_hot @ table (OpenBLAS dgemm).

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels.hpp"
#include "lane_class_gemm.hpp"
#include "narrow_values.hpp"
#include "row_loops.hpp"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail::one_hot_gemm {

using namespace row_loops;
using lane_classes::LineAlignedBuffer;

inline constexpr Index kColumns = 8;     // columns per register block: two Quads
inline constexpr Index kIdsPerBlock = 5;  // ids per register block: 5 x 2 sums, as the lane-class GEMM
inline constexpr Index kIdsPerGroup = 13 * kIdsPerBlock;  // ids whose one-hot rows are held at once
inline constexpr Index kRowsPerChunk = 256;  // table rows per chunk: 8 columns of them, 16 KiB, stay in L1

// The explicit one-hot values of up to kIdsPerGroup ids for table rows [first, first + rows), packed per
// block of 5 ids as [row][id]: 1.0 where the id is the row, else 0.0 (and 0.0 for the ids past `count`).
inline void pack_one_hot(const Index* ids, Index count, Index first, Index rows, double* packed) {
    const Index blocks = (count + kIdsPerBlock - 1) / kIdsPerBlock;
    for (Index block = 0; block < blocks; ++block) {
        double* to = packed + block * rows * kIdsPerBlock;
        for (Index v = 0; v < rows; ++v) {
            for (Index p = 0; p < kIdsPerBlock; ++p) {
                const Index i = block * kIdsPerBlock + p;
                to[v * kIdsPerBlock + p] = i < count && ids[i] == first + v ? 1.0 : 0.0;
            }
        }
    }
}

// One block of 5 ids and 8 columns over `rows` table rows: the sums so far
// from out (rows of `dim`, `count` of them valid), every product added in row
// order, and back.
template <class Scalar>
[[gnu::always_inline]] inline void block_sums(const double* one_hot, const Scalar* table, Index rows, Index dim,
                                              Index count, double* out) {
    Quad acc[kIdsPerBlock][2] = {};
    for (Index p = 0; p < count; ++p) {
        acc[p][0] = load_quad(out + p * dim);
        acc[p][1] = load_quad(out + p * dim + 4);
    }
    for (Index v = 0; v < rows; ++v) {
        const Quad low = load_widened_quad(table + v * dim);
        const Quad high = load_widened_quad(table + v * dim + 4);
#pragma GCC unroll 8
        for (Index p = 0; p < kIdsPerBlock; ++p) {
            const double value = one_hot[v * kIdsPerBlock + p];
            const Quad broadcast = {value, value, value, value};
            acc[p][0] += broadcast * low;
            acc[p][1] += broadcast * high;
        }
    }
    for (Index p = 0; p < count; ++p) {
        std::memcpy(out + p * dim, &acc[p][0], sizeof acc[p][0]);
        std::memcpy(out + p * dim + 4, &acc[p][1], sizeof acc[p][1]);
    }
}

// The columns past the last whole block of 8, one sum at a time in the same order.
template <class Scalar>
[[gnu::always_inline]] inline void tail_sums(const double* one_hot, const Scalar* table, Index rows, Index dim,
                                             Index first_column, Index count, double* out) {
    for (Index p = 0; p < count; ++p) {
        for (Index c = first_column; c < dim; ++c) {
            double sum = out[p * dim + c];
            for (Index v = 0; v < rows; ++v) sum += one_hot[v * kIdsPerBlock + p] * widen(table[v * dim + c]);
            out[p * dim + c] = sum;
        }
    }
}

/// table is (vocab, dim) row-major, ids is (n) ids in [0, vocab), out is (n, dim) row-major:
/// out row i = one_hot(ids[i]) times the table, each sum over the rows in order from 0.0.
template <class Scalar>
[[gnu::always_inline]] inline void one_hot_times_table(const Scalar* table, Index vocab, Index dim, const Index* ids,
                                                       Index n, double* out) {
    std::fill(out, out + n * dim, 0.0);
    const Index whole_columns = dim - dim % kColumns;
    LineAlignedBuffer one_hot(std::min(kIdsPerGroup, n + kIdsPerBlock) * std::min(kRowsPerChunk, vocab));
    for (Index first_id = 0; first_id < n; first_id += kIdsPerGroup) {
        const Index group = std::min(kIdsPerGroup, n - first_id);
        double* group_out = out + first_id * dim;
        for (Index first_row = 0; first_row < vocab; first_row += kRowsPerChunk) {
            const Index rows = std::min(kRowsPerChunk, vocab - first_row);
            pack_one_hot(ids + first_id, group, first_row, rows, one_hot.data());
            const Scalar* chunk = table + first_row * dim;
            const Index blocks = (group + kIdsPerBlock - 1) / kIdsPerBlock;
            // Columns outer: the chunk's 8 columns stay in L1 while every block of ids passes them.
            for (Index c = 0; c < whole_columns; c += kColumns) {
                for (Index block = 0; block < blocks; ++block) {
                    const Index count = std::min(kIdsPerBlock, group - block * kIdsPerBlock);
                    block_sums(one_hot.data() + block * rows * kIdsPerBlock, chunk + c, rows, dim, count,
                               group_out + block * kIdsPerBlock * dim + c);
                }
            }
            for (Index block = 0; block < blocks; ++block) {
                const Index count = std::min(kIdsPerBlock, group - block * kIdsPerBlock);
                tail_sums(one_hot.data() + block * rows * kIdsPerBlock, chunk, rows, dim, whole_columns, count,
                          group_out + block * kIdsPerBlock * dim);
            }
        }
    }
}

}  // namespace embed::detail::one_hot_gemm
