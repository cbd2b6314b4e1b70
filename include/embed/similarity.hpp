#pragma once
// Dot product, length and cosine, and the nearest neighbours of a token
// ranked by either score. Stretching one row shows where the two part ways:
// the dot product grows with length, the cosine sees only direction.

#include <vector>

#include "embed/types.hpp"

namespace embed {

/// a and b are (d), returns sum over i of a[i] * b[i]; lengths differ: invalid_argument.
double dot(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b);

/// a is (d), returns sqrt(dot(a, a)); 0.0 for an empty vector.
double norm(Eigen::Ref<const Vector> a);

/// a and b are (d), returns dot / (norm(a) * norm(b)); 0.0 when either norm is 0.
double cosine(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b);

/// table is (V, d), returns a new (V, d) table with row token_id times factor; the argument is untouched.
Table stretch(const Table& table, Index token_id, double factor);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
Table stretch(TableView table, Index token_id, double factor);

/// Which score ranks the neighbours.
enum class Score { dot, cosine };

/// One neighbour: its id and its score against the query row.
struct Neighbour {
    Index id = 0;
    double score = 0.0;
    friend bool operator==(const Neighbour&, const Neighbour&) = default;
};

/// table is (V, d), returns the min(k, V-1) best other ids with their scores (k), best first,
/// equal scores by smaller id, NaN below every number; token_id outside [0, V): out_of_range, k < 0: invalid_argument.
std::vector<Neighbour> rank_neighbours(const Table& table, Index token_id, Index k, Score score);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
std::vector<Neighbour> rank_neighbours(TableView table, Index token_id, Index k, Score score);

/// table is (V, d), returns the min(k, V-1) other ids (k) with the highest cosine to token_id's row, best first.
std::vector<Index> nearest_by_cosine(const Table& table, Index token_id, Index k);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
std::vector<Index> nearest_by_cosine(TableView table, Index token_id, Index k);

/// table is (V, d), returns the min(k, V-1) other ids (k) with the highest dot product with token_id's row, best first.
std::vector<Index> nearest_by_dot(const Table& table, Index token_id, Index k);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
std::vector<Index> nearest_by_dot(TableView table, Index token_id, Index k);

// The same on float32 and bfloat16 tables (defined in the library for both). Scores are computed in
// double on the widened values in the double table's order, so they, and therefore the rankings (ties,
// NaN), are bit for bit those of the same table widened to double.

/// table is (V, d) of float32 or bfloat16, returns a new table of the same type with row token_id times
/// factor: the product formed in double, then rounded to the table's type (nearest, ties to even).
template <NarrowScalar Scalar>
BasicTable<Scalar> stretch(const BasicTable<Scalar>& table, Index token_id, double factor);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
BasicTable<Scalar> stretch(BasicTableView<Scalar> table, Index token_id, double factor);

/// table is (V, d) of float32 or bfloat16, returns the min(k, V-1) best other ids with their scores (k)
/// in double, as rank_neighbours on the widened table.
template <NarrowScalar Scalar>
std::vector<Neighbour> rank_neighbours(const BasicTable<Scalar>& table, Index token_id, Index k, Score score);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
std::vector<Neighbour> rank_neighbours(BasicTableView<Scalar> table, Index token_id, Index k, Score score);

/// table is (V, d) of float32 or bfloat16, returns (k) ids as nearest_by_cosine on the widened table.
template <NarrowScalar Scalar>
std::vector<Index> nearest_by_cosine(const BasicTable<Scalar>& table, Index token_id, Index k);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
std::vector<Index> nearest_by_cosine(BasicTableView<Scalar> table, Index token_id, Index k);

/// table is (V, d) of float32 or bfloat16, returns (k) ids as nearest_by_dot on the widened table.
template <NarrowScalar Scalar>
std::vector<Index> nearest_by_dot(const BasicTable<Scalar>& table, Index token_id, Index k);
/// The same on a table the caller holds elsewhere, (V, d), read in place.
template <NarrowScalar Scalar>
std::vector<Index> nearest_by_dot(BasicTableView<Scalar> table, Index token_id, Index k);

}  // namespace embed
