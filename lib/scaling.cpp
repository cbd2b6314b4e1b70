#include "embed/scaling.hpp"

#include <cmath>
#include <limits>

#include "checks.hpp"
#include "embed/lookup.hpp"
#include "threads/float_mode.hpp"
#include "kernels/gather.hpp"
#include "kernels/gather_narrow.hpp"
#include "kernels/base.hpp"

namespace embed {
namespace {

// Rounds x to the nearest value with `precision` significand bits (implicit
// bit included), exponents down to min_exponent (subnormals below), ties to
// even, and overflow to infinity past max_finite.
double round_to_format(double x, int precision, int min_exponent, double max_finite) {
    const detail::DefaultFloatMode float_mode;
    if (!std::isfinite(x) || x == 0.0) return x;
    const int exponent = std::max(std::ilogb(x), min_exponent);
    const double quantum = std::ldexp(1.0, exponent - (precision - 1));
    const double rounded = std::nearbyint(x / quantum) * quantum;  // the default mode: ties to even
    if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return rounded;
}

}  // namespace

double rms(Eigen::Ref<const Vector> a) {
    const detail::DefaultFloatMode float_mode;
    if (a.size() == 0) return 0.0;
    return std::sqrt(detail::dot_kernel(a.data(), a.data(), a.size()) / static_cast<double>(a.size()));
}

Table scaled_lookup(TableView table, Ids ids, Index dim) {
    const detail::DefaultFloatMode float_mode;
    detail::require_non_negative(dim, "dim");
    check_ids(ids, table.rows());
    // Gather and scale in one pass: the same products as lookup(...) * sqrt(dim), without the temporary.
    Table rows(static_cast<Index>(ids.size()), table.cols());
    detail::gather_rows(table, ids, std::sqrt(static_cast<double>(dim)), rows);
    return rows;
}

Table scaled_lookup(const Table& table, Ids ids, Index dim) { return scaled_lookup(view_of(table), ids, dim); }

template <NarrowScalar Scalar>
Table scaled_lookup(BasicTableView<Scalar> table, Ids ids, Index dim) {
    const detail::DefaultFloatMode float_mode;
    detail::require_non_negative(dim, "dim");
    check_ids(ids, table.rows());
    // Widen, then scale: the products of the double table's scaled_lookup on the widened table.
    Table rows(static_cast<Index>(ids.size()), table.cols());
    detail::gather_widened_rows(table, ids, std::sqrt(static_cast<double>(dim)), rows);
    return rows;
}

template <NarrowScalar Scalar>
Table scaled_lookup(const BasicTable<Scalar>& table, Ids ids, Index dim) {
    return scaled_lookup(view_of(table), ids, dim);
}

template Table scaled_lookup<float>(TableViewF32, Ids, Index);
template Table scaled_lookup<Eigen::bfloat16>(TableViewBF16, Ids, Index);
template Table scaled_lookup<float>(const TableF32&, Ids, Index);
template Table scaled_lookup<Eigen::bfloat16>(const TableBF16&, Ids, Index);

double round_to_bf16(double x) {
    // bfloat16: 8 significand bits, exponents -126..127, largest finite (2 - 2^-7) * 2^127.
    return round_to_format(x, 8, -126, std::ldexp(255.0, 120));
}

double round_to_fp16(double x) {
    // IEEE binary16: 11 significand bits, exponents -14..15, largest finite 65504.
    return round_to_format(x, 11, -14, 65504.0);
}

}  // namespace embed
