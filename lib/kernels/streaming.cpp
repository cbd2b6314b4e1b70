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

// The float32 and bfloat16 loops are compiled for these three hints only (lib/kernels_narrow.cpp says why).
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

}  // namespace

// From `embed_bench --sweep` and head-to-head runs of its best settings
// (tools/bench/README.md has the runs). No one setting was good on every CPU
// we measured, so the defaults depend on the kind of CPU:
// - without AVX-512 (Zen 3): four rows per step, no software prefetch. Four
//   rows side by side read 15-45 % faster than one, and no prefetch was the
//   best setting in all four sweeps, prefetcht0 8 KiB ahead 3-8 % behind it,
//   one row with prefetcht0 4 KiB ahead 1.14-1.47x.
// - AMD with AVX-512 (Zen 5 and Zen 4): one row per step, the non-temporal prefetch 4
//   KiB ahead. Head to head against prefetcht0 4 KiB ahead (Intel's choice)
//   it was faster in every run: by 1-10 % on GPT-2's shape and the 1 GiB
//   table in 2026-12-01's runs of 41 and 21 rounds, by 6 % and 10 % in the
//   sweep's 20 rounds on 2026-12-02. The Zen 3 choice was 1.2-1.4x the best.
//   On Zen 4 (2026-12-03) the sweep put it within 1 % of the best, head to
//   head, on both shapes. On Zen 5 it asks 8 KiB ahead: earlier sweeps
//   there had 8 KiB level with 4 KiB on GPT-2's shape and 1.06-1.08x ahead
//   for float32 on the 1 GiB table; on 2026-12-05 the sweep's head to head
//   (28 rounds) put 4 KiB behind 8 KiB on GPT-2's shape by 1.103x (double)
//   and 1.159x (float32), on the 1 GiB table by 1.054x and 1.129x; one
//   process, the two in random order, 15 rounds, per-round time of 8 KiB
//   over 4 KiB's, median: double logits 0.934 (GPT-2) and 0.948 (1 GiB),
//   float32 0.872 and 0.951, bfloat16 0.982 and 0.961, nearest_by_cosine
//   0.937 and 0.986 (9 rounds). 8 KiB lost nowhere.
// - double rows on lines about one row long, Zen 5: half the distance
//   (halve_distance_near_row; double_row_distance_for says when). Once
//   each row's first line was read apart (row_loops.hpp), asking about one
//   row ahead was the slow distance for double rows that start on lines: 1 GiB
//   tables, 8 KiB's time over 4 KiB's 1.07-1.18 at widths 896-1152 and
//   0.85-1.03 at 256-768 and 1280-2048 (2026-12-05); in a second scan, per
//   round over 8 KiB's, 6 KiB 1.149 on rows of 6 KiB, 12 KiB 1.183 on rows
//   of 12 KiB, 4 KiB 1.044 on rows of 4 KiB, while 8 KiB was the fastest
//   of 4-16 KiB on all three. Rows 16 bytes past their lines (a numpy
//   array's) do not share it: at width 1024 4 KiB took 1.14-1.19x 8 KiB's
//   time. So on lines 8 KiB becomes 4 KiB for rows of 7-9 KiB; one process,
//   the default with the halving over without, per round, median of 15-21:
//   logits 0.90-0.96 on the 1 GiB table (three runs), nearest_by_dot and
//   nearest_by_cosine 0.90-1.02, logits 0.84 on 132000 x 1016 and 0.84-1.05
//   on GPT-2 medium's 50257 x 1024. The float32 loops keep 8 KiB: on
//   131072 x 2048 (rows of 8 KiB) the halving took 1.12x the time in two
//   runs. Not measured on Zen 4, Intel or Zen 3, which do not halve.
//   EMBED_PREFETCH_DISTANCE turns it off with the distance it forces.
// - any other CPU with AVX-512 (Intel Xeon): one row per step, prefetcht0 4
//   KiB ahead. On an Intel Xeon (Emerald Rapids) that took logits on GPT-2's
//   shape from 17.7 ms with the hardware prefetchers alone to 14.7 ms, where
//   the non-temporal hint took 23.1 ms: Zen 5's choice would cost Intel 1.6x.
// EMBED_PREFETCH and EMBED_ROWS_PER_STEP force any of them.
// - wide rows (a hidden vector of more than 2048 doubles, kWideVectorBytes):
//   four rows per step on every kind. Each step reads the whole vector once
//   for all its rows; at one row per step a float32 row of 4096 values reads
//   32 KiB of vector for 16 KiB of row, and the vector no longer stays in
//   L1. On Zen 4 (2026-12-03), 768 MiB double tables, rounds in random
//   order, one row's time over four's, median: d = 768 double 0.72, float32
//   0.61, bfloat16 0.58; d = 2048 0.92, 0.93, 1.04; d = 3072 1.04, 1.19,
//   1.30; d = 4096 1.06, 1.27, 1.48. On Llama 3's 128256 x 4096 four rows
//   made float32 logits 1.22x and bfloat16 1.35x faster than one. Zen 3
//   read four rows already, and so did Zen 5's float32 and bfloat16 loops
//   (89 % of the probe on Llama 3's shape); Zen 5's double loops on wide
//   rows and everything on Intel are not measured.
//   EMBED_WIDE_ROWS_PER_STEP forces it.
// - wide rows' distance: 2 KiB ahead in each of the four rows' streams on
//   Zen 5, the narrow rows' distance elsewhere. On Zen 5 (2026-12-04),
//   Llama 3's 128256 x 4096, huge pages, settings in random order in one
//   process, median of each round's time over no prefetch's: float32
//   logits nta 1 KiB 0.76, 2 KiB 0.79, 4 KiB 0.88 (15 rounds); double
//   logits 0.96, 0.97 and 1.12 (9 rounds), the sweep's head to head
//   putting 4 KiB 1.06x behind 1 KiB; bfloat16 0.63-0.64 at all three.
//   That chose 1 KiB. On the same kind of Zen 5 (2026-12-05) the sweep on
//   that shape put 1 KiB behind 2 KiB head to head, 28 rounds each: double
//   logits 1.070x (middle half 1.034-1.083x), float32 1.127x
//   (1.105-1.201x); then one process, rounds in random order, five calls
//   each, per-round time over 1 KiB's, median of 15 rounds: float32 2 KiB
//   0.864 (0.838-0.914), 4 KiB 0.920; bfloat16 2 KiB 0.824 (0.799-0.829),
//   4 KiB 0.857. 2 KiB is never behind 1 KiB by more than the noise in
//   either day's runs, and well ahead in today's, so it is the default.
//   Four streams 4 KiB ahead ask for 16 KiB at once, a whole float32 row.
//   Not measured on Zen 4, Intel or Zen 3, which keep the distance they had.
//   EMBED_WIDE_PREFETCH_DISTANCE (EMBED_PREFETCH_DISTANCE for the narrow
//   rows) forces it.
// - float32 and bfloat16: the double loops' rows per step and distance; nta
//   for bfloat16 on AMD with AVX-512, for float32 nta on Zen 5 and no
//   software prefetch on Zen 4, t0 for both elsewhere
//   (EMBED_NARROW_PREFETCH forces one hint on both). Zen 4 and Zen 5 want
//   opposite float32 hints, so the kind tells them apart by CPU family.
//   Float32 on Zen 5 (2026-12-04, the run above), per-round time over no
//   prefetch's: Llama 3's shape, four rows per step, nta 0.76-0.88 by
//   distance; GPT-2's shape, one row per step 4 KiB ahead, nta 0.90 of
//   none (21 rounds); the sweep's head to head on Llama 3's shape put no
//   prefetch 1.24x behind nta 2 KiB.
//   Float32 on Zen 4 (2026-12-03), huge pages, none / nta / t0 timed in
//   random order in one process, per-round time over nta's, median of 9 to
//   31 rounds, four runs: logits on Llama 3's shape 0.86, 0.90, 0.92, 0.94,
//   nearest_by_dot 0.90, 0.92, 0.92, 0.94, on GPT-2's shape logits 0.82,
//   0.95, 0.96, 0.97 and nearest_by_dot 0.84, 0.98, 0.99, 1.01 (cosine
//   0.90-1.01, t0 0.99-1.05 of nta throughout). Each float32 line holds two
//   steps of eight values, so a prefetch and its bookkeeping per line per
//   row is a large share of the loop, and the hardware prefetchers find
//   the four rows' streams without it. bfloat16 on the same runs: none took
//   1.04-1.09x nta's time on Llama 3's shape (0.92-1.05x on GPT-2's), so it
//   keeps nta. They had read
//   four rows per step everywhere; on Zen 4, GPT-2's shape, rounds in random
//   order, one row took 0.63-0.75x the time of four (float32 logits,
//   nearest_by_dot, nearest_by_cosine; bfloat16 logits 0.63-0.67x), and on
//   tables in the caches (512 x 64 to 4096 x 768) one was as fast or faster.
//   On Zen 5 (2026-12-02, 8 alternating rounds) one row had taken 0.93-0.94x
//   four's time on GPT-2's shape and 1.12-1.19x on Llama 3's: the same split
//   by width, smaller.
//   On Zen 3 t0 made float32 logits 1.4x faster than no prefetch. On Zen 5,
//   four rows per step, tables in huge pages, 7 alternating runs of
//   embed_bench (2026-12-02), medians of the share of the paired read probe,
//   nta against t0: float32 logits 97 against 88 % on GPT-2's shape and 89
//   against 82 % on Llama 3's, bfloat16 89 against 79 % and 88 against 75 %,
//   float32 nearest_by_dot 97 against 89 % (an earlier 9 runs: nta ahead on
//   three of those four logits). Not yet measured on an Intel Xeon, where t0
//   stays for the reason the double loops' does.
// - gather, Zen 4: prefetcht2 for the row four ahead. From Zen 4 on, AMD's
//   prefetcht1 and prefetcht2 fill L2 only (earlier cores fill L1 on every
//   hint), and a gather that writes each row out at once gains from leaving
//   L1 to the copy. On a Zen 4 (2026-12-03), rounds in random order, the old
//   default's (t0, two ahead) time over this one's, per round, median:
//   lookup_into 1.19x (GPT-2's shape) and 1.19x (the 1 GiB table), lookup
//   1.16x and 1.07x, float32 lookup 1.22x and 1.19x; t1 and t2 at 2, 4 and 8
//   rows ahead were within the noise of each other.
// - gather, Zen 5: prefetchnta for the next row. Zen 5 had taken Zen 4's
//   choice, and its sweeps put that 1.10-1.27x behind an L1 hint in four
//   runs of six (within 5 % in the other two). On 2026-12-05, one process,
//   tables in huge pages, seven settings in a new random order each round,
//   median of 7 calls each, t2 four ahead's time over each setting's, per
//   round, median, for lookup_into / lookup / float32 lookup / bfloat16
//   lookup: nta one ahead on GPT-2's shape 1.153 / 1.101 / 1.086 / 1.027
//   (21 rounds) and 1.120 / 1.100 / 1.055 / 1.161 (31), on the 1 GiB table
//   1.010 / 1.015 / 1.147 / 1.161 (15) and 1.089 / 1.031 / 1.151 / 1.087
//   (21), on Llama 3's 128256 x 4096 1.117 / 1.092 / 1.118 / 1.026 (9).
//   t0 or nta one, two or four ahead were all about as fast (1.02-1.18x on
//   GPT-2's shape); nta one ahead was never behind t2 four ahead (the
//   median ratios 1.010-1.161), and it is the hint Zen 5's row loops use.
//   Zen 5's L1 holds 48 KiB where Zen 4's holds 32, which may be why
//   filling it no longer costs the copy; not measured.
// - gather, the other CPUs: prefetcht0 for the row two ahead; every hint and
//   distance was within about 10 % on Zen 3 (where every t hint fills L1),
//   t0 among the best. Not measured on Intel.
// EMBED_GATHER_PREFETCH and EMBED_GATHER_ROWS_AHEAD force either.
// - the gather's results: written with non-temporal stores past 32 MiB on
//   Zen 5, past 16 MiB elsewhere (copy_row, lib/gather.hpp). A smaller
//   result stays in the 32 MiB L3 a Zen core shares from call to call, and
//   ordinary stores into it are faster. On Zen 4 streaming took lookup_into
//   on GPT-2's shape (a 25 MB result) from 0.94-1.06 to 0.58-0.61 ms; on
//   Zen 5 (2026-12-04, both cores, four alternating runs of one binary,
//   the bound forced) the same result with memcpy took lookup 0.78-0.84 ms
//   against 1.01-1.24 streamed, and lookup_into 0.78-0.83 against
//   1.02-1.19; float32 lookup on GPT-2's shape (12.6 MB) 0.41-0.47 against
//   0.50-0.72 ms, which the 16 MiB bound (8 before) gives every kind.
//   Not measured on Intel or Zen 3.
//   EMBED_STREAM_RESULTS_ABOVE_MIB forces it.
StreamSettings default_stream_settings_for(CpuKind kind) {
    constexpr Index kMiB = Index{1} << 20;
    switch (kind) {
        case CpuKind::amd_zen5_or_later:
            return {.row_hint = PrefetchHint::nta, .row_distance_bytes = 8192, .halve_distance_near_row = true,
                    .rows_per_step = 1, .wide_rows_per_step = 4, .wide_row_distance_bytes = 2048,
                    .float32_hint = PrefetchHint::nta, .bfloat16_hint = PrefetchHint::nta,
                    .gather_hint = PrefetchHint::nta, .gather_rows_ahead = 1, .stream_results_above_bytes = 32 * kMiB};
        case CpuKind::amd_zen4:
            return {.row_hint = PrefetchHint::nta, .row_distance_bytes = 4096, .halve_distance_near_row = false,
                    .rows_per_step = 1, .wide_rows_per_step = 4, .wide_row_distance_bytes = 4096,
                    .float32_hint = PrefetchHint::none, .bfloat16_hint = PrefetchHint::nta,
                    .gather_hint = PrefetchHint::t2, .gather_rows_ahead = 4, .stream_results_above_bytes = 16 * kMiB};
        case CpuKind::other_with_avx512:
            return {.row_hint = PrefetchHint::t0, .row_distance_bytes = 4096, .halve_distance_near_row = false,
                    .rows_per_step = 1, .wide_rows_per_step = 4, .wide_row_distance_bytes = 4096,
                    .float32_hint = PrefetchHint::t0, .bfloat16_hint = PrefetchHint::t0,
                    .gather_hint = PrefetchHint::t0, .gather_rows_ahead = 2, .stream_results_above_bytes = 16 * kMiB};
        case CpuKind::without_avx512: break;
    }
    return {.row_hint = PrefetchHint::none, .row_distance_bytes = 8192, .halve_distance_near_row = false,
            .rows_per_step = 4, .wide_rows_per_step = 4, .wide_row_distance_bytes = 8192,
            .float32_hint = PrefetchHint::t0, .bfloat16_hint = PrefetchHint::t0,
            .gather_hint = PrefetchHint::t0, .gather_rows_ahead = 2, .stream_results_above_bytes = 16 * kMiB};
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
