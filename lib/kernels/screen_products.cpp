#include "kernels/screen_products.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#include "kernels/multiversion.hpp"

// The vectors are internal and always inlined, so the calling convention GCC warns about never reaches
// another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

template <class Scalar, int W>
struct VectorOf {
    typedef Scalar type __attribute__((vector_size(W * sizeof(Scalar))));
};

template <int W>
using FloatVector = VectorOf<float, W>;

// W stored values as W float32s: a copy for float32, the top halves of float32s for bfloat16, one rounding
// to nearest for double.
template <int W>
[[gnu::always_inline]] inline typename FloatVector<W>::type load_floats(const float* p) {
    typename FloatVector<W>::type v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <int W>
[[gnu::always_inline]] inline typename FloatVector<W>::type load_floats(const double* p) {
    typename VectorOf<double, W>::type v;
    std::memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, typename FloatVector<W>::type);
}

template <int W>
[[gnu::always_inline]] inline typename FloatVector<W>::type load_floats(const Eigen::bfloat16* p) {
    using Words = typename VectorOf<std::uint32_t, W>::type;
    typename VectorOf<std::uint16_t, W>::type bits;
    std::memcpy(&bits, p, sizeof bits);
    const Words words = __builtin_convertvector(bits, Words) << 16;
    typename FloatVector<W>::type v;
    std::memcpy(&v, &words, sizeof v);
    return v;
}

inline float to_float(float value) { return value; }
inline float to_float(double value) { return static_cast<float>(value); }
inline float to_float(Eigen::bfloat16 value) { return std::bit_cast<float>(std::uint32_t{value.value} << 16); }

// The products of PR probes and RR rows, from probes[0] and rows[0] on: each pair's lanes, then its lanes by
// halves, then its tail values, the same for every pair whatever PR and RR are.
template <int W, int PR, int RR, class Stored>
[[gnu::always_inline]] inline void block_products(const float* probes, const Stored* rows, Index dim, float* out,
                                                  Index out_stride) {
    using Vec = typename FloatVector<W>::type;
    Vec acc[PR][RR] = {};
    Index c = 0;
    for (; c + W <= dim; c += W) {
        Vec row[RR];
        for (int r = 0; r < RR; ++r) row[r] = load_floats<W>(rows + r * dim + c);
        for (int p = 0; p < PR; ++p) {
            const Vec probe = load_floats<W>(probes + p * dim + c);
            for (int r = 0; r < RR; ++r) acc[p][r] += probe * row[r];
        }
    }
    for (int p = 0; p < PR; ++p) {
        for (int r = 0; r < RR; ++r) {
            float lanes[W];
            std::memcpy(lanes, &acc[p][r], sizeof lanes);
            for (int half = W / 2; half >= 1; half /= 2) {
                for (int lane = 0; lane < half; ++lane) lanes[lane] += lanes[lane + half];
            }
            float sum = lanes[0];
            for (Index t = c; t < dim; ++t) sum += probes[p * dim + t] * to_float(rows[r * dim + t]);
            out[p * out_stride + r] = sum;
        }
    }
}

// Every pair, RR rows at a time (each group of rows met by every probe while it is in L1), PR probes at a time.
template <int W, int PR, int RR, class Stored>
[[gnu::always_inline]] inline void all_products(const float* probes, Index m, const Stored* rows, Index count,
                                                Index dim, float* out, Index out_stride) {
    Index t = 0;
    for (; t + RR <= count; t += RR) {
        Index p = 0;
        for (; p + PR <= m; p += PR) {
            block_products<W, PR, RR>(probes + p * dim, rows + t * dim, dim, out + p * out_stride + t, out_stride);
        }
        for (; p < m; ++p) {
            block_products<W, 1, RR>(probes + p * dim, rows + t * dim, dim, out + p * out_stride + t, out_stride);
        }
    }
    for (; t < count; ++t) {
        Index p = 0;
        for (; p + PR <= m; p += PR) {
            block_products<W, PR, 1>(probes + p * dim, rows + t * dim, dim, out + p * out_stride + t, out_stride);
        }
        for (; p < m; ++p) {
            block_products<W, 1, 1>(probes + p * dim, rows + t * dim, dim, out + p * out_stride + t, out_stride);
        }
    }
}

bool on_avx512() {
#if EMBED_MULTIVERSIONED
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    return avx512;
#elif defined(__AVX512F__)
    return true;
#else
    return false;
#endif
}

// Per stored type: AVX-512 with 16 accumulators of 16 floats, 4 rows and a probe in registers; AVX2 and the
// baseline with 8 accumulators of 8 floats (one AVX2 register each). Plain functions, as target_clones wants.
#define EMBED_SCREEN_PRODUCTS(Stored, name)                                                                        \
    EMBED_TARGET_AVX512 void name##_avx512(const float* probes, Index m, const Stored* rows, Index count,          \
                                           Index dim, float* out, Index out_stride) {                             \
        all_products<16, 4, 4>(probes, m, rows, count, dim, out, out_stride);                                    \
    }                                                                                                             \
    EMBED_MULTIVERSION_BELOW_AVX512 void name##_below_avx512(const float* probes, Index m, const Stored* rows,    \
                                                             Index count, Index dim, float* out,                 \
                                                             Index out_stride) {                                 \
        all_products<8, 2, 4>(probes, m, rows, count, dim, out, out_stride);                                     \
    }                                                                                                             \
    void name(const float* probes, Index m, const Stored* rows, Index count, Index dim, float* out,               \
              Index out_stride) {                                                                                 \
        if (on_avx512()) {                                                                                        \
            name##_avx512(probes, m, rows, count, dim, out, out_stride);                                          \
        } else {                                                                                                  \
            name##_below_avx512(probes, m, rows, count, dim, out, out_stride);                                    \
        }                                                                                                         \
    }
EMBED_SCREEN_PRODUCTS(float, float_products)
EMBED_SCREEN_PRODUCTS(Eigen::bfloat16, bfloat16_products)
EMBED_SCREEN_PRODUCTS(double, double_products)
#undef EMBED_SCREEN_PRODUCTS

}  // namespace

void screen_products(const float* probes, Index m, const float* rows, Index count, Index dim, float* out,
                     Index out_stride) {
    float_products(probes, m, rows, count, dim, out, out_stride);
}

void screen_products(const float* probes, Index m, const Eigen::bfloat16* rows, Index count, Index dim, float* out,
                     Index out_stride) {
    bfloat16_products(probes, m, rows, count, dim, out, out_stride);
}

void screen_products(const float* probes, Index m, const double* rows, Index count, Index dim, float* out,
                     Index out_stride) {
    double_products(probes, m, rows, count, dim, out, out_stride);
}

}  // namespace embed::detail
