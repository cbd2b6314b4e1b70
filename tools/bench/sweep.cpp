#include "sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <embed/embed.hpp>

#include "kernels/streaming.hpp"

namespace embed_bench {
namespace {

using embed::Index;
using embed::detail::PrefetchHint;
using embed::detail::StreamSettings;

using embed::detail::StreamSetting;

/// The values the sweep tries for one setting: those its row of EMBED_STREAM_SETTINGS lists (in the member's
/// unit), so that the sweep and the environment variables take the same ones.
std::vector<Index> tried(StreamSetting which) {
    const embed::detail::StreamSettingRow& row = embed::detail::stream_setting(which);
    std::vector<Index> values;
    for (const Index value : row.values) values.push_back(value * row.unit);
    return values;
}

/// The hints the sweep tries for one hint setting.
std::vector<PrefetchHint> tried_hints(StreamSetting which) {
    std::vector<PrefetchHint> hints;
    for (const Index value : tried(which)) hints.push_back(static_cast<PrefetchHint>(value));
    return hints;
}

constexpr Index kLookupIds = 4096;
constexpr std::size_t kFinalists = 3;  // screening's fastest that run again beside the default
constexpr int kConfirmRounds = 4;      // head-to-head rounds per screening round

/// One setting under test and the median time of each round.
struct Candidate {
    std::string name;
    StreamSettings settings;
    std::vector<double> round_seconds;
};

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// Median seconds of `calls` calls of op.
double time_calls(const std::function<void()>& op, int calls) {
    std::vector<double> seconds;
    for (int c = 0; c < calls; ++c) {
        const auto start = std::chrono::steady_clock::now();
        op();
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return median(seconds);
}

/// Whether two settings are the same for the loop under test on the sweep's width (the distance does not
/// matter without a prefetch, and a row loop reads only one of the two rows per step).
using SameSettings = std::function<bool(const StreamSettings&, const StreamSettings&)>;

/// How far ahead the double row loops ask under `settings` on `table`, as the library decides it.
Index double_distance_on_table(const StreamSettings& settings, const embed::Table& table) {
    const Index dim = table.cols();
    return embed::detail::double_row_distance_for(
        settings, dim, embed::detail::rows_start_on_lines(table.data(), dim * Index{sizeof(double)}));
}

SameSettings same_row_settings(const embed::Table& table) {
    return [&table](const StreamSettings& a, const StreamSettings& b) {
        const Index dim = table.cols();
        return a.row_hint == b.row_hint &&
               embed::detail::rows_per_step_for(a, dim) == embed::detail::rows_per_step_for(b, dim) &&
               (a.row_hint == PrefetchHint::none ||
                double_distance_on_table(a, table) == double_distance_on_table(b, table));
    };
}

SameSettings same_narrow_settings(Index dim) {
    return [dim](const StreamSettings& a, const StreamSettings& b) {
        return a.float32_hint == b.float32_hint &&
               (a.float32_hint == PrefetchHint::none ||
                embed::detail::row_distance_for(a, dim) == embed::detail::row_distance_for(b, dim)) &&
               embed::detail::rows_per_step_for(a, dim) == embed::detail::rows_per_step_for(b, dim);
    };
}

bool same_gather_settings(const StreamSettings& a, const StreamSettings& b) {
    return a.gather_hint == b.gather_hint &&
           (a.gather_hint == PrefetchHint::none || a.gather_rows_ahead == b.gather_rows_ahead);
}

/// A row-loop setting as the sweep prints it: "nta 4096 B, 1 per step", or "none, 4 per step" (no distance).
std::string row_setting_name(PrefetchHint hint, Index distance, Index rows) {
    char name[64];
    if (hint == PrefetchHint::none) {
        std::snprintf(name, sizeof name, "none, %ld per step", rows);
    } else {
        std::snprintf(name, sizeof name, "%s %ld B, %ld per step", embed::detail::hint_name(hint), distance, rows);
    }
    return name;
}

/// The row loops' settings: every hint at every distance and rows per step (no prefetch once per rows per step;
/// the rows per step and distance set for wide vectors too, so that each candidate reads its rows whatever the
/// width). Each asks exactly its distance (never halved near the next row), so the screening shows what every
/// distance does on this width; the default, halved or not, is the candidate that asks what it asks.
std::vector<Candidate> row_candidates() {
    std::vector<Candidate> out;
    const StreamSettings base = embed::detail::default_stream_settings();
    const std::vector<Index> distances = tried(StreamSetting::row_distance_bytes);
    for (const Index rows : tried(StreamSetting::rows_per_step)) {
        for (const PrefetchHint hint : tried_hints(StreamSetting::row_hint)) {
            for (const Index distance : distances) {
                if (hint == PrefetchHint::none && distance != distances.front()) continue;
                StreamSettings s = base;
                s.row_hint = hint;
                s.row_distance_bytes = s.wide_row_distance_bytes = distance;
                s.halve_distance_near_row = false;
                s.rows_per_step = s.wide_rows_per_step = rows;
                out.push_back({row_setting_name(hint, distance, rows), s, {}});
            }
        }
    }
    return out;
}

/// The float32 loops' settings: each of their three hints at every distance (no prefetch once) and rows per step.
std::vector<Candidate> narrow_candidates() {
    std::vector<Candidate> out;
    const StreamSettings base = embed::detail::default_stream_settings();
    const std::vector<Index> distances = tried(StreamSetting::row_distance_bytes);
    for (const Index rows : tried(StreamSetting::rows_per_step)) {
        for (const PrefetchHint hint : tried_hints(StreamSetting::float32_hint)) {
            for (const Index distance : distances) {
                if (hint == PrefetchHint::none && distance != distances.front()) continue;
                StreamSettings s = base;
                s.float32_hint = hint;
                s.row_distance_bytes = s.wide_row_distance_bytes = distance;
                s.rows_per_step = s.wide_rows_per_step = rows;
                out.push_back({row_setting_name(hint, distance, rows), s, {}});
            }
        }
    }
    return out;
}

/// The gather's settings: every hint at every number of rows ahead (no prefetch once).
std::vector<Candidate> gather_candidates() {
    std::vector<Candidate> out;
    const StreamSettings base = embed::detail::default_stream_settings();
    const std::vector<Index> rows_ahead = tried(StreamSetting::gather_rows_ahead);
    for (const PrefetchHint hint : tried_hints(StreamSetting::gather_hint)) {
        for (const Index ahead : rows_ahead) {
            if (hint == PrefetchHint::none && ahead != rows_ahead.front()) continue;
            StreamSettings s = base;
            s.gather_hint = hint;
            s.gather_rows_ahead = ahead;
            char name[64];
            if (hint == PrefetchHint::none) {
                std::snprintf(name, sizeof name, "none");
            } else {
                std::snprintf(name, sizeof name, "%s, %ld rows ahead", embed::detail::hint_name(hint), ahead);
            }
            out.push_back({name, s, {}});
        }
    }
    return out;
}

/// Times op under every candidate, `rounds` times over, each round in a new random order, so that drift
/// over minutes hits all of them alike rather than the ones that come last.
void sweep(std::vector<Candidate>& candidates, const std::function<void()>& op, int rounds, int calls) {
    std::vector<std::size_t> order(candidates.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 rng(2026);
    for (int round = 0; round < rounds; ++round) {
        std::shuffle(order.begin(), order.end(), rng);
        for (const std::size_t i : order) {
            Candidate& c = candidates[i];
            embed::detail::set_stream_settings(c.settings);
            op();  // warm: the first call after a change may find other data in the caches
            c.round_seconds.push_back(time_calls(op, calls));
        }
    }
    embed::detail::set_stream_settings(embed::detail::default_stream_settings());
}

/// The screening's candidates fastest first.
std::vector<Candidate> fastest_first(std::vector<Candidate> candidates) {
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return median(a.round_seconds) < median(b.round_seconds); });
    return candidates;
}

/// Prints the screening: every candidate fastest first with its ratio to the fastest, the default marked.
void print_screening(const char* title, const std::vector<Candidate>& sorted, double bytes, SameSettings same) {
    const double best = median(sorted.front().round_seconds);
    const StreamSettings shipped = embed::detail::default_stream_settings();
    std::printf("\n%s\n\n| setting | median | GB/s | vs fastest |\n|---|--:|--:|--:|\n", title);
    for (const Candidate& c : sorted) {
        const double t = median(c.round_seconds);
        std::printf("| %s%s | %.3f ms | %.1f | %.3fx |\n", c.name.c_str(),
                    same(c.settings, shipped) ? " (default)" : "", t * 1e3, bytes / t / 1e9, t / best);
    }
}

/// The finalists: the kFinalists fastest of the screening, and the default whether or not it is among them
/// (first, so that every other finalist is compared with it).
std::vector<Candidate> finalists(const std::vector<Candidate>& sorted, SameSettings same) {
    const StreamSettings shipped = embed::detail::default_stream_settings();
    std::vector<Candidate> out;
    for (const Candidate& c : sorted) {
        if (same(c.settings, shipped)) out.push_back({c.name, c.settings, {}});
    }
    if (out.empty()) out.push_back({"the default", shipped, {}});  // forced by the environment outside the grid
    for (const Candidate& c : sorted) {
        if (out.size() > kFinalists) break;
        if (!same(c.settings, shipped)) out.push_back({c.name, c.settings, {}});
    }
    return out;
}

/// Prints the head-to-head run of the finalists (the default first): for each, its median and the median and
/// middle half, over the rounds, of the default's time divided by its own in the same round; then whether the
/// default is within 5 % of the best finalist by that paired ratio.
void print_head_to_head(const std::vector<Candidate>& finals, double bytes) {
    const Candidate& shipped = finals.front();
    std::printf("\nHead to head: the default and the %zu fastest above, %zu rounds, each in a new order\n\n"
                "| setting | median | GB/s | default / setting, per round: median | middle half |\n"
                "|---|--:|--:|--:|--:|\n",
                finals.size() - 1, shipped.round_seconds.size());
    const Candidate* best = &shipped;
    double best_ratio = 1.0;
    for (const Candidate& c : finals) {
        std::vector<double> ratios;
        for (std::size_t r = 0; r < c.round_seconds.size(); ++r) {
            ratios.push_back(shipped.round_seconds[r] / c.round_seconds[r]);
        }
        std::sort(ratios.begin(), ratios.end());
        const double ratio = median(ratios);
        if (ratio > best_ratio) {
            best_ratio = ratio;
            best = &c;
        }
        const double t = median(c.round_seconds);
        std::printf("| %s%s | %.3f ms | %.1f | %.3fx | %.3f-%.3fx |\n", c.name.c_str(),
                    &c == &shipped ? " (default)" : "", t * 1e3, bytes / t / 1e9, ratio,
                    ratios[ratios.size() / 4], ratios[(3 * ratios.size()) / 4]);
    }
    if (best == &shipped) {
        std::printf("\nDefault: the fastest head to head\n");
    } else {
        std::printf("\nDefault: %.3fx the best head to head (%s)%s\n", best_ratio, best->name.c_str(),
                    best_ratio <= 1.05 ? ", within 5 %" : ", MORE THAN 5 % SLOWER");
    }
}

/// The title of the double row loops' screening, saying how far ahead the default asks on `table` when that
/// is not its distance (halved near the next row): the screening marks as the default the candidate that asks
/// the same.
std::string double_row_loop_title(const char* title, const embed::Table& table) {
    const Index dim = table.cols();
    const StreamSettings shipped = embed::detail::default_stream_settings();
    const Index asked = double_distance_on_table(shipped, table);
    if (asked == embed::detail::row_distance_for(shipped, dim)) return title;
    return std::string(title) + "; on these rows of " + std::to_string(dim * Index{sizeof(double)}) +
           " B the default asks " + std::to_string(asked) + " B ahead, half its " +
           std::to_string(shipped.row_distance_bytes) + " B, which lands near the next row";
}

/// Screens every candidate, then runs the default and the fastest few head to head for kConfirmRounds times
/// as many rounds. The verdict comes from the second run: the fastest median of dozens of settings that are
/// truly alike is fast partly by luck (its noise), so it has to be timed again, beside the default, to say
/// by how much it really wins.
void screen_and_confirm(const char* title, std::vector<Candidate> candidates, const std::function<void()>& op,
                        int rounds, int calls, double bytes, SameSettings same) {
    sweep(candidates, op, rounds, calls);
    const std::vector<Candidate> sorted = fastest_first(std::move(candidates));
    print_screening(title, sorted, bytes, same);
    std::vector<Candidate> finals = finalists(sorted, same);
    sweep(finals, op, kConfirmRounds * rounds, calls);
    print_head_to_head(finals, bytes);
}

}  // namespace

int run_sweep(Index vocab, Index dim, int rounds) {
    const embed::Table table = embed::make_table(vocab, dim, embed::SEED);
    embed::Vector hidden(dim);
    for (Index c = 0; c < dim; ++c) hidden[c] = static_cast<double>(c % 7) - 3.0;
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<Index> pick(0, vocab - 1);
    std::vector<Index> ids(kLookupIds);
    for (Index& id : ids) id = pick(rng);
    embed::Table rows(kLookupIds, dim);

    const double table_bytes = static_cast<double>(vocab * dim) * sizeof(double);
    const int calls = table_bytes > 1e8 ? 3 : 9;
    std::printf("embed_bench --sweep on %ldx%ld (%.0f MB), %d rounds of %d calls per setting, threads: %s\n", vocab,
                dim, table_bytes / 1e6, rounds, calls,
                std::getenv("EMBED_NUM_THREADS") ? std::getenv("EMBED_NUM_THREADS") : "every usable core");

    screen_and_confirm(
        double_row_loop_title("logits (row loops: prefetch hint, distance, rows per step)", table).c_str(),
        row_candidates(),
        [&] { embed::Vector s = embed::logits(table, hidden); asm volatile("" : : "r"(s.data()) : "memory"); }, rounds,
        calls, table_bytes, same_row_settings(table));
    const embed::TableF32 narrow = embed::to_f32(table);
    screen_and_confirm(
        "float32 logits (float32 and bfloat16 row loops: prefetch hint, distance, rows per step)",
        narrow_candidates(),
        [&] { embed::Vector s = embed::logits(narrow, hidden); asm volatile("" : : "r"(s.data()) : "memory"); },
        rounds, calls, table_bytes / 2, same_narrow_settings(dim));
    screen_and_confirm(
        "lookup_into, 4096 ids (gather: prefetch hint, rows ahead)", gather_candidates(),
        [&] { embed::lookup_into(table, ids, rows); asm volatile("" : : "r"(rows.data()) : "memory"); }, rounds,
        calls * 10, 2.0 * kLookupIds * static_cast<double>(dim) * sizeof(double), same_gather_settings);
    return 0;
}

}  // namespace embed_bench
