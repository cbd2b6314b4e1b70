#include "embed/similarity.hpp"

#include <algorithm>
#include <cmath>

#include "checks.hpp"
#include "kernels.hpp"

namespace embed {
namespace {

// The ranking order: higher score first, NaN below every number, then the
// smaller id. It is a strict total order on (score, id) pairs, so sorting is
// well defined whatever the table holds.
bool ranks_before(const Neighbour& a, const Neighbour& b) {
    const bool a_nan = std::isnan(a.score);
    const bool b_nan = std::isnan(b.score);
    if (a_nan != b_nan) return b_nan;
    if (!a_nan && a.score != b.score) return a.score > b.score;
    return a.id < b.id;
}

double cosine_from_parts(double dot_ab, double norm_a, double norm_b) {
    if (norm_a == 0.0 || norm_b == 0.0) return 0.0;
    return dot_ab / (norm_a * norm_b);
}

// Scores every row but the query's own in one pass over the table.
std::vector<Neighbour> score_others(const Table& table, Index token_id, Score score) {
    const Index dim = table.cols();
    const double* query = table.data() + token_id * dim;
    const double query_norm = std::sqrt(detail::dot_kernel(query, query, dim));
    std::vector<Neighbour> scored;
    scored.reserve(static_cast<std::size_t>(table.rows() - 1));
    for (Index t = 0; t < table.rows(); ++t) {
        if (t == token_id) continue;
        const double* row = table.data() + t * dim;
        double value = detail::dot_kernel(query, row, dim);
        if (score == Score::cosine) {
            value = cosine_from_parts(value, query_norm, std::sqrt(detail::dot_kernel(row, row, dim)));
        }
        scored.push_back({t, value});
    }
    return scored;
}

}  // namespace

double dot(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b) {
    detail::require_same_length(b.size(), a.size(), "second vector of dot (must equal the first)");
    return detail::dot_kernel(a.data(), b.data(), a.size());
}

double norm(Eigen::Ref<const Vector> a) { return std::sqrt(detail::dot_kernel(a.data(), a.data(), a.size())); }

double cosine(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b) {
    const double dot_ab = dot(a, b);
    return cosine_from_parts(dot_ab, norm(a), norm(b));
}

Table stretch(const Table& table, Index token_id, double factor) {
    detail::require_token(token_id, table.rows());
    Table stretched = table;
    stretched.row(token_id) *= factor;
    return stretched;
}

std::vector<Neighbour> rank_neighbours(const Table& table, Index token_id, Index k, Score score) {
    detail::require_token(token_id, table.rows());
    detail::require_non_negative(k, "k");
    std::vector<Neighbour> scored = score_others(table, token_id, score);
    const auto keep = static_cast<std::size_t>(std::min<Index>(k, table.rows() - 1));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
                      ranks_before);
    scored.resize(keep);
    return scored;
}

namespace {
std::vector<Index> ids_of(const std::vector<Neighbour>& neighbours) {
    std::vector<Index> ids;
    ids.reserve(neighbours.size());
    for (const Neighbour& n : neighbours) ids.push_back(n.id);
    return ids;
}
}  // namespace

std::vector<Index> nearest_by_cosine(const Table& table, Index token_id, Index k) {
    return ids_of(rank_neighbours(table, token_id, k, Score::cosine));
}

std::vector<Index> nearest_by_dot(const Table& table, Index token_id, Index k) {
    return ids_of(rank_neighbours(table, token_id, k, Score::dot));
}

}  // namespace embed
