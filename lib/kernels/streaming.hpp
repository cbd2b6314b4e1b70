#pragma once
// How the loops that stream a table ask for memory before they use it: the
// software prefetch hint, how far ahead, and how many rows one step reads.
// The defaults differ by kind of CPU (lib/kernels/streaming.cpp has them in one table, with
// why); `embed_bench --sweep` changes them through set_stream_settings to find the
// best setting on a new CPU (tools/bench/README.md says how). No setting
// changes a result: every row is still summed in dot_kernel's order.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

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

/// The values each setting's environment variable takes and the sweep tries (hints as their numbers).
inline constexpr Index kPrefetchHintValues[] = {-1, 0, 1, 2, 3};
/// The float32 and bfloat16 loops are compiled for these three hints only (narrow_kernels.cpp says why).
inline constexpr Index kNarrowPrefetchHintValues[] = {-1, 0, 3};
/// Prefetch distances in bytes.
inline constexpr Index kRowDistances[] = {1024, 2048, 4096, 8192};
/// The rows per step the row loops are compiled for.
inline constexpr Index kRowsPerStepChoices[] = {1, 2, 4};
/// The gather's rows ahead.
inline constexpr Index kGatherRowsAheadChoices[] = {1, 2, 4, 8};
/// Bounds of the results the gather streams, in MiB.
inline constexpr Index kStreamResultsAboveMiBChoices[] = {0, 8, 16, 32, 64};
/// Off and on.
inline constexpr Index kFlagValues[] = {0, 1};

inline constexpr Index kMiB = Index{1} << 20;

/// What set_stream_settings accepts for a setting: any value in [low, high], or only its listed values.
enum class Allowed { range, listed };

/// Every streaming setting of the row loops (logits, neighbour searches) and of the row gather (lookup),
/// once: X(type, member, environment variable, the values the variable takes and the sweep tries, the
/// variable's unit in the member's, what set_stream_settings allows, low, high, meaning). It makes the
/// StreamSettings struct, the values the settings are kept in between calls, default_stream_settings'
/// variables, set_stream_settings' checks, the sweep's candidates and the table of variables in
/// include/embed/API.md (streaming_test checks it lists exactly these rows).
#define EMBED_STREAM_SETTINGS(X)                                                                                  \
    X(PrefetchHint, row_hint, "EMBED_PREFETCH", kPrefetchHintValues, 1, Allowed::range, -1, 3,                    \
      "the double row loops' prefetch hint, one per 64-byte line read")                                            \
    X(Index, row_distance_bytes, "EMBED_PREFETCH_DISTANCE", kRowDistances, 1, Allowed::range, 0, 65536,            \
      "how far ahead of the line being read the row loops ask, in bytes")                                         \
    X(bool, halve_distance_near_row, "EMBED_HALVE_DISTANCE_NEAR_ROW", kFlagValues, 1, Allowed::range, 0, 1,        \
      "1: the double loops' rows that start on lines ask half as far when that lands near the next row")           \
    X(Index, rows_per_step, "EMBED_ROWS_PER_STEP", kRowsPerStepChoices, 1, Allowed::listed, 1, 4,                  \
      "rows the row loops read side by side")                                                                     \
    X(Index, wide_rows_per_step, "EMBED_WIDE_ROWS_PER_STEP", kRowsPerStepChoices, 1, Allowed::listed, 1, 4,        \
      "the same for rows whose hidden vector is wide (more than 2048 doubles)")                                   \
    X(Index, wide_row_distance_bytes, "EMBED_WIDE_PREFETCH_DISTANCE", kRowDistances, 1, Allowed::range, 0, 65536, \
      "the distance for those rows, in each of the rows' streams, in bytes")                                      \
    X(PrefetchHint, float32_hint, "EMBED_FLOAT32_PREFETCH", kNarrowPrefetchHintValues, 1, Allowed::listed, -1, 3,  \
      "the float32 row loops' hint, at the row loops' distance")                                                  \
    X(PrefetchHint, bfloat16_hint, "EMBED_BFLOAT16_PREFETCH", kNarrowPrefetchHintValues, 1, Allowed::listed, -1,   \
      3, "the bfloat16 row loops' hint, at the same distance")                                                    \
    X(PrefetchHint, gather_hint, "EMBED_GATHER_PREFETCH", kPrefetchHintValues, 1, Allowed::range, -1, 3,           \
      "the row gather's prefetch hint, for a whole row")                                                          \
    X(Index, gather_rows_ahead, "EMBED_GATHER_ROWS_AHEAD", kGatherRowsAheadChoices, 1, Allowed::range, 0, 64,      \
      "how many rows ahead of the one being copied the gather asks")                                              \
    X(Index, stream_results_above_bytes, "EMBED_STREAM_RESULTS_ABOVE_MIB", kStreamResultsAboveMiBChoices, kMiB,    \
      Allowed::range, 0, Index{1} << 40,                                                                         \
      "the result size past which the gather writes with non-temporal stores (the variable in MiB)")

#define EMBED_STREAM_SETTING_MEMBER(type, member, ...) type member;
/// The streaming settings, one member per row of EMBED_STREAM_SETTINGS, in its order.
struct StreamSettings {
    EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_MEMBER)
    friend bool operator==(const StreamSettings&, const StreamSettings&) = default;
};
#undef EMBED_STREAM_SETTING_MEMBER

#define EMBED_STREAM_SETTING_ID(type, member, ...) member,
/// Each setting's row in kStreamSettings.
enum class StreamSetting : std::size_t { EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_ID) };
#undef EMBED_STREAM_SETTING_ID

/// How a setting's values are written in its variable: a hint's name, 0 or 1, or a decimal number.
enum class ValueKind { hint, flag, number };

template <class T>
constexpr ValueKind value_kind_of() {
    if constexpr (std::is_same_v<T, PrefetchHint>) {
        return ValueKind::hint;
    } else if constexpr (std::is_same_v<T, bool>) {
        return ValueKind::flag;
    } else {
        return ValueKind::number;
    }
}

/// One row of EMBED_STREAM_SETTINGS, with the member read and written as an Index (a hint as its number).
struct StreamSettingRow {
    const char* member;
    const char* variable;
    ValueKind kind;
    std::span<const Index> values;  // in the variable's unit
    Index unit;                     // the variable's unit in the member's (1, or kMiB)
    Allowed allowed;
    Index low;
    Index high;
    const char* meaning;
    Index (*get)(const StreamSettings&);
    void (*set)(StreamSettings&, Index);
};

#define EMBED_STREAM_SETTING_ROW(type, member, variable, values, unit, allowed, low, high, meaning)          \
    StreamSettingRow{#member,                                                                                \
                     variable,                                                                               \
                     value_kind_of<type>(),                                                                  \
                     values,                                                                                 \
                     unit,                                                                                   \
                     allowed,                                                                                \
                     low,                                                                                    \
                     high,                                                                                   \
                     meaning,                                                                                \
                     [](const StreamSettings& s) { return static_cast<Index>(s.member); },                   \
                     [](StreamSettings& s, Index value) { s.member = static_cast<type>(value); }},
/// Every streaming setting, in StreamSetting's order.
inline constexpr StreamSettingRow kStreamSettings[] = {EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_ROW)};
#undef EMBED_STREAM_SETTING_ROW

/// The row of one setting.
constexpr const StreamSettingRow& stream_setting(StreamSetting which) {
    return kStreamSettings[static_cast<std::size_t>(which)];
}

/// value (in the variable's unit) as the variable writes it: "nta", "1", "4096".
std::string value_text(const StreamSettingRow& row, Index value);

/// The member's value the variable's text names (exactly one of row.values as value_text writes it, times
/// row.unit); std::nullopt for null or any other text.
std::optional<Index> value_named(const StreamSettingRow& row, const char* text);

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

/// The defaults for this CPU, with each setting forced by its variable (EMBED_STREAM_SETTINGS) if set to one
/// of the values it takes (any other text is ignored, as EMBED_NUM_THREADS's is).
StreamSettings default_stream_settings();

/// The settings in force now.
StreamSettings stream_settings();

/// Tables of up to this many bytes are read from the caches once they have been read once: the row loops and
/// the gather ask for nothing ahead in them (each prefetch takes a load slot and finds the line there already).
inline constexpr Index kPrefetchAboveTableBytes = Index{8} << 20;

/// Whether a table of table_bytes bytes streams from memory, so that asking for its lines ahead can pay.
inline bool streams_from_memory(Index table_bytes) { return table_bytes > kPrefetchAboveTableBytes; }

/// Uses `settings` from now on (for embed_bench's sweep and the tests); not while another thread is inside a
/// library call. A setting outside what its row allows throws std::invalid_argument naming the member, the
/// value and what is allowed, and changes nothing.
void set_stream_settings(const StreamSettings& settings);

/// hint's name as the sweep prints it: "none", "nta", "t2", "t1" or "t0".
const char* hint_name(PrefetchHint hint);

}  // namespace embed::detail
