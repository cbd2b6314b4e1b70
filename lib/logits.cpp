#include "embed/logits.hpp"

#include "checks.hpp"
#include "kernels.hpp"

namespace embed {

void logits_into(const Table& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    detail::require_same_length(out.size(), table.rows(), "logits output (must equal the vocabulary V)");
    // One pass over the caller's table, row by row: this is weight tying.
    const Index dim = table.cols();
    for (Index t = 0; t < table.rows(); ++t) {
        out[t] = detail::dot_kernel(table.data() + t * dim, hidden.data(), dim);
    }
}

Vector logits(const Table& table, const Vector& hidden) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    Vector out(table.rows());
    logits_into(table, hidden, out);
    return out;
}

Table logits(const Table& table, const Table& hidden_rows) {
    detail::require_same_length(hidden_rows.cols(), table.cols(), "hidden rows (must equal the table's width d)");
    Table out(hidden_rows.rows(), table.rows());
    out.noalias() = hidden_rows * table.transpose();
    return out;
}

}  // namespace embed
