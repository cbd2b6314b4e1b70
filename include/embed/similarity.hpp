#pragma once
// Dot product, length and cosine, and the nearest neighbours of a token
// ranked by either score. Stretching one row shows where the two part ways:
// the dot product grows with length, the cosine sees only direction.
//
// A float32 or bfloat16 table is scored in double on its widened values in
// the double table's order, so the scores, and therefore the rankings (ties,
// NaN), are bit for bit those of the same table widened to double.

#include <vector>

#include "embed/types.hpp"

namespace embed {

/// a and b are (d), returns sum over i of a[i] * b[i]; lengths differ: invalid_argument.
double dot(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b);

/// a is (d), returns sqrt(dot(a, a)); 0.0 for an empty vector.
double norm(Eigen::Ref<const Vector> a);

/// a and b are (d), returns dot / (norm(a) * norm(b)); 0.0 when either norm is 0.
double cosine(Eigen::Ref<const Vector> a, Eigen::Ref<const Vector> b);

/// table is (V, d) of double, float32 or bfloat16 (owned or viewed), returns a new (V, d) table of its type with
/// row token_id times factor (for a narrow table: formed in double, rounded once to nearest, ties to even);
/// the argument is untouched.
template <TableOrView T>
BasicTable<typename T::Scalar> stretch(const T& table, Index token_id, double factor);

/// Which score ranks the neighbours.
enum class Score { dot, cosine };

/// One neighbour: its id and its score against the query row.
struct Neighbour {
    Index id = 0;
    double score = 0.0;
    friend bool operator==(const Neighbour&, const Neighbour&) = default;
};

/// table is (V, d) of any stored type, returns the min(k, V-1) best other ids with their scores in double (k),
/// best first, equal scores by smaller id, NaN below every number; token_id outside [0, V): out_of_range,
/// k < 0: invalid_argument.
template <TableOrView T>
std::vector<Neighbour> rank_neighbours(const T& table, Index token_id, Index k, Score score);

/// table is (V, d) of any stored type, returns the min(k, V-1) other ids (k) with the highest cosine to
/// token_id's row, best first.
template <TableOrView T>
std::vector<Index> nearest_by_cosine(const T& table, Index token_id, Index k);

/// table is (V, d) of any stored type, returns the min(k, V-1) other ids (k) with the highest dot product with
/// token_id's row, best first.
template <TableOrView T>
std::vector<Index> nearest_by_dot(const T& table, Index token_id, Index k);

}  // namespace embed
