#pragma once
// A GGUF table kept in ggml's blocks as the file stores them (Q4_0 ... Q6_K), never dequantised whole:
// a Q4_K table holds 4.5 bits a value, a seventh of float32. The operations below decode the blocks as they
// score them (logits and the neighbour searches block by block inside their row loops, batched logits a few
// rows at a time into a small float32 buffer), each value exactly as ggml's reference dequantisation
// computes it (the values load_table_f32 gives), widened to double and summed in the double table's order.
// So every result equals, bit for bit, the same operation on the table load_table reads from the same file
// (the values widened to double), NaN where NaN, at any thread count.

#include <concepts>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "embed/element_type.hpp"
#include "embed/similarity.hpp"
#include "embed/types.hpp"

namespace embed {

/// A (V, d) table of one of ggml's block-quantised types: V rows, each d / block_values(type) blocks,
/// stored row after row. Immutable; copies share the blocks.
class QuantisedTable {
public:
    /// An empty (0, 0) table of q8_0.
    QuantisedTable();

    /// A (rows, cols) table of type whose blocks, row after row, are blocks (copied). type not quantised,
    /// a negative size, cols not a multiple of the type's block, or blocks not rows * row_bytes(type, cols)
    /// bytes: std::invalid_argument naming the value; a byte count past 2^63 - 1: std::overflow_error.
    QuantisedTable(ElementType type, Index rows, Index cols, std::span<const std::byte> blocks);

    /// The same, taking a buffer of `bytes` bytes that already holds the blocks (no copy; shared from now on).
    QuantisedTable(ElementType type, Index rows, Index cols, std::shared_ptr<const std::byte[]> blocks, Index bytes);

    /// The element type of its blocks.
    ElementType type() const noexcept { return type_; }
    /// V.
    Index rows() const noexcept { return rows_; }
    /// d.
    Index cols() const noexcept { return cols_; }
    /// V * d values.
    Index size() const noexcept { return rows_ * cols_; }
    /// Bytes one row takes: row_bytes(type(), cols()).
    Index row_bytes() const noexcept { return row_bytes_; }
    /// Bytes of all its blocks: rows() * row_bytes(); what it holds in memory beyond a few words.
    Index bytes() const noexcept { return rows_ * row_bytes_; }
    /// Its blocks, row after row (bytes() bytes).
    const std::byte* data() const noexcept { return blocks_.get(); }

    /// Rows [first, first + count) as ggml dequantises them, as float32 into out (count * d values, row
    /// after row). A range outside [0, V): std::out_of_range naming it, before anything is written.
    void dequantise_rows(Index first, Index count, float* out) const;

private:
    ElementType type_ = ElementType::q8_0;
    Index rows_ = 0;
    Index cols_ = 0;
    Index row_bytes_ = 0;
    std::shared_ptr<const std::byte[]> blocks_;
};

/// table is (V, d) quantised, ids is (n), returns (n, d) float32: row ids[i] dequantised as ggml does it,
/// the rows load_table_f32 gives. Each id must satisfy 0 <= id < V (std::out_of_range otherwise).
TableF32 lookup(const QuantisedTable& table, Ids ids);

/// table is (V, d) quantised, ids is (n), out is (n, d) float32 and preallocated (possibly a block of a
/// larger row-major matrix): writes lookup(table, ids) into it. A wrong id or shape throws before anything
/// is written.
void lookup_into(const QuantisedTable& table, Ids ids, Eigen::Ref<TableF32> out);

/// table is (V, d) quantised, ids is (n), returns (n, d) in double: each id's one-hot row times the table, all
/// V * d products taken, each sum over the rows in order, so the widened table's lookup_via_one_hot bit for bit
/// (NaN in a column where a value of it is NaN or infinite). An id outside [0, V): std::out_of_range.
Table lookup_via_one_hot(const QuantisedTable& table, Ids ids);

/// table is (V, d) quantised, ids is (n), returns (n, d) in double: lookup(table, ids) widened, times
/// std::sqrt(dim), the widened table's scaled_lookup bit for bit. dim < 0: std::invalid_argument; a wrong id:
/// std::out_of_range.
Table scaled_lookup(const QuantisedTable& table, Ids ids, Index dim);

/// table is (V, d) quantised, hidden is (d), returns (V) in double: logits of the widened table, bit for bit.
Vector logits(const QuantisedTable& table, const Vector& hidden);

/// table is (V, d) quantised, hidden is (d), out is (V) and preallocated: writes logits(table, hidden) into it.
void logits_into(const QuantisedTable& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out);

/// table is (V, d) quantised, hidden_rows is (n, d), returns (n, V): row i is logits(table, hidden_rows.row(i)).
Table logits(const QuantisedTable& table, const Table& hidden_rows);

/// table is (V, d) quantised, hidden is any Eigen expression of doubles: a (d) column or row returns (V) like
/// logits(table, Vector), an (n, d) matrix returns (n, V) like the batched overload.
template <class Derived>
    requires std::same_as<typename Derived::Scalar, double>
auto logits(const QuantisedTable& table, const Eigen::MatrixBase<Derived>& hidden) {
    if constexpr (Derived::ColsAtCompileTime == 1 || Derived::RowsAtCompileTime == 1) {
        Vector out(table.rows());
        logits_into(table, hidden, out);
        return out;
    } else {
        return logits(table, Table(hidden));
    }
}

/// table is (V, d) quantised, returns the min(k, V-1) best other ids with their scores in double (k), as
/// rank_neighbours on the widened table gives them; token_id outside [0, V): out_of_range, k < 0: invalid_argument.
std::vector<Neighbour> rank_neighbours(const QuantisedTable& table, Index token_id, Index k, Score score);

/// table is (V, d) quantised, returns the min(k, V-1) other ids (k) with the highest cosine to token_id's row.
std::vector<Index> nearest_by_cosine(const QuantisedTable& table, Index token_id, Index k);

/// table is (V, d) quantised, returns the min(k, V-1) other ids (k) with the highest dot product with token_id's row.
std::vector<Index> nearest_by_dot(const QuantisedTable& table, Index token_id, Index k);

}  // namespace embed
