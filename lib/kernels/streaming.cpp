#include "kernels/streaming.hpp"

#include <atomic>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

namespace embed::detail {
namespace {

// One atomic per setting: the settings are read at the start of every call from any thread, and written
// only by the sweep and the tests. Each holds its member as an Index (a hint as its number).
#define EMBED_STREAM_SETTING_ATOMIC(type, member, ...) std::atomic<Index> member;
struct Current {
    EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_ATOMIC)
};
#undef EMBED_STREAM_SETTING_ATOMIC

#define EMBED_STREAM_SETTING_STORE(type, member, ...) \
    now.member.store(static_cast<Index>(settings.member), std::memory_order_relaxed);
void store(Current& now, const StreamSettings& settings) { EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_STORE) }
#undef EMBED_STREAM_SETTING_STORE

#define EMBED_STREAM_SETTING_LOAD(type, member, ...) \
    settings.member = static_cast<type>(now.member.load(std::memory_order_relaxed));
StreamSettings load(const Current& now) {
    StreamSettings settings{};
    EMBED_STREAM_SETTINGS(EMBED_STREAM_SETTING_LOAD)
    return settings;
}
#undef EMBED_STREAM_SETTING_LOAD

Current& current() {
    static Current now;
    static const bool stored = (store(now, default_stream_settings()), true);
    (void)stored;
    return now;
}

// The values row allows, as value_text writes them: "1, 2, 4" or "none (-1), nta (0), t0 (3)".
std::string listed(const StreamSettingRow& row) {
    std::string text;
    for (const Index value : row.values) {
        text += text.empty() ? "" : ", ";
        text += row.kind == ValueKind::hint ? value_text(row, value) + " (" + std::to_string(value) + ")"
                                            : std::to_string(value * row.unit);
    }
    return text;
}

// Throws invalid_argument naming the member, its value and what row allows, unless row allows value.
void require_allowed(const StreamSettingRow& row, Index value) {
    const std::string named = std::string(row.member) + " " + std::to_string(value);
    if (row.allowed == Allowed::listed) {
        for (const Index allowed : row.values) {
            if (allowed * row.unit == value) return;
        }
        throw std::invalid_argument(named + " is not one of " + listed(row));
    }
    if (value < row.low || value > row.high) {
        throw std::invalid_argument(named + " is outside [" + std::to_string(row.low) + ", " +
                                    std::to_string(row.high) + "]");
    }
}

/// One kind of CPU and the settings it gets by default.
struct KindDefaults {
    CpuKind kind;
    StreamSettings settings;
};

// The defaults per kind of CPU: no one setting was best on every kind, so each kind has the best of
// `embed_bench --sweep` and head-to-head runs of its best settings there (tools/bench/README.md says how to run
// them). One line of reason per entry; the EMBED_* variables force any of them (default_stream_settings).
constexpr KindDefaults kDefaultsByKind[] = {
    {CpuKind::amd_zen5_or_later,
     {.row_hint = PrefetchHint::nta,           // ahead of prefetcht0 (Intel's choice) head to head on every shape
      .row_distance_bytes = 8192,              // ahead of 4 KiB on every shape, behind it nowhere
      .halve_distance_near_row = true,         // double rows on lines: asking about one row ahead was the slow case
      .rows_per_step = 1,                      // with the prefetch one row beat four rows without it (Zen 3's way)
      .wide_rows_per_step = 4,                 // each step reads the wide vector once for four rows, so it stays in L1
      .wide_row_distance_bytes = 2048,         // four streams ask at once: 2 KiB each beat 1 KiB and 4 KiB
      .float32_hint = PrefetchHint::nta,       // ahead of none and of t0
      .bfloat16_hint = PrefetchHint::nta,      // ahead of t0
      .gather_hint = PrefetchHint::nta,        // an L1 hint for the next row beat Zen 4's L2-only t2 four ahead
      .gather_rows_ahead = 1,                  // one, two or four ahead were alike, none behind t2 four ahead
      .stream_results_above_bytes = 32 * kMiB}},  // a result up to the shared 32 MiB L3 stays there for the next call
    {CpuKind::amd_zen4,
     {.row_hint = PrefetchHint::nta,           // ahead of prefetcht0 and of Zen 3's way, as on Zen 5
      .row_distance_bytes = 4096,              // within the noise of the sweep's best on every shape
      .halve_distance_near_row = false,        // the halving was measured on Zen 5 only
      .rows_per_step = 1,                      // one row beat four on tables that stream and matched it in the caches
      .wide_rows_per_step = 4,                 // one row per step lost on wide vectors, as L1 no longer held them
      .wide_row_distance_bytes = 4096,         // the narrow rows' distance: not tuned for wide rows here
      .float32_hint = PrefetchHint::none,      // a line holds two steps of float32, so a prefetch per line costs more
                                               // than it brings; the hardware prefetchers find the streams alone
      .bfloat16_hint = PrefetchHint::nta,      // unlike float32, none was slower than nta on large tables
      .gather_hint = PrefetchHint::t2,         // fills L2 only from Zen 4 on, leaving L1 to the copy out
      .gather_rows_ahead = 4,                  // two, four and eight ahead were alike with t1 and t2
      .stream_results_above_bytes = 16 * kMiB}},  // streaming paid on a 25 MB result; smaller ones stay in L3
    {CpuKind::other_with_avx512,
     {.row_hint = PrefetchHint::t0,            // on an Intel Xeon t0 beat the hardware prefetchers alone; nta lost
      .row_distance_bytes = 4096,              // the distance that was measured there
      .halve_distance_near_row = false,        // the halving was measured on Zen 5 only
      .rows_per_step = 1,                      // as on AMD's AVX-512 cores; not tuned apart
      .wide_rows_per_step = 4,                 // the wide vector stays in L1, as on every kind
      .wide_row_distance_bytes = 4096,         // the narrow rows' distance
      .float32_hint = PrefetchHint::t0,        // the double loops' hint, for the same reason; not tuned apart
      .bfloat16_hint = PrefetchHint::t0,       // the same
      .gather_hint = PrefetchHint::t0,         // Zen 3's choice; not tuned apart
      .gather_rows_ahead = 2,                  // the same
      .stream_results_above_bytes = 16 * kMiB}},  // the bound measured on AMD; not tuned apart
    {CpuKind::without_avx512,
     {.row_hint = PrefetchHint::none,          // four rows side by side and no software prefetch won every sweep
      .row_distance_bytes = 8192,              // for a forced hint: prefetcht0 8 KiB ahead came next
      .halve_distance_near_row = false,        // the halving was measured on Zen 5 only
      .rows_per_step = 4,                      // four rows side by side read well ahead of one
      .wide_rows_per_step = 4,                 // the same for wide rows
      .wide_row_distance_bytes = 8192,         // the narrow rows' distance
      .float32_hint = PrefetchHint::t0,        // t0 made float32 logits much faster than no prefetch
      .bfloat16_hint = PrefetchHint::t0,       // and bfloat16 likewise
      .gather_hint = PrefetchHint::t0,         // every hint fills L1 on Zen 3 and all were close; t0 among the best
      .gather_rows_ahead = 2,                  // every distance was close too
      .stream_results_above_bytes = 16 * kMiB}},  // the bound measured on Zen 4
};

}  // namespace

StreamSettings default_stream_settings_for(CpuKind kind) {
    for (const KindDefaults& entry : kDefaultsByKind) {
        if (entry.kind == kind) return entry.settings;
    }
    return kDefaultsByKind[std::size(kDefaultsByKind) - 1].settings;  // every kind has a row; else without_avx512's
}

CpuKind cpu_kind_of(bool has_avx512, bool is_amd, int family) {
    if (!has_avx512) return CpuKind::without_avx512;
    if (!is_amd) return CpuKind::other_with_avx512;
    return family <= 25 ? CpuKind::amd_zen4 : CpuKind::amd_zen5_or_later;
}

CpuKind this_cpu_kind() {
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    int family = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        const auto base = static_cast<int>((eax >> 8) & 0xF);
        family = base == 0xF ? base + static_cast<int>((eax >> 20) & 0xFF) : base;
    }
    return cpu_kind_of(__builtin_cpu_supports("avx512f"), __builtin_cpu_is("amd"), family);
#else
    return CpuKind::without_avx512;
#endif
}

std::string value_text(const StreamSettingRow& row, Index value) {
    if (row.kind == ValueKind::hint) return hint_name(static_cast<PrefetchHint>(value));
    return std::to_string(value);
}

std::optional<Index> value_named(const StreamSettingRow& row, const char* text) {
    if (text == nullptr) return std::nullopt;
    for (const Index value : row.values) {
        if (value_text(row, value) == text) return value * row.unit;
    }
    return std::nullopt;
}

StreamSettings default_stream_settings() {
    StreamSettings settings = default_stream_settings_for(this_cpu_kind());
    for (const StreamSettingRow& row : kStreamSettings) {
        if (const std::optional<Index> forced = value_named(row, std::getenv(row.variable))) row.set(settings, *forced);
    }
    return settings;
}

StreamSettings stream_settings() { return load(current()); }

void set_stream_settings(const StreamSettings& settings) {
    for (const StreamSettingRow& row : kStreamSettings) require_allowed(row, row.get(settings));
    store(current(), settings);
}

const char* hint_name(PrefetchHint hint) {
    switch (hint) {
        case PrefetchHint::none: return "none";
        case PrefetchHint::nta: return "nta";
        case PrefetchHint::t2: return "t2";
        case PrefetchHint::t1: return "t1";
        case PrefetchHint::t0: return "t0";
    }
    return "?";
}

}  // namespace embed::detail
