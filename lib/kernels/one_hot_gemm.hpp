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
// ids' sums for 8 columns (8 ids' for 16 on AVX-512), a value of the one-hot
// rows is broadcast, and two vectors of a table row give 10 (16) products.
// It replaced blocks of batched logits over the table's columns, several times
// slower, and keeps up with numpy's one_hot @ table (OpenBLAS dgemm).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/base.hpp"
#include "kernels/lane_class_gemm.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/row_loops.hpp"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail::one_hot_gemm {

using namespace row_loops;

// A register block: the sums of Shape::kIds ids for two vectors of columns each.
// QuadBlocks suits AVX2's 16 registers: 5 x 2 Quads of sums, as the lane-class
// GEMM. LanesBlocks suits AVX-512's 32: 8 x 2 Lanes of 8 doubles, twice the
// products per instruction, and faster for it.
template <class Vec, Index Ids>
struct BlockShape {
    using Vector = Vec;
    static constexpr Index kWidth = static_cast<Index>(sizeof(Vec) / sizeof(double));  // columns per vector
    static constexpr Index kIds = Ids;
};
using QuadBlocks = BlockShape<Quad, 5>;
using LanesBlocks = BlockShape<Lanes, 8>;

// The one-hot rows of a group of ids, kRowsPerChunk table rows at a time, sit
// in a buffer on the stack (32 KiB with LanesBlocks). A buffer from malloc
// cost more than the products in a process that had made no large allocation
// yet: glibc grew and trimmed its heap around it on every call, and the
// kernel's page-fault handling took much of the call.
inline constexpr Index kBlocksPerGroup = 2;   // blocks of ids whose one-hot rows are held at once
inline constexpr Index kRowsPerChunk = 256;   // table rows per chunk: 16 columns of them, 32 KiB, stay in L1

// The explicit one-hot values of up to kBlocksPerGroup * kIds ids for table rows [first, first + rows),
// packed per block of kIds ids as [row][id]: 1.0 where the id is the row, else 0.0 (and 0.0 for the ids past
// `count`).
template <class Shape>
inline void pack_one_hot(const Index* ids, Index count, Index first, Index rows, double* packed) {
    constexpr Index kIds = Shape::kIds;
    const Index blocks = (count + kIds - 1) / kIds;
    for (Index block = 0; block < blocks; ++block) {
        double* to = packed + block * rows * kIds;
        for (Index v = 0; v < rows; ++v) {
            for (Index p = 0; p < kIds; ++p) {
                const Index i = block * kIds + p;
                to[v * kIds + p] = i < count && ids[i] == first + v ? 1.0 : 0.0;
            }
        }
    }
}

// Shape::kWidth stored values from p, widened to doubles.
template <class Shape, class Scalar>
[[gnu::always_inline]] inline typename Shape::Vector load_columns(const Scalar* p) {
    if constexpr (std::is_same_v<Scalar, double>) {
        typename Shape::Vector v;
        std::memcpy(&v, p, sizeof v);
        return v;
    } else {
        static_assert(std::is_same_v<typename Shape::Vector, Quad>, "narrow tables use QuadBlocks");
        return load_widened_quad(p);
    }
}

// One block of kIds ids and Vectors vectors of columns over `rows` table rows:
// the sums so far from out (rows of `dim`, `count` of them valid), every
// product added in row order, and back.
template <class Shape, Index Vectors, class Scalar>
[[gnu::always_inline]] inline void block_sums(const double* one_hot, const Scalar* table, Index rows, Index dim,
                                              Index count, double* out) {
    using Vector = typename Shape::Vector;
    constexpr Index kIds = Shape::kIds;
    constexpr Index kWidth = Shape::kWidth;
    Vector acc[kIds][Vectors] = {};
    for (Index p = 0; p < count; ++p) {
        for (Index j = 0; j < Vectors; ++j) std::memcpy(&acc[p][j], out + p * dim + j * kWidth, sizeof(Vector));
    }
    for (Index v = 0; v < rows; ++v) {
        Vector columns[Vectors];
        for (Index j = 0; j < Vectors; ++j) columns[j] = load_columns<Shape>(table + v * dim + j * kWidth);
#pragma GCC unroll 8
        for (Index p = 0; p < kIds; ++p) {
            const double value = one_hot[v * kIds + p];
            for (Index j = 0; j < Vectors; ++j) acc[p][j] += value * columns[j];  // value broadcast to every lane
        }
    }
    for (Index p = 0; p < count; ++p) {
        for (Index j = 0; j < Vectors; ++j) std::memcpy(out + p * dim + j * kWidth, &acc[p][j], sizeof(Vector));
    }
}

// The columns past the last whole vector, one sum at a time in the same order.
template <class Shape, class Scalar>
[[gnu::always_inline]] inline void tail_sums(const double* one_hot, const Scalar* table, Index rows, Index dim,
                                             Index first_column, Index count, double* out) {
    constexpr Index kIds = Shape::kIds;
    for (Index p = 0; p < count; ++p) {
        for (Index c = first_column; c < dim; ++c) {
            double sum = out[p * dim + c];
            for (Index v = 0; v < rows; ++v) sum += one_hot[v * kIds + p] * widen(table[v * dim + c]);
            out[p * dim + c] = sum;
        }
    }
}

/// table is (vocab, dim) row-major, ids is (n) ids in [0, vocab), out is (n, dim) row-major:
/// out row i = one_hot(ids[i]) times the table, each sum over the rows in order from 0.0.
template <class Shape, class Scalar>
[[gnu::always_inline]] inline void one_hot_times_table(const Scalar* table, Index vocab, Index dim, const Index* ids,
                                                       Index n, double* out) {
    constexpr Index kIds = Shape::kIds;
    constexpr Index kWidth = Shape::kWidth;
    constexpr Index kIdsPerGroup = kBlocksPerGroup * kIds;
    std::fill(out, out + n * dim, 0.0);
    alignas(64) double one_hot_rows[kIdsPerGroup * kRowsPerChunk];
    for (Index first_id = 0; first_id < n; first_id += kIdsPerGroup) {
        const Index group = std::min(kIdsPerGroup, n - first_id);
        double* group_out = out + first_id * dim;
        for (Index first_row = 0; first_row < vocab; first_row += kRowsPerChunk) {
            const Index rows = std::min(kRowsPerChunk, vocab - first_row);
            pack_one_hot<Shape>(ids + first_id, group, first_row, rows, one_hot_rows);
            const Scalar* chunk = table + first_row * dim;
            const Index blocks = (group + kIds - 1) / kIds;
            // Columns outer: the chunk's columns stay in L1 while every block of ids passes them.
            const auto each_block = [&](auto sums_of_block) {
                for (Index block = 0; block < blocks; ++block) {
                    sums_of_block(one_hot_rows + block * rows * kIds, std::min(kIds, group - block * kIds),
                                  group_out + block * kIds * dim);
                }
            };
            Index c = 0;
            for (; c + 2 * kWidth <= dim; c += 2 * kWidth) {
                each_block([&](const double* block_one_hot, Index count, double* block_out) {
                    block_sums<Shape, 2>(block_one_hot, chunk + c, rows, dim, count, block_out + c);
                });
            }
            for (; c + kWidth <= dim; c += kWidth) {
                each_block([&](const double* block_one_hot, Index count, double* block_out) {
                    block_sums<Shape, 1>(block_one_hot, chunk + c, rows, dim, count, block_out + c);
                });
            }
            each_block([&](const double* block_one_hot, Index count, double* block_out) {
                tail_sums<Shape>(block_one_hot, chunk, rows, dim, c, count, block_out);
            });
        }
    }
}

}  // namespace embed::detail::one_hot_gemm
