#pragma once
// The comparison's random draws, as CPython's random.Random makes them, so that Python rebuilds them from the
// seed alone: random.sample for the probe rows and random.gauss for the hidden vectors.

#include <cstdint>
#include <vector>

#include "embed/python_random.hpp"
#include "embed/types.hpp"

namespace embed::detail {

/// random.Random(seed).sample(range(n), count) (count <= n), in draw order (count).
std::vector<Index> python_sample(std::uint64_t seed, Index n, Index count);

/// g = random.Random(seed); [[g.gauss(0.0, 1.0) for c in range(cols)] for r in range(rows)], (rows, cols).
Table python_gauss_rows(std::uint64_t seed, Index rows, Index cols);

}  // namespace embed::detail
