// The verdict: each pair classed by its relative change and row cosine, then the counts in words.

#include "verdict.hpp"

#include <cmath>

namespace embed::compare_tool {

PairChange change_of(const TableComparison& comparison, Index p) {
    const double cosine = (*comparison.row_cosine)[p];
    const double change = (*comparison.relative_change)[p];
    // Two zero rows are the same row; a zero row of a alone has no relative change (NaN) and cosine 0: moved.
    const bool both_zero = comparison.norm_a[p] == 0.0 && comparison.norm_b[p] == 0.0;
    if (both_zero || change <= kIdenticalRelativeChange) return PairChange::identical;
    if (cosine >= kMovedCosine) return PairChange::close;
    return PairChange::moved;
}

Verdict verdict_of(const TableComparison& comparison) {
    Verdict verdict;
    if (comparison.matched == 0) {
        verdict.summary = "no rows paired";
        return verdict;
    }
    if (!comparison.row_cosine) {
        verdict.summary = "the tables differ in width";
        return verdict;
    }
    for (Index p = 0; p < comparison.matched; ++p) {
        switch (change_of(comparison, p)) {
            case PairChange::identical: ++verdict.identical; break;
            case PairChange::close: ++verdict.close; break;
            case PairChange::moved: ++verdict.moved; break;
        }
    }
    const std::string aligned = comparison.rotation ? " after alignment" : "";
    if (verdict.moved == 0) {
        verdict.summary = (verdict.close == 0 ? "identical" : "close") + aligned;
        return verdict;
    }
    verdict.summary = std::to_string(verdict.moved) + " of " + std::to_string(comparison.matched) + " rows moved" + aligned;
    if (verdict.moved < comparison.matched) {
        verdict.summary += verdict.close == 0      ? ", the others identical"
                           : verdict.identical == 0 ? ", the others close"
                                                    : ", the others identical or close";
    }
    return verdict;
}

}  // namespace embed::compare_tool
