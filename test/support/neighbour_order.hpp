#pragma once
// The order the library gives neighbours (SPECIFICATION.md, Ranking), written out for the
// tests' brute-force references: a higher score first, every number before
// NaN, then the smaller id.

#include <cmath>

#include <embed/similarity.hpp>

namespace embed_test {

/// Whether a ranks before b in that order.
inline bool ranks_before(const embed::Neighbour& a, const embed::Neighbour& b) {
    if (std::isnan(a.score) != std::isnan(b.score)) return std::isnan(b.score);
    if (!std::isnan(a.score) && a.score != b.score) return a.score > b.score;
    return a.id < b.id;
}

}  // namespace embed_test
