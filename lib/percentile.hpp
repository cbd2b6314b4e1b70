#pragma once
// The one percentile rule of the library's summaries (the scan's threshold, the comparison's percentiles).

#include "embed/types.hpp"

namespace embed::detail {

/// values is (n), returns their percentile-th percentile (percentile in [0, 100]) by numpy.nanpercentile's
/// default (linear) rule: NaN values are left out; NaN when every value is NaN or there are none.
double nan_percentile(const Vector& values, double percentile);

}  // namespace embed::detail
