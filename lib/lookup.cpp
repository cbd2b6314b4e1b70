#include "embed/lookup.hpp"

#include "checks.hpp"
#include "gather.hpp"

namespace embed {

void check_ids(Ids ids, Index vocab) {
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

}  // namespace embed
