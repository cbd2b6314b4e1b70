#pragma once
// The comparison in a few words: whether every paired row is the same (up to the rotation, when one was
// fitted), close, or whether some rows moved, and how many of each. The thresholds are the tool's, documented
// in tools/compare/README.md.

#include <string>

#include <embed/compare.hpp>

namespace embed::compare_tool {

/// A pair is identical when norm(a_i R - b_j) / norm(a_i) is at most this (or both rows are zero): float32
/// rounding of a copy, or of a rotated copy, stays near 1e-7; float16 rounding is near 1e-4 already.
inline constexpr double kIdenticalRelativeChange = 1e-5;
/// A pair moved when its row cosine is below this (or NaN); a re-quantised copy (Q8_0, Q4_K) keeps every row
/// above it, a row retrained or replaced falls below it.
inline constexpr double kMovedCosine = 0.99;

/// What became of one pair.
enum class PairChange { identical, close, moved };

/// Pair p of comparison (p in [0, matched)), which must have row cosines (tables of one width).
PairChange change_of(const TableComparison& comparison, Index p);

/// The comparison's verdict: the summary in words and the pairs of each kind.
struct Verdict {
    /// "identical", "close" or "N of M rows moved" (with "after alignment" when a rotation was fitted, and
    /// what the other rows are); "no rows paired"; "the tables differ in width" when there are no row cosines.
    std::string summary;
    Index identical = 0;
    Index close = 0;
    Index moved = 0;
};

/// The verdict on comparison (every pair counted once).
Verdict verdict_of(const TableComparison& comparison);

}  // namespace embed::compare_tool
