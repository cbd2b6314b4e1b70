#include "kernels/row_kernels.hpp"
#include "kernels/lane_class_gemm.hpp"
#include "kernels/multiversion.hpp"
#include "kernels/one_hot_gemm.hpp"
#include "kernels/packed_gemm.hpp"
#include "kernels/row_loops.hpp"
#include "kernels/streaming.hpp"

#include <algorithm>
#include <cstdint>

// Lanes are 64-byte vectors passed between always-inlined functions, so the
// calling convention GCC warns about never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {

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
// cross-half shuffles of the unrotation were a visible share of logits on
// small tables with rows off a line (numpy's usual place).
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

// A switch per row (a jump table), whose cost depends on where the linker
// puts the code. Two ways without it were slower everywhere, so not kept: the
// lanes of 16 rows stored, then summed after one switch, and the head's turns
// as masks and blends.
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
// Why: an 8-double load that straddles two cache lines costs two, and rows
// off a line would straddle on every load.
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
    auto step = [&](Index i) __attribute__((always_inline)) {
        prefetch_ahead<Hint>(r + i, distance);
        const LanePair v = load_pair(r + i);
        add_products(dot, v, load_pair(x + i));
        if constexpr (kSquares) add_products(squares, v, v);
    };
    // A row on a line reads its first line by loads of its own ("The first line apart", row_loops.hpp); a
    // row off its line has the head's loads above.
    step_through(head, body_end, kLanes, head == 0, step);
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
    // Line i of each row, added to its lanes.
    auto step = [&](Index i) __attribute__((always_inline)) {
        const LanePair xv = load_pair(x + i);
        for (Index q = 0; q < R; ++q) {
            prefetch_ahead<Hint>(r, ahead.bytes(q));
            const LanePair v = load_pair(r + q * dim + i);
            add_products(dot[q], v, xv);
            if constexpr (kSquares) add_products(squares[q], v, v);
        }
        ahead.advance(kLanes);
    };
    // Rows on lines read their first line by loads of their own ("The first line apart", row_loops.hpp);
    // rows off them have the boundary loads above.
    step_through(head, dim - ending, kLanes, head == 0, step);
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
    const bool on_lines = rows_start_on_lines(rows, dim * Index{sizeof(double)});
    const auto distance = static_cast<std::uintptr_t>(double_row_distance_for(settings, dim, on_lines));
    with_row_settings<DoubleRows, kSquares>(settings, rows, count, dim, x, distance, out, squares);
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

namespace {

// x copied to the same place in a 64-byte line as the rows. The row loops read
// x's values at the rows' positions, so with x elsewhere in its lines half of
// the 32-byte loads of x can straddle two lines; lined up, a table off its
// lines (numpy's usual place) reads as fast as one on them. The same values
// in the same order, so the scores keep their bits.
class LinedUpCopy {
public:
    // Up to 8 KiB, on the stack, so the call allocates nothing and fits a small thread stack; wider rows
    // read x where it is.
    static constexpr Index kMaxValues = 1024;

    // Whether it pays: rows all at one place in a line (d a multiple of 8), x elsewhere, both 8-byte aligned.
    static bool worth_it(const double* rows, Index dim, const double* x) {
        const Index rows_head = values_before_line(rows);
        const Index x_head = values_before_line(x);
        return dim % kLanes == 0 && dim <= kMaxValues && rows_head >= 0 && x_head >= 0 && rows_head != x_head;
    }

    // values_ starts on a line, so values_ + (8 - head) % 8 has the rows' head values before a boundary.
    LinedUpCopy(const double* rows, Index dim, const double* x) {
        start_ = values_ + (kLanes - values_before_line(rows)) % kLanes;
        std::copy(x, x + dim, start_);
    }
    const double* data() const { return start_; }

private:
    alignas(kLineBytes) double values_[kMaxValues + kLanes];
    double* start_;
};

// run(x), or run(x's lined-up copy) where that pays.
template <class Run>
void with_x_lined_up(const double* rows, Index dim, const double* x, Run run) {
    if (!LinedUpCopy::worth_it(rows, dim, x)) return run(x);
    const LinedUpCopy lined_up(rows, dim, x);
    run(lined_up.data());
}

}  // namespace

void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out, bool prefetch) {
    with_x_lined_up(rows, dim, x, [&](const double* xs) {
        dot_rows_multiversioned(rows, count, dim, xs, out, prefetch);
    });
}

void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares, bool prefetch) {
    with_x_lined_up(rows, dim, x, [&](const double* xs) {
        dot_and_square_rows_multiversioned(rows, count, dim, xs, out, squares, prefetch);
    });
}

namespace {

// AVX-512 has 32 vector registers, one Lanes each: the packed GEMM's 4 x 6
// accumulators, 6 b rows and an a row fit without spilling. The lane-class
// GEMM of AVX2 with 8-double registers (panels of 16 or 24 b rows, 8 a rows
// per block) was no faster, on large tables or small.
EMBED_TARGET_AVX512 void dot_all_pairs_avx512(const double* a, Index n, const double* b, Index m, Index dim,
                                              double* out, Index out_stride) {
    packed_gemm::all_pairs<packed_gemm::LoadDoubles>(a, n, b, m, dim, out, out_stride);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_all_pairs_below_avx512(const double* a, Index n, const double* b, Index m, Index dim, double* out,
                                Index out_stride) {
    lane_classes::dot_all_pairs_broadcast(a, n, b, m, dim, out, out_stride);
}

}  // namespace

namespace {

EMBED_TARGET_AVX512 void one_hot_times_table_avx512(const double* table, Index vocab, Index dim, const Index* ids,
                                                    Index n, double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::LanesBlocks>(table, vocab, dim, ids, n, out);
}

EMBED_MULTIVERSION_BELOW_AVX512
void one_hot_times_table_below_avx512(const double* table, Index vocab, Index dim, const Index* ids, Index n,
                                      double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::QuadBlocks>(table, vocab, dim, ids, n, out);
}

}  // namespace

void one_hot_times_table(const double* table, Index vocab, Index dim, const Index* ids, Index n, double* out) {
    if (all_pairs_on_avx512()) {
        one_hot_times_table_avx512(table, vocab, dim, ids, n, out);
    } else {
        one_hot_times_table_below_avx512(table, vocab, dim, ids, n, out);
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
        dot_all_pairs_below_avx512(a, n, b, m, dim, out, out_stride);
    }
}

}  // namespace embed::detail
