#pragma once
// Vocabulary health: which tokens never learned anything. The method of Land &
// Bartolo (2024), "Fishing for Magikarp": under-trained tokens have small input
// rows, and output rows that point where the rows known to be unused point once
// the output matrix's first principal component (the direction every row
// shares) is projected out.
//
// Every score is computed in double, for double, float32 and bfloat16 tables
// alike, and every reduction runs in a fixed order: the result never depends
// on the thread count. A quantised table (QuantisedTable, as open_table gives
// it) is scanned in its blocks, a few rows at a time dequantised into a small
// float32 buffer: the result is the scan of its widened float32 table.
//
// Rows holding NaN or infinity are left out of the output rows' mean,
// covariance and reference mean; their output_distance is NaN. A NaN
// indicator is never a candidate, and the percentile leaves NaN values out
// (numpy.nanpercentile); with no other value the threshold is NaN. An empty
// table gives empty results and a NaN threshold.

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "embed/quantised_table.hpp"
#include "embed/types.hpp"
#include "embed/vocabulary.hpp"

namespace embed {

/// What scan_vocabulary compares against and where it draws the line.
struct ScanOptions {
    /// Rows known to be unused (see unused_ids); empty: no reference rows. Duplicates count once.
    std::vector<Index> reference_ids;
    /// Candidates: main indicator <= its percentile (numpy's linear rule), in [0, 100].
    double percentile = 2.0;
};

/// Each row's indicators, the threshold and the candidates it picks.
struct VocabularyScan {
    /// (V) L2 norm of each input-embedding row.
    Vector input_norm;
    /// (V) L2 norm of each output row (the input's again when tied).
    Vector output_norm;
    /// (V) 1 - cosine(U'_i, r'): U' = the output rows with their first principal component projected out,
    /// r' = mean of U' over reference_ids; absent when there are no reference ids.
    std::optional<Vector> output_distance;
    /// (V) cosine(E_i, U_i); absent when the two are one table (the same object, or equal bit for bit) or
    /// differ in shape.
    std::optional<Vector> input_output_cosine;
    /// "output_distance" when reference rows exist, else "input_norm".
    std::string main_indicator;
    /// That indicator's percentile.
    double threshold = 0.0;
    /// Ids with indicator <= threshold, by (indicator, id).
    std::vector<Index> candidates;

    // The output rows' first principal component, found only when there are reference ids (else left as
    // below: empty, zeros, not converged). Block Krylov passes over the table on the implicit covariance
    // (never formed) with Rayleigh-Ritz; it stops once the Davis-Kahan bound residual / gap is <= 1e-12,
    // when the bound stalls (a (near-)repeated top eigenvalue) or after 24 passes.

    /// (d') Unit eigenvector of the largest eigenvalue of the output rows' covariance, its entry of largest
    /// magnitude (the first on ties) positive; zeros when the rows do not vary (nothing is projected out).
    Vector principal_component;
    /// Its eigenvalue (the covariance divides by the number of rows used minus one).
    double principal_eigenvalue = 0.0;
    /// Estimated distance to the next eigenvalue: the largest Ritz value minus the second one and its residual.
    double eigenvalue_gap = 0.0;
    /// ||C v - lambda v|| / eigenvalue_gap: the Davis-Kahan bound on sin(angle to the true component).
    double component_error_bound = std::numeric_limits<double>::infinity();
    /// Whether component_error_bound <= 1e-12; false when the top eigenvalue is (near-)degenerate, so
    /// that the component (and output_distance) depends on where the iteration stopped.
    bool principal_component_converged = false;
    /// Passes over the output table the iteration made (each multiplies 8 vectors by the covariance).
    int iterations = 0;
};

/// input (V, d) and output (V, d') of one stored type, returns each row's indicators and the candidates.
/// Reference ids outside [0, V): out_of_range; percentile outside [0, 100] or NaN, or row counts that differ:
/// invalid_argument.
template <TableOrView T>
VocabularyScan scan_vocabulary(const T& input, const T& output, const ScanOptions& options = {});

/// input (V, d) and output (V, d') quantised, of one type or two, never dequantised whole: returns, bit for bit,
/// scan_vocabulary of their widened float32 tables (load_table_f32's), NaN where NaN, at any thread count. They
/// count as one table (no input_output_cosine) when they are the same blocks of one type or dequantise to
/// equal values. Errors as above.
VocabularyScan scan_vocabulary(const QuantisedTable& input, const QuantisedTable& output,
                               const ScanOptions& options = {});

/// Ids of type unused, and of type control whose token contains "unused" or "reserved", ascending (n).
std::vector<Index> unused_ids(const Vocabulary& vocabulary);

}  // namespace embed
