#pragma once
// Logits: the same table that embeds tokens scores a hidden vector against
// every token (weight tying). The table is read in place, never copied.
//
// A float32 or bfloat16 table is scored in double: each stored value is
// widened to double and every product and sum is done in double in the same
// order, so every score equals, bit for bit, the score of the same table
// widened to double.

#include <concepts>

#include "embed/types.hpp"

namespace embed {

/// table is (V, d) of double, float32 or bfloat16 (owned or viewed), hidden is (d), returns (V) in double:
/// out[t] = sum over c of table(t, c) * hidden[c].
template <TableOrView T>
Vector logits(const T& table, const Vector& hidden);

/// table is (V, d) of any stored type, hidden is (d), out is (V) and preallocated: writes logits(table, hidden)
/// into it, allocating nothing.
template <TableOrView T>
void logits_into(const T& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);

/// table is (V, d) of any stored type, hidden_rows is (n, d), returns (n, V) in double: row i is
/// logits(table, hidden_rows.row(i)). Peak memory beyond the result: a few hundred KiB per thread.
template <TableOrView T>
Table logits(const T& table, const Table& hidden_rows);

/// table is (V, d) of any stored type, hidden is any Eigen expression of doubles: a (d) column or row (a table
/// row binds without a copy) returns (V) like logits(table, Vector); an (n, d) matrix returns (n, V) like the
/// batched overload. Without it an expression such as `table.row(t)` would convert equally well to Vector and Table.
template <TableOrView T, class Derived>
    requires std::same_as<typename Derived::Scalar, double>
auto logits(const T& table, const Eigen::MatrixBase<Derived>& hidden) {
    if constexpr (Derived::ColsAtCompileTime == 1 || Derived::RowsAtCompileTime == 1) {
        Vector out(table.rows());
        logits_into(table, hidden, out);
        return out;
    } else {
        return logits(table, Table(hidden));
    }
}

}  // namespace embed
