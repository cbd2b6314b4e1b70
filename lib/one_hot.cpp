#include "embed/one_hot.hpp"

#include <algorithm>

#include "checks.hpp"
#include "embed/logits.hpp"
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

namespace {

/// How many rows of `row_bytes` each go in a block of about 96 KiB: a multiple of 3 (the GEMM's block), at least 3.
Index rows_per_block(Index row_bytes) {
    constexpr Index kBlockBytes = Index{96} << 10;  // under glibc's 128 KiB mmap threshold: reused heap, no page faults
    const Index rows = kBlockBytes / std::max<Index>(row_bytes, 1);
    return std::max<Index>(rows - rows % 3, 3);
}

// table is (V, d) of Scalar, ids is (n), returns (n, d) in double: the one-hot rows times the table.
template <class Scalar>
Table one_hot_product(BasicTableView<Scalar> table, Ids ids) {
    check_ids(ids, table.rows());
    const Index n = static_cast<Index>(ids.size());
    const Index vocab = table.rows();
    const Index dim = table.cols();
    // The one-hot rows, explicit, times the table as a matrix product: every
    // one of the n * V * d products is still taken, zeros included, but the
    // cores' arithmetic stays busy where one row at a time waits on memory.
    // out(i, c) is one-hot row i dotted with table column c, which is batched
    // logits over the table's columns, so the columns are laid out as rows.
    // Both are done a block at a time, reused, so the call holds two blocks
    // of about 96 KiB, not a second table (for V = 512: 24 ids and 24 columns).
    // A float32 or bfloat16 table's columns are widened a block at a time
    // (exactly), so its products and sums are those of the widened table.
    const Index ids_per_block = std::min(rows_per_block(vocab * Index{sizeof(double)}), std::max<Index>(n, 1));
    const Index columns_per_block = std::min(rows_per_block(vocab * Index{sizeof(double)}), std::max<Index>(dim, 1));
    Table rows(n, dim);
    Table one_hot_rows = Table::Zero(ids_per_block, vocab);
    Table columns(columns_per_block, vocab);
    for (Index c = 0; c < dim; c += columns_per_block) {
        const Index width = std::min(columns_per_block, dim - c);
        columns.topRows(width) = table.middleCols(c, width).transpose().template cast<double>();
        for (Index i = 0; i < n; i += ids_per_block) {
            const Index count = std::min(ids_per_block, n - i);
            for (Index k = 0; k < count; ++k) one_hot_rows(k, ids[static_cast<std::size_t>(i + k)]) = 1.0;
            const Table block = logits(columns, one_hot_rows);  // (ids_per_block, columns_per_block)
            rows.block(i, c, count, width) = block.topLeftCorner(count, width);
            for (Index k = 0; k < count; ++k) one_hot_rows(k, ids[static_cast<std::size_t>(i + k)]) = 0.0;
        }
    }
    return rows;
}

}  // namespace

Table lookup_via_one_hot(TableView table, Ids ids) { return one_hot_product(table, ids); }

Table lookup_via_one_hot(const Table& table, Ids ids) { return lookup_via_one_hot(view_of(table), ids); }

template <NarrowScalar Scalar>
Table lookup_via_one_hot(BasicTableView<Scalar> table, Ids ids) {
    return one_hot_product(table, ids);
}

template <NarrowScalar Scalar>
Table lookup_via_one_hot(const BasicTable<Scalar>& table, Ids ids) {
    return one_hot_product(view_of(table), ids);
}

template Table lookup_via_one_hot<float>(TableViewF32, Ids);
template Table lookup_via_one_hot<Eigen::bfloat16>(TableViewBF16, Ids);
template Table lookup_via_one_hot<float>(const TableF32&, Ids);
template Table lookup_via_one_hot<Eigen::bfloat16>(const TableBF16&, Ids);

Index one_hot_mults(Index vocab, Index dim, Index count) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_non_negative(dim, "dim");
    detail::require_non_negative(count, "count");
    return detail::checked_mul(detail::checked_mul(vocab, dim, "one_hot_mults"), count,
                               "one_hot_mults");
}

}  // namespace embed
