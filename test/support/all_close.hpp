#pragma once
// AllClose: element-wise comparison of two Eigen objects that, on failure,
// reports the shapes or the largest difference and where it is.

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <Eigen/Core>
#include <gtest/gtest.h>

namespace embed_test {

/// |got - want| <= tolerance * max(1, |want|) everywhere; tolerance 0.0 asks for exact equality.
/// NaN matches NaN at the same place, since a table may hold NaN on purpose.
template <typename Got, typename Want>
testing::AssertionResult AllClose(const Eigen::DenseBase<Got>& got, const Eigen::DenseBase<Want>& want,
                                  double tolerance) {
    if (got.rows() != want.rows() || got.cols() != want.cols()) {
        return testing::AssertionFailure() << "shapes differ: got " << got.rows() << " x " << got.cols()
                                           << ", want " << want.rows() << " x " << want.cols();
    }
    double worst = 0.0;
    Eigen::Index worst_r = -1;
    Eigen::Index worst_c = -1;
    for (Eigen::Index r = 0; r < got.rows(); ++r) {
        for (Eigen::Index c = 0; c < got.cols(); ++c) {
            const double g = got(r, c);
            const double w = want(r, c);
            if (std::isnan(g) && std::isnan(w)) continue;
            if (g == w) continue;  // equal infinities included
            double excess = std::fabs(g - w) / std::max(1.0, std::fabs(w));
            if (std::isnan(excess)) excess = std::numeric_limits<double>::infinity();  // NaN vs a number, inf vs inf
            if (worst_r < 0 || excess > worst) {
                worst = excess;
                worst_r = r;
                worst_c = c;
            }
        }
    }
    if (worst_r < 0 || worst <= tolerance) return testing::AssertionSuccess();
    std::ostringstream out;
    out.precision(17);
    out << "largest difference at (" << worst_r << ", " << worst_c << "): got " << got(worst_r, worst_c)
        << ", want " << want(worst_r, worst_c) << ", relative difference " << worst << " > tolerance "
        << tolerance;
    return testing::AssertionFailure() << out.str();
}

}  // namespace embed_test
