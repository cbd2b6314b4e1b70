#pragma once
// How the loops that stream a table ask for memory before they use it: the
// software prefetch hint, how far ahead, and how many rows one step reads.
// The defaults differ by kind of CPU (lib/kernels/streaming.cpp has them in one table, with
// why); `embed_bench --sweep` changes them through set_stream_settings to find the
// best setting on a new CPU (tools/bench/README.md says how). No setting
// changes a result: every row is still summed in dot_kernel's order.

#include <cstdint>

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
    bool halve_distance_near_row;  // double rows on lines ask half as far when that lands near the next row
    Index rows_per_step;       // rows read side by side (1, 2 or 4); others fall back to 1
    Index wide_rows_per_step;  // the same for rows whose hidden vector is wide (rows_per_step_for says when)
    Index wide_row_distance_bytes;  // the distance for those rows, in each of the rows' streams
    PrefetchHint float32_hint;   // hint of the float32 row loops (none, nta or t0; the row loops' distance)
    PrefetchHint bfloat16_hint;  // hint of the bfloat16 row loops (none, nta or t0; the same distance)
    PrefetchHint gather_hint;  // hint of the gather's prefetch of a whole row
    Index gather_rows_ahead;   // how many rows ahead of the one being copied it asks for
    Index stream_results_above_bytes;  // the gather writes larger results with non-temporal stores
};

/// Which CPUs the defaults are chosen for: the kinds differ in how the row loops stream best.
enum class CpuKind {
    amd_zen4,           // AMD with AVX-512 in CPU family 25: Zen 4, which runs 512-bit work as two halves
    amd_zen5_or_later,  // AMD with AVX-512 in a later family (26 is Zen 5), which runs it at full width
    other_with_avx512,  // Intel's AVX-512 cores, and any other vendor's
    without_avx512,     // AVX2 and below (Zen 3 among them)
};

/// The kind of a CPU from what it reports: whether it has AVX-512F, whether it is AMD's, and its family
/// (base plus extended family of CPUID leaf 1, as /proc/cpuinfo's "cpu family").
CpuKind cpu_kind_of(bool has_avx512, bool is_amd, int family);

/// The kind of CPU this process runs on, from __builtin_cpu_supports("avx512f"), __builtin_cpu_is("amd") and
/// CPUID's family (without_avx512 off x86-64).
CpuKind this_cpu_kind();

/// The settings the library ships with for a kind of CPU.
StreamSettings default_stream_settings_for(CpuKind kind);

/// text as rows per step ("1", "2" or "4"); `fallback` when it is null or none of them.
Index rows_per_step_named(const char* text, Index fallback);

/// text as a prefetch distance in bytes ("1024", "2048", "4096" or "8192", the sweep's); `fallback` otherwise.
Index row_distance_named(const char* text, Index fallback);

/// Every hint, from none to prefetcht0: what EMBED_PREFETCH takes and what the sweep tries.
inline constexpr PrefetchHint kPrefetchHints[] = {PrefetchHint::none, PrefetchHint::nta, PrefetchHint::t2,
                                                  PrefetchHint::t1, PrefetchHint::t0};

/// The hints the float32 and bfloat16 row loops have (EMBED_NARROW_PREFETCH takes them; the sweep tries them).
inline constexpr PrefetchHint kNarrowPrefetchHints[] = {PrefetchHint::none, PrefetchHint::nta, PrefetchHint::t0};

/// The prefetch distances, in bytes, the environment variables take and the sweep tries.
inline constexpr Index kRowDistances[] = {1024, 2048, 4096, 8192};

/// The rows per step the row loops have (others fall back to 1), which the environment and the sweep take.
inline constexpr Index kRowsPerStepChoices[] = {1, 2, 4};

/// The gather's rows ahead the environment and the sweep take.
inline constexpr Index kGatherRowsAheadChoices[] = {1, 2, 4, 8};

/// The bounds, in MiB, past which the gather streams its result that EMBED_STREAM_RESULTS_ABOVE_MIB takes.
inline constexpr Index kStreamResultsAboveMiBChoices[] = {0, 8, 16, 32, 64};

/// Hidden vectors of more than this many bytes (2048 doubles) are wide: each step of a row loop reads the
/// whole vector once for all its rows, and past half of the smallest L1 data cache we target (32 KiB) the
/// vector and the streamed rows push each other out, so reading more rows per vector read pays.
inline constexpr Index kWideVectorBytes = Index{16} << 10;

/// Whether a hidden vector of `dim` values is wide (the row loops' wide settings apply to its rows).
inline bool is_wide_vector(Index dim) { return dim * Index{sizeof(double)} > kWideVectorBytes; }

/// How many rows side by side a row loop over rows of `dim` values reads under `settings`.
inline Index rows_per_step_for(const StreamSettings& settings, Index dim) {
    return is_wide_vector(dim) ? settings.wide_rows_per_step : settings.rows_per_step;
}

/// Whether asking `distance` bytes ahead lands within an eighth of `distance` of one row of `row_bytes` ahead.
inline bool lands_near_next_row(Index distance, Index row_bytes) {
    const Index gap = distance > row_bytes ? distance - row_bytes : row_bytes - distance;
    return 8 * gap < distance;
}

/// Whether every row of a table at `rows` with rows of `row_bytes` bytes starts on a 64-byte line.
inline bool rows_start_on_lines(const void* rows, Index row_bytes) {
    return reinterpret_cast<std::uintptr_t>(rows) % 64 == 0 && row_bytes % 64 == 0;
}

/// How far ahead, in bytes of each row, a row loop over rows of `dim` values asks under `settings`.
inline Index row_distance_for(const StreamSettings& settings, Index dim) {
    return is_wide_vector(dim) ? settings.wide_row_distance_bytes : settings.row_distance_bytes;
}

/// row_distance_for for the double row loops: halved when halve_distance_near_row is set, the rows start on
/// lines and it lands near the next row (at 8 KiB, rows of more than 7 and less than 9 KiB; lib/kernels/streaming.cpp
/// says why). The float32 and bfloat16 loops ask row_distance_for as it is.
inline Index double_row_distance_for(const StreamSettings& settings, Index dim, bool rows_on_lines) {
    const Index distance = row_distance_for(settings, dim);
    const bool halve = settings.halve_distance_near_row && rows_on_lines && !is_wide_vector(dim) &&
                       lands_near_next_row(distance, dim * Index{sizeof(double)});
    return halve ? distance / 2 : distance;
}

/// text as the gather's rows ahead ("1", "2", "4" or "8"); `fallback` when it is null or none of them.
Index gather_rows_ahead_named(const char* text, Index fallback);

/// text as MiB ("0", "8", "16", "32" or "64"), returned in bytes; `fallback` when it is null or none of them.
Index stream_results_above_named(const char* text, Index fallback);

/// hint_text as a hint name ("none", "nta", "t2", "t1", "t0"); `fallback` when it is null or none of them.
PrefetchHint hint_named(const char* hint_text, PrefetchHint fallback);

/// The defaults for this CPU, with the row loops' hint forced by EMBED_PREFETCH=none|nta|t2|t1|t0, their
/// rows per step by EMBED_ROWS_PER_STEP=1|2|4 (EMBED_WIDE_ROWS_PER_STEP=1|2|4 for wide vectors), their
/// distance by EMBED_PREFETCH_DISTANCE=1024|2048|4096|8192 (which also turns halve_distance_near_row off: the
/// forced distance is the one asked; EMBED_WIDE_PREFETCH_DISTANCE for wide), the float32
/// and bfloat16 loops' hints (both) by EMBED_NARROW_PREFETCH=none|nta|t0, the gather's hint by
/// EMBED_GATHER_PREFETCH=none|nta|t2|t1|t0 and its rows ahead by EMBED_GATHER_ROWS_AHEAD=1|2|4|8 if set (an
/// unknown value is ignored, as EMBED_NUM_THREADS's are).
StreamSettings default_stream_settings();

/// The settings in force now.
StreamSettings stream_settings();

/// Tables of up to this many bytes are read from the caches once they have been read once: the row loops and
/// the gather ask for nothing ahead in them (each prefetch takes a load slot and finds the line there already).
inline constexpr Index kPrefetchAboveTableBytes = Index{8} << 20;

/// Whether a table of table_bytes bytes streams from memory, so that asking for its lines ahead can pay.
inline bool streams_from_memory(Index table_bytes) { return table_bytes > kPrefetchAboveTableBytes; }

/// Uses `settings` from now on (for embed_bench's sweep and the tests); not while another thread is inside a
/// library call. Throws std::invalid_argument naming the value for either distance outside [0, 65536], either rows
/// per step other than 1, 2 or 4, rows ahead outside [0, 64], or a float32 or bfloat16 hint other than none,
/// nta or t0.
void set_stream_settings(const StreamSettings& settings);

/// hint's name as the sweep prints it: "none", "nta", "t2", "t1" or "t0".
const char* hint_name(PrefetchHint hint);

}  // namespace embed::detail
