// The neighbourhoods' cosines screened in float32, then rescored in double where the screen cannot decide.
//
// For a probe x and a row y of one table (both as the double path sees them: stored values widened, (d)),
// the double path's score is c = fl(D / fl(N_x N_y)), D = dot_kernel(x, y), N = sqrt(dot_kernel(row, row))
// (measure_rows' norms), and 0.0 when N_x or N_y is 0. The screen computes S, the float32 dot product of x and
// y each rounded to float32, and bounds |S - D| <= E. With u = 2^-24 (float32), eta = 2^-150 (half the smallest
// float32 subnormal), X >= |x|_2 and Y >= |y|_2, and M = sum |x_i y_i| <= X Y (Cauchy-Schwarz):
//   - rounding the inputs: |x^_i - x_i| <= u |x_i| + eta, so |sum x^_i y^_i - sum x_i y_i|
//     <= (2u + u^2) M + eta (1 + u) sqrt(d) (X + Y) + d eta^2;
//   - the float32 sum of d rounded products, in any order (lanes, their sum, the tail) and whatever the
//     instruction set: each product is rounded once (relative u, or absolute eta where it underflows) and takes
//     part in at most d - 1 rounded additions (an addition of an exact 0 rounds nothing), so it errs by at most
//     gamma_d sum |x^_i y^_i| + d eta (1 + gamma_d), gamma_d = d u / (1 - d u);
//   - the double path itself: |D - sum x_i y_i| <= gamma53_d M + d 2^-1074 (its products underflow at 2^-1075).
// With d u <= 1/100 these add up to at most
//     E = 1.05 (d + 2) u X Y + 2^-140 (sqrt(d) (X + Y) + d),
// and the screen uses 1.1 E, which also covers rounding E and S +- E in double (each within 2^-50 of E).
// X comes from measure_rows' norm N: dot_kernel(x, x) errs by at most gamma53_d |x|^2 + d 2^-1075 and the root
// by half an ulp, so |x| <= N (1 + 2^-20) + 2^-500 for every d the screen takes (d u <= 1/100).
// Division rounds monotonically, so with den = fl(N_x N_y) positive and finite, D in [S - 1.1 E, S + 1.1 E]
// puts c in [lo, hi] = [fl((S - 1.1 E) / den), fl((S + 1.1 E) / den)]; a zero norm gives lo = hi = 0.0; a
// den that is 0 or infinite (norms far apart in scale) gives lo = -inf, hi = +inf, so that row is rescored.
//
// The selection: L is the count-th largest lo among the rows other than the probe. A row with hi < L has
// at least count rows whose double cosines are >= their lo >= L > hi >= its own, strictly better whatever
// the tie rule; so every row of the double path's top count has hi >= L. Those candidates are rescored with
// the double path's own arithmetic (dot_kernel on the widened values, the same norms and division), and
// top_indices ranks them with the same tie rule, giving the double path's list bit for bit.
//
// The bound needs every input finite and no float32 overflow: every paired value finite with
// max |v|^2 d <= 2^120 (so every float32 partial sum stays below 2^121), and d u <= 1/100. A table that
// fails this (NaN, infinity, values past 2^60, rows wider than 167772) takes the double path.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>

#include "compare/measures.hpp"
#include "kernels/base.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/screen_products.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

constexpr double kFloatUnit = 0x1p-24;
constexpr double kAbsoluteSlack = 0x1p-140;
constexpr double kLargestSquareTimesWidth = 0x1p120;

template <class View>
constexpr bool is_quantised_view = std::is_same_v<std::decay_t<View>, QuantisedTable>;

Index rows_of(const AnyTableView& table) {
    return std::visit([](const auto& view) { return view.rows(); }, table);
}

Index cols_of(const AnyTableView& table) {
    return std::visit([](const auto& view) { return view.cols(); }, table);
}

// An upper bound on the exact 2-norm of a row whose measured norm is `norm` (see above).
double norm_bound(double norm) { return norm * (1.0 + 0x1p-20) + 0x1p-500; }

// The screened scores of probes (m, d, double) against every row of table: out (m, V) float32.
void screen_chunk(const AnyTableView& table, const Table& probes, std::vector<float>& probes_f32,
                  std::vector<float>& out) {
    const Index m = probes.rows();
    const Index dim = probes.cols();
    const Index vocab = rows_of(table);
    probes_f32.resize(static_cast<std::size_t>(m * dim));
    for (Index i = 0; i < m * dim; ++i) probes_f32[static_cast<std::size_t>(i)] = static_cast<float>(probes.data()[i]);
    out.resize(static_cast<std::size_t>(m * vocab));
    std::visit(
        [&](const auto& view) {
            if constexpr (!is_quantised_view<decltype(view)>) {
                parallel_for(vocab, m * dim, [&](Index begin, Index end) {
                    screen_products(probes_f32.data(), m, view.data() + begin * dim, end - begin, dim,
                                    out.data() + begin, vocab);
                });
            }
        },
        table);
}

// The double path's dot product of a widened probe and row id of table: dot_kernel on the widened values.
double exact_dot(const AnyTableView& table, const double* probe, Index id, std::vector<double>& widened) {
    return std::visit(
        [&](const auto& view) -> double {
            if constexpr (is_quantised_view<decltype(view)>) {
                return 0.0;  // never reached: screen_covers keeps quantised tables on the double path
            } else {
                using Scalar = typename std::decay_t<decltype(view)>::Scalar;
                const Index dim = view.cols();
                const Scalar* row = view.data() + id * dim;
                if constexpr (std::is_same_v<Scalar, double>) {
                    return dot_kernel(probe, row, dim);
                } else {
                    widened.resize(static_cast<std::size_t>(dim));
                    widen_values(row, dim, widened.data());
                    return dot_kernel(probe, widened.data(), dim);
                }
            }
        },
        table);
}

// What one thread keeps from probe to probe.
struct ProbeScratch {
    std::vector<double> low;
    std::vector<double> high;
    std::vector<Index> candidates;
    std::vector<double> candidate_score;
    std::vector<Index> candidate_key;
    std::vector<double> widened;
};

// The count nearest pairs of one probe (pair index `probe`, row q of probes and of screened).
std::vector<Index> nearest_of_probe(const NeighbourSide& side, Index probe, const double* probe_row,
                                    const float* screened, Index count, ProbeScratch& scratch) {
    const auto n = static_cast<Index>(side.ids.size());
    const Index dim = cols_of(*side.table);
    const Vector& norms = *side.norms;
    const double probe_norm = norms[probe];
    const double probe_bound = norm_bound(probe_norm);
    const double sqrt_dim = std::sqrt(static_cast<double>(dim));
    const double relative = 1.05 * static_cast<double>(dim + 2) * kFloatUnit;
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    scratch.low.resize(static_cast<std::size_t>(n));
    scratch.high.resize(static_cast<std::size_t>(n));
    // The count-th largest lower bound, kept as the least of a heap of the count largest.
    std::priority_queue<double, std::vector<double>, std::greater<>> largest_lows;
    for (Index t = 0; t < n; ++t) {
        if (t == probe) continue;
        const double row_norm = norms[t];
        double low = 0.0;
        double high = 0.0;
        if (probe_norm != 0.0 && row_norm != 0.0) {
            const double den = probe_norm * row_norm;
            if (den == 0.0 || std::isinf(den)) {
                low = -kInfinity;
                high = kInfinity;
            } else {
                const double row_bound = norm_bound(row_norm);
                const double error = 1.1 * (relative * probe_bound * row_bound +
                                            kAbsoluteSlack * (sqrt_dim * (probe_bound + row_bound) +
                                                              static_cast<double>(dim)));
                const double s = screened[side.ids[static_cast<std::size_t>(t)]];
                low = (s - error) / den;
                high = (s + error) / den;
            }
        }
        scratch.low[static_cast<std::size_t>(t)] = low;
        scratch.high[static_cast<std::size_t>(t)] = high;
        if (static_cast<Index>(largest_lows.size()) < count) {
            largest_lows.push(low);
        } else if (low > largest_lows.top()) {
            largest_lows.pop();
            largest_lows.push(low);
        }
    }
    const double cut = largest_lows.top();
    scratch.candidates.clear();
    scratch.candidate_score.clear();
    scratch.candidate_key.clear();
    for (Index t = 0; t < n; ++t) {
        if (t == probe || scratch.high[static_cast<std::size_t>(t)] < cut) continue;
        const Index id = side.ids[static_cast<std::size_t>(t)];
        const double dot = exact_dot(*side.table, probe_row, id, scratch.widened);
        scratch.candidates.push_back(t);
        scratch.candidate_score.push_back(cosine_from_norms(dot, probe_norm, norms[t]));
        scratch.candidate_key.push_back(id);
    }
    const auto kept = static_cast<Index>(scratch.candidates.size());
    std::vector<Index> nearest =
        top_indices(scratch.candidate_score.data(), scratch.candidate_key.data(), kept, count, -1);
    for (Index& place : nearest) place = scratch.candidates[static_cast<std::size_t>(place)];
    return nearest;
}

}  // namespace

bool screen_covers(const NeighbourSide& side) {
    const Index dim = cols_of(*side.table);
    if (static_cast<double>(dim) * kFloatUnit > 0.01) return false;
    // |v| <= limit for every value; NaN fails the comparison, infinity the limit.
    const double limit = std::sqrt(kLargestSquareTimesWidth / static_cast<double>(std::max<Index>(dim, 1)));
    return std::visit(
        [&](const auto& view) {
            // A quantised table's rows exist only dequantised a chunk at a time: it is scored in double.
            if constexpr (is_quantised_view<decltype(view)>) {
                return false;
            } else {
                bool within = true;
                for (const Index id : side.ids) {
                    const auto* row = view.data() + id * dim;
                    for (Index c = 0; c < dim; ++c) within &= std::abs(static_cast<double>(row[c])) <= limit;
                    if (!within) return false;
                }
                return true;
            }
        },
        *side.table);
}

std::vector<std::vector<Index>> nearest_pairs_screened(const NeighbourSide& side, std::span<const Index> probes,
                                                       Index count) {
    if (probes.empty() || count <= 0) return nearest_pairs_in_double(side, probes, count);
    std::vector<Index> probe_ids;
    for (const Index p : probes) probe_ids.push_back(side.ids[static_cast<std::size_t>(p)]);
    const Table probe_rows = widened_rows(*side.table, probe_ids);
    std::vector<float> probes_f32;
    std::vector<float> screened;
    screen_chunk(*side.table, probe_rows, probes_f32, screened);
    const Index vocab = rows_of(*side.table);
    const auto n = static_cast<Index>(side.ids.size());
    std::vector<std::vector<Index>> nearest(probes.size());
    parallel_for(static_cast<Index>(probes.size()), n * 8, [&](Index begin, Index end) {
        ProbeScratch scratch;
        for (Index q = begin; q < end; ++q) {
            nearest[static_cast<std::size_t>(q)] =
                nearest_of_probe(side, probes[static_cast<std::size_t>(q)], probe_rows.data() + q * probe_rows.cols(),
                                 screened.data() + q * vocab, count, scratch);
        }
    });
    return nearest;
}

}  // namespace embed::detail
