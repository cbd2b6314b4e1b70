#include "kernels.hpp"

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

#define EMBED_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))

// Eight rows at a time, each with its own lanes: the order within a row is
// dot_kernel's; the other rows only keep more memory streams in flight,
// which is what lets two cores reach the machine's bandwidth (measured: 4
// rows and 2 rows stream 15-30 % slower).
EMBED_MULTIVERSION
void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out) {
    constexpr Index kRows = 8;
    Index t = 0;
    for (; t + kRows <= count; t += kRows) {
        const double* r = rows + t * dim;
        Lanes acc[kRows] = {};
        Index i = 0;
        for (; i + kLanes <= dim; i += kLanes) {
            const Lanes h = load_lanes(x + i);
            for (Index q = 0; q < kRows; ++q) acc[q] += load_lanes(r + q * dim + i) * h;
        }
        for (Index q = 0; q < kRows; ++q) out[t + q] = finish_lanes(acc[q], r + q * dim, x, i, dim);
    }
    for (; t < count; ++t) out[t] = dot_kernel(rows + t * dim, x, dim);
}

// Eight rows at a time, a dot and a square sum each, for the same reason.
EMBED_MULTIVERSION
void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares) {
    constexpr Index kRows = 8;
    Index t = 0;
    for (; t + kRows <= count; t += kRows) {
        const double* r = rows + t * dim;
        Lanes acc[kRows] = {};
        Lanes sq[kRows] = {};
        Index i = 0;
        for (; i + kLanes <= dim; i += kLanes) {
            const Lanes h = load_lanes(x + i);
            for (Index q = 0; q < kRows; ++q) {
                const Lanes v = load_lanes(r + q * dim + i);
                acc[q] += v * h;
                sq[q] += v * v;
            }
        }
        for (Index q = 0; q < kRows; ++q) {
            out[t + q] = finish_lanes(acc[q], r + q * dim, x, i, dim);
            squares[t + q] = finish_lanes(sq[q], r + q * dim, r + q * dim, i, dim);
        }
    }
    for (; t < count; ++t) {
        const double* r = rows + t * dim;
        out[t] = dot_kernel(r, x, dim);
        squares[t] = dot_kernel(r, r, dim);
    }
}

// A 4 x 4 block of dot products per step: every b row loaded is used against
// four a rows and the other way round, so the adders, not the loads, set the
// pace. Each of the 16 sums keeps dot_kernel's order.
EMBED_MULTIVERSION
void dot_all_pairs(const double* a, Index n, const double* b, Index m, Index dim, double* out, Index out_stride) {
    constexpr Index kBlock = 4;
    const Index whole = dim - dim % kLanes;
    Index t = 0;
    for (; t + kBlock <= m; t += kBlock) {
        const double* b0 = b + t * dim;
        Index i = 0;
        for (; i + kBlock <= n; i += kBlock) {
            const double* a0 = a + i * dim;
            Lanes acc[kBlock][kBlock] = {};
            for (Index c = 0; c < whole; c += kLanes) {
                Lanes bv[kBlock];
                for (Index q = 0; q < kBlock; ++q) bv[q] = load_lanes(b0 + q * dim + c);
                for (Index p = 0; p < kBlock; ++p) {
                    const Lanes av = load_lanes(a0 + p * dim + c);
                    for (Index q = 0; q < kBlock; ++q) acc[p][q] += av * bv[q];
                }
            }
            for (Index p = 0; p < kBlock; ++p) {
                for (Index q = 0; q < kBlock; ++q) {
                    out[(i + p) * out_stride + t + q] =
                        finish_lanes(acc[p][q], a0 + p * dim, b0 + q * dim, whole, dim);
                }
            }
        }
        for (; i < n; ++i) {
            for (Index q = 0; q < kBlock; ++q) out[i * out_stride + t + q] = dot_kernel(a + i * dim, b0 + q * dim, dim);
        }
    }
    for (; t < m; ++t) {
        for (Index i = 0; i < n; ++i) out[i * out_stride + t] = dot_kernel(a + i * dim, b + t * dim, dim);
    }
}

#undef EMBED_MULTIVERSION

}  // namespace embed::detail
