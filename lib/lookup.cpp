#include "embed/lookup.hpp"

#include <cstdint>

#include "checks.hpp"
#include "kernels/gather.hpp"
#include "kernels/gather_narrow.hpp"

namespace embed {

// One pass without an early exit, which the compiler vectorises, says whether every id is inside; only then
// does a second pass look for the first bad one to name. Why: checked one id at a time, Clang left
// require_token (its message building inlined) out of line, one call per id, a visible share of a small lookup.
// An id below 0 becomes 2^64 minus something as unsigned, so one comparison rejects both ends.
void check_ids(Ids ids, Index vocab) {
    bool all_inside = vocab >= 0;
    for (const Index id : ids) all_inside &= static_cast<std::uint64_t>(id) < static_cast<std::uint64_t>(vocab);
    if (all_inside) return;
    for (const Index id : ids) detail::require_token(id, vocab);
}

Table lookup(TableView table, Ids ids) {
    check_ids(ids, table.rows());
    Table rows(static_cast<Index>(ids.size()), table.cols());
    detail::gather_rows(table, ids, 1.0, rows);
    return rows;
}

Table lookup(const Table& table, Ids ids) { return lookup(view_of(table), ids); }

void lookup_into(TableView table, Ids ids, Eigen::Ref<Table> out) {
    check_ids(ids, table.rows());
    detail::require_same_length(out.rows(), static_cast<Index>(ids.size()),
                                "lookup output rows (must equal the number of ids)");
    detail::require_same_length(out.cols(), table.cols(), "lookup output columns (must equal the table's width d)");
    detail::require_apart(out, table, "lookup output");
    detail::gather_rows(table, ids, 1.0, out);
}

void lookup_into(const Table& table, Ids ids, Eigen::Ref<Table> out) { lookup_into(view_of(table), ids, out); }

template <NarrowScalar Scalar>
BasicTable<Scalar> lookup(BasicTableView<Scalar> table, Ids ids) {
    check_ids(ids, table.rows());
    BasicTable<Scalar> rows(static_cast<Index>(ids.size()), table.cols());
    detail::gather_stored_rows<Scalar>(table, ids, rows);
    return rows;
}

template <NarrowScalar Scalar>
BasicTable<Scalar> lookup(const BasicTable<Scalar>& table, Ids ids) {
    return lookup(view_of(table), ids);
}

template <NarrowScalar Scalar>
void lookup_into(BasicTableView<Scalar> table, Ids ids, std::type_identity_t<Eigen::Ref<BasicTable<Scalar>>> out) {
    check_ids(ids, table.rows());
    detail::require_same_length(out.rows(), static_cast<Index>(ids.size()),
                                "lookup output rows (must equal the number of ids)");
    detail::require_same_length(out.cols(), table.cols(), "lookup output columns (must equal the table's width d)");
    detail::require_apart<Scalar>(out, table, "lookup output");
    detail::gather_stored_rows<Scalar>(table, ids, out);
}

template <NarrowScalar Scalar>
void lookup_into(const BasicTable<Scalar>& table, Ids ids, std::type_identity_t<Eigen::Ref<BasicTable<Scalar>>> out) {
    lookup_into(view_of(table), ids, out);
}

template TableF32 lookup<float>(const TableF32&, Ids);
template TableBF16 lookup<Eigen::bfloat16>(const TableBF16&, Ids);
template TableF32 lookup<float>(TableViewF32, Ids);
template TableBF16 lookup<Eigen::bfloat16>(TableViewBF16, Ids);
template void lookup_into<float>(const TableF32&, Ids, Eigen::Ref<TableF32>);
template void lookup_into<Eigen::bfloat16>(const TableBF16&, Ids, Eigen::Ref<TableBF16>);
template void lookup_into<float>(TableViewF32, Ids, Eigen::Ref<TableF32>);
template void lookup_into<Eigen::bfloat16>(TableViewBF16, Ids, Eigen::Ref<TableBF16>);

}  // namespace embed
