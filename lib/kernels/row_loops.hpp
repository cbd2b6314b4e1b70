#pragma once
// What the row loops of every table type share (lib/kernels/row_kernels.cpp for double,
// lib/kernels/narrow_kernels.cpp for float32 and bfloat16): the eight lanes of
// dot_kernel held as two 4-double halves, the prefetch, and the choice of
// loop from the streaming settings. Internal; included only by the kernels.

#include <cstdint>
#include <cstring>

#include "kernels/base.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/streaming.hpp"

// The lane halves are 32-byte vectors passed between always-inlined functions
// of the kernel files that include this header, so the calling convention GCC
// warns about (-Wpsabi) never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail::row_loops {

inline constexpr std::uintptr_t kLineBytes = 64;

// The eight lanes of a row loop as two 4-double halves, lanes 0-3 and 4-7
// (or, rotated, positions 0-3 and 4-7). Why not one 8-double Lanes: on AVX2
// and below GCC kept a Lanes accumulator on the stack and moved its pieces
// through integer registers to finish each row, which then took most of the
// time of logits on small tables.
// Halves map to one AVX2 register each (two SSE2, or the low half of AVX-512's),
// and the row's end is a few shuffles.
typedef double Quad __attribute__((vector_size(4 * sizeof(double))));

struct LanePair {
    Quad lo;
    Quad hi;
};

[[gnu::always_inline]] inline Quad load_quad(const double* p) {
    Quad v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

[[gnu::always_inline]] inline LanePair load_pair(const double* p) { return {load_quad(p), load_quad(p + 4)}; }

// Four stored values widened to four doubles, written value by value: GCC
// turns this into one load and one vcvtps2pd, where __builtin_convertvector
// of a 4-float vector converted two values at a time through the stack, and
// those stores took most of a float32 logits pass.
template <class Narrow>
[[gnu::always_inline]] inline Quad load_widened_quad(const Narrow* p) {
    return Quad{widen(p[0]), widen(p[1]), widen(p[2]), widen(p[3])};
}

// Four doubles are already wide: one load.
[[gnu::always_inline]] inline Quad load_widened_quad(const double* p) { return load_quad(p); }

[[gnu::always_inline]] inline void add_products(LanePair& acc, const LanePair& a, const LanePair& b) {
    acc.lo += a.lo * b.lo;
    acc.hi += a.hi * b.hi;
}

// sum_lanes_pairwise's additions on the halves: ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)).
[[gnu::always_inline]] inline double sum_pair(const LanePair& acc) {
    const Quad lo = acc.lo + __builtin_shufflevector(acc.lo, acc.lo, 1, 0, 3, 2);  // 0 + 1 at 0, 2 + 3 at 2
    const Quad hi = acc.hi + __builtin_shufflevector(acc.hi, acc.hi, 1, 0, 3, 2);
    return (lo[0] + lo[2]) + (hi[0] + hi[2]);
}

// The first line apart: every row loop reads each row's first line with
// loads of its own, before its loop over the rest (the loop's first step
// peeled off: the same additions in the same order, so the same bits). Those
// loads step from row to row by the rows' length, and most likely the CPU's
// stride prefetcher, which follows each load instruction, then fetches ahead
// beside the software prefetch; inside the loop every load steps 64 bytes.
// Found because rows off their lines, whose loops load the line shared with
// the row before, read faster than the same memory on its lines. An extra
// load of a table line at each row's start helped wherever it pointed, one of
// the hidden vector did not. It pays most on double rows streamed from
// memory, little where the conversion of bfloat16 sets the pace.

// Runs step(i) for i = begin, begin + stride, ... while a whole step fits
// before end, the first step apart from the loop when first_apart (above);
// returns where it stopped. Forced inline, so that each row loop's compiled
// code keeps the peeled step's loads out of its loop.
template <class Step>
[[gnu::always_inline]] inline Index step_through(Index begin, Index end, Index stride, bool first_apart, Step&& step) {
    const Index last = end - stride;  // where the last whole step starts
    Index i = begin;
    if (first_apart && i <= last) {
        step(i);
        i += stride;
    }
    for (; i <= last; i += stride) step(i);
    return i;
}

// Asks for the line `distance` bytes past p, for the next rows of a table read
// start to end, with locality Hint (PrefetchHint; -1 asks nothing). The
// address is computed as an integer because it may lie past the table's end,
// where prefetching is harmless but pointer arithmetic is not allowed. Which
// hint and distance: see default_stream_settings (lib/kernels/streaming.cpp).
template <int Hint>
[[gnu::always_inline]] inline void prefetch_ahead(const void* p, std::uintptr_t distance) {
    if constexpr (Hint >= 0) {
        __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + distance), 0, Hint);
    }
}

// Where each of R rows read side by side asks for memory `distance` bytes
// ahead of the column being read. Each stream continues R rows on, not in the
// next row (which the same step reads already), so the distance is taken along
// the stream and wraps into the stream's next row. The position is carried
// from step to step: working it out afresh at every line took a loop with one
// pass per row wrapped (several for bfloat16 rows far ahead), and that loop,
// not memory, set the pace of the bfloat16 rows.
template <Index R>
class StreamAhead {
  public:
    // At `column` of a group whose rows have `dim` values of `value_bytes` each.
    StreamAhead(Index column, Index dim, std::uintptr_t distance, Index value_bytes)
        : dim_(dim), value_bytes_(value_bytes) {
        if (dim == 0) return;
        const Index ahead = column + static_cast<Index>(distance) / value_bytes;
        column_ = ahead % dim;
        offset_ = ahead / dim * R * dim + column_;
    }

    // Moves `values` columns on; at most dim, so the stream wraps at most once.
    [[gnu::always_inline]] void advance(Index values) {
        column_ += values;
        offset_ += values;
        if (column_ >= dim_) {
            column_ -= dim_;
            offset_ += (R - 1) * dim_;
        }
    }

    // The byte offset, from the group's first row, that stream q asks for.
    [[gnu::always_inline]] std::uintptr_t bytes(Index q) const {
        return static_cast<std::uintptr_t>((offset_ + q * dim_) * value_bytes_);
    }

  private:
    Index dim_;
    Index value_bytes_;
    Index column_ = 0;  // the column ahead, in [0, dim)
    Index offset_ = 0;  // stream 0's value ahead, counted from the group's first value
};

// Runs Loop::template rows<kSquares, Hint, R>(args...) with the settings' row
// hint (as __builtin_prefetch's locality, -1 for none) and rows per step as
// constants: each pair is its own loop, so the settings cost one switch per
// call, not per line.
template <class Loop, bool kSquares, int Hint, class... Args>
[[gnu::always_inline]] inline void with_rows_per_step(const StreamSettings& settings, Args... args) {
    switch (settings.rows_per_step) {
        case 2: return Loop::template rows<kSquares, Hint, 2>(args...);
        case 4: return Loop::template rows<kSquares, Hint, 4>(args...);
        default: return Loop::template rows<kSquares, Hint, 1>(args...);
    }
}

template <class Loop, bool kSquares, class... Args>
[[gnu::always_inline]] inline void with_row_settings(const StreamSettings& settings, Args... args) {
    switch (settings.row_hint) {
        case PrefetchHint::none: return with_rows_per_step<Loop, kSquares, -1>(settings, args...);
        case PrefetchHint::nta: return with_rows_per_step<Loop, kSquares, 0>(settings, args...);
        case PrefetchHint::t2: return with_rows_per_step<Loop, kSquares, 1>(settings, args...);
        case PrefetchHint::t1: return with_rows_per_step<Loop, kSquares, 2>(settings, args...);
        case PrefetchHint::t0: return with_rows_per_step<Loop, kSquares, 3>(settings, args...);
    }
}

}  // namespace embed::detail::row_loops
