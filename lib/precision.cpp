#include "embed/precision.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "floating_point/float_mode.hpp"
#include "kernels/narrow_kernels.hpp"
#include "floating_point/narrow_values.hpp"
#include "threads/parallel.hpp"
#include "stored_tables.hpp"

namespace embed {
namespace {

// table is (V, d) in double, returns (V, d) of Scalar, each value rounded once, split between the cores.
template <class Scalar>
BasicTable<Scalar> narrowed(TableView table) {
    const detail::DefaultFloatMode float_mode;
    BasicTable<Scalar> out = detail::mapped_table<Scalar>(table.rows(), table.cols());
    const double* from = table.data();
    Scalar* to = out.data();
    detail::parallel_for(table.size(), 1, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) to[i] = detail::narrow_to<Scalar>(from[i]);
    });
    return out;
}

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

template <TableOrView T>
    requires NarrowScalar<typename T::Scalar>
Table to_double(const T& table) {
    const detail::DefaultFloatMode float_mode;
    Table out = detail::mapped_table<double>(table.rows(), table.cols());
    const typename T::Scalar* from = table.data();
    double* to = out.data();
    detail::parallel_for(table.size(), 1, [&](Index begin, Index end) {
        detail::widen_values(from + begin, end - begin, to + begin);
    });
    return out;
}

template <TableOf<double> T>
TableF32 to_f32(const T& table) {
    return narrowed<float>(view_of(table));
}

template <TableOf<double> T>
TableBF16 to_bf16(const T& table) {
    return narrowed<Eigen::bfloat16>(view_of(table));
}

#define EMBED_INSTANTIATE_NARROW(T) template Table to_double<T>(const T&);
EMBED_FOR_EACH_NARROW_TABLE(EMBED_INSTANTIATE_NARROW)
#undef EMBED_INSTANTIATE_NARROW

#define EMBED_INSTANTIATE_DOUBLE(T)   \
    template TableF32 to_f32<T>(const T&); \
    template TableBF16 to_bf16<T>(const T&);
EMBED_FOR_EACH_TABLE_OF(EMBED_INSTANTIATE_DOUBLE, double)
#undef EMBED_INSTANTIATE_DOUBLE

double round_to_bf16(double x) {
    // bfloat16: 8 significand bits, exponents -126..127, largest finite (2 - 2^-7) * 2^127.
    return round_to_format(x, 8, -126, std::ldexp(255.0, 120));
}

double round_to_fp16(double x) {
    // IEEE binary16: 11 significand bits, exponents -14..15, largest finite 65504.
    return round_to_format(x, 11, -14, 65504.0);
}

}  // namespace embed
