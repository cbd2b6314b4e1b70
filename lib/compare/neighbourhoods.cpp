#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/measures.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

// Probes scored against a whole table per step: their (probes, V) dot products stay a few tens of MiB.
constexpr Index kProbeChunk = 32;

// cosine from a dot product and two norms, 0.0 when either norm is 0 (as embed::cosine).
double cosine_of(double dot, double norm_x, double norm_y) {
    const double norms = norm_x * norm_y;
    return norm_x == 0.0 || norm_y == 0.0 ? 0.0 : dot / norms;
}

struct Side {
    const AnyTableView* table;
    const Vector* norms;    // (n) per pair
    std::vector<Index> ids;  // (n) this table's id of each pair
};

// For probes (pair indices) [first, last): the k nearest pairs of each in one table, as pair indices (count).
std::vector<std::vector<Index>> nearest_pairs(const Side& side, std::span<const Index> probes, Index count) {
    std::vector<Index> probe_ids;
    for (const Index p : probes) probe_ids.push_back(side.ids[static_cast<std::size_t>(p)]);
    const Table dots = all_scores(*side.table, widened_rows(*side.table, probe_ids));
    const auto n = static_cast<Index>(side.ids.size());
    std::vector<std::vector<Index>> nearest(probes.size());
    parallel_for(static_cast<Index>(probes.size()), n * 8, [&](Index begin, Index end) {
        std::vector<double> score(static_cast<std::size_t>(n));
        for (Index q = begin; q < end; ++q) {
            const Index probe = probes[static_cast<std::size_t>(q)];
            const double probe_norm = (*side.norms)[probe];
            for (Index t = 0; t < n; ++t) {
                score[static_cast<std::size_t>(t)] =
                    cosine_of(dots(q, side.ids[static_cast<std::size_t>(t)]), probe_norm, (*side.norms)[t]);
            }
            nearest[static_cast<std::size_t>(q)] = top_indices(score.data(), side.ids.data(), n, count, probe);
        }
    });
    return nearest;
}

}  // namespace

Vector neighbour_overlaps(const AnyTableView& a, const AnyTableView& b, const TableComparison& comparison,
                          std::span<const Index> probe_pairs, Index k) {
    const auto n = static_cast<Index>(comparison.pairs.size());
    const Index count = std::min(k, n - 1);
    Side a_side{&a, &comparison.norm_a, {}};
    Side b_side{&b, &comparison.norm_b, {}};
    for (const RowPair& pair : comparison.pairs) {
        a_side.ids.push_back(pair.a);
        b_side.ids.push_back(pair.b);
    }
    Vector overlap(static_cast<Index>(probe_pairs.size()));
    for (std::size_t first = 0; first < probe_pairs.size(); first += kProbeChunk) {
        const std::span<const Index> probes =
            probe_pairs.subspan(first, std::min<std::size_t>(kProbeChunk, probe_pairs.size() - first));
        if (count <= 0) {
            for (std::size_t q = 0; q < probes.size(); ++q) {
                overlap[static_cast<Index>(first + q)] = std::numeric_limits<double>::quiet_NaN();
            }
            continue;
        }
        const std::vector<std::vector<Index>> in_a = nearest_pairs(a_side, probes, count);
        const std::vector<std::vector<Index>> in_b = nearest_pairs(b_side, probes, count);
        for (std::size_t q = 0; q < probes.size(); ++q) {
            std::vector<Index> x = in_a[q];
            std::vector<Index> y = in_b[q];
            std::sort(x.begin(), x.end());
            std::sort(y.begin(), y.end());
            std::vector<Index> shared;
            std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(shared));
            overlap[static_cast<Index>(first + q)] =
                static_cast<double>(shared.size()) / static_cast<double>(count);
        }
    }
    return overlap;
}

}  // namespace embed::detail
