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

// Two rows at a time, each with its own lanes: the order within a row is
// dot_kernel's, the second chain only hides the adder's latency.
EMBED_MULTIVERSION
void dot_rows(const double* rows, Index count, Index dim, const double* x, double* out) {
    Index t = 0;
    for (; t + 2 <= count; t += 2) {
        const double* r0 = rows + t * dim;
        const double* r1 = r0 + dim;
        Lanes acc0 = {};
        Lanes acc1 = {};
        Index i = 0;
        for (; i + kLanes <= dim; i += kLanes) {
            const Lanes h = load_lanes(x + i);
            acc0 += load_lanes(r0 + i) * h;
            acc1 += load_lanes(r1 + i) * h;
        }
        out[t] = finish_lanes(acc0, r0, x, i, dim);
        out[t + 1] = finish_lanes(acc1, r1, x, i, dim);
    }
    for (; t < count; ++t) out[t] = dot_kernel(rows + t * dim, x, dim);
}

EMBED_MULTIVERSION
void dot_and_square_rows(const double* rows, Index count, Index dim, const double* x, double* out,
                         double* squares) {
    for (Index t = 0; t < count; ++t) {
        const double* r = rows + t * dim;
        Lanes acc = {};
        Lanes sq = {};
        Index i = 0;
        for (; i + kLanes <= dim; i += kLanes) {
            const Lanes v = load_lanes(r + i);
            acc += v * load_lanes(x + i);
            sq += v * v;
        }
        out[t] = finish_lanes(acc, r, x, i, dim);
        squares[t] = finish_lanes(sq, r, r, i, dim);
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
