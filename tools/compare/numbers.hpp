#pragma once
// How the Markdown and the page print numbers, and the summaries they print of a list.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <embed/types.hpp>

#include "page.hpp"

namespace embed::compare_tool {

/// value with six significant digits (%.6g), "NaN", "+inf" and "-inf", as every page shows numbers.
inline std::string number(double value) { return pages::shown_number(value); }

/// The mean of values (n) in order, NaN left out; NaN when none is a number.
inline double mean_of(const Vector& values) {
    double sum = 0.0;
    Index count = 0;
    for (const double x : values) {
        if (std::isnan(x)) continue;
        sum += x;
        ++count;
    }
    return count == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(count);
}

/// The smallest of values (n), NaN left out; NaN when none is a number.
inline double lowest_of(const Vector& values) {
    double lowest = std::numeric_limits<double>::quiet_NaN();
    for (const double x : values) {
        if (!std::isnan(x) && !(x >= lowest)) lowest = x;
    }
    return lowest;
}

}  // namespace embed::compare_tool
