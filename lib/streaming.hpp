#pragma once
// How the loops that stream a table ask for memory before they use it: the
// software prefetch hint, how far ahead, and how many rows one step reads.
// The defaults were chosen with `embed_bench --sweep` on Intel and AMD
// (tools/bench/README.md has the runs); the sweep changes them through
// set_stream_settings to find the best setting on a new CPU. No setting
// changes a result: every row is still summed in dot_kernel's order.

#include "embed/types.hpp"

namespace embed::detail {

/// Which __builtin_prefetch locality to ask with, or none at all.
enum class PrefetchHint : int {
    none = -1,
    nta = 0,  // prefetchnta: non-temporal, bypasses as much of the cache as the CPU allows
    t2 = 1,   // prefetcht2
    t1 = 2,   // prefetcht1
    t0 = 3,   // prefetcht0: into every cache level
};

/// The streaming choices of the row loops (logits, neighbour searches) and of the row gather (lookup).
struct StreamSettings {
    PrefetchHint row_hint;     // hint of the row loops' prefetch, one per 64-byte line read
    Index row_distance_bytes;  // how far ahead of the line being read it asks
    Index rows_per_step;       // rows read side by side (1, 2 or 4); others fall back to 1
    PrefetchHint gather_hint;  // hint of the gather's prefetch of a whole row
    Index gather_rows_ahead;   // how many rows ahead of the one being copied it asks for
};

/// The settings the library ships with.
StreamSettings default_stream_settings();

/// The settings in force now.
StreamSettings stream_settings();

/// Uses `settings` from now on (for embed_bench's sweep and the tests); not while another thread is inside a
/// library call. Throws std::invalid_argument naming the value for a distance outside [0, 65536], rows per step
/// other than 1, 2 or 4, or rows ahead outside [0, 64].
void set_stream_settings(const StreamSettings& settings);

/// hint's name as the sweep prints it: "none", "nta", "t2", "t1" or "t0".
const char* hint_name(PrefetchHint hint);

}  // namespace embed::detail
