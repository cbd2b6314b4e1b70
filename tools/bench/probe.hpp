#pragma once
// A memory-bandwidth probe: how fast this machine streams a large array with
// all its cores, the ceiling every operation of the library is measured against.

#include <cstddef>

namespace embed_bench {

/// data is (n) doubles; sums them with `threads` threads over contiguous halves and returns the sum.
double probe_read(const double* data, std::size_t n, int threads);

/// Copies n doubles from source to target with `threads` threads over contiguous parts.
void probe_copy(const double* source, double* target, std::size_t n, int threads);

}  // namespace embed_bench
