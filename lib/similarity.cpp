#include "embed/similarity.hpp"

#include "embed/quantised_table.hpp"

#include <algorithm>
#include <cmath>
#include <concepts>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "checks.hpp"
#include "floating_point/float_mode.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/narrow_kernels.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/quantised_kernels.hpp"
#include "threads/parallel.hpp"
#include "stored_tables.hpp"
#include "kernels/streaming.hpp"

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

// dots[j] becomes row j's cosine, cosine_from_parts(dots[j], query_norm,
// sqrt(squares[j])), for j < count. Two rows per instruction where there is
// SSE2 (every x86-64): a vector square root, product and division round as
// the scalar ones do (IEEE 754), so every score keeps its bits. Row by row,
// with a branch for the zero norm and one for sqrt's errno, this was a large
// share of nearest_by_cosine on small tables.
void cosines_from_parts(double* dots, const double* squares, Index count, double query_norm) {
    if (query_norm == 0.0) {
        std::fill(dots, dots + count, 0.0);
        return;
    }
    Index j = 0;
#if defined(__SSE2__)
    const __m128d zero = _mm_setzero_pd();
    const __m128d query = _mm_set1_pd(query_norm);
    for (; j + 2 <= count; j += 2) {
        const __m128d row_norm = _mm_sqrt_pd(_mm_loadu_pd(squares + j));
        const __m128d cosine = _mm_div_pd(_mm_loadu_pd(dots + j), _mm_mul_pd(query, row_norm));
        // +0.0 where the row's norm is zero, as cosine_from_parts gives.
        _mm_storeu_pd(dots + j, _mm_andnot_pd(_mm_cmpeq_pd(row_norm, zero), cosine));
    }
#endif
    for (; j < count; ++j) dots[j] = cosine_from_parts(dots[j], query_norm, std::sqrt(squares[j]));
}

// The k best neighbours seen so far, kept as a heap whose top ranks last,
// so a candidate is either rejected by one comparison or swapped in.
class TopK {
public:
    /// Keeps the best `keep`; `capacity` is how many it can hold at most (the rows it will be offered).
    TopK(std::size_t keep, std::size_t capacity) : keep_(keep) { heap_.reserve(std::min(keep, capacity)); }

    void offer(const Neighbour& candidate) {
        if (heap_.size() < keep_) {
            heap_.push_back(candidate);
            std::push_heap(heap_.begin(), heap_.end(), ranks_before);
        } else if (keep_ > 0 && ranks_before(candidate, heap_.front())) {
            std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
            heap_.back() = candidate;
            std::push_heap(heap_.begin(), heap_.end(), ranks_before);
        }
    }

    std::vector<Neighbour>& items() { return heap_; }

private:
    std::size_t keep_;
    std::vector<Neighbour> heap_;
};

// Scores the rows [begin, end) against the query (token_id's row, in double)
// in blocks small enough to stay in cache, offering each to a top-k: one pass
// over the table, no V-long buffer and no full sort. The scores are dot /
// cosine's bit for bit; the kernels (overloaded per stored type) widen the
// values of a narrow table to double first.
constexpr Index kBlockRows = 256;

template <class Scalar>
void select_in_range(BasicTableView<Scalar> table, Index token_id, const double* query, Score score,
                     double query_norm, Index begin, Index end, TopK& best) {
    const Index dim = table.cols();
    // A table that stays in the caches is read without asking for lines ahead: they are there already.
    const bool prefetch = detail::streams_from_memory(table.size() * Index{sizeof(Scalar)});
    double dots[kBlockRows];
    double squares[kBlockRows];
    for (Index block = begin; block < end; block += kBlockRows) {
        const Index count = std::min(kBlockRows, end - block);
        const Scalar* rows = table.data() + block * dim;
        if (score == Score::cosine) {
            detail::dot_and_square_rows(rows, count, dim, query, dots, squares, prefetch);
            cosines_from_parts(dots, squares, count, query_norm);
        } else {
            detail::dot_rows(rows, count, dim, query, dots, prefetch);
        }
        for (Index j = 0; j < count; ++j) {
            if (block + j != token_id) best.offer({block + j, dots[j]});
        }
    }
}

// select_in_range for a quantised table: the quantised row loops score its blocks as stored, each value
// dequantised and widened, so the scores are the widened table's.
void select_in_range(const QuantisedTable& table, Index token_id, const double* query, Score score,
                     double query_norm, Index begin, Index end, TopK& best) {
    const Index dim = table.cols();
    double dots[kBlockRows];
    double squares[kBlockRows];
    for (Index block = begin; block < end; block += kBlockRows) {
        const Index count = std::min(kBlockRows, end - block);
        const std::byte* rows = table.data() + block * table.row_bytes();
        if (score == Score::cosine) {
            detail::dot_and_square_quantised_rows(table.type(), rows, count, dim, query, dots, squares);
            cosines_from_parts(dots, squares, count, query_norm);
        } else {
            detail::dot_quantised_rows(table.type(), rows, count, dim, query, dots);
        }
        for (Index j = 0; j < count; ++j) {
            if (block + j != token_id) best.offer({block + j, dots[j]});
        }
    }
}

// token_id's row of a quantised table, dequantised and widened to double into `widened`.
const double* query_row(const QuantisedTable& table, Index token_id, std::vector<double>& widened) {
    std::vector<float> row(static_cast<std::size_t>(table.cols()));
    table.dequantise_rows(token_id, 1, row.data());
    widened.resize(row.size());
    detail::widen_values(row.data(), table.cols(), widened.data());
    return widened.data();
}

// token_id's row of the table in double: the row itself for a double table, else
// the row widened into `widened`.
template <class Scalar>
const double* query_row(BasicTableView<Scalar> table, Index token_id, std::vector<double>& widened) {
    const Index dim = table.cols();
    if constexpr (std::same_as<Scalar, double>) {
        return table.data() + token_id * dim;
    } else {
        widened.resize(static_cast<std::size_t>(dim));
        detail::widen_values(table.data() + token_id * dim, dim, widened.data());
        return widened.data();
    }
}

template <class Source>
std::vector<Neighbour> ranked(const Source& table, Index token_id, Index k, Score score) {
    const detail::DefaultFloatMode float_mode;
    detail::require_token(token_id, table.rows());
    detail::require_non_negative(k, "k");
    const auto keep = static_cast<std::size_t>(std::min<Index>(k, table.rows() - 1));
    if (keep == 0) return {};
    const Index dim = table.cols();
    std::vector<double> widened;
    const double* query = query_row(table, token_id, widened);
    const double query_norm = std::sqrt(detail::dot_kernel(query, query, dim));
    // Each piece of the table gets its own selection; the union of those
    // selections holds the overall best, and the ranking is a total order, so
    // the merged result does not depend on how the rows were split or which
    // core ran which piece.
    const detail::Pieces pieces = detail::pieces_of(table.rows(), dim);
    std::vector<TopK> partial;
    partial.reserve(static_cast<std::size_t>(pieces.count));
    for (Index p = 0; p < pieces.count; ++p) partial.emplace_back(keep, static_cast<std::size_t>(pieces.size));
    detail::parallel_for_pieces(pieces, dim, [&](Index p, Index begin, Index end) {
        select_in_range(table, token_id, query, score, query_norm, begin, end, partial[static_cast<std::size_t>(p)]);
    });
    std::vector<Neighbour> merged = std::move(partial.front().items());
    for (std::size_t w = 1; w < partial.size(); ++w) {
        merged.insert(merged.end(), partial[w].items().begin(), partial[w].items().end());
    }
    std::partial_sort(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(keep), merged.end(),
                      ranks_before);
    merged.resize(keep);
    return merged;
}

std::vector<Index> ids_of(const std::vector<Neighbour>& neighbours) {
    std::vector<Index> ids;
    ids.reserve(neighbours.size());
    for (const Neighbour& n : neighbours) ids.push_back(n.id);
    return ids;
}

// A copy of table in fresh, mapped pages (huge where large), its rows copied by every core.
template <class Scalar>
BasicTable<Scalar> copy_of(BasicTableView<Scalar> table) {
    BasicTable<Scalar> copy = detail::mapped_table<Scalar>(table.rows(), table.cols());
    detail::parallel_for(table.rows(), table.cols(), [&](Index begin, Index end) {
        copy.middleRows(begin, end - begin) = table.middleRows(begin, end - begin);
    });
    return copy;
}

// dot and norm for callers already in the default mode, so that cosine reads MXCSR once: on short vectors
// each read is a large share of the call.
double checked_dot(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b) {
    detail::require_same_length(b.size(), a.size(), "second vector of dot (must equal the first)");
    return detail::dot_kernel(a.data(), b.data(), a.size());
}

double norm_of(Eigen::Ref<const Vector> a) { return std::sqrt(detail::dot_kernel(a.data(), a.data(), a.size())); }

}  // namespace

double dot(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b) {
    const detail::DefaultFloatMode float_mode;
    return checked_dot(a, b);
}

double norm(Eigen::Ref<const Vector> a) {
    const detail::DefaultFloatMode float_mode;
    return norm_of(a);
}

double cosine(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b) {
    const detail::DefaultFloatMode float_mode;
    const double dot_ab = checked_dot(a, b);
    return cosine_from_parts(dot_ab, norm_of(a), norm_of(b));
}

// A double row is scaled in place by Eigen; a narrow row's products are formed in double and each rounded
// once back to the table's type.
template <TableOrView T>
BasicTable<typename T::Scalar> stretch(const T& table, Index token_id, double factor) {
    using Scalar = typename T::Scalar;
    const detail::DefaultFloatMode float_mode;
    detail::require_token(token_id, table.rows());
    BasicTable<Scalar> stretched = copy_of(view_of(table));
    if constexpr (std::same_as<Scalar, double>) {
        stretched.row(token_id) *= factor;
    } else {
        for (Index c = 0; c < table.cols(); ++c) {
            stretched(token_id, c) = detail::narrow_to<Scalar>(detail::widen(table(token_id, c)) * factor);
        }
    }
    return stretched;
}

template <TableOrView T>
std::vector<Neighbour> rank_neighbours(const T& table, Index token_id, Index k, Score score) {
    return ranked(view_of(table), token_id, k, score);
}

template <TableOrView T>
std::vector<Index> nearest_by_cosine(const T& table, Index token_id, Index k) {
    return ids_of(ranked(view_of(table), token_id, k, Score::cosine));
}

template <TableOrView T>
std::vector<Index> nearest_by_dot(const T& table, Index token_id, Index k) {
    return ids_of(ranked(view_of(table), token_id, k, Score::dot));
}

std::vector<Neighbour> rank_neighbours(const QuantisedTable& table, Index token_id, Index k, Score score) {
    return ranked(table, token_id, k, score);
}

std::vector<Index> nearest_by_cosine(const QuantisedTable& table, Index token_id, Index k) {
    return ids_of(ranked(table, token_id, k, Score::cosine));
}

std::vector<Index> nearest_by_dot(const QuantisedTable& table, Index token_id, Index k) {
    return ids_of(ranked(table, token_id, k, Score::dot));
}

#define EMBED_INSTANTIATE(T)                                                                     \
    template BasicTable<T::Scalar> stretch<T>(const T&, Index, double);                          \
    template std::vector<Neighbour> rank_neighbours<T>(const T&, Index, Index, Score);           \
    template std::vector<Index> nearest_by_cosine<T>(const T&, Index, Index);                    \
    template std::vector<Index> nearest_by_dot<T>(const T&, Index, Index);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
