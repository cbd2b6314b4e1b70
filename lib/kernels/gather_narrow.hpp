#pragma once
// The row gather of gather.hpp for tables stored in float32 or bfloat16:
// lookup copies their rows as they are stored, scaled_lookup widens them to
// double and scales them, in the same single pass split between the cores.

#include "embed/types.hpp"
#include "kernels/gather.hpp"
#include "floating_point/narrow_values.hpp"

namespace embed::detail {

/// table is (V, d), ids is (n) and already checked, out is (n, d) of the table's type and apart from it:
/// row i = table row ids[i], the stored values copied as they are.
template <class Scalar>
void gather_stored_rows(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<Scalar>> out) {
    const auto row_bytes = static_cast<std::size_t>(table.cols()) * sizeof(Scalar);
    const ResultStores stores = result_stores_for(out.size() * Index{sizeof(Scalar)});
    gather_rows_with<Scalar, Scalar>(table, ids, out, [row_bytes, stores](const Scalar* from, Scalar* to) {
        copy_row(to, from, row_bytes, stores);
    });
}

/// table is (V, d), ids is (n) and already checked, out is (n, d) in double: row i = table row ids[i]
/// widened to double and times factor, the same products as the double table's gather.
template <class Scalar>
void gather_widened_rows(BasicTableView<Scalar> table, Ids ids, double factor, Eigen::Ref<Table> out) {
    const Index dim = table.cols();
    gather_rows_with<Scalar, double>(table, ids, out, [dim, factor](const Scalar* from, double* to) {
        for (Index c = 0; c < dim; ++c) to[c] = widen(from[c]) * factor;
    });
}

}  // namespace embed::detail
