#pragma once
// Weight tying as an object: one table serves the input (lookup) and the
// output (logits). Both directions read the same storage; a copy or a move
// gets its own single table, still shared by its own two directions.

#include "embed/types.hpp"

namespace embed {

/// One (V, d) table of double, float32 or bfloat16 used both to embed ids and to score hidden vectors.
/// Embedding returns the stored rows in the table's type; logits are summed in double, so a narrow table's
/// are bit for bit those of the table widened to double. Defined in the library for the three types.
template <StoredScalar Scalar>
class BasicTiedEmbedding {
public:
    /// Takes ownership of table (V, d).
    explicit BasicTiedEmbedding(BasicTable<Scalar> table);

    /// ids is (n), returns (n, d) of the table's type: lookup in the one table.
    BasicTable<Scalar> embed(Ids ids) const;

    /// hidden is (d), returns (V) in double: logits against the same table.
    Vector logits(const Vector& hidden) const;

    /// The table as the input layer, (V, d); the same object as output_weights().
    const BasicTable<Scalar>& input_weights() const { return table_; }

    /// The table as the output layer, (V, d); the same object as input_weights().
    const BasicTable<Scalar>& output_weights() const { return table_; }

    /// Parameters counted once: V * d.
    Index param_count() const;

private:
    BasicTable<Scalar> table_;
};

/// A tied embedding over one double table.
using TiedEmbedding = BasicTiedEmbedding<double>;
/// A tied embedding over one float32 table.
using TiedEmbeddingF32 = BasicTiedEmbedding<float>;
/// A tied embedding over one bfloat16 table.
using TiedEmbeddingBF16 = BasicTiedEmbedding<Eigen::bfloat16>;

/// Separate input (V, d) and output (V, d) tables: the untied baseline.
class UntiedEmbedding {
public:
    /// Takes ownership of both tables; their shapes must match (invalid_argument otherwise).
    UntiedEmbedding(Table input, Table output);

    /// ids is (n), returns (n, d): lookup in the input table.
    Table embed(Ids ids) const;

    /// hidden is (d), returns (V): logits against the output table.
    Vector logits(const Vector& hidden) const;

    /// The input table (V, d).
    const Table& input_weights() const { return input_; }

    /// The output table (V, d), a different object from input_weights().
    const Table& output_weights() const { return output_; }

    /// Parameters of both tables: 2 * V * d.
    Index param_count() const;

private:
    Table input_;
    Table output_;
};

}  // namespace embed
