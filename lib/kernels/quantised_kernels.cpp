#include "kernels/quantised_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>

#include "kernels/base.hpp"
#include "kernels/block_decoders.hpp"
#include "kernels/multiversion.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/row_loops.hpp"

// The lanes are 32- and 64-byte vectors passed between always-inlined functions of this file, so the calling
// convention GCC warns about never reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

using namespace row_loops;

// The two ways the narrow row loops hold dot_kernel's eight lanes (narrow_kernels.cpp says why each):
// WholeLanes, one 8-double register, for AVX-512; TwoHalves, two Quads, for AVX2 and below. Both hold lane
// j in position j and add the same products in the same order.
struct WholeLanes {
    using Acc = Lanes;
    [[gnu::always_inline]] static Acc x(const double* p) {
        Acc v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    // Eight decoded float32s widened value by value: one vcvtps2pd.
    [[gnu::always_inline]] static Acc values(const float* p) {
        return Acc{widen(p[0]), widen(p[1]), widen(p[2]), widen(p[3]),
                   widen(p[4]), widen(p[5]), widen(p[6]), widen(p[7])};
    }
    // Values 8h to 8h + 7 of a decoded chunk, widened: one vcvtps2pd of a 32-byte half. Written with the
    // intrinsics where this is compiled for AVX-512: from the elements, GCC converted four at a time and
    // put the halves together. widen_into is not always_inline, for the reason bf16_as_floats
    // (narrow_kernels.cpp) gives, and its result goes out through a reference, since Clang will not return
    // a 64-byte vector from it to callers built for less; inlined once its callers are inlined into the
    // AVX-512 loop, where the result stays in a register.
#if defined(__x86_64__) && (EMBED_MULTIVERSIONED || defined(__AVX512F__))
    EMBED_TARGET_AVX512 static void widen_into(const Floats16& v, int h, Acc& out) {
        const __m256 half = h == 0 ? __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
                                   : __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
        // The zero-masked form with every lane kept: the same conversion, and GCC 12 finds no undefined
        // register in it to warn about (_mm512_cvtps_pd's).
        out = _mm512_maskz_cvtps_pd(0xFF, half);
    }
    [[gnu::always_inline]] static Acc values(const Floats16& v, int h) {
        Acc out;
        widen_into(v, h, out);
        return out;
    }
#else
    [[gnu::always_inline]] static Acc values(const Floats16& v, int h) {
        const int f = 8 * h;
        return Acc{widen(v[f]),     widen(v[f + 1]), widen(v[f + 2]), widen(v[f + 3]),
                   widen(v[f + 4]), widen(v[f + 5]), widen(v[f + 6]), widen(v[f + 7])};
    }
#endif
    [[gnu::always_inline]] static void add(Acc& acc, const Acc& a, const Acc& b) { acc += a * b; }
    [[gnu::always_inline]] static double sum(const Acc& acc) {
        return sum_pair({__builtin_shufflevector(acc, acc, 0, 1, 2, 3), __builtin_shufflevector(acc, acc, 4, 5, 6, 7)});
    }
};

// Values first to first + 3 of a decoded chunk, widened value by value.
[[gnu::always_inline]] inline Quad widen_quad(const Floats16& v, int first) {
    return Quad{widen(v[first]), widen(v[first + 1]), widen(v[first + 2]), widen(v[first + 3])};
}

struct TwoHalves {
    using Acc = LanePair;
    [[gnu::always_inline]] static Acc x(const double* p) { return load_pair(p); }
    [[gnu::always_inline]] static Acc values(const float* p) { return {load_widened_quad(p), load_widened_quad(p + 4)}; }
    [[gnu::always_inline]] static Acc values(const Floats16& v, int h) {
        return {widen_quad(v, 8 * h), widen_quad(v, 8 * h + 4)};
    }
    [[gnu::always_inline]] static void add(Acc& acc, const Acc& a, const Acc& b) { add_products(acc, a, b); }
    [[gnu::always_inline]] static double sum(const Acc& acc) { return sum_pair(acc); }
};

// R rows of type T side by side, each in dot_kernel's order: block by block, each row's block decoded into
// a buffer in L1 and its values, eight at a time, multiplied by x's and added into the row's lanes (lane j
// gets values j, j + 8, ... in turn); then the lanes pairwise. dim is whole blocks, so whole blocks of
// eight: no tail. R rows at once give R independent chains of additions, and x's eight values are loaded
// once for all of them.
template <class Kind, bool kSquares, Index R, ElementType T>
[[gnu::always_inline]] inline void row_group(const unsigned char* rows, Index row_bytes, Index dim, const double* x,
                                             double* out, double* squares_out) {
    using Block = QuantBlock<T>;
    using Acc = typename Kind::Acc;
    Acc dot[R] = {};
    Acc squares[R] = {};
    alignas(64) float values[R][Block::kValues];
    for (Index first = 0, at = 0; first < dim; first += Block::kValues, at += Block::kBytes) {
        for (Index q = 0; q < R; ++q) Block::decode(rows + q * row_bytes + at, values[q]);
        for (Index j = 0; j < Block::kValues; j += kLanes) {
            const Acc xv = Kind::x(x + first + j);
            for (Index q = 0; q < R; ++q) {
                const Acc v = Kind::values(values[q] + j);
                Kind::add(dot[q], v, xv);
                if constexpr (kSquares) Kind::add(squares[q], v, v);
            }
        }
    }
    for (Index q = 0; q < R; ++q) {
        out[q] = Kind::sum(dot[q]);
        if constexpr (kSquares) squares_out[q] = Kind::sum(squares[q]);
    }
}

// row_group for the types with a chunk decoder (QuantChunks, block_decoders.hpp): the same products in the
// same order, each chunk of sixteen values decoded in a vector register and widened from there.
template <class Kind, bool kSquares, Index R, ElementType T>
[[gnu::always_inline]] inline void row_group_in_registers(const unsigned char* rows, Index row_bytes, Index dim,
                                                          const double* x, double* out, double* squares_out) {
    using Block = QuantBlock<T>;
    using Acc = typename Kind::Acc;
    Acc dot[R] = {};
    Acc squares[R] = {};
    for (Index first = 0, at = 0; first < dim; first += Block::kValues, at += Block::kBytes) {
        const unsigned char* block[R];
        for (Index q = 0; q < R; ++q) block[q] = rows + q * row_bytes + at;
        // Each row's scales, worked out once per block.
        QuantChunks<T> chunks[R];
        for (Index q = 0; q < R; ++q) chunks[q] = QuantChunks<T>(block[q]);
        // Unrolled, so that each chunk's offsets, nibble and shifts are constants.
#pragma GCC unroll 16
        for (Index c = 0; c < Block::kValues / 16; ++c) {
            Floats16 v[R];
            for (Index q = 0; q < R; ++q) v[q] = chunks[q].chunk(block[q], c);
            for (int h = 0; h < 2; ++h) {
                const Acc xv = Kind::x(x + first + 16 * c + 8 * h);
                for (Index q = 0; q < R; ++q) {
                    const Acc values = Kind::values(v[q], h);
                    Kind::add(dot[q], values, xv);
                    if constexpr (kSquares) Kind::add(squares[q], values, values);
                }
            }
        }
    }
    for (Index q = 0; q < R; ++q) {
        out[q] = Kind::sum(dot[q]);
        if constexpr (kSquares) squares_out[q] = Kind::sum(squares[q]);
    }
}

/// The types decoded in registers.
template <ElementType T>
constexpr bool kInRegisters = T == ElementType::q8_0 || T == ElementType::q4_k || T == ElementType::q6_k;

/// Rows read side by side.
constexpr Index kRowsPerStep = 4;

// count rows of type T, kRowsPerStep at a time, then the rest one at a time.
template <class Kind, bool kSquares, ElementType T>
[[gnu::always_inline]] inline void rows_of_type(const std::byte* rows, Index count, Index dim, const double* x,
                                                double* out, double* squares) {
    const auto* r = reinterpret_cast<const unsigned char*>(rows);
    const Index row_bytes = dim / QuantBlock<T>::kValues * QuantBlock<T>::kBytes;
    // squares is null when kSquares is false, and must not be offset then.
    const auto squares_at = [squares](Index t) __attribute__((always_inline)) {
        return kSquares ? squares + t : nullptr;
    };
    Index t = 0;
    for (; t + kRowsPerStep <= count; t += kRowsPerStep) {
        if constexpr (kInRegisters<T>) {
            row_group_in_registers<Kind, kSquares, kRowsPerStep, T>(r + t * row_bytes, row_bytes, dim, x, out + t,
                                                                    squares_at(t));
        } else {
            row_group<Kind, kSquares, kRowsPerStep, T>(r + t * row_bytes, row_bytes, dim, x, out + t, squares_at(t));
        }
    }
    for (; t < count; ++t) {
        if constexpr (kInRegisters<T>) {
            row_group_in_registers<Kind, kSquares, 1, T>(r + t * row_bytes, row_bytes, dim, x, out + t, squares_at(t));
        } else {
            row_group<Kind, kSquares, 1, T>(r + t * row_bytes, row_bytes, dim, x, out + t, squares_at(t));
        }
    }
}

template <class Kind, bool kSquares>
[[gnu::always_inline]] inline void quantised_rows(ElementType type, const std::byte* rows, Index count, Index dim,
                                                  const double* x, double* out, double* squares) {
    switch (type) {
        case ElementType::q4_0: return rows_of_type<Kind, kSquares, ElementType::q4_0>(rows, count, dim, x, out, squares);
        case ElementType::q4_1: return rows_of_type<Kind, kSquares, ElementType::q4_1>(rows, count, dim, x, out, squares);
        case ElementType::q5_0: return rows_of_type<Kind, kSquares, ElementType::q5_0>(rows, count, dim, x, out, squares);
        case ElementType::q5_1: return rows_of_type<Kind, kSquares, ElementType::q5_1>(rows, count, dim, x, out, squares);
        case ElementType::q8_0: return rows_of_type<Kind, kSquares, ElementType::q8_0>(rows, count, dim, x, out, squares);
        case ElementType::q2_k: return rows_of_type<Kind, kSquares, ElementType::q2_k>(rows, count, dim, x, out, squares);
        case ElementType::q3_k: return rows_of_type<Kind, kSquares, ElementType::q3_k>(rows, count, dim, x, out, squares);
        case ElementType::q4_k: return rows_of_type<Kind, kSquares, ElementType::q4_k>(rows, count, dim, x, out, squares);
        case ElementType::q5_k: return rows_of_type<Kind, kSquares, ElementType::q5_k>(rows, count, dim, x, out, squares);
        case ElementType::q6_k: return rows_of_type<Kind, kSquares, ElementType::q6_k>(rows, count, dim, x, out, squares);
        case ElementType::f64:
        case ElementType::f32:
        case ElementType::f16:
        case ElementType::bf16: break;
    }
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_rows_below_avx512(ElementType type, const std::byte* rows, Index count, Index dim, const double* x,
                           double* out) {
    quantised_rows<TwoHalves, false>(type, rows, count, dim, x, out, nullptr);
}

EMBED_MULTIVERSION_BELOW_AVX512
void dot_and_square_rows_below_avx512(ElementType type, const std::byte* rows, Index count, Index dim,
                                      const double* x, double* out, double* squares) {
    quantised_rows<TwoHalves, true>(type, rows, count, dim, x, out, squares);
}

template <bool kSquares>
EMBED_TARGET_AVX512 void rows_avx512(ElementType type, const std::byte* rows, Index count, Index dim, const double* x,
                                     double* out, double* squares) {
    quantised_rows<WholeLanes, kSquares>(type, rows, count, dim, x, out, squares);
}

}  // namespace

// AVX-512 wherever the narrow row loops run theirs (all_pairs_on_avx512).
void dot_quantised_rows(ElementType type, const std::byte* rows, Index count, Index dim, const double* x,
                        double* out) {
    if (all_pairs_on_avx512()) {
        rows_avx512<false>(type, rows, count, dim, x, out, nullptr);
    } else {
        dot_rows_below_avx512(type, rows, count, dim, x, out);
    }
}

void dot_and_square_quantised_rows(ElementType type, const std::byte* rows, Index count, Index dim,
                                   const double* x, double* out, double* squares) {
    if (all_pairs_on_avx512()) {
        rows_avx512<true>(type, rows, count, dim, x, out, squares);
    } else {
        dot_and_square_rows_below_avx512(type, rows, count, dim, x, out, squares);
    }
}

}  // namespace embed::detail
