#include "embed/one_hot.hpp"

#include "checks.hpp"
#include "embed/lookup.hpp"

namespace embed {

RowVector one_hot(Index token_id, Index vocab) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_token(token_id, vocab);
    RowVector vec = RowVector::Zero(vocab);
    vec[token_id] = 1.0;
    return vec;
}

RowVector row_times_matrix(const RowVector& vec, TableView matrix) {
    detail::require_same_length(vec.size(), matrix.rows(), "row vector (must equal the matrix's rows)");
    // Every one of the V * d products is taken, zeros included: this is the
    // cost that lookup avoids, and it must be paid to show that it is wasted.
    RowVector out = RowVector::Zero(matrix.cols());
    for (Index r = 0; r < matrix.rows(); ++r) out.noalias() += vec[r] * matrix.row(r);
    return out;
}

RowVector row_times_matrix(const RowVector& vec, const Table& matrix) { return row_times_matrix(vec, view_of(matrix)); }

Table lookup_via_one_hot(TableView table, Ids ids) {
    check_ids(ids, table.rows());
    Table rows(static_cast<Index>(ids.size()), table.cols());
    for (Index i = 0; i < rows.rows(); ++i) {
        rows.row(i) = row_times_matrix(one_hot(ids[static_cast<std::size_t>(i)], table.rows()), table);
    }
    return rows;
}

Table lookup_via_one_hot(const Table& table, Ids ids) { return lookup_via_one_hot(view_of(table), ids); }

Index one_hot_mults(Index vocab, Index dim, Index count) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_non_negative(dim, "dim");
    detail::require_non_negative(count, "count");
    return detail::checked_mul(detail::checked_mul(vocab, dim, "one_hot_mults"), count,
                               "one_hot_mults");
}

}  // namespace embed
