#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/measures.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

// Probes scored against a whole table per step: their (probes, V) float32 screens stay a few tens of MiB, and
// each step reads the table once.
constexpr Index kProbeChunk = 64;

}  // namespace

std::vector<std::vector<Index>> nearest_pairs_in_double(const NeighbourSide& side, std::span<const Index> probes,
                                                        Index count) {
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
                    cosine_from_norms(dots(q, side.ids[static_cast<std::size_t>(t)]), probe_norm, (*side.norms)[t]);
            }
            nearest[static_cast<std::size_t>(q)] = top_indices(score.data(), side.ids.data(), n, count, probe);
        }
    });
    return nearest;
}

Vector neighbour_overlaps(const AnyTableView& a, const AnyTableView& b, const TableComparison& comparison,
                          std::span<const Index> probe_pairs, Index k) {
    const auto n = static_cast<Index>(comparison.pairs.size());
    const Index count = std::min(k, n - 1);
    NeighbourSide a_side{&a, &comparison.norm_a, {}};
    NeighbourSide b_side{&b, &comparison.norm_b, {}};
    for (const RowPair& pair : comparison.pairs) {
        a_side.ids.push_back(pair.a);
        b_side.ids.push_back(pair.b);
    }
    // The float32 screen where its bound holds (checked once per table), the double cosines elsewhere.
    const auto nearest = [count](const NeighbourSide& side, bool screen, std::span<const Index> probes) {
        return screen ? nearest_pairs_screened(side, probes, count) : nearest_pairs_in_double(side, probes, count);
    };
    const bool screen_a = count > 0 && screen_covers(a_side);
    const bool screen_b = count > 0 && screen_covers(b_side);
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
        const std::vector<std::vector<Index>> in_a = nearest(a_side, screen_a, probes);
        const std::vector<std::vector<Index>> in_b = nearest(b_side, screen_b, probes);
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
