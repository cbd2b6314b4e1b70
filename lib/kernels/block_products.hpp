#pragma once
// The vocabulary scan's one SIMD loop, defined in block_products.cpp: each pass of its block Krylov
// iteration (lib/scan/principal_component.cpp) multiplies a block of rows by kProductVectors vectors at once.
// It is compiled for every instruction set (multiversion.hpp) and gives the same bits on each.

#include "embed/types.hpp"

namespace embed::detail {

/// How many vectors add_block_products multiplies together.
inline constexpr Index kProductVectors = 8;

/// zt (kProductVectors, dim) += yt (kProductVectors, count) times block (count, dim), all row-major: each entry
/// adds its count products in row order, one rounded multiply and one rounded add each (no fused multiply-add:
/// -ffp-contract=off), so every instruction set gives the same bits.
void add_block_products(const double* yt, Index count, const double* block, Index dim, double* zt);

}  // namespace embed::detail
