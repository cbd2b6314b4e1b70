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
/// whose two rows are finite (identity when there are none): R = U V^T from the SVD of A_m^T B_m.
Table fit_rotation(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs);

/// Fills norm_a, norm_b and, for equal widths, row_cosine and relative_change of comparison (its pairs and
/// rotation set).
void measure_rows(const AnyTableView& a, const AnyTableView& b, TableComparison& comparison);

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
