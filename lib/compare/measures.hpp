#pragma once
// The comparison's measures, one file each (matching, rotation, row_measures, neighbourhoods,
// logit_agreement), joined by lib/compare.cpp. Tables come as AnyTableView; every value is widened to double.

#include <span>
#include <vector>

#include "embed/compare.hpp"

namespace embed::detail {

/// table is (V, d) of any stored type, ids is (n) valid rows, returns those rows widened to double (n, d).
Table widened_rows(const AnyTableView& table, std::span<const Index> ids);

/// table is (V, d) of any stored type, hidden is (n, d), returns (n, V): logits(table, hidden).
Table all_scores(const AnyTableView& table, const Table& hidden);

/// rows is (n, d), rotation is (d, d), returns rows times rotation (n, d), every entry summed in a fixed order.
Table times_rotation(const Table& rows, const Table& rotation);

/// The pair indices (count) that rank first among [0, n) by score[t] (higher first, NaN below every number),
/// ties by key[t] (lower first), skipping index `skip` (-1: none); count <= n (minus one with a skip).
std::vector<Index> top_indices(const double* score, const Index* key, Index n, Index count, Index skip);

/// a is (Va, d), b is (Vb, d), returns the orthogonal R (d, d) minimising ||A_m R - B_m||_F over the pairs
/// whose two rows are finite (identity when there are none): polar_factor(M) of M = A_m^T B_m (= U V^T from
/// M's SVD when M is nonsingular), M summed chunk after chunk of pairs by the fixed-order logits kernel.
Table fit_rotation(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs);

/// m is (n, n); returns the orthogonal polar factor R (n, n) of m (m = R H, H symmetric positive
/// semidefinite; U V^T from m's SVD), every floating-point operation in an order n alone fixes, so the bits
/// do not depend on the compiler's flags (polar_factor.cpp; test/support/polar_reference.py repeats it in
/// CPython). X_0 = m 2^-e (largest entry in [0.5, 1)), then Higham's scaled Newton iteration
/// X' = 0.5 (zeta X + X^-T / zeta), zeta = sqrt(||X^-1||_F / ||X||_F), 1 once a step moves X by at most 1/100
/// of ||X||_F, the inverse by Gauss-Jordan elimination with partial pivoting; it stops after the step that
/// moves X by at most 2^-26 (Frobenius), 50 steps at most. When m is singular (a zero pivot) or the
/// iteration fails (a value not finite, the step cap), it is run again from X_0 + 2^-40 I: R is then the polar
/// factor of that matrix, a minimiser of ||A R - B|| to about 2^-40 relative on the directions m determines
/// and leaning to the identity on those it leaves free; if that fails too, R is the identity. An all-zero m
/// gives the identity, a non-finite entry an all-NaN R, and n = 0 an empty R.
Table polar_factor(const Table& m);

/// Fills norm_a, norm_b and, for equal widths, row_cosine and relative_change of comparison (its pairs and
/// rotation set).
void measure_rows(const AnyTableView& a, const AnyTableView& b, TableComparison& comparison);

/// cosine from a dot product and two norms, 0.0 when either norm is 0 (as embed::cosine).
inline double cosine_from_norms(double dot, double norm_x, double norm_y) {
    const double norms = norm_x * norm_y;
    return norm_x == 0.0 || norm_y == 0.0 ? 0.0 : dot / norms;
}

/// One table's side of the neighbourhoods: the table, its norm per pair (n, as measure_rows gives them) and its
/// id per pair (n).
struct NeighbourSide {
    const AnyTableView* table = nullptr;
    const Vector* norms = nullptr;
    std::vector<Index> ids;
};

/// probes are pair indices (P); returns per probe its count nearest pairs by cosine in side's table, as
/// top_indices ranks the double cosines (itself skipped), best first. Every cosine is computed in double.
std::vector<std::vector<Index>> nearest_pairs_in_double(const NeighbourSide& side, std::span<const Index> probes,
                                                        Index count);

/// Whether nearest_pairs_screened's error bound holds for side's paired rows: every value finite with
/// max |v|^2 d <= 2^120, and d <= 167772 (neighbour_screen.cpp says why).
bool screen_covers(const NeighbourSide& side);

/// The same lists as nearest_pairs_in_double, bit for bit, for a side screen_covers: the cosines screened in
/// float32 and only the pairs an error bound cannot rule out rescored in double (neighbour_screen.cpp).
std::vector<std::vector<Index>> nearest_pairs_screened(const NeighbourSide& side, std::span<const Index> probes,
                                                       Index count);

/// Per probe pair index (P): the overlap of its k nearest neighbours by cosine in a and in b (see
/// TableComparison::neighbour_overlap); norm_a and norm_b of comparison must be set.
Vector neighbour_overlaps(const AnyTableView& a, const AnyTableView& b, const TableComparison& comparison,
                          std::span<const Index> probe_pairs, Index k);

/// The logit measures over hidden (n, d) (see TableComparison); rotation null for unaligned tables.
struct LogitAgreement {
    double top1_agreement = 0.0;
    double topk_overlap = 0.0;
    double kl_divergence = 0.0;
    double max_abs_logit_diff = 0.0;
};
LogitAgreement logit_agreement(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs,
                               const Table& hidden, const Table* rotation, Index k);

}  // namespace embed::detail
