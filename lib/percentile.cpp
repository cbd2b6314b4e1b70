#include "percentile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace embed::detail {

// numpy.nanpercentile's default (linear) rule: NaN values are left out; virtual index (n - 1) * q / 100,
// then numpy's two-sided interpolation between its neighbours. NaN when every value is NaN.
double nan_percentile(const Vector& values, double percentile) {
    std::vector<double> sorted;
    sorted.reserve(static_cast<std::size_t>(values.size()));
    for (const double x : values) {
        if (!std::isnan(x)) sorted.push_back(x);
    }
    if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(sorted.begin(), sorted.end());
    const auto n = static_cast<double>(sorted.size());
    const double virtual_index = (n - 1.0) * (percentile / 100.0);
    const double below = std::floor(virtual_index);
    if (virtual_index >= n - 1.0) return sorted.back();
    const double a = sorted[static_cast<std::size_t>(below)];
    const double b = sorted[static_cast<std::size_t>(below) + 1];
    const double t = virtual_index - below;
    const double difference = b - a;
    return t >= 0.5 ? b - difference * (1.0 - t) : a + difference * t;
}

}  // namespace embed::detail
