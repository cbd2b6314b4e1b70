#include "embed/scaling.hpp"

#include <cmath>
#include <concepts>

#include "checks.hpp"
#include "embed/lookup.hpp"
#include "floating_point/float_mode.hpp"
#include "kernels/gather.hpp"
#include "kernels/gather_narrow.hpp"
#include "kernels/base.hpp"
#include "stored_tables.hpp"

namespace embed {

double rms(Eigen::Ref<const Vector> a) {
    const detail::DefaultFloatMode float_mode;
    if (a.size() == 0) return 0.0;
    return std::sqrt(detail::dot_kernel(a.data(), a.data(), a.size()) / static_cast<double>(a.size()));
}

// Gather and scale in one pass: the same products as lookup(...) * sqrt(dim), without the temporary. A narrow
// table's rows are widened, then scaled: the products of the double table's scaled_lookup on the widened table.
template <TableOrView T>
Table scaled_lookup(const T& table, Ids ids, Index dim) {
    using Scalar = typename T::Scalar;
    const detail::DefaultFloatMode float_mode;
    detail::require_non_negative(dim, "dim");
    check_ids(ids, table.rows());
    Table rows(static_cast<Index>(ids.size()), table.cols());
    const double factor = std::sqrt(static_cast<double>(dim));
    if constexpr (std::same_as<Scalar, double>) {
        detail::gather_rows(view_of(table), ids, factor, rows);
    } else {
        detail::gather_widened_rows(view_of(table), ids, factor, rows);
    }
    return rows;
}

#define EMBED_INSTANTIATE(T) template Table scaled_lookup<T>(const T&, Ids, Index);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
