#pragma once
// The summation order every score of the library is documented to use
// (lib/kernels/base.hpp), written out as plainly as possible: lane j adds the
// products of values j, j + 8, j + 16, ... in turn, starting from 0.0, then
// the eight lanes are added pairwise. Tests compare scores to it bit for bit.

#include <Eigen/Core>

namespace embed_test {

/// a and b are (n), returns their dot product in the documented order.
inline double dot_in_documented_order(const double* a, const double* b, Eigen::Index n) {
    double lane[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (Eigen::Index i = 0; i < n; ++i) lane[i % 8] += a[i] * b[i];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace embed_test
