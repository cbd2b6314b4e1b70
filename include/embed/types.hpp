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

/// Every type a table's values may be stored as: double, float32 or bfloat16.
template <class Scalar>
concept StoredScalar = std::same_as<Scalar, double> || NarrowScalar<Scalar>;

/// A (V, d) table of Scalar in storage the caller owns (a numpy array, a mapped file), read in place, never copied.
template <class Scalar>
using BasicTableView = Eigen::Map<const BasicTable<Scalar>>;

/// A double (V, d) table the caller owns, read in place.
using TableView = BasicTableView<double>;

/// A float32 (V, d) table the caller owns, read in place.
using TableViewF32 = BasicTableView<float>;

/// A bfloat16 (V, d) table the caller owns, read in place.
using TableViewBF16 = BasicTableView<Eigen::bfloat16>;

/// What every table function takes as its table: a BasicTable of a StoredScalar, owned, or viewed in place
/// (BasicTableView, or an Eigen::Map of a writable one). Other Eigen expressions (a block, a column-major
/// matrix) are not tables: pass Table(expr). One declaration per operation serves all nine types.
template <class T>
concept TableOrView = StoredScalar<typename T::Scalar> &&
                      (std::same_as<T, BasicTable<typename T::Scalar>> ||
                       std::same_as<T, BasicTableView<typename T::Scalar>> ||
                       std::same_as<T, Eigen::Map<BasicTable<typename T::Scalar>>>);

/// A TableOrView whose values are stored as exactly Scalar (for the functions defined for one type only).
template <class T, class Scalar>
concept TableOf = TableOrView<T> && std::same_as<typename T::Scalar, Scalar>;

/// table is (V, d) of any stored type, owned or viewed, returns a view (V, d) of its storage.
template <TableOrView T>
BasicTableView<typename T::Scalar> view_of(const T& table) {
    return BasicTableView<typename T::Scalar>(table.data(), table.rows(), table.cols());
}

/// A hidden vector (d) or a vector of logits (V).
using Vector = Eigen::VectorXd;

/// A one-hot row (V), or a row times a matrix (d).
using RowVector = Eigen::RowVectorXd;

/// Token ids (n); a std::vector<Index> binds to it.
using Ids = std::span<const Index>;

/// The vocabulary size V of the exercise's measured table (SPECIFICATION.md, Constants).
inline constexpr Index VOCAB = 512;
/// The row width d of the exercise's measured table (SPECIFICATION.md, Constants).
inline constexpr Index DIM = 64;
/// The seed the exercise gives make_table (SPECIFICATION.md, Constants).
inline constexpr std::uint64_t SEED = 20260917;

}  // namespace embed
