#pragma once
// The vocabulary scan (embed/scan.hpp) of each compared table, as embed_scan runs it by default: the table as
// its own input and output (tied), the vocabulary's unused tokens as reference rows (none without token
// names: then the lowest input norms), the 2nd percentile. It answers "which under-trained rows moved".

#include <optional>
#include <string>
#include <vector>

#include <embed/io.hpp>
#include <embed/scan.hpp>
#include <embed/vocabulary.hpp>

namespace embed::compare_tool {

/// The scan's percentile: embed_scan's default.
inline constexpr double kScanPercentile = 2.0;

/// What the scan of one side found.
struct SideScan {
    Index reference_count = 0;     // reference rows used (the vocabulary's unused tokens within the table)
    std::string reference_from;    // "unused tokens" or "none", as embed_scan says it
    std::string main_indicator;    // "output_distance" or "input_norm"
    double threshold = 0.0;        // the indicator's kScanPercentile-th percentile; NaN for no finite value
    std::vector<Index> candidates; // (n) ids of the side's table, by (indicator, id)
};

/// table (V, d; a quantised one in its blocks) scanned as a tied model with vocabulary's default reference rows (tools::default_reference_ids);
/// any V and d, empty included (the library defines them: no candidates, a NaN threshold).
SideScan scan_side(const OpenedTable& table, const std::optional<Vocabulary>& vocabulary);

}  // namespace embed::compare_tool
