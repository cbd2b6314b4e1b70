#include "kernels.hpp"
#include "multiversion.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

// load_lanes returns a 64-byte vector; it is internal and always inlined, so
// the calling convention GCC warns about never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

[[gnu::always_inline]] inline Lanes load_lanes(const double* p) {
    Lanes v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

}  // namespace

// The row loops are compiled once per instruction set and picked at load
// time (multiversion.hpp). The tests also build this file for the baseline,
// AVX2 and AVX-512 alone, to check that each gives the same bits.

namespace {

inline constexpr std::uintptr_t kLineBytes = 64;

// Asks for the line kPrefetchBytes past p, for the next rows of a table read
// start to end. The hardware prefetchers alone left a logits pass at about 80 %
// of the machine's read bandwidth; this request, one per line read, brought it
// to about 90 % (measured on this VM, 1 GiB table, two cores: 20-21 ms against
// 17-18 ms; 2, 4 and 8 KiB ahead were alike). The address is computed as an
// integer because it may lie past the table's end, where prefetching is
// harmless but pointer arithmetic is not allowed.
inline constexpr std::uintptr_t kPrefetchBytes = 4096;

[[gnu::always_inline]] inline void prefetch_ahead(const double* p) {
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + kPrefetchBytes), 0, 0);
}

// Values of p's row before its first 64-byte line boundary, 0 to 7; -1 when
// p is not 8-byte aligned, so that no boundary falls between two values.
[[gnu::always_inline]] inline Index values_before_line(const double* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if (address % sizeof(double) != 0) return -1;
    return static_cast<Index>((kLineBytes - address % kLineBytes) % kLineBytes / sizeof(double));
}

/// A row's dot with x and, if asked, with itself.
struct RowSums {
    double dot;
    double squares;
};

// Another order of the same additions: lane j of dot_kernel sums the values
// i = j, j + 8, j + 16, ... in turn, so any schedule that adds each lane's
// values in increasing i gives its bits. This one reads r in whole 64-byte
// lines: the values before r's first line boundary go into their lanes one by
// one, then whole lines (value i at vector position (i - head) % 8, so the
// vector holds the lanes rotated by head), then the tail one by one.
// Why: a Table's data starts 16 bytes past a page (malloc's header), so
// every 8-double load from the row start straddles two cache lines. Measured
// on this VM, 1 GiB table, two cores: 27 ms per logits pass straddling, 19 ms
// reading whole lines.
template <bool kSquares>
[[gnu::always_inline]] inline RowSums row_sums(const double* r, const double* x, Index dim) {
    Index head = values_before_line(r);
    if (head < 0) head = dim;  // no line boundary to reach: one value at a time
    head = std::min(head, dim);
    double dot[kLanes] = {};
    double squares[kLanes] = {};
    Index i = 0;
    for (; i < head; ++i) {
        dot[i % kLanes] += r[i] * x[i];
        if constexpr (kSquares) squares[i % kLanes] += r[i] * r[i];
    }
    Lanes dot_rotated;
    Lanes squares_rotated;
    for (Index p = 0; p < kLanes; ++p) {
        dot_rotated[p] = dot[(head + p) % kLanes];
        squares_rotated[p] = squares[(head + p) % kLanes];
    }
    for (; i + kLanes <= dim; i += kLanes) {
        prefetch_ahead(r + i);
        const Lanes v = load_lanes(r + i);
        dot_rotated += v * load_lanes(x + i);
        if constexpr (kSquares) squares_rotated += v * v;
    }
    for (Index p = 0; p < kLanes; ++p) {
        dot[(head + p) % kLanes] = dot_rotated[p];
        squares[(head + p) % kLanes] = squares_rotated[p];
    }
    for (; i < dim; ++i) {
        dot[i % kLanes] += r[i] * x[i];
        if constexpr (kSquares) squares[i % kLanes] += r[i] * r[i];
    }
    return {sum_lanes_pairwise(dot), kSquares ? sum_lanes_pairwise(squares) : 0.0};
}

}  // namespace

// One row at a time, start to end: each core reads the table as one
// sequential stream, which the hardware prefetchers follow best. Measured on
// this VM (1 GiB table, two cores, rows 64-byte aligned, alternating runs):
// 19 ms one row at a time against 21 ms with 8 rows interleaved (8 streams
// 8 KiB apart per core).
EMBED_MULTIVERSION
void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out) {
    for (Index t = 0; t < count; ++t) out[t] = row_sums<false>(rows + t * dim, x, dim).dot;
}

// The same, with each row's square sum from the same read of the row.
EMBED_MULTIVERSION
void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares) {
    for (Index t = 0; t < count; ++t) {
        const RowSums sums = row_sums<true>(rows + t * dim, x, dim);
        out[t] = sums.dot;
        squares[t] = sums.squares;
    }
}

namespace {

// One P x Q block over `length` values (a multiple of 8) from a0 and b0, rows
// dim apart: the lane sums so far come from acc_io (or start at zero) and go
// back there. Storing a lane sum and reloading it is exact, so cutting d into
// tiles keeps dot_kernel's order.
template <Index P, Index Q>
[[gnu::always_inline]] inline void dot_block_tile(const double* a0, const double* b0, Index dim, Index length,
                                                  bool from_zero, Lanes* acc_io) {
    Lanes acc[P][Q];
    for (Index p = 0; p < P; ++p) {
        for (Index q = 0; q < Q; ++q) acc[p][q] = from_zero ? Lanes{} : acc_io[p * Q + q];
    }
    for (Index c = 0; c < length; c += kLanes) {
        Lanes bv[Q];
        for (Index q = 0; q < Q; ++q) bv[q] = load_lanes(b0 + q * dim + c);
        for (Index p = 0; p < P; ++p) {
            const Lanes av = load_lanes(a0 + p * dim + c);
            for (Index q = 0; q < Q; ++q) acc[p][q] += av * bv[q];
        }
    }
    for (Index p = 0; p < P; ++p) {
        for (Index q = 0; q < Q; ++q) acc_io[p * Q + q] = acc[p][q];
    }
}

// One P x Q block of dot products: a rows p against b rows q, each pair with
// its own lanes in dot_kernel's order. Every b row loaded is used against P a
// rows and every a row against Q b rows, so the arithmetic, not the loads,
// sets the pace.
template <Index P, Index Q>
[[gnu::always_inline]] inline void dot_block(const double* a0, const double* b0, Index dim, Index whole, double* out,
                                             Index out_stride) {
    Lanes acc[P * Q];
    dot_block_tile<P, Q>(a0, b0, dim, whole, true, acc);
    for (Index p = 0; p < P; ++p) {
        for (Index q = 0; q < Q; ++q) {
            out[p * out_stride + q] = finish_lanes(acc[p * Q + q], a0 + p * dim, b0 + q * dim, whole, dim);
        }
    }
}

// All pairs by P x Q blocks: Q b rows stay in L1 while every a row passes
// them. The edges use 1 x Q and P x 1 blocks, which keep the same order.
template <Index P, Index Q>
[[gnu::always_inline]] inline void dot_all_pairs_by(const double* a, Index n, const double* b, Index m, Index dim,
                                                    double* out, Index out_stride) {
    const Index whole = dim - dim % kLanes;
    Index t = 0;
    for (; t + Q <= m; t += Q) {
        const double* b0 = b + t * dim;
        Index i = 0;
        for (; i + P <= n; i += P) dot_block<P, Q>(a + i * dim, b0, dim, whole, out + i * out_stride + t, out_stride);
        for (; i < n; ++i) dot_block<1, Q>(a + i * dim, b0, dim, whole, out + i * out_stride + t, out_stride);
    }
    for (; t < m; ++t) {
        const double* b0 = b + t * dim;
        Index i = 0;
        for (; i + P <= n; i += P) dot_block<P, 1>(a + i * dim, b0, dim, whole, out + i * out_stride + t, out_stride);
        for (; i < n; ++i) out[i * out_stride + t] = dot_kernel(a + i * dim, b0, dim);
    }
}

// A row's values outside the tiled loop, where the pairs' rotated lanes want
// them. The lanes are held rotated as in row_sums: vector position pos holds
// lane (head + pos) % 8. The head values 0 .. head - 1 come first in their
// lanes, at positions 8 - head .. 7 of `head`; the tail, the values after
// the `body` values from head on, comes last in its lanes, at positions 0 ..
// of `tail`; every other position is 0.
struct RowEdges {
    Lanes head;
    Lanes tail;
};

[[gnu::always_inline]] inline RowEdges row_edges(const double* row, Index head, Index body, Index dim) {
    RowEdges edges{Lanes{}, Lanes{}};
    for (Index pos = kLanes - head; pos < kLanes; ++pos) edges.head[pos] = row[pos + head - kLanes];
    for (Index pos = 0; head + body + pos < dim; ++pos) edges.tail[pos] = row[head + body + pos];
    return edges;
}

// Lanes rotated by Head (position p holds lane (Head + p) % 8) back in lane
// order: lane L comes from position (L - Head) % 8. The positions must be
// constants for __builtin_shufflevector, which GCC and Clang both have, so
// there is one shuffle per rotation.
template <Index Head, std::size_t... Lane>
[[gnu::always_inline]] inline Lanes unrotated_by(const Lanes& lanes, std::index_sequence<Lane...>) {
    return __builtin_shufflevector(lanes, lanes, static_cast<int>((Lane + kLanes - Head) % kLanes)...);
}

[[gnu::always_inline]] inline Lanes unrotated(const Lanes& lanes, Index head) {
    constexpr auto kLaneOrder = std::make_index_sequence<kLanes>{};
    switch (head) {
        case 1: return unrotated_by<1>(lanes, kLaneOrder);
        case 2: return unrotated_by<2>(lanes, kLaneOrder);
        case 3: return unrotated_by<3>(lanes, kLaneOrder);
        case 4: return unrotated_by<4>(lanes, kLaneOrder);
        case 5: return unrotated_by<5>(lanes, kLaneOrder);
        case 6: return unrotated_by<6>(lanes, kLaneOrder);
        case 7: return unrotated_by<7>(lanes, kLaneOrder);
        default: return lanes;
    }
}

// All pairs, Q b rows at a time, with d cut into tiles of kTile values: all
// (up to kRows) a rows pass one tile of the Q b rows before the next tile, so
// only Q tiles of b, not Q whole rows, have to stay in L1, and the lane sums
// wait in `sums` between tiles. Measured on Zen 5, one thread, n = 64, d = 768:
// 88 ms with tiles of 512 values against 102 ms untiled; 128, 256 and 1024 were
// slower. Copying the tiles of b together first, or gathering the scores in a
// local panel before writing out, gained nothing.
//
// The tiles start at the first cache-line boundary of the b rows (`head`
// values in), so every load of b, and of a when it sits at the same offset
// from a line, reads one whole line; the values outside the tiles enter as
// RowEdges, first and last in their lanes, which keeps dot_kernel's order.
// Measured on this VM, one thread, n = 64, 8192 b rows: 76 against 66 GFLOP/s
// at d = 768, 72 against 62 at d = 1024, against rows straddling lines. When
// d is not a multiple of 8 the rows start at different offsets and the
// tiles start at 0.
template <Index P, Index Q>
[[gnu::always_inline]] inline void dot_all_pairs_tiled(const double* a, Index n, const double* b, Index m, Index dim,
                                                       double* out, Index out_stride) {
    constexpr Index kTile = 512;
    constexpr Index kRows = 64;
    Index head = values_before_line(b);
    if (dim % kLanes != 0 || head < 0) head = 0;
    head = std::min(head, dim);
    const Index body = (dim - head) - (dim - head) % kLanes;  // values in the tiles
    const Index m_blocks = m - m % Q;
    Lanes sums[kRows * Q];
    RowEdges a_edges[kRows];
    for (Index i0 = 0; i0 < n; i0 += kRows) {
        const Index rows = std::min(kRows, n - i0);
        const double* a_rows = a + i0 * dim;
        for (Index i = 0; i < rows; ++i) a_edges[i] = row_edges(a_rows + i * dim, head, body, dim);
        for (Index t = 0; t < m_blocks; t += Q) {
            const double* b0 = b + t * dim;
            RowEdges b_edges[Q];
            for (Index q = 0; q < Q; ++q) b_edges[q] = row_edges(b0 + q * dim, head, body, dim);
            // The head values first in their lanes, added to zero as dot_kernel adds
            // them, so each lane holds dot_kernel's bits even for a product of -0.
            for (Index i = 0; i < rows; ++i) {
                for (Index q = 0; q < Q; ++q) sums[i * Q + q] = Lanes{} + a_edges[i].head * b_edges[q].head;
            }
            for (Index k = 0; k < body; k += kTile) {
                const Index length = std::min(kTile, body - k);
                const Index from = head + k;
                Index i = 0;
                for (; i + P <= rows; i += P) {
                    dot_block_tile<P, Q>(a_rows + i * dim + from, b0 + from, dim, length, false, sums + i * Q);
                }
                for (; i < rows; ++i) {
                    dot_block_tile<1, Q>(a_rows + i * dim + from, b0 + from, dim, length, false, sums + i * Q);
                }
            }
            // The tail values last in their lanes. The positions that hold a head
            // value add +0 here, which leaves a lane as it was: a lane that starts
            // at +0 can never become -0.
            for (Index i = 0; i < rows; ++i) {
                for (Index q = 0; q < Q; ++q) {
                    const Lanes lanes = sums[i * Q + q] + a_edges[i].tail * b_edges[q].tail;
                    out[(i0 + i) * out_stride + t + q] = sum_lanes(unrotated(lanes, head));
                }
            }
        }
    }
    // The last m % Q b rows, untiled.
    dot_all_pairs_by<P, Q>(a, n, b + m_blocks * dim, m - m_blocks, dim, out + m_blocks, out_stride);
}

// AVX-512 has 32 vector registers, one Lanes each: 4 x 6 accumulators, 6 b
// rows and an a row fit without spilling.
EMBED_TARGET_AVX512 void dot_all_pairs_avx512(const double* a, Index n, const double* b, Index m,
                                                             Index dim, double* out, Index out_stride) {
    dot_all_pairs_tiled<4, 6>(a, n, b, m, dim, out, out_stride);
}

EMBED_MULTIVERSION_NARROW void dot_all_pairs_narrow(const double* a, Index n, const double* b, Index m, Index dim,
                                                    double* out, Index out_stride) {
    dot_all_pairs_by<4, 4>(a, n, b, m, dim, out, out_stride);
}

}  // namespace

void dot_all_pairs(const double* a, Index n, const double* b, Index m, Index dim, double* out, Index out_stride) {
#if EMBED_MULTIVERSIONED
    static const bool avx512 = __builtin_cpu_supports("avx512f");
#elif defined(__AVX512F__)
    constexpr bool avx512 = true;
#else
    constexpr bool avx512 = false;
#endif
    if (avx512) {
        dot_all_pairs_avx512(a, n, b, m, dim, out, out_stride);
    } else {
        dot_all_pairs_narrow(a, n, b, m, dim, out, out_stride);
    }
}

const double* at_line_offset_of(const double* like, const double* values, Index count, std::vector<double>& staging) {
    const auto wanted = reinterpret_cast<std::uintptr_t>(like) % kLineBytes;
    const auto have = reinterpret_cast<std::uintptr_t>(values) % kLineBytes;
    if (have == wanted || wanted % sizeof(double) != 0) return values;
    staging.resize(static_cast<std::size_t>(count + kLanes));
    double* start = staging.data();  // 8-byte aligned, so one of its first 8 values sits right
    while (reinterpret_cast<std::uintptr_t>(start) % kLineBytes != wanted) ++start;
    std::copy(values, values + count, start);
    return start;
}

}  // namespace embed::detail
