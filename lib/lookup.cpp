#include "embed/lookup.hpp"

#include "checks.hpp"
#include "gather.hpp"

namespace embed {

void check_ids(Ids ids, Index vocab) {
    for (const Index id : ids) detail::require_token(id, vocab);
}

Table lookup(const Table& table, Ids ids) {
    check_ids(ids, table.rows());
    Table rows(static_cast<Index>(ids.size()), table.cols());
    detail::gather_rows(table, ids, 1.0, rows);
    return rows;
}

}  // namespace embed
