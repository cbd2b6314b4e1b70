#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "compare/measures.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

// Hidden vectors scored against a whole table per step.
constexpr Index kHiddenChunk = 32;

struct OneHidden {
    double top1 = 0.0;
    double topk = 0.0;
    double kl = 0.0;
    double max_abs = 0.0;
};

// log(sum exp z), shifted by the largest value so nothing overflows; NaN in, NaN out.
double log_sum_exp(const std::vector<double>& z) {
    double largest = -std::numeric_limits<double>::infinity();
    for (const double v : z) {
        if (std::isnan(v)) return v;
        largest = std::max(largest, v);
    }
    if (std::isinf(largest)) return largest;
    double sum = 0.0;
    for (const double v : z) sum += std::exp(v - largest);
    return largest + std::log(sum);
}

// KL(softmax z_a || softmax z_b) = sum of p_t (log p_t - log q_t), each log-probability as z - log_sum_exp(z).
double kl_of(const std::vector<double>& z_a, const std::vector<double>& z_b) {
    const double lse_a = log_sum_exp(z_a);
    const double lse_b = log_sum_exp(z_b);
    double kl = 0.0;
    for (std::size_t t = 0; t < z_a.size(); ++t) {
        const double log_p = z_a[t] - lse_a;
        const double log_q = z_b[t] - lse_b;
        kl += std::exp(log_p) * (log_p - log_q);
    }
    return kl;
}

OneHidden compare_one(const std::vector<double>& z_a, const std::vector<double>& z_b,
                      const std::vector<Index>& index, Index count) {
    const auto n = static_cast<Index>(z_a.size());
    OneHidden result;
    std::vector<Index> top_a = top_indices(z_a.data(), index.data(), n, count, -1);
    std::vector<Index> top_b = top_indices(z_b.data(), index.data(), n, count, -1);
    result.top1 = top_a.front() == top_b.front() ? 1.0 : 0.0;
    std::sort(top_a.begin(), top_a.end());
    std::sort(top_b.begin(), top_b.end());
    std::vector<Index> shared;
    std::set_intersection(top_a.begin(), top_a.end(), top_b.begin(), top_b.end(), std::back_inserter(shared));
    result.topk = static_cast<double>(shared.size()) / static_cast<double>(count);
    result.kl = kl_of(z_a, z_b);
    for (Index t = 0; t < n; ++t) {
        const double difference = std::abs(z_a[static_cast<std::size_t>(t)] - z_b[static_cast<std::size_t>(t)]);
        // NaN propagates: a NaN logit makes the largest difference NaN.
        if (std::isnan(difference) || difference > result.max_abs) result.max_abs = difference;
        if (std::isnan(result.max_abs)) break;
    }
    return result;
}

}  // namespace

LogitAgreement logit_agreement(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs,
                               const Table& hidden, const Table* rotation, Index k) {
    const auto n = static_cast<Index>(pairs.size());
    const Index count = std::min(k, n);
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (count <= 0 || hidden.rows() == 0) return {kNaN, kNaN, kNaN, kNaN};
    std::vector<Index> index(static_cast<std::size_t>(n));
    std::iota(index.begin(), index.end(), Index{0});
    std::vector<OneHidden> each(static_cast<std::size_t>(hidden.rows()));
    for (Index first = 0; first < hidden.rows(); first += kHiddenChunk) {
        const Index rows = std::min(kHiddenChunk, hidden.rows() - first);
        const Table chunk = hidden.middleRows(first, rows);
        const Table scores_a = all_scores(a, chunk);
        const Table scores_b = all_scores(b, rotation != nullptr ? times_rotation(chunk, *rotation) : chunk);
        parallel_for(rows, n * 16, [&](Index begin, Index end) {
            std::vector<double> z_a(static_cast<std::size_t>(n));
            std::vector<double> z_b(static_cast<std::size_t>(n));
            for (Index q = begin; q < end; ++q) {
                for (Index t = 0; t < n; ++t) {
                    const RowPair& pair = pairs[static_cast<std::size_t>(t)];
                    z_a[static_cast<std::size_t>(t)] = scores_a(q, pair.a);
                    z_b[static_cast<std::size_t>(t)] = scores_b(q, pair.b);
                }
                each[static_cast<std::size_t>(first + q)] = compare_one(z_a, z_b, index, count);
            }
        });
    }
    LogitAgreement total;
    for (const OneHidden& one : each) {
        total.top1_agreement += one.top1;
        total.topk_overlap += one.topk;
        total.kl_divergence += one.kl;
        // Once NaN, the largest difference stays NaN: NaN > x is false.
        if (std::isnan(one.max_abs) || one.max_abs > total.max_abs_logit_diff) total.max_abs_logit_diff = one.max_abs;
    }
    const auto hidden_count = static_cast<double>(hidden.rows());
    total.top1_agreement /= hidden_count;
    total.topk_overlap /= hidden_count;
    total.kl_divergence /= hidden_count;
    return total;
}

}  // namespace embed::detail
