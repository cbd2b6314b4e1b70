#pragma once
// The one inner loop the scores share. Its summation order depends only on
// the length, never on where the data sits in memory, so two equal rows
// always get bit-identical scores (Eigen's own dot peels to alignment, which
// would let duplicated rows at different addresses tie-break wrongly).

#include "embed/types.hpp"

namespace embed::detail {

/// Lanes of independent partial sums; a multiple of every SIMD width we target.
inline constexpr Index kLanes = 8;

/// a and b are (n), returns sum a[i] * b[i] in a fixed order: 8 lane sums, then the tail, then the lanes pairwise.
inline double dot_kernel(const double* a, const double* b, Index n) {
    double lane[kLanes] = {};
    Index i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        for (Index j = 0; j < kLanes; ++j) lane[j] += a[i + j] * b[i + j];
    }
    for (Index j = 0; i < n; ++i, ++j) lane[j] += a[i] * b[i];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace embed::detail
