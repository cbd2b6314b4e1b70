#pragma once
// Logits: the same table that embeds tokens scores a hidden vector against
// every token (weight tying). The table is read in place, never copied.

#include <concepts>

#include "embed/types.hpp"

namespace embed {

/// table is (V, d), hidden is (d), returns (V): out[t] = sum over c of table(t, c) * hidden[c].
Vector logits(const Table& table, const Vector& hidden);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
Vector logits(TableView table, const Vector& hidden);

/// table is (V, d), hidden is (d), out is (V) and preallocated: writes logits(table, hidden) into it, allocating nothing.
void logits_into(const Table& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
void logits_into(TableView table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);

/// table is (V, d), hidden_rows is (n, d), returns (n, V): row i is logits(table, hidden_rows.row(i)).
Table logits(const Table& table, const Table& hidden_rows);

// The same on float32 and bfloat16 tables (defined in the library for both): each stored value is
// widened to double and every product and sum is done in double in the same order, so every score
// equals, bit for bit, the score of the same table widened to double.

/// table is (V, d) of float32 or bfloat16, hidden is (d), returns (V) in double: logits of the widened table.
template <NarrowScalar Scalar>
Vector logits(const BasicTable<Scalar>& table, const Vector& hidden);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
Vector logits(BasicTableView<Scalar> table, const Vector& hidden);

/// table is (V, d) of float32 or bfloat16, hidden is (d), out is (V) and preallocated: writes
/// logits(table, hidden) into it, allocating nothing.
template <NarrowScalar Scalar>
void logits_into(const BasicTable<Scalar>& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
void logits_into(BasicTableView<Scalar> table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);

/// table is (V, d) of float32 or bfloat16, hidden_rows is (n, d), returns (n, V) in double: row i is
/// logits(table, hidden_rows.row(i)). Peak memory beyond the result: a few hundred KiB per thread.
template <NarrowScalar Scalar>
Table logits(const BasicTable<Scalar>& table, const Table& hidden_rows);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
Table logits(BasicTableView<Scalar> table, const Table& hidden_rows);

/// table is (V, d), hidden is any Eigen expression: a (d) column or row (a table row binds without a copy)
/// returns (V) like logits(table, Vector); an (n, d) matrix returns (n, V) like the batched overload.
/// Without it an expression such as `table.row(t)` would convert equally well to Vector and Table.
template <class Derived>
auto logits(const Table& table, const Eigen::MatrixBase<Derived>& hidden) {
    if constexpr (Derived::ColsAtCompileTime == 1 || Derived::RowsAtCompileTime == 1) {
        Vector out(table.rows());
        logits_into(table, hidden, out);
        return out;
    } else {
        return logits(table, Table(hidden));
    }
}

/// table is (V, d) of float32 or bfloat16, hidden is any Eigen expression of doubles: a (d) column or row
/// returns (V) like logits(table, Vector); an (n, d) matrix returns (n, V) like the batched overload.
template <NarrowScalar Scalar, class Derived>
    requires std::same_as<typename Derived::Scalar, double>
auto logits(const BasicTable<Scalar>& table, const Eigen::MatrixBase<Derived>& hidden) {
    if constexpr (Derived::ColsAtCompileTime == 1 || Derived::RowsAtCompileTime == 1) {
        Vector out(table.rows());
        logits_into(table, hidden, out);
        return out;
    } else {
        return logits(table, Table(hidden));
    }
}

}  // namespace embed
