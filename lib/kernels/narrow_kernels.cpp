#include "kernels/narrow_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/row_kernels.hpp"
#include "kernels/lane_class_gemm.hpp"
#include "kernels/multiversion.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/one_hot_gemm.hpp"
#include "kernels/packed_gemm.hpp"
#include "kernels/row_loops.hpp"
#include "kernels/streaming.hpp"

// The lane halves are 32-byte vectors; they are internal and always inlined,
// so the calling convention GCC warns about never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

using namespace row_loops;

// Eight stored values widened into the two halves of the lanes.
template <class Narrow>
[[gnu::always_inline]] inline LanePair load_widened_pair(const Narrow* p) {
    return {load_widened_quad(p), load_widened_quad(p + 4)};
}

typedef std::uint16_t Bits8 __attribute__((vector_size(8 * sizeof(std::uint16_t))));
typedef float Float4 __attribute__((vector_size(4 * sizeof(float))));

// Four float32s widened value by value (one vcvtps2pd).
[[gnu::always_inline]] inline Quad widen_quad(Float4 f) { return Quad{f[0], f[1], f[2], f[3]}; }

// Eight bfloat16s: one 16-byte load, and each half interleaved with zero
// words, which puts each bfloat16 in the top half of a float32 (vpunpcklwd,
// vpunpckhwd): value by value, GCC zero-extends and shifts, two instructions
// per four values, which was slower.
// The word order assumes a little-endian CPU; any other widens value by value.
template <>
[[gnu::always_inline]] inline LanePair load_widened_pair(const Eigen::bfloat16* p) {
    if constexpr (std::endian::native != std::endian::little) return {load_widened_quad(p), load_widened_quad(p + 4)};
    Bits8 bits;
    std::memcpy(&bits, p, sizeof bits);
    const Bits8 zero{};
    const Bits8 low = __builtin_shufflevector(zero, bits, 0, 8, 1, 9, 2, 10, 3, 11);
    const Bits8 high = __builtin_shufflevector(zero, bits, 4, 12, 5, 13, 6, 14, 7, 15);
    Float4 low_floats;
    Float4 high_floats;
    std::memcpy(&low_floats, &low, sizeof low_floats);
    std::memcpy(&high_floats, &high, sizeof high_floats);
    return {widen_quad(low_floats), widen_quad(high_floats)};
}

// Eight bfloat16s as one 8-double vector, for AVX-512, where Lanes is one
// register: each bfloat16 moved into the top half of a float32 with zeros
// below it, then one vcvtps2pd for all eight. On x86-64 with AVX2 or more the
// eight are loaded into both 16-byte halves of a 32-byte register
// (vbroadcasti128) and one byte shuffle (vpshufb) places four in each half;
// interleaving the words with zeros took three shuffles (vpunpcklwd,
// vpunpckhwd, vperm2i128), which made the loop slower than memory.
#if defined(__x86_64__) && (EMBED_MULTIVERSIONED || defined(__AVX2__))
// Not always_inline: GCC and Clang refuse to force code for AVX2 into the
// callers between here and narrow_rows_avx512, which are built for every
// instruction set; once those are inlined into it, this is inlined too. The
// floats go out through memory for the same reason (Clang will not return a
// 32-byte vector from it to them); inlined, they stay in a register.
EMBED_TARGET_AVX512 inline void bf16_as_floats(const Eigen::bfloat16* p, float* out) {
    const __m256i both_halves = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    // Byte k of each 4-byte float: -128 writes a zero, 0..15 takes that byte of the half's 16.
    const __m256i to_top_halves = _mm256_setr_epi8(-128, -128, 0, 1, -128, -128, 2, 3, -128, -128, 4, 5, -128, -128,
                                                   6, 7, -128, -128, 8, 9, -128, -128, 10, 11, -128, -128, 12, 13,
                                                   -128, -128, 14, 15);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_shuffle_epi8(both_halves, to_top_halves));
}
#else
typedef std::uint16_t Bits16 __attribute__((vector_size(16 * sizeof(std::uint16_t))));

[[gnu::always_inline]] inline void bf16_as_floats(const Eigen::bfloat16* p, float* out) {
    Bits8 bits;
    std::memcpy(&bits, p, sizeof bits);
    const Bits8 zero{};
    const Bits16 words = __builtin_shufflevector(zero, bits, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    std::memcpy(out, &words, sizeof words);
}
#endif

// Eight float32s widened value by value: one vcvtps2pd from memory into a whole register.
[[gnu::always_inline]] inline Lanes load_widened_lanes(const float* p) {
    return Lanes{widen(p[0]), widen(p[1]), widen(p[2]), widen(p[3]), widen(p[4]), widen(p[5]), widen(p[6]),
                 widen(p[7])};
}

[[gnu::always_inline]] inline Lanes load_widened_lanes(const Eigen::bfloat16* p) {
    if constexpr (std::endian::native != std::endian::little) {
        const LanePair pair = load_widened_pair(p);
        return __builtin_shufflevector(pair.lo, pair.hi, 0, 1, 2, 3, 4, 5, 6, 7);
    }
    float f[8];
    bf16_as_floats(p, f);
    return Lanes{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]};
}

// The accumulator kinds of the narrow row loops: LanePair (two Quads, for
// AVX2 and below) and Lanes (one 8-double register, for AVX-512). Both hold
// lane j in position j and add the same products in the same order.
[[gnu::always_inline]] inline LanePair load_x(const double* x, LanePair) { return load_pair(x); }
[[gnu::always_inline]] inline Lanes load_x(const double* x, Lanes) {
    Lanes v;
    std::memcpy(&v, x, sizeof v);
    return v;
}
template <class Narrow>
[[gnu::always_inline]] inline LanePair load_row_values(const Narrow* p, LanePair) { return load_widened_pair(p); }
template <class Narrow>
[[gnu::always_inline]] inline Lanes load_row_values(const Narrow* p, Lanes) { return load_widened_lanes(p); }
[[gnu::always_inline]] inline void add_products(Lanes& acc, const Lanes& a, const Lanes& b) { acc += a * b; }
[[gnu::always_inline]] inline LanePair as_pair(const LanePair& acc) { return acc; }
[[gnu::always_inline]] inline LanePair as_pair(const Lanes& acc) {
    return {__builtin_shufflevector(acc, acc, 0, 1, 2, 3), __builtin_shufflevector(acc, acc, 4, 5, 6, 7)};
}

// Ends a row: the products of values [whole, dim) (with x, or with themselves
// when x is null) into lanes 0, 1, ..., then the lanes pairwise.
template <class Narrow>
[[gnu::always_inline]] inline double finish_row(const LanePair& acc, const Narrow* r, const double* x, Index whole,
                                                Index dim) {
    if (whole == dim) return sum_pair(acc);
    double lane[kLanes];
    std::memcpy(lane, &acc.lo, sizeof acc.lo);
    std::memcpy(lane + 4, &acc.hi, sizeof acc.hi);
    for (Index i = whole, j = 0; i < dim; ++i, ++j) {
        const double v = widen(r[i]);
        lane[j] += v * (x != nullptr ? x[i] : v);
    }
    return sum_lanes_pairwise(lane);
}

// R narrow rows side by side, each in dot_kernel's order: lane j adds the
// products of values j, j + 8, ... from 0.0, the tail goes into lanes 0, 1,
// ..., then the lanes pairwise. Every step reads eight values of each row (R
// streams) and x's eight once for all of them, and each stream asks for
// memory once per 64-byte line. Unlike the double rows, a narrow row is not
// realigned to a cache line first: eight floats are half a line and eight
// bfloat16 a quarter, so a load straddles a line boundary at most every other
// load, and a realignment would cost a rotation per row.
template <class Acc, bool kSquares, int Hint, Index R, class Narrow>
[[gnu::always_inline]] inline void narrow_row_group_sums(const Narrow* r, const double* x, Index dim,
                                                         std::uintptr_t distance, double* out, double* squares_out) {
    constexpr auto kValueBytes = static_cast<Index>(sizeof(Narrow));
    constexpr Index kValuesPerLine = static_cast<Index>(kLineBytes) / kValueBytes;
    Acc dot[R] = {};
    Acc squares[R] = {};
    const auto add_block = [&](Index j) __attribute__((always_inline)) {
        const Acc xv = load_x(x + j, Acc{});
        for (Index q = 0; q < R; ++q) {
            const Acc v = load_row_values(r + q * dim + j, Acc{});
            add_products(dot[q], v, xv);
            if constexpr (kSquares) add_products(squares[q], v, v);
        }
    };
    const Index whole = dim - dim % kLanes;
    StreamAhead<R> ahead(0, dim, distance, kValueBytes);
    const auto add_line = [&](Index first) __attribute__((always_inline)) {
        for (Index q = 0; q < R; ++q) prefetch_ahead<Hint>(r, ahead.bytes(q));
        ahead.advance(kValuesPerLine);
        for (Index j = first; j < first + kValuesPerLine; j += kLanes) add_block(j);
    };
    // The first line by loads of its own, as the double rows do ("The first line apart", row_loops.hpp).
    Index i = step_through(0, whole, kValuesPerLine, true, add_line);
    for (; i < whole; i += kLanes) add_block(i);
    for (Index q = 0; q < R; ++q) {
        out[q] = finish_row(as_pair(dot[q]), r + q * dim, x, whole, dim);
        if constexpr (kSquares) squares_out[q] = finish_row(as_pair(squares[q]), r + q * dim, nullptr, whole, dim);
    }
}

// count rows from `rows`, R at a time, then the rest one at a time, asking Hint ahead.
template <class Acc, bool kSquares, int Hint, Index R, class Narrow>
[[gnu::always_inline]] inline void narrow_rows_asking(const Narrow* rows, Index count, Index dim, const double* x,
                                                      double* out, double* squares, std::uintptr_t distance) {
    // squares is null when kSquares is false, and must not be offset then.
    const auto squares_at = [squares](Index t) __attribute__((always_inline)) {
        return kSquares ? squares + t : nullptr;
    };
    Index t = 0;
    for (; t + R <= count; t += R) {
        narrow_row_group_sums<Acc, kSquares, Hint, R>(rows + t * dim, x, dim, distance, out + t, squares_at(t));
    }
    for (; t < count; ++t) {
        narrow_row_group_sums<Acc, kSquares, Hint, 1>(rows + t * dim, x, dim, distance, out + t, squares_at(t));
    }
}

// narrow_rows_asking as row_loops::with_rows_per_step calls it: the rows per
// step (1, 2 or 4) and the hint become constants of the loop.
template <class Acc>
struct NarrowRows {
    template <bool kSquares, int Hint, Index R, class Narrow>
    [[gnu::always_inline]] static void rows(const Narrow* rows, Index count, Index dim, const double* x, double* out,
                                            double* squares, std::uintptr_t distance) {
        narrow_rows_asking<Acc, kSquares, Hint, R>(rows, count, dim, x, out, squares, distance);
    }
};

// The narrow loops with the settings' rows per step for this width, as the double loops read them.
template <class Acc, bool kSquares, int Hint, class Narrow>
[[gnu::always_inline]] inline void narrow_rows_stepping(StreamSettings settings, const Narrow* rows, Index count,
                                                        Index dim, const double* x, double* out, double* squares) {
    settings.rows_per_step = rows_per_step_for(settings, dim);
    with_rows_per_step<NarrowRows<Acc>, kSquares, Hint>(settings, rows, count, dim, x, out, squares,
                                                        static_cast<std::uintptr_t>(row_distance_for(settings, dim)));
}

// The settings' hint for rows of this stored type.
inline PrefetchHint narrow_hint_of(const StreamSettings& settings, const float*) { return settings.float32_hint; }
inline PrefetchHint narrow_hint_of(const StreamSettings& settings, const Eigen::bfloat16*) {
    return settings.bfloat16_hint;
}

// The narrow loops with the settings' rows per step and distance, and with
// one of three hints (the settings' hint for the stored type: prefetcht0,
// prefetchnta or none); a table that stays in the caches is read with none.
// Only these, where the double loops have five, because each pair of hint
// and rows per step is its own copy of the loop in three instruction sets,
// and the double loops' fifteen pairs made this file take minutes to
// compile. The hint matters, and not the same way on every kind of CPU:
// lib/kernels/streaming.cpp says which setting each kind gets and why.
template <class Acc, bool kSquares, class Narrow>
[[gnu::always_inline]] inline void narrow_rows(const Narrow* rows, Index count, Index dim, const double* x,
                                               double* out, double* squares, bool prefetch) {
    const StreamSettings settings = stream_settings();
    const PrefetchHint hint = narrow_hint_of(settings, rows);
    if (!prefetch || hint == PrefetchHint::none) {
        narrow_rows_stepping<Acc, kSquares, static_cast<int>(PrefetchHint::none)>(settings, rows, count, dim, x, out,
                                                                                  squares);
    } else if (hint == PrefetchHint::nta) {
        narrow_rows_stepping<Acc, kSquares, static_cast<int>(PrefetchHint::nta)>(settings, rows, count, dim, x, out,
                                                                                 squares);
    } else {
        narrow_rows_stepping<Acc, kSquares, static_cast<int>(PrefetchHint::t0)>(settings, rows, count, dim, x, out,
                                                                                squares);
    }
}

template <class Narrow>
[[gnu::always_inline]] inline void narrow_widen_values(const Narrow* values, Index count, double* out) {
    Index i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        const LanePair v = load_widened_pair(values + i);
        std::memcpy(out + i, &v.lo, sizeof v.lo);
        std::memcpy(out + i + 4, &v.hi, sizeof v.hi);
    }
    for (; i < count; ++i) out[i] = widen(values[i]);
}

// The lanes as two Quads (see LanePair), for AVX2 and below.
EMBED_MULTIVERSION_BELOW_AVX512
void dot_rows_f32(const float* rows, Index count, Index dim, const double* x, double* out, bool prefetch) {
    narrow_rows<LanePair, false>(rows, count, dim, x, out, nullptr, prefetch);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_rows_bf16(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                   bool prefetch) {
    narrow_rows<LanePair, false>(rows, count, dim, x, out, nullptr, prefetch);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_and_square_rows_f32(const float* rows, Index count, Index dim, const double* x, double* out,
                             double* squares, bool prefetch) {
    narrow_rows<LanePair, true>(rows, count, dim, x, out, squares, prefetch);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_and_square_rows_bf16(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                              double* squares, bool prefetch) {
    narrow_rows<LanePair, true>(rows, count, dim, x, out, squares, prefetch);
}

// AVX-512: the lanes as one register, eight values widened by one vcvtps2pd
// (for bfloat16 after one 16-byte load and a shuffle): half the instructions
// of two Quads. float32 on two Quads also had GCC keep one of its eight
// accumulators on the stack, a store and a reload in every step's chain of
// additions, which made the loop slower than memory.
template <bool kSquares, class Narrow>
EMBED_TARGET_AVX512 void narrow_rows_avx512(const Narrow* rows, Index count, Index dim, const double* x,
                                             double* out, double* squares, bool prefetch) {
    narrow_rows<Lanes, kSquares>(rows, count, dim, x, out, squares, prefetch);
}

// Which of the two the CPU runs: the AVX-512 one wherever dot_all_pairs runs its AVX-512 kernel.
template <bool kSquares, class Narrow>
void narrow_rows_on_this_cpu(const Narrow* rows, Index count, Index dim, const double* x, double* out,
                             double* squares, bool prefetch) {
    if (all_pairs_on_avx512()) {
        narrow_rows_avx512<kSquares>(rows, count, dim, x, out, squares, prefetch);
    } else if constexpr (std::is_same_v<Narrow, Eigen::bfloat16>) {
        if constexpr (kSquares) {
            dot_and_square_rows_bf16(rows, count, dim, x, out, squares, prefetch);
        } else {
            dot_rows_bf16(rows, count, dim, x, out, prefetch);
        }
    } else if constexpr (kSquares) {
        dot_and_square_rows_f32(rows, count, dim, x, out, squares, prefetch);
    } else {
        dot_rows_f32(rows, count, dim, x, out, prefetch);
    }
}

EMBED_MULTIVERSION
void widen_values_f32(const float* values, Index count, double* out) { narrow_widen_values(values, count, out); }

EMBED_MULTIVERSION
void widen_values_bf16(const Eigen::bfloat16* values, Index count, double* out) {
    narrow_widen_values(values, count, out);
}

// The narrow GEMM for AVX2 and below: each panel of b is widened as it is
// packed (lane_class_gemm.hpp), so every stored value is read once and no
// widened copy is kept: widening blocks into a buffer first and then packing
// them was slower than the double GEMM on a widened table; this way is not.
EMBED_MULTIVERSION_BELOW_AVX512
void dot_all_pairs_f32(const double* a, Index n, const float* b, Index m, Index dim, double* out, Index out_stride) {
    lane_classes::dot_all_pairs_broadcast(a, n, b, m, dim, out, out_stride);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_all_pairs_bf16(const double* a, Index n, const Eigen::bfloat16* b, Index m, Index dim, double* out,
                        Index out_stride) {
    lane_classes::dot_all_pairs_broadcast(a, n, b, m, dim, out, out_stride);
}

EMBED_MULTIVERSION
void one_hot_times_table_f32(const float* table, Index vocab, Index dim, const Index* ids, Index n, double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::QuadBlocks>(table, vocab, dim, ids, n, out);
}

EMBED_MULTIVERSION
void one_hot_times_table_bf16(const Eigen::bfloat16* table, Index vocab, Index dim, const Index* ids, Index n,
                              double* out) {
    one_hot_gemm::one_hot_times_table<one_hot_gemm::QuadBlocks>(table, vocab, dim, ids, n, out);
}

// The AVX-512 GEMM widens each b row as it packs it (packed_gemm.hpp): every
// stored value is read once, and widening is exact, so every entry is the
// widened table's, bit for bit.
template <class Narrow>
struct WidenedLanes {
    [[gnu::always_inline]] static Lanes lanes(const Narrow* p) { return load_widened_lanes(p); }
};

template <class Narrow>
EMBED_TARGET_AVX512 void dot_all_pairs_avx512(const double* a, Index n, const Narrow* b, Index m, Index dim,
                                              double* out, Index out_stride) {
    packed_gemm::all_pairs<WidenedLanes<Narrow>>(a, n, b, m, dim, out, out_stride);
}

}  // namespace

void dot_all_pairs(const double* a, Index n, const float* b, Index m, Index dim, double* out, Index out_stride) {
    if (all_pairs_on_avx512()) {
        dot_all_pairs_avx512(a, n, b, m, dim, out, out_stride);
    } else {
        dot_all_pairs_f32(a, n, b, m, dim, out, out_stride);
    }
}

void dot_all_pairs(const double* a, Index n, const Eigen::bfloat16* b, Index m, Index dim, double* out,
                   Index out_stride) {
    if (all_pairs_on_avx512()) {
        dot_all_pairs_avx512(a, n, b, m, dim, out, out_stride);
    } else {
        dot_all_pairs_bf16(a, n, b, m, dim, out, out_stride);
    }
}

void one_hot_times_table(const float* table, Index vocab, Index dim, const Index* ids, Index n, double* out) {
    one_hot_times_table_f32(table, vocab, dim, ids, n, out);
}

Index one_hot_ids_per_block(const float*) { return one_hot_gemm::QuadBlocks::kIds; }

Index one_hot_ids_per_block(const Eigen::bfloat16*) { return one_hot_gemm::QuadBlocks::kIds; }

void one_hot_times_table(const Eigen::bfloat16* table, Index vocab, Index dim, const Index* ids, Index n,
                         double* out) {
    one_hot_times_table_bf16(table, vocab, dim, ids, n, out);
}

void dot_rows(const float* rows, Index count, Index dim, const double* x, double* out, bool prefetch) {
    narrow_rows_on_this_cpu<false>(rows, count, dim, x, out, nullptr, prefetch);
}

void dot_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out, bool prefetch) {
    narrow_rows_on_this_cpu<false>(rows, count, dim, x, out, nullptr, prefetch);
}

void dot_and_square_rows(const float* rows, Index count, Index dim, const double* x, double* out, double* squares,
                         bool prefetch) {
    narrow_rows_on_this_cpu<true>(rows, count, dim, x, out, squares, prefetch);
}

void dot_and_square_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                         double* squares, bool prefetch) {
    narrow_rows_on_this_cpu<true>(rows, count, dim, x, out, squares, prefetch);
}

void widen_values(const float* values, Index count, double* out) { widen_values_f32(values, count, out); }

void widen_values(const Eigen::bfloat16* values, Index count, double* out) {
    widen_values_bf16(values, count, out);
}

}  // namespace embed::detail
