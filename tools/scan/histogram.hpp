#pragma once
// The scan's figure: a histogram of the main indicator over every row, the
// threshold marked and the candidates' share of each bar highlighted.

#include <string>

#include "scan_run.hpp"

namespace embed::scan_tool {

/// An SVG document (a fixed 760 x 300 canvas) of run's main indicator: finite values in 60 equal bins from the
/// smallest to the largest, the candidates (values at or below the threshold) drawn in their own colour, the
/// threshold as a vertical line; NaN and infinite values are counted in the caption, not drawn (a table with
/// none finite says so in the plot). Each bar is a rect of class "candidates" or "others" with its bin
/// (data-bin, 0-59) and count (data-n); its height is the count over the tallest bin's, times the plot's.
std::string histogram_svg(const ScanRun& run);

}  // namespace embed::scan_tool
