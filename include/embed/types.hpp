#pragma once
// The vocabulary of the whole library: one alias per concept, defined once.
// V is the vocabulary size, d the width of a row, n a count of ids.

#include <cstdint>
#include <span>

#include <Eigen/Core>

namespace embed {

/// Token ids, sizes and counts: one signed 64-bit type everywhere.
using Index = std::int64_t;

/// An embedding table, (V, d), one row per token, stored row by row.
using Table = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A (V, d) table in storage the caller owns (a numpy array, a mapped file), read in place, never copied.
/// Every function that reads a const Table& has an overload taking one.
using TableView = Eigen::Map<const Table>;

/// table is (V, d), returns a view (V, d) of its own storage.
inline TableView view_of(const Table& table) { return TableView(table.data(), table.rows(), table.cols()); }

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
