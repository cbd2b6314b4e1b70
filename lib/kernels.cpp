#include "kernels.hpp"
#include "lane_class_gemm.hpp"
#include "multiversion.hpp"
#include "one_hot_gemm.hpp"
#include "row_loops.hpp"
#include "streaming.hpp"

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

using namespace row_loops;

// Values of p's row before its first 64-byte line boundary, 0 to 7; -1 when
// p is not 8-byte aligned, so that no boundary falls between two values.
[[gnu::always_inline]] inline Index values_before_line(const double* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if (address % sizeof(double) != 0) return -1;
    return static_cast<Index>((kLineBytes - address % kLineBytes) % kLineBytes / sizeof(double));
}


// Lanes rotated by Head (position p holds lane (Head + p) % 8) back in lane
// order: lane L comes from position (L - Head) % 8 of the eight positions
// lo, hi. Constant indices, so each half is one two-register shuffle.
template <int Head>
[[gnu::always_inline]] inline LanePair unrotated_pair_by(const LanePair& v) {
    constexpr auto at = [](int lane) { return (lane + 8 - Head) % 8; };
    return {__builtin_shufflevector(v.lo, v.hi, at(0), at(1), at(2), at(3)),
            __builtin_shufflevector(v.lo, v.hi, at(4), at(5), at(6), at(7))};
}

// sum_pair of the lanes rotated by Head, without putting them back in order
// first: for an even Head each pair of lanes (2k, 2k + 1) still sits at two
// neighbouring positions, lane 2k first, so the pair sums of sum_pair are
// formed where they lie and only the final additions pick them by lane. The
// same additions with the same operands, so the same bits. For an odd Head the
// pairs straddle positions: those are put back in order first. Why: the two
// cross-half shuffles of the unrotation took a tenth of logits on 512 x 64
// with rows 16 bytes past a line (numpy's usual place), perf, Zen 4.
template <int Head>
[[gnu::always_inline]] inline double sum_rotated_by(const LanePair& v) {
    if constexpr (Head % 2 != 0) {
        return sum_pair(unrotated_pair_by<Head>(v));
    } else {
        const Quad lo = v.lo + __builtin_shufflevector(v.lo, v.lo, 1, 0, 3, 2);  // pair sums at 0 and 2
        const Quad hi = v.hi + __builtin_shufflevector(v.hi, v.hi, 1, 0, 3, 2);
        // Pair k's sum at position 2 * ((k - Head / 2) mod 4): 0 and 2 in lo, 4 and 6 in hi.
        constexpr auto at = [](int pair) { return 2 * ((pair + 4 - Head / 2) % 4); };
        auto pair_sum = [&](int position) { return position < 4 ? lo[position] : hi[position - 4]; };
        return (pair_sum(at(0)) + pair_sum(at(1))) + (pair_sum(at(2)) + pair_sum(at(3)));
    }
}

[[gnu::always_inline]] inline double sum_rotated(const LanePair& v, Index head) {
    switch (head) {
        case 1: return sum_rotated_by<1>(v);
        case 2: return sum_rotated_by<2>(v);
        case 3: return sum_rotated_by<3>(v);
        case 4: return sum_rotated_by<4>(v);
        case 5: return sum_rotated_by<5>(v);
        case 6: return sum_rotated_by<6>(v);
        case 7: return sum_rotated_by<7>(v);
        default: return sum_pair(v);
    }
}

/// A row's dot with x and, if asked, with itself.
struct RowSums {
    double dot;
    double squares;
};

// Another order of the same additions: lane j of dot_kernel sums the values
// i = j, j + 8, j + 16, ... in turn, so any schedule that adds each lane's
// values in increasing i gives its bits. This one reads r in whole 64-byte
// lines: the values before r's first line boundary (head of them, head < 8)
// go into their lanes first, then whole lines (value i at position
// (i - head) % 8, so the positions hold the lanes rotated by head), then the
// tail, last in its lanes; sum_rotated adds the lanes up where they lie.
// Why: an 8-double load that straddles two cache lines costs two. Measured
// on Zen 5, 1 GiB table, two cores, rows 16 bytes past a line: 27 ms per
// logits pass straddling, 19 ms reading whole lines.
template <bool kSquares, int Hint>
[[gnu::always_inline]] inline RowSums row_sums_rotated(const double* r, const double* x, Index dim, Index head,
                                                       std::uintptr_t distance) {
    // The head and tail products at their rotated positions, every other position 0.0:
    // adding them to the zero lanes first and to the sums last is dot_kernel's order.
    double dot_edge[2][kLanes] = {};
    double squares_edge[2][kLanes] = {};
    for (Index i = 0; i < head; ++i) {
        dot_edge[0][i + kLanes - head] = r[i] * x[i];
        if constexpr (kSquares) squares_edge[0][i + kLanes - head] = r[i] * r[i];
    }
    const Index body_end = head + (dim - head) / kLanes * kLanes;
    for (Index i = body_end; i < dim; ++i) {
        dot_edge[1][i - body_end] = r[i] * x[i];
        if constexpr (kSquares) squares_edge[1][i - body_end] = r[i] * r[i];
    }
    LanePair dot = load_pair(dot_edge[0]);  // 0.0 + the head products, as dot_kernel starts its lanes
    LanePair squares = load_pair(squares_edge[0]);
    dot.lo += Quad{};
    dot.hi += Quad{};
    squares.lo += Quad{};
    squares.hi += Quad{};
    for (Index i = head; i < body_end; i += kLanes) {
        prefetch_ahead<Hint>(r + i, distance);
        const LanePair v = load_pair(r + i);
        add_products(dot, v, load_pair(x + i));
        if constexpr (kSquares) add_products(squares, v, v);
    }
    const LanePair dot_tail = load_pair(dot_edge[1]);
    dot.lo += dot_tail.lo;
    dot.hi += dot_tail.hi;
    if constexpr (kSquares) {
        const LanePair squares_tail = load_pair(squares_edge[1]);
        squares.lo += squares_tail.lo;
        squares.hi += squares_tail.hi;
    }
    return {sum_rotated(dot, head), kSquares ? sum_rotated(squares, head) : 0.0};
}

// The line where one row ends and the next begins, in a table whose rows
// all start `head` values (1 to 7) past a line boundary with d a multiple of
// 8: its first 8 - head positions hold the ending row's last values, the rest
// the next row's first values, and in the rotated frame (position p holds lane
// (head + p) % 8) each sits in its own row's lane. So one load of that line
// gives both rows their edge values: `x` holds x's values at the same
// positions (x's tail, then its head), and the masks pick each row's part.
typedef long long QuadMask __attribute__((vector_size(4 * sizeof(long long))));

struct BoundaryLine {
    LanePair x;
    QuadMask ending_lo, ending_hi;    // all ones where the ending row's values sit
    QuadMask starting_lo, starting_hi;  // all ones where the starting row's values sit
};

inline BoundaryLine boundary_line(const double* x, Index dim, Index head) {
    const Index ending = kLanes - head;  // values of the ending row on the line
    double values[kLanes];
    long long ending_mask[kLanes];
    for (Index p = 0; p < kLanes; ++p) {
        values[p] = p < ending ? x[dim - ending + p] : x[p - ending];
        ending_mask[p] = p < ending ? -1 : 0;
    }
    BoundaryLine line;
    line.x = load_pair(values);
    std::memcpy(&line.ending_lo, ending_mask, sizeof line.ending_lo);
    std::memcpy(&line.ending_hi, ending_mask + 4, sizeof line.ending_hi);
    line.starting_lo = ~line.ending_lo;
    line.starting_hi = ~line.ending_hi;
    return line;
}

// v with every position outside the mask +0.0.
[[gnu::always_inline]] inline LanePair masked(const LanePair& v, const QuadMask& lo, const QuadMask& hi) {
    return {reinterpret_cast<Quad>(reinterpret_cast<QuadMask>(v.lo) & lo),
            reinterpret_cast<Quad>(reinterpret_cast<QuadMask>(v.hi) & hi)};
}

// R rows side by side: every step reads one line of each row (R streams) and
// x's line once for all of them. With head = 0 the rows start on lines and
// the lanes are in dot_kernel's order from the start. With head > 0 (see
// BoundaryLine; rows[-1] and the row after the last must be the table's),
// each row's first values come from the line it shares with the row before,
// added to the zero lanes first, and its last values from the line it shares
// with the row after, added last; sum_rotated adds the lanes up where they lie.
template <bool kSquares, int Hint, Index R>
[[gnu::always_inline]] inline void row_group_sums(const double* r, const double* x, Index dim, Index head,
                                                  const BoundaryLine* boundary, std::uintptr_t distance,
                                                  double* out, double* squares_out) {
    LanePair dot[R] = {};
    LanePair squares[R] = {};
    const Index ending = head > 0 ? kLanes - head : 0;
    if (head > 0) {
        for (Index q = 0; q < R; ++q) {
            const LanePair line = load_pair(r + q * dim - ending);
            const LanePair products{line.lo * boundary->x.lo, line.hi * boundary->x.hi};
            const LanePair starting = masked(products, boundary->starting_lo, boundary->starting_hi);
            dot[q] = {Quad{} + starting.lo, Quad{} + starting.hi};  // 0.0 + product, as dot_kernel starts a lane
            if constexpr (kSquares) {
                const LanePair own = masked({line.lo * line.lo, line.hi * line.hi}, boundary->starting_lo,
                                            boundary->starting_hi);
                squares[q] = {Quad{} + own.lo, Quad{} + own.hi};
            }
        }
    }
    StreamAhead<R> ahead(head, dim, distance, sizeof(double));
    for (Index i = head; i < dim - ending; i += kLanes) {
        const LanePair xv = load_pair(x + i);
        for (Index q = 0; q < R; ++q) {
            prefetch_ahead<Hint>(r, ahead.bytes(q));
            const LanePair v = load_pair(r + q * dim + i);
            add_products(dot[q], v, xv);
            if constexpr (kSquares) add_products(squares[q], v, v);
        }
        ahead.advance(kLanes);
    }
    for (Index q = 0; q < R; ++q) {
        if (head > 0) {
            // The ending values last in their lanes; a lane sum starts at +0.0 and so is never
            // -0.0, and adding the +0.0 of a masked position changes nothing.
            const LanePair line = load_pair(r + q * dim + dim - ending);
            const LanePair products{line.lo * boundary->x.lo, line.hi * boundary->x.hi};
            const LanePair mine = masked(products, boundary->ending_lo, boundary->ending_hi);
            dot[q] = {dot[q].lo + mine.lo, dot[q].hi + mine.hi};
            if constexpr (kSquares) {
                const LanePair own =
                    masked({line.lo * line.lo, line.hi * line.hi}, boundary->ending_lo, boundary->ending_hi);
                squares[q] = {squares[q].lo + own.lo, squares[q].hi + own.hi};
            }
        }
        out[q] = sum_rotated(dot[q], head);
        if constexpr (kSquares) squares_out[q] = sum_rotated(squares[q], head);
    }
}

// count rows from `rows`, each row's dot with x into out (and its square sum
// into squares). Where every row starts at the same place in a line (d a
// multiple of 8), R rows at a time: on lines (the usual case: Tables are
// 64-byte aligned) or sharing boundary lines (a table held at another
// offset, such as a numpy array 16 bytes past a line), the first and last
// rows one at a time, since their boundary lines reach outside [rows, rows +
// count * dim). Otherwise one row at a time, rotated.
template <bool kSquares, int Hint, Index R>
[[gnu::always_inline]] inline void rows_with(const double* rows, Index count, Index dim, const double* x,
                                             std::uintptr_t distance, double* out, double* squares) {
    // squares is null when kSquares is false, and must not be offset then. Both lambdas are forced
    // inline: one left out of line is compiled once, for the baseline, and every clone calls that.
    auto squares_at = [squares](Index t) __attribute__((always_inline)) { return kSquares ? squares + t : nullptr; };
    auto one_rotated = [&](Index t) __attribute__((always_inline)) {
        const double* r = rows + t * dim;
        Index head = values_before_line(r);
        if (head < 0) head = 0;  // not 8-byte aligned: no load can avoid straddling, so take lanes as they come
        const RowSums sums = row_sums_rotated<kSquares, Hint>(r, x, dim, std::min(head, dim), distance);
        out[t] = sums.dot;
        if constexpr (kSquares) squares[t] = sums.squares;
    };
    const Index head = values_before_line(rows);
    if (dim % kLanes != 0 || head < 0 || (head > 0 && (dim < kLanes || count < 3))) {
        for (Index t = 0; t < count; ++t) one_rotated(t);
        return;
    }
    BoundaryLine boundary{};
    if (head > 0) boundary = boundary_line(x, dim, head);
    const Index first = head > 0 ? 1 : 0;
    const Index last = head > 0 ? count - 1 : count;  // rows [first, last) in groups
    if (head > 0) one_rotated(0);
    Index t = first;
    for (; t + R <= last; t += R) {
        row_group_sums<kSquares, Hint, R>(rows + t * dim, x, dim, head, &boundary, distance, out + t, squares_at(t));
    }
    for (; t < last; ++t) {
        row_group_sums<kSquares, Hint, 1>(rows + t * dim, x, dim, head, &boundary, distance, out + t, squares_at(t));
    }
    if (head > 0) one_rotated(count - 1);
}

// rows_with as row_loops::with_row_settings calls it.
struct DoubleRows {
    template <bool kSquares, int Hint, Index R>
    [[gnu::always_inline]] static void rows(const double* rows, Index count, Index dim, const double* x,
                                            std::uintptr_t distance, double* out, double* squares) {
        rows_with<kSquares, Hint, R>(rows, count, dim, x, distance, out, squares);
    }
};

template <bool kSquares>
[[gnu::always_inline]] inline void rows_with_settings(const double* rows, Index count, Index dim, const double* x,
                                                      double* out, double* squares, bool prefetch) {
    StreamSettings settings = stream_settings();
    if (!prefetch) settings.row_hint = PrefetchHint::none;
    settings.rows_per_step = rows_per_step_for(settings, dim);
    with_row_settings<DoubleRows, kSquares>(settings, rows, count, dim, x,
                                            static_cast<std::uintptr_t>(settings.row_distance_bytes), out, squares);
}

}  // namespace

namespace {

EMBED_MULTIVERSION
void dot_rows_multiversioned(const double* rows, Index count, Index dim, const double* x, double* out,
                             bool prefetch) {
    rows_with_settings<false>(rows, count, dim, x, out, nullptr, prefetch);
}

// The same, with each row's square sum from the same read of the row.
EMBED_MULTIVERSION
void dot_and_square_rows_multiversioned(const double* rows, Index count, Index dim, const double* x, double* out,
                                        double* squares, bool prefetch) {
    rows_with_settings<true>(rows, count, dim, x, out, squares, prefetch);
}

}  // namespace

void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out, bool prefetch) {
    dot_rows_multiversioned(rows, count, dim, x, out, prefetch);
}

void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares, bool prefetch) {
    dot_and_square_rows_multiversioned(rows, count, dim, x, out, squares, prefetch);
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

// sum_lanes of eight lane vectors at once: scores[j] = sum_lanes(v[j]), by the
// same additions with the same operand first (adjacent lanes, then pairs of
// pairs, then the halves), each step adding two shuffles of two vectors so
// that the sums gather into one vector as they go. Why: one sum_lanes is a
// chain of shuffles and adds for a single score, which on 512 x 64 (eight
// products per score) cost about a quarter of the GEMM's time; here a score
// costs under three vector instructions. Every shuffle interleaves or moves
// whole 128-bit pieces, so none needs an index vector in a register.
[[gnu::always_inline]] inline void sum_lanes_of_eight(const Lanes* v, double* scores) {
    // pairs[k]: v[2k] and v[2k+1] interleaved, lanes 0+1, 0+1, 2+3, 2+3, 4+5, 4+5, 6+7, 6+7
    Lanes pairs[4];
    for (Index k = 0; k < 4; ++k) {
        const Lanes& x = v[2 * k];
        const Lanes& y = v[2 * k + 1];
        pairs[k] = __builtin_shufflevector(x, y, 0, 8, 2, 10, 4, 12, 6, 14) +
                   __builtin_shufflevector(x, y, 1, 9, 3, 11, 5, 13, 7, 15);
    }
    // quads[k]: lanes 0-3 of v[4k], v[4k+1], then 4-7 of both, then the same of v[4k+2], v[4k+3]
    Lanes quads[2];
    for (Index k = 0; k < 2; ++k) {
        const Lanes& x = pairs[2 * k];
        const Lanes& y = pairs[2 * k + 1];
        quads[k] = __builtin_shufflevector(x, y, 0, 1, 4, 5, 8, 9, 12, 13) +
                   __builtin_shufflevector(x, y, 2, 3, 6, 7, 10, 11, 14, 15);
    }
    const Lanes eight = __builtin_shufflevector(quads[0], quads[1], 0, 1, 4, 5, 8, 9, 12, 13) +
                        __builtin_shufflevector(quads[0], quads[1], 2, 3, 6, 7, 10, 11, 14, 15);
    std::memcpy(scores, &eight, sizeof eight);
}

// Scores of `count` pairs whose lane sums are lanes[0 .. count): score j goes
// to out[(j / Q) * out_stride + j % Q], eight at a time. Not inlined: inlined
// after the GEMM's loop, its shuffles took registers the loop then lacked, and
// the loop spilled (perf, Zen 4); storing the sums once and reloading them
// here costs less.
template <Index Q>
[[gnu::noinline]] EMBED_TARGET_AVX512 void store_scores(const Lanes* lanes, Index count, double* out, Index out_stride) {
    Index j = 0;
    for (; j + kLanes <= count; j += kLanes) {
        double scores[kLanes];
        sum_lanes_of_eight(lanes + j, scores);
        for (Index s = 0; s < kLanes; ++s) out[(j + s) / Q * out_stride + (j + s) % Q] = scores[s];
    }
    for (; j < count; ++j) out[j / Q * out_stride + j % Q] = sum_lanes(lanes[j]);
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
    if (whole == dim) {
        store_scores<Q>(acc, P * Q, out, out_stride);
        return;
    }
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
    if (head == 0 && body == dim && dim <= kTile) {
        // One tile and no edges: the lane sums can stay in registers from the
        // first product to the last (the edges above would add only zeros).
        // Measured on Zen 5, one thread, n = 64 on 512 x 64: 0.114 ms tiled, 0.074 ms here.
        dot_all_pairs_by<P, Q>(a, n, b, m, dim, out, out_stride);
        return;
    }
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
                    Lanes& lanes = sums[i * Q + q];
                    lanes = unrotated(lanes + a_edges[i].tail * b_edges[q].tail, head);
                }
            }
            store_scores<Q>(sums, rows * Q, out + i0 * out_stride + t, out_stride);
        }
    }
    // The last m % Q b rows, untiled.
    dot_all_pairs_by<P, Q>(a, n, b + m_blocks * dim, m - m_blocks, dim, out + m_blocks, out_stride);
}

// AVX-512 has 32 vector registers, one Lanes each: 4 x 6 accumulators, 6 b
// rows and an a row fit without spilling. The lane-class GEMM of AVX2 with
// 8-double registers (panels of 16 or 24 b rows, 8 a rows per block) was no
// faster on Zen 5, one thread, n = 64: 26-29 billion multiply-adds a second
// on GPT-2's shape against 27-35 for this kernel, and 14 against 19 on 512 x 64.
EMBED_TARGET_AVX512 void dot_all_pairs_avx512(const double* a, Index n, const double* b, Index m,
                                                             Index dim, double* out, Index out_stride) {
    dot_all_pairs_tiled<4, kAvx512PairBlock>(a, n, b, m, dim, out, out_stride);
}

EMBED_MULTIVERSION_NARROW void dot_all_pairs_narrow(const double* a, Index n, const double* b, Index m, Index dim,
                                                    double* out, Index out_stride) {
    lane_classes::dot_all_pairs_broadcast(a, n, b, m, dim, out, out_stride);
}

}  // namespace

namespace {

EMBED_TARGET_AVX512 void one_hot_times_table_avx512(const double* table, Index vocab, Index dim, const Index* ids,
                                                    Index n, double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::LanesBlocks>(table, vocab, dim, ids, n, out);
}

EMBED_MULTIVERSION_NARROW
void one_hot_times_table_narrow(const double* table, Index vocab, Index dim, const Index* ids, Index n, double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::QuadBlocks>(table, vocab, dim, ids, n, out);
}

}  // namespace

void one_hot_times_table(const double* table, Index vocab, Index dim, const Index* ids, Index n, double* out) {
    if (all_pairs_on_avx512()) {
        one_hot_times_table_avx512(table, vocab, dim, ids, n, out);
    } else {
        one_hot_times_table_narrow(table, vocab, dim, ids, n, out);
    }
}

Index one_hot_ids_per_block(const double*) {
    return all_pairs_on_avx512() ? one_hot_gemm::LanesBlocks::kIds : one_hot_gemm::QuadBlocks::kIds;
}

bool all_pairs_on_avx512() {
#if EMBED_MULTIVERSIONED
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    return avx512;
#elif defined(__AVX512F__)
    return true;
#else
    return false;
#endif
}

void dot_all_pairs(const double* a, Index n, const double* b, Index m, Index dim, double* out, Index out_stride) {
    if (all_pairs_on_avx512()) {
        dot_all_pairs_avx512(a, n, b, m, dim, out, out_stride);
    } else {
        dot_all_pairs_narrow(a, n, b, m, dim, out, out_stride);
    }
}

const double* at_line_offset_of(const double* like, const double* values, Index count, std::vector<double>& staging) {
    using row_loops::kLineBytes;
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
