#include "embed/lookup.hpp"

#include <concepts>
#include <cstdint>

#include "checks.hpp"
#include "kernels/gather.hpp"
#include "kernels/gather_narrow.hpp"
#include "stored_tables.hpp"

namespace embed {

// One pass without an early exit, which the compiler vectorises, says whether every id is inside; only then
// does a second pass look for the first bad one to name. Why: checked one id at a time, Clang left
// require_token (its message building inlined) out of line, one call per id.
// An id below 0 becomes 2^64 minus something as unsigned, so one comparison rejects both ends.
void check_ids(Ids ids, Index vocab) {
    bool all_inside = vocab >= 0;
    for (const Index id : ids) all_inside &= static_cast<std::uint64_t>(id) < static_cast<std::uint64_t>(vocab);
    if (all_inside) return;
    for (const Index id : ids) detail::require_token(id, vocab);
}

namespace {

// out is (n, d) of the table's type, ids already checked and out apart from the table: the rows copied.
// A double table goes through the gather that also scales (by 1.0: a plain copy), a narrow one through
// the copy of its stored values; both copy the bytes as they are.
template <class Scalar>
void copy_rows(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<Scalar>> out) {
    if constexpr (std::same_as<Scalar, double>) {
        detail::gather_rows(table, ids, 1.0, out);
    } else {
        detail::gather_stored_rows<Scalar>(table, ids, out);
    }
}

template <class Scalar>
BasicTable<Scalar> rows_of(BasicTableView<Scalar> table, Ids ids) {
    check_ids(ids, table.rows());
    BasicTable<Scalar> rows(static_cast<Index>(ids.size()), table.cols());
    copy_rows<Scalar>(table, ids, rows);
    return rows;
}

template <class Scalar>
void rows_into(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<Scalar>> out) {
    check_ids(ids, table.rows());
    detail::require_same_length(out.rows(), static_cast<Index>(ids.size()),
                                "lookup output rows (must equal the number of ids)");
    detail::require_same_length(out.cols(), table.cols(), "lookup output columns (must equal the table's width d)");
    detail::require_apart<Scalar>(out, table, "lookup output");
    copy_rows<Scalar>(table, ids, out);
}

}  // namespace

template <TableOrView T>
BasicTable<typename T::Scalar> lookup(const T& table, Ids ids) {
    return rows_of(view_of(table), ids);
}

template <TableOrView T>
void lookup_into(const T& table, Ids ids, Eigen::Ref<BasicTable<typename T::Scalar>> out) {
    rows_into(view_of(table), ids, out);
}

#define EMBED_INSTANTIATE(T)                                 \
    template BasicTable<T::Scalar> lookup<T>(const T&, Ids); \
    template void lookup_into<T>(const T&, Ids, Eigen::Ref<BasicTable<T::Scalar>>);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
