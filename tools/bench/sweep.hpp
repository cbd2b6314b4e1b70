#pragma once
// embed_bench --sweep: times logits and lookup_into under every streaming
// setting (prefetch hint and distance, rows per step, gather rows ahead) on
// one table, and float32 logits on it narrowed under the float32 and
// bfloat16 loops' two hints at each distance and rows per step, in
// interleaved rounds, and
// prints each setting's median beside the fastest; then times the default
// and the three fastest again, head to head over four times as many rounds,
// so that on a new CPU one command shows which setting wins and how far the
// library's default really is from it (the fastest of dozens of noisy
// medians is fast partly by luck).

#include <embed/types.hpp>

namespace embed_bench {

/// Runs the sweep on a (vocab, dim) table made by make_table over `rounds` rounds; prints markdown to stdout.
int run_sweep(embed::Index vocab, embed::Index dim, int rounds);

}  // namespace embed_bench
