#include "kernels/streaming.hpp"

#include <algorithm>
#include <atomic>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

namespace embed::detail {
namespace {

// One atomic per field: the settings are read at the start of every call
// from any thread, and written only by the sweep and the tests.
struct Current {
    std::atomic<int> row_hint;
    std::atomic<Index> row_distance_bytes;
    std::atomic<bool> halve_distance_near_row;
    std::atomic<Index> rows_per_step;
    std::atomic<Index> wide_rows_per_step;
    std::atomic<Index> wide_row_distance_bytes;
    std::atomic<int> float32_hint;
    std::atomic<int> bfloat16_hint;
    std::atomic<int> gather_hint;
    std::atomic<Index> gather_rows_ahead;
    std::atomic<Index> stream_results_above_bytes;
};

Current& current() {
    static Current settings = [] {
        const StreamSettings d = default_stream_settings();
        return Current{static_cast<int>(d.row_hint),      d.row_distance_bytes,
                       d.halve_distance_near_row,
                       d.rows_per_step,                   d.wide_rows_per_step,
                       d.wide_row_distance_bytes,
                       static_cast<int>(d.float32_hint),  static_cast<int>(d.bfloat16_hint),
                       static_cast<int>(d.gather_hint),   d.gather_rows_ahead,
                       d.stream_results_above_bytes};
    }();
    return settings;
}

// The float32 and bfloat16 loops are compiled for these three hints only (lib/kernels/narrow_kernels.cpp says why).
bool is_narrow_hint(PrefetchHint hint) {
    return hint == PrefetchHint::none || hint == PrefetchHint::nta || hint == PrefetchHint::t0;
}

void require_in(Index value, Index low, Index high, const char* what) {
    if (value < low || value > high) {
        throw std::invalid_argument(std::string(what) + " " + std::to_string(value) + " is outside [" +
                                    std::to_string(low) + ", " + std::to_string(high) + "]");
    }
}

// text as one of the float32 and bfloat16 loops' hints (none, nta or t0); nullopt for null or any other text.
std::optional<PrefetchHint> narrow_hint_named(const char* text) {
    if (text == nullptr) return std::nullopt;
    for (const PrefetchHint hint : kNarrowPrefetchHints) {
        if (std::strcmp(text, hint_name(hint)) == 0) return hint;
    }
    return std::nullopt;
}

void require_narrow_hint(PrefetchHint hint, const char* what) {
    if (!is_narrow_hint(hint)) {
        throw std::invalid_argument(std::string(what) + " " + std::to_string(static_cast<int>(hint)) +
                                    " is not none (-1), nta (0) or t0 (3)");
    }
}

// The numbers of `allowed` as "1, 2, 4", for messages.
template <std::size_t N>
std::string listed(const Index (&allowed)[N]) {
    std::string text;
    for (const Index number : allowed) text += (text.empty() ? "" : ", ") + std::to_string(number);
    return text;
}

void require_rows_per_step(Index rows, const char* what) {
    if (std::find(std::begin(kRowsPerStepChoices), std::end(kRowsPerStepChoices), rows) ==
        std::end(kRowsPerStepChoices)) {
        throw std::invalid_argument(std::string(what) + " " + std::to_string(rows) + " is not one of " +
                                    listed(kRowsPerStepChoices));
    }
}

// text as a number if it is exactly the decimal form of one of `allowed`; `fallback` otherwise.
template <std::size_t N>
Index number_named(const char* text, const Index (&allowed)[N], Index fallback) {
    if (text == nullptr) return fallback;
    for (const Index number : allowed) {
        if (std::to_string(number) == text) return number;
    }
    return fallback;
}

constexpr Index kMiB = Index{1} << 20;

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

Index rows_per_step_named(const char* text, Index fallback) {
    return number_named(text, kRowsPerStepChoices, fallback);
}

Index row_distance_named(const char* text, Index fallback) { return number_named(text, kRowDistances, fallback); }

Index gather_rows_ahead_named(const char* text, Index fallback) {
    return number_named(text, kGatherRowsAheadChoices, fallback);
}

Index stream_results_above_named(const char* text, Index fallback) {
    constexpr Index kNone = -1;
    const Index mib = number_named(text, kStreamResultsAboveMiBChoices, kNone);
    return mib == kNone ? fallback : mib << 20;
}

PrefetchHint hint_named(const char* hint_text, PrefetchHint fallback) {
    if (hint_text == nullptr) return fallback;
    for (const PrefetchHint hint : kPrefetchHints) {
        if (std::strcmp(hint_text, hint_name(hint)) == 0) return hint;
    }
    return fallback;
}

StreamSettings default_stream_settings() {
    StreamSettings settings = default_stream_settings_for(this_cpu_kind());
    settings.row_hint = hint_named(std::getenv("EMBED_PREFETCH"), settings.row_hint);
    settings.rows_per_step = rows_per_step_named(std::getenv("EMBED_ROWS_PER_STEP"), settings.rows_per_step);
    settings.wide_rows_per_step =
        rows_per_step_named(std::getenv("EMBED_WIDE_ROWS_PER_STEP"), settings.wide_rows_per_step);
    constexpr Index kNotForced = -1;
    const Index forced_distance = row_distance_named(std::getenv("EMBED_PREFETCH_DISTANCE"), kNotForced);
    if (forced_distance != kNotForced) {
        settings.row_distance_bytes = forced_distance;
        settings.halve_distance_near_row = false;  // a forced distance is the distance asked, on rows of any length
    }
    settings.wide_row_distance_bytes =
        row_distance_named(std::getenv("EMBED_WIDE_PREFETCH_DISTANCE"), settings.wide_row_distance_bytes);
    if (const std::optional<PrefetchHint> narrow = narrow_hint_named(std::getenv("EMBED_NARROW_PREFETCH"))) {
        settings.float32_hint = settings.bfloat16_hint = *narrow;
    }
    settings.gather_hint = hint_named(std::getenv("EMBED_GATHER_PREFETCH"), settings.gather_hint);
    settings.gather_rows_ahead =
        gather_rows_ahead_named(std::getenv("EMBED_GATHER_ROWS_AHEAD"), settings.gather_rows_ahead);
    settings.stream_results_above_bytes = stream_results_above_named(std::getenv("EMBED_STREAM_RESULTS_ABOVE_MIB"),
                                                                     settings.stream_results_above_bytes);
    return settings;
}

StreamSettings stream_settings() {
    const Current& now = current();
    return {static_cast<PrefetchHint>(now.row_hint.load(std::memory_order_relaxed)),
            now.row_distance_bytes.load(std::memory_order_relaxed),
            now.halve_distance_near_row.load(std::memory_order_relaxed),
            now.rows_per_step.load(std::memory_order_relaxed),
            now.wide_rows_per_step.load(std::memory_order_relaxed),
            now.wide_row_distance_bytes.load(std::memory_order_relaxed),
            static_cast<PrefetchHint>(now.float32_hint.load(std::memory_order_relaxed)),
            static_cast<PrefetchHint>(now.bfloat16_hint.load(std::memory_order_relaxed)),
            static_cast<PrefetchHint>(now.gather_hint.load(std::memory_order_relaxed)),
            now.gather_rows_ahead.load(std::memory_order_relaxed),
            now.stream_results_above_bytes.load(std::memory_order_relaxed)};
}

void set_stream_settings(const StreamSettings& settings) {
    require_in(settings.row_distance_bytes, 0, 65536, "prefetch distance in bytes");
    require_in(settings.wide_row_distance_bytes, 0, 65536, "wide prefetch distance in bytes");
    require_rows_per_step(settings.rows_per_step, "rows per step");
    require_rows_per_step(settings.wide_rows_per_step, "wide rows per step");
    require_in(settings.gather_rows_ahead, 0, 64, "gather rows ahead");
    require_in(settings.stream_results_above_bytes, 0, Index{1} << 40, "bound of the results streamed in bytes");
    require_in(static_cast<int>(settings.row_hint), -1, 3, "row prefetch hint");
    require_in(static_cast<int>(settings.gather_hint), -1, 3, "gather prefetch hint");
    require_narrow_hint(settings.float32_hint, "float32 prefetch hint");
    require_narrow_hint(settings.bfloat16_hint, "bfloat16 prefetch hint");
    Current& now = current();
    now.row_hint.store(static_cast<int>(settings.row_hint), std::memory_order_relaxed);
    now.row_distance_bytes.store(settings.row_distance_bytes, std::memory_order_relaxed);
    now.halve_distance_near_row.store(settings.halve_distance_near_row, std::memory_order_relaxed);
    now.rows_per_step.store(settings.rows_per_step, std::memory_order_relaxed);
    now.wide_rows_per_step.store(settings.wide_rows_per_step, std::memory_order_relaxed);
    now.wide_row_distance_bytes.store(settings.wide_row_distance_bytes, std::memory_order_relaxed);
    now.float32_hint.store(static_cast<int>(settings.float32_hint), std::memory_order_relaxed);
    now.bfloat16_hint.store(static_cast<int>(settings.bfloat16_hint), std::memory_order_relaxed);
    now.gather_hint.store(static_cast<int>(settings.gather_hint), std::memory_order_relaxed);
    now.gather_rows_ahead.store(settings.gather_rows_ahead, std::memory_order_relaxed);
    now.stream_results_above_bytes.store(settings.stream_results_above_bytes, std::memory_order_relaxed);
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
