#pragma once
// The float32 all-pairs products the comparison screens its neighbour candidates with (lib/compare/
// neighbour_screen.cpp), defined in screen_products.cpp and compiled for AVX-512, AVX2 and the baseline.
// They are not exact: the caller bounds their error (neighbour_screen.cpp says how) and rescores in double
// every candidate the bound cannot rule out. Each product is summed in an order fixed by dim and the
// instruction set (lane j adds the products of values j, j + W, j + 2W, ... with W the vector width, the lanes
// are then added by halves and the values past the last whole vector after them), never by where the pair falls
// in a block or which thread computes it.

#include <Eigen/Core>

#include "embed/types.hpp"

namespace embed::detail {

/// probes is (m, dim) float32, rows is (count, dim) of the stored type, both row-major; out(i, t) at
/// out[i * out_stride + t] is the float32 sum of the float32 products of probe i and row t, each stored value
/// first rounded to float32 (exact for float32 and bfloat16, once to nearest for double).
void screen_products(const float* probes, Index m, const float* rows, Index count, Index dim, float* out,
                     Index out_stride);
/// The same for bfloat16 rows.
void screen_products(const float* probes, Index m, const Eigen::bfloat16* rows, Index count, Index dim, float* out,
                     Index out_stride);
/// The same for double rows.
void screen_products(const float* probes, Index m, const double* rows, Index count, Index dim, float* out,
                     Index out_stride);

}  // namespace embed::detail
