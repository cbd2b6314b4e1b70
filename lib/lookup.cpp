#include "embed/lookup.hpp"

#include "checks.hpp"

namespace embed {

void check_ids(Ids ids, Index vocab) {
    for (const Index id : ids) detail::require_token(id, vocab);
}

Table lookup(const Table& table, Ids ids) {
    check_ids(ids, table.rows());
    Table rows(static_cast<Index>(ids.size()), table.cols());
    for (Index i = 0; i < rows.rows(); ++i) rows.row(i) = table.row(ids[static_cast<std::size_t>(i)]);
    return rows;
}

}  // namespace embed
