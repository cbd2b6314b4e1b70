#include <cmath>
#include <limits>

#include "compare/measures.hpp"
#include "embed/similarity.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

// Pairs widened (and rotated) per step: a few MiB of rows, whatever the table's size.
constexpr Index kRowChunk = 1024;

using ConstRow = Eigen::Map<const Vector>;

}  // namespace

void measure_rows(const AnyTableView& a, const AnyTableView& b, TableComparison& comparison) {
    const std::vector<RowPair>& pairs = comparison.pairs;
    const auto count = static_cast<Index>(pairs.size());
    const Index a_dim = std::visit([](const auto& view) { return view.cols(); }, a);
    const Index b_dim = std::visit([](const auto& view) { return view.cols(); }, b);
    const bool same_width = a_dim == b_dim;
    comparison.norm_a.resize(count);
    comparison.norm_b.resize(count);
    if (same_width) {
        comparison.row_cosine.emplace(count);
        comparison.relative_change.emplace(count);
    }
    for (Index first = 0; first < count; first += kRowChunk) {
        const Index last = std::min(count, first + kRowChunk);
        std::vector<Index> a_ids;
        std::vector<Index> b_ids;
        for (Index p = first; p < last; ++p) {
            a_ids.push_back(pairs[static_cast<std::size_t>(p)].a);
            b_ids.push_back(pairs[static_cast<std::size_t>(p)].b);
        }
        const Table a_rows = widened_rows(a, a_ids);
        const Table b_rows = widened_rows(b, b_ids);
        const Table aligned = comparison.rotation ? times_rotation(a_rows, *comparison.rotation) : Table();
        const Table& a_seen = comparison.rotation ? aligned : a_rows;
        parallel_for(last - first, 4 * std::max(a_dim, b_dim), [&](Index begin, Index end) {
            Vector difference(same_width ? a_dim : 0);
            for (Index r = begin; r < end; ++r) {
                const Index p = first + r;
                const ConstRow a_row(a_rows.data() + r * a_dim, a_dim);
                const ConstRow b_row(b_rows.data() + r * b_dim, b_dim);
                const double norm_a = norm(a_row);
                comparison.norm_a[p] = norm_a;
                comparison.norm_b[p] = norm(b_row);
                if (!same_width) continue;
                const ConstRow a_aligned(a_seen.data() + r * a_dim, a_dim);
                (*comparison.row_cosine)[p] = cosine(a_aligned, b_row);
                difference = a_aligned - b_row;
                (*comparison.relative_change)[p] =
                    norm_a == 0.0 ? std::numeric_limits<double>::quiet_NaN() : norm(difference) / norm_a;
            }
        });
    }
}

}  // namespace embed::detail
