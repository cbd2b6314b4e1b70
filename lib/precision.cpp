#include "embed/precision.hpp"

#include "threads/float_mode.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/narrow_values.hpp"
#include "threads/parallel.hpp"

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

}  // namespace

template <NarrowScalar Scalar>
Table to_double(BasicTableView<Scalar> table) {
    const detail::DefaultFloatMode float_mode;
    Table out = detail::mapped_table<double>(table.rows(), table.cols());
    const Scalar* from = table.data();
    double* to = out.data();
    detail::parallel_for(table.size(), 1, [&](Index begin, Index end) {
        detail::widen_values(from + begin, end - begin, to + begin);
    });
    return out;
}

template <NarrowScalar Scalar>
Table to_double(const BasicTable<Scalar>& table) {
    return to_double(view_of(table));
}

template Table to_double(const TableF32&);
template Table to_double(const TableBF16&);
template Table to_double(TableViewF32);
template Table to_double(TableViewBF16);

TableF32 to_f32(TableView table) { return narrowed<float>(table); }

TableF32 to_f32(const Table& table) { return to_f32(view_of(table)); }

TableBF16 to_bf16(TableView table) { return narrowed<Eigen::bfloat16>(table); }

TableBF16 to_bf16(const Table& table) { return to_bf16(view_of(table)); }

}  // namespace embed
