#pragma once
// The all-pairs GEMM (dot_all_pairs) for AVX2 and below, for b rows stored
// in double, float32 or bfloat16. Internal; included only by the kernel files,
// whose multiversioned functions inline it once per instruction set.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "kernels/base.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/row_loops.hpp"

// Quads are 32-byte vectors passed between always-inlined functions of the
// kernel files that include this header (see row_loops.hpp).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail::lane_classes {

using namespace row_loops;

// The GEMM for AVX2 and below, in broadcast form. dot_kernel's lane j is the
// sum, in increasing i from 0.0, of the products at i = j, j + 8, j + 16, ...
// (the tail values past the last whole block of 8 are the next ones of their
// lanes), and the score is the eight lane sums added pairwise. So all pairs
// can be computed one lane class at a time, as a GEMM over the values i = j
// (mod 8) whose products are added in increasing i: each lane sum is its own
// accumulator entry, and the pairwise sum of the eight ends the score. That
// GEMM needs no horizontal sums, so it vectorises across outputs as BLAS does:
// one register holds 4 b rows' lane sums for one a row, a value of a is
// broadcast, and a packed panel of 8 b rows gives 8 products per 2 loads.
// It beat the kernel it replaced (3 x 3 blocks of Quads with the lanes along
// d, each pair summed horizontally at the end) and keeps up with OpenBLAS.
inline constexpr Index kPanelRows = 8;  // b rows per packed panel: two Quads
inline constexpr Index kQuadsPerPanel = kPanelRows / 4;
// a rows per register block: 5 x 2 accumulators, 2 b Quads, a broadcast and a product fill AVX2's 16 registers
inline constexpr Index kBlockRows = 5;
inline constexpr Index kLineValues = static_cast<Index>(kLineBytes / sizeof(double));

/// Values of lane class `lane` (i = lane, lane + 8, ...) in a row of dim values.
inline Index class_length(Index dim, Index lane) { return lane < dim ? (dim - lane + kLanes - 1) / kLanes : 0; }

/// A buffer of `count` doubles that starts on a cache line, so every Quad load from a packed panel reads
/// one line. Left uninitialised: every value is written before it is read, and zeroing the one-hot
/// GEMM's buffer was a visible share of a small call.
class LineAlignedBuffer {
public:
    explicit LineAlignedBuffer(Index count) : storage_(new double[static_cast<std::size_t>(count + kLineValues)]) {
        start_ = storage_.get();
        while (reinterpret_cast<std::uintptr_t>(start_) % kLineBytes != 0) ++start_;
    }
    double* data() { return start_; }

private:
    std::unique_ptr<double[]> storage_;
    double* start_;
};

// Packs `count` rows (dim apart, count <= width) for the broadcast GEMM:
// value i of row r goes to packed[((i % 8) * stride + i / 8) * width + r],
// so a lane class is `stride` steps of `width` values, one per row; rows
// count .. width - 1 are zeros, whose products are computed and dropped.
template <class Scalar>
[[gnu::always_inline]] inline void pack_rows(const Scalar* rows, Index count, Index width, Index dim, Index stride,
                                             double* packed) {
    for (Index lane = 0; lane < kLanes; ++lane) {
        double* to = packed + lane * stride * width;
        const Index length = class_length(dim, lane);
        for (Index j = 0; j < length; ++j) {
            const Scalar* from = rows + lane + kLanes * j;
            for (Index r = 0; r < width; ++r) to[j * width + r] = r < count ? widen(from[r * dim]) : 0.0;
        }
    }
}

// Four rows' Quads in, each position's four values out: r_p[c] becomes r_c[p].
[[gnu::always_inline]] inline void transpose_quads(Quad& r0, Quad& r1, Quad& r2, Quad& r3) {
    const Quad even01 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6);
    const Quad odd01 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
    const Quad even23 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6);
    const Quad odd23 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
    r0 = __builtin_shufflevector(even01, even23, 0, 1, 4, 5);
    r1 = __builtin_shufflevector(odd01, odd23, 0, 1, 4, 5);
    r2 = __builtin_shufflevector(even01, even23, 2, 3, 6, 7);
    r3 = __builtin_shufflevector(odd01, odd23, 2, 3, 6, 7);
}

// pack_rows for a whole panel of 8 b rows: each block of 8 values of the 8
// rows is an 8 x 8 transpose, four Quad transposes, so the rows are read in
// whole lines and the packed classes written in order (the scalar form cost a
// fifth of the GEMM's time at d = 768).
template <class Scalar>
[[gnu::always_inline]] inline void pack_panel(const Scalar* rows, Index count, Index dim, Index stride,
                                              double* packed) {
    if (count < kPanelRows) {
        pack_rows(rows, count, kPanelRows, dim, stride, packed);
        return;
    }
    const Index blocks = dim / kLanes;
    for (Index j = 0; j < blocks; ++j) {
        for (Index first_lane = 0; first_lane < kLanes; first_lane += 4) {
            for (Index first_row = 0; first_row < kPanelRows; first_row += 4) {
                const Scalar* from = rows + first_row * dim + j * kLanes + first_lane;
                Quad r0 = load_widened_quad(from);
                Quad r1 = load_widened_quad(from + dim);
                Quad r2 = load_widened_quad(from + 2 * dim);
                Quad r3 = load_widened_quad(from + 3 * dim);
                transpose_quads(r0, r1, r2, r3);
                double* to = packed + (first_lane * stride + j) * kPanelRows + first_row;
                const Index next_lane = stride * kPanelRows;
                std::memcpy(to, &r0, sizeof r0);
                std::memcpy(to + next_lane, &r1, sizeof r1);
                std::memcpy(to + 2 * next_lane, &r2, sizeof r2);
                std::memcpy(to + 3 * next_lane, &r3, sizeof r3);
            }
        }
    }
    for (Index i = blocks * kLanes; i < dim; ++i) {
        for (Index r = 0; r < kPanelRows; ++r) {
            packed[((i % kLanes) * stride + i / kLanes) * kPanelRows + r] = widen(rows[r * dim + i]);
        }
    }
}

// One lane class of a block of 5 a rows against a panel of 8 b rows, into
// `sums` (5 x 2 Quads): each lane sum starts at 0.0 and adds its products in
// increasing i, as dot_kernel's lanes do. `a` and `b` point at the class's
// first packed step.
[[gnu::always_inline]] inline void class_block(const double* a, const double* b, Index length, Quad* sums) {
    Quad acc[kBlockRows][kQuadsPerPanel] = {};
    for (Index j = 0; j < length; ++j) {
        Quad bv[kQuadsPerPanel];
#pragma GCC unroll 8
        for (Index q = 0; q < kQuadsPerPanel; ++q) bv[q] = load_quad(b + j * kPanelRows + 4 * q);
#pragma GCC unroll 8
        for (Index p = 0; p < kBlockRows; ++p) {
            const double value = a[j * kBlockRows + p];
            const Quad av = {value, value, value, value};
#pragma GCC unroll 8
            for (Index q = 0; q < kQuadsPerPanel; ++q) acc[p][q] += av * bv[q];
        }
    }
    for (Index p = 0; p < kBlockRows; ++p) {
        for (Index q = 0; q < kQuadsPerPanel; ++q) sums[p * kQuadsPerPanel + q] = acc[p][q];
    }
}

// Asks for the next panel's lines a few at a time between class blocks, so
// that packing it finds them in cache: without this the packing waited for
// memory.
class PanelPrefetch {
public:
    PanelPrefetch(const void* next, Index bytes, Index calls)
        : next_(reinterpret_cast<std::uintptr_t>(next)),
          lines_(bytes / static_cast<Index>(kLineBytes) + 1),
          per_call_((lines_ + calls - 1) / std::max<Index>(calls, 1)) {}
    void step() {
        for (Index u = 0; u < per_call_ && line_ < lines_; ++u, ++line_) {
            __builtin_prefetch(reinterpret_cast<const void*>(next_ + static_cast<std::uintptr_t>(line_) * kLineBytes),
                               0, 3);
        }
    }

private:
    std::uintptr_t next_;
    Index lines_;
    Index per_call_;
    Index line_ = 0;
};

// All pairs: a is packed once in blocks of 5 rows, then each panel of 8 b
// rows is packed and met by every block, one lane class at a time (the
// class's panel steps stay in L1 while all of a's blocks pass), and the
// eight lane sums of each pair are added pairwise as sum_lanes adds them.
template <class Scalar>
[[gnu::always_inline]] inline void dot_all_pairs_broadcast(const double* a, Index n, const Scalar* b, Index m,
                                                           Index dim, double* out, Index out_stride) {
    const Index stride = (dim + kLanes - 1) / kLanes;  // steps of the longest lane class
    const Index blocks = (n + kBlockRows - 1) / kBlockRows;
    const Index block_values = kLanes * stride * kBlockRows;
    const Index sums_per_block = kLanes * kBlockRows * kQuadsPerPanel;
    LineAlignedBuffer a_packed(blocks * block_values);
    LineAlignedBuffer b_packed(kLanes * stride * kPanelRows);
    LineAlignedBuffer sums_buffer(blocks * sums_per_block * 4);
    Quad* sums = reinterpret_cast<Quad*>(sums_buffer.data());
    for (Index block = 0; block < blocks; ++block) {
        const Index first = block * kBlockRows;
        pack_rows(a + first * dim, std::min(kBlockRows, n - first), kBlockRows, dim, stride,
                  a_packed.data() + block * block_values);
    }
    for (Index t = 0; t < m; t += kPanelRows) {
        const Index count = std::min(kPanelRows, m - t);
        pack_panel(b + t * dim, count, dim, stride, b_packed.data());
        const Index next = std::min(m, t + kPanelRows);
        PanelPrefetch prefetch(b + next * dim, std::min(kPanelRows, m - next) * dim * Index{sizeof(Scalar)},
                               kLanes * blocks);
        for (Index lane = 0; lane < kLanes; ++lane) {
            const Index length = class_length(dim, lane);
            const double* b_class = b_packed.data() + lane * stride * kPanelRows;
            for (Index block = 0; block < blocks; ++block) {
                prefetch.step();
                const double* a_class = a_packed.data() + block * block_values + lane * stride * kBlockRows;
                class_block(a_class, b_class, length,
                            sums + block * sums_per_block + lane * kBlockRows * kQuadsPerPanel);
            }
        }
        for (Index block = 0; block < blocks; ++block) {
            const Quad* block_sums = sums + block * sums_per_block;
            auto lane_sum = [&](Index lane, Index p, Index q) __attribute__((always_inline)) {
                return block_sums[(lane * kBlockRows + p) * kQuadsPerPanel + q];
            };
            for (Index p = 0; p < kBlockRows && block * kBlockRows + p < n; ++p) {
                double* row_out = out + (block * kBlockRows + p) * out_stride + t;
                for (Index q = 0; q < kQuadsPerPanel; ++q) {
                    const Quad low = (lane_sum(0, p, q) + lane_sum(1, p, q)) + (lane_sum(2, p, q) + lane_sum(3, p, q));
                    const Quad high = (lane_sum(4, p, q) + lane_sum(5, p, q)) + (lane_sum(6, p, q) + lane_sum(7, p, q));
                    const Quad total = low + high;
                    for (Index c = 0; c < 4 && 4 * q + c < count; ++c) row_out[4 * q + c] = total[c];
                }
            }
        }
    }
}

}  // namespace embed::detail::lane_classes

