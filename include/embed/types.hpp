#pragma once
// The vocabulary of the whole library: one alias per concept, defined once.
// V is the vocabulary size, d the width of a row, n a count of ids.

#include <concepts>
#include <cstdint>
#include <span>

#include <Eigen/Core>

namespace embed {

/// Token ids, sizes and counts: one signed 64-bit type everywhere.
using Index = std::int64_t;

/// A (V, d) table whose values are stored as Scalar, one row per token, stored row by row.
template <class Scalar>
using BasicTable = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// An embedding table, (V, d), one row per token, stored row by row.
using Table = BasicTable<double>;

/// A (V, d) table stored in float32, as GPT-2's ships; scores over it are still summed in double.
using TableF32 = BasicTable<float>;

/// A (V, d) table stored in bfloat16, as Llama's and Gemma's ship; scores over it are still summed in double.
using TableBF16 = BasicTable<Eigen::bfloat16>;

/// The storage types narrower than double that the table functions also accept: float32 and bfloat16.
template <class Scalar>
concept NarrowScalar = std::same_as<Scalar, float> || std::same_as<Scalar, Eigen::bfloat16>;

/// A (V, d) table in storage the caller owns (a numpy array, a mapped file), read in place, never copied.
/// Every function that reads a const Table& has an overload taking one.
using TableView = Eigen::Map<const Table>;

/// table is (V, d), returns a view (V, d) of its own storage.
inline TableView view_of(const Table& table) { return TableView(table.data(), table.rows(), table.cols()); }

/// A (V, d) table of Scalar in storage the caller owns, read in place; TableView is BasicTableView<double>.
template <class Scalar>
using BasicTableView = Eigen::Map<const BasicTable<Scalar>>;

/// A float32 (V, d) table the caller owns, read in place.
using TableViewF32 = BasicTableView<float>;

/// A bfloat16 (V, d) table the caller owns, read in place.
using TableViewBF16 = BasicTableView<Eigen::bfloat16>;

/// table is (V, d) of Scalar, returns a view (V, d) of its own storage.
template <class Scalar>
BasicTableView<Scalar> view_of(const BasicTable<Scalar>& table) {
    return BasicTableView<Scalar>(table.data(), table.rows(), table.cols());
}

/// A hidden vector (d) or a vector of logits (V).
using Vector = Eigen::VectorXd;

/// A one-hot row (V), or a row times a matrix (d).
using RowVector = Eigen::RowVectorXd;

/// Token ids (n); a std::vector<Index> binds to it.
using Ids = std::span<const Index>;

/// The specification's vocabulary size V.
inline constexpr Index VOCAB = 512;
/// The specification's row width d.
inline constexpr Index DIM = 64;
/// The specification's seed for make_table.
inline constexpr std::uint64_t SEED = 20260917;

}  // namespace embed
