#include "embed/one_hot.hpp"

#include "checks.hpp"
#include "embed/lookup.hpp"
#include "floating_point/float_mode.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/narrow_kernels.hpp"
#include "threads/parallel.hpp"
#include "stored_tables.hpp"

namespace embed {

RowVector one_hot(Index token_id, Index vocab) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_token(token_id, vocab);
    RowVector vec = RowVector::Zero(vocab);
    vec[token_id] = 1.0;
    return vec;
}

template <TableOf<double> T>
RowVector row_times_matrix(const RowVector& vec, const T& matrix) {
    const detail::DefaultFloatMode float_mode;
    detail::require_same_length(vec.size(), matrix.rows(), "row vector (must equal the matrix's rows)");
    // Every one of the V * d products is taken, zeros included: this is the
    // cost that lookup avoids, and it must be paid to show that it is wasted.
    const TableView rows = view_of(matrix);
    RowVector out = RowVector::Zero(rows.cols());
    for (Index r = 0; r < rows.rows(); ++r) out.noalias() += vec[r] * rows.row(r);
    return out;
}

#define EMBED_INSTANTIATE(T) template RowVector row_times_matrix<T>(const RowVector&, const T&);
EMBED_FOR_EACH_TABLE_OF(EMBED_INSTANTIATE, double)
#undef EMBED_INSTANTIATE

namespace {

// table is (V, d) of Scalar, ids is (n), returns (n, d) in double: the one-hot rows times the table.
template <class Scalar>
Table one_hot_product(BasicTableView<Scalar> table, Ids ids) {
    const detail::DefaultFloatMode float_mode;
    check_ids(ids, table.rows());
    const Index n = static_cast<Index>(ids.size());
    const Index vocab = table.rows();
    const Index dim = table.cols();
    // The one-hot rows, explicit, times the table as a matrix product: every
    // one of the n * V * d products is still taken, zeros included, but the
    // cores' arithmetic stays busy where one row at a time waits on memory.
    // Each sum runs over the table's rows in order, as row_times_matrix's, so
    // row i is row_times_matrix(one_hot(ids[i]), table) bit for bit. The
    // one-hot rows are made a few at a time (one_hot_times_table), never all
    // n x V at once, and a float32 or bfloat16 table is widened as it is read.
    // The threads take whole blocks of the kernel's ids: a part-empty block
    // costs a full one.
    Table rows(n, dim);
    const Index per_block = detail::one_hot_ids_per_block(table.data());
    detail::parallel_for_blocks(n, per_block, vocab * dim, [&](Index begin, Index end) {
        detail::one_hot_times_table(table.data(), vocab, dim, ids.data() + begin, end - begin,
                                    rows.data() + begin * dim);
    });
    return rows;
}

}  // namespace

template <TableOrView T>
Table lookup_via_one_hot(const T& table, Ids ids) {
    return one_hot_product(view_of(table), ids);
}

#define EMBED_INSTANTIATE(T) template Table lookup_via_one_hot<T>(const T&, Ids);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

Index one_hot_mults(Index vocab, Index dim, Index count) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_non_negative(dim, "dim");
    detail::require_non_negative(count, "count");
    return detail::checked_mul(detail::checked_mul(vocab, dim, "one_hot_mults"), count,
                               "one_hot_mults");
}

}  // namespace embed
