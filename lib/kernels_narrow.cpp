#include "kernels_narrow.hpp"

#include <cstdint>
#include <cstring>

#include "kernels.hpp"
#include "multiversion.hpp"
#include "narrow_values.hpp"

// load_widened returns a 64-byte vector; it is internal and always inlined, so
// the calling convention GCC warns about never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

// Eight stored values as one vector, before widening.
typedef float Floats __attribute__((vector_size(kLanes * sizeof(float))));
typedef std::uint16_t Halves __attribute__((vector_size(kLanes * sizeof(std::uint16_t))));
typedef std::uint32_t Words __attribute__((vector_size(kLanes * sizeof(std::uint32_t))));

inline constexpr Index kLineBytes = 64;

// How far ahead of the row being read the next lines are asked for: the
// same distance as the double kernels (lib/kernels.cpp measured 2, 4 and
// 8 KiB alike). The address is computed as an integer because it may lie past
// the table's end, where prefetching is harmless but pointer arithmetic is not.
inline constexpr std::uintptr_t kNarrowPrefetchBytes = 4096;

[[gnu::always_inline]] inline void prefetch_ahead(const void* p) {
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + kNarrowPrefetchBytes), 0,
                       3);
}

[[gnu::always_inline]] inline Lanes load_lanes(const double* p) {
    Lanes v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Eight float32 values (32 bytes) widened to eight doubles.
[[gnu::always_inline]] inline Lanes load_widened(const float* p) {
    Floats v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, Lanes);
}

// Eight bfloat16 values (16 bytes) widened to eight doubles: each is the top
// half of a float32, so zero-extend, shift into place, then widen the floats.
[[gnu::always_inline]] inline Lanes load_widened(const Eigen::bfloat16* p) {
    Halves halves;
    std::memcpy(&halves, p, sizeof halves);
    const Words words = __builtin_convertvector(halves, Words) << 16;
    Floats floats;
    std::memcpy(&floats, &words, sizeof floats);
    return __builtin_convertvector(floats, Lanes);
}

/// A row's dot with x and, if asked, with itself.
struct RowSums {
    double dot;
    double squares;
};

// dot_kernel on a narrow row: the row read from its start as one stream, eight
// values at a time, one prefetch per 64 bytes read; the tail into lanes 0, 1,
// ...; then the lanes pairwise. Unlike the double rows, a narrow row is not
// realigned to a cache line first: eight floats are half a line and eight
// bfloat16 a quarter, so a load straddles a line boundary at most every other
// load, and a realignment would cost a rotation per row.
template <bool kSquares, class Narrow>
[[gnu::always_inline]] inline RowSums narrow_row_sums(const Narrow* r, const double* x, Index dim) {
    constexpr Index kValuesPerLine = kLineBytes / static_cast<Index>(sizeof(Narrow));
    Lanes dot = {};
    Lanes squares = {};
    Index i = 0;
    for (; i + kValuesPerLine <= dim; i += kValuesPerLine) {
        prefetch_ahead(r + i);
        for (Index j = i; j < i + kValuesPerLine; j += kLanes) {
            const Lanes v = load_widened(r + j);
            dot += v * load_lanes(x + j);
            if constexpr (kSquares) squares += v * v;
        }
    }
    for (; i + kLanes <= dim; i += kLanes) {
        const Lanes v = load_widened(r + i);
        dot += v * load_lanes(x + i);
        if constexpr (kSquares) squares += v * v;
    }
    if (i == dim) return {sum_lanes(dot), kSquares ? sum_lanes(squares) : 0.0};
    double dot_lane[kLanes];
    double square_lane[kLanes];
    std::memcpy(dot_lane, &dot, sizeof dot_lane);
    std::memcpy(square_lane, &squares, sizeof square_lane);
    for (Index j = 0; i < dim; ++i, ++j) {
        const double v = widen(r[i]);
        dot_lane[j] += v * x[i];
        if constexpr (kSquares) square_lane[j] += v * v;
    }
    return {sum_lanes_pairwise(dot_lane), kSquares ? sum_lanes_pairwise(square_lane) : 0.0};
}

// The row loops, compiled for AVX-512, AVX2 and the baseline (multiversion.hpp),
// one row at a time, start to end, as the double ones.
template <class Narrow>
[[gnu::always_inline]] inline void narrow_dot_rows(const Narrow* rows, Index count, Index dim, const double* x,
                                                   double* out) {
    for (Index t = 0; t < count; ++t) out[t] = narrow_row_sums<false>(rows + t * dim, x, dim).dot;
}

template <class Narrow>
[[gnu::always_inline]] inline void narrow_dot_and_square_rows(const Narrow* rows, Index count, Index dim,
                                                              const double* x, double* out, double* squares) {
    for (Index t = 0; t < count; ++t) {
        const RowSums sums = narrow_row_sums<true>(rows + t * dim, x, dim);
        out[t] = sums.dot;
        squares[t] = sums.squares;
    }
}

template <class Narrow>
[[gnu::always_inline]] inline void narrow_widen_values(const Narrow* values, Index count, double* out) {
    Index i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        const Lanes v = load_widened(values + i);
        std::memcpy(out + i, &v, sizeof v);
    }
    for (; i < count; ++i) out[i] = widen(values[i]);
}

EMBED_MULTIVERSION
void dot_rows_f32(const float* rows, Index count, Index dim, const double* x, double* out) {
    narrow_dot_rows(rows, count, dim, x, out);
}

EMBED_MULTIVERSION
void dot_rows_bf16(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out) {
    narrow_dot_rows(rows, count, dim, x, out);
}

EMBED_MULTIVERSION
void dot_and_square_rows_f32(const float* rows, Index count, Index dim, const double* x, double* out,
                             double* squares) {
    narrow_dot_and_square_rows(rows, count, dim, x, out, squares);
}

EMBED_MULTIVERSION
void dot_and_square_rows_bf16(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                              double* squares) {
    narrow_dot_and_square_rows(rows, count, dim, x, out, squares);
}

EMBED_MULTIVERSION
void widen_values_f32(const float* values, Index count, double* out) { narrow_widen_values(values, count, out); }

EMBED_MULTIVERSION
void widen_values_bf16(const Eigen::bfloat16* values, Index count, double* out) {
    narrow_widen_values(values, count, out);
}

}  // namespace

void dot_rows(const float* rows, Index count, Index dim, const double* x, double* out) {
    dot_rows_f32(rows, count, dim, x, out);
}

void dot_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out) {
    dot_rows_bf16(rows, count, dim, x, out);
}

void dot_and_square_rows(const float* rows, Index count, Index dim, const double* x, double* out, double* squares) {
    dot_and_square_rows_f32(rows, count, dim, x, out, squares);
}

void dot_and_square_rows(const Eigen::bfloat16* rows, Index count, Index dim, const double* x, double* out,
                         double* squares) {
    dot_and_square_rows_bf16(rows, count, dim, x, out, squares);
}

void widen_values(const float* values, Index count, double* out) { widen_values_f32(values, count, out); }

void widen_values(const Eigen::bfloat16* values, Index count, double* out) {
    widen_values_bf16(values, count, out);
}

}  // namespace embed::detail
