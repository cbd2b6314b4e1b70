#include "streaming.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace embed::detail {
namespace {

// One atomic per field: the settings are read at the start of every call
// from any thread, and written only by the sweep and the tests.
struct Current {
    std::atomic<int> row_hint;
    std::atomic<Index> row_distance_bytes;
    std::atomic<Index> rows_per_step;
    std::atomic<int> gather_hint;
    std::atomic<Index> gather_rows_ahead;
};

Current& current() {
    static Current settings = [] {
        const StreamSettings d = default_stream_settings();
        return Current{static_cast<int>(d.row_hint), d.row_distance_bytes, d.rows_per_step,
                       static_cast<int>(d.gather_hint), d.gather_rows_ahead};
    }();
    return settings;
}

void require_in(Index value, Index low, Index high, const char* what) {
    if (value < low || value > high) {
        throw std::invalid_argument(std::string(what) + " " + std::to_string(value) + " is outside [" +
                                    std::to_string(low) + ", " + std::to_string(high) + "]");
    }
}

}  // namespace

StreamSettings default_stream_settings() {
    return {PrefetchHint::t0, 4096, 1, PrefetchHint::t0, 2};
}

StreamSettings stream_settings() {
    const Current& now = current();
    return {static_cast<PrefetchHint>(now.row_hint.load(std::memory_order_relaxed)),
            now.row_distance_bytes.load(std::memory_order_relaxed), now.rows_per_step.load(std::memory_order_relaxed),
            static_cast<PrefetchHint>(now.gather_hint.load(std::memory_order_relaxed)),
            now.gather_rows_ahead.load(std::memory_order_relaxed)};
}

void set_stream_settings(const StreamSettings& settings) {
    require_in(settings.row_distance_bytes, 0, 65536, "prefetch distance in bytes");
    if (settings.rows_per_step != 1 && settings.rows_per_step != 2 && settings.rows_per_step != 4) {
        throw std::invalid_argument("rows per step " + std::to_string(settings.rows_per_step) +
                                    " is not one of 1, 2, 4");
    }
    require_in(settings.gather_rows_ahead, 0, 64, "gather rows ahead");
    require_in(static_cast<int>(settings.row_hint), -1, 3, "row prefetch hint");
    require_in(static_cast<int>(settings.gather_hint), -1, 3, "gather prefetch hint");
    Current& now = current();
    now.row_hint.store(static_cast<int>(settings.row_hint), std::memory_order_relaxed);
    now.row_distance_bytes.store(settings.row_distance_bytes, std::memory_order_relaxed);
    now.rows_per_step.store(settings.rows_per_step, std::memory_order_relaxed);
    now.gather_hint.store(static_cast<int>(settings.gather_hint), std::memory_order_relaxed);
    now.gather_rows_ahead.store(settings.gather_rows_ahead, std::memory_order_relaxed);
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
