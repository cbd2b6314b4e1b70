// The streaming settings (lib/streaming.hpp) that embed_bench --sweep tries:
// a bad setting is refused and changes nothing, and under every setting the
// public functions give the explicit loops' values, on tables large enough to
// be split between threads.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/python_random.hpp>
#include <embed/scaling.hpp>
#include <embed/table.hpp>

#include "documented_order.hpp"
#include "parallel.hpp"
#include "streaming.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::detail::PrefetchHint;
using embed::detail::StreamSettings;

// Puts the library's default settings and thread count back when a test ends.
struct DefaultsAfter {
    ~DefaultsAfter() {
        embed::detail::set_stream_settings(embed::detail::default_stream_settings());
        embed::detail::set_worker_count(embed::detail::worker_count());
    }
};

bool same(const StreamSettings& a, const StreamSettings& b) {
    return a.row_hint == b.row_hint && a.row_distance_bytes == b.row_distance_bytes &&
           a.rows_per_step == b.rows_per_step && a.gather_hint == b.gather_hint &&
           a.gather_rows_ahead == b.gather_rows_ahead;
}

// Expects set_stream_settings(bad) to throw invalid_argument whose message holds `names`, and to change nothing.
void expect_refused(const StreamSettings& bad, const std::string& names) {
    const StreamSettings before = embed::detail::stream_settings();
    try {
        embed::detail::set_stream_settings(bad);
        FAIL() << "accepted a setting that names " << names;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
    EXPECT_TRUE(same(embed::detail::stream_settings(), before));
}

TEST(StreamSettings, RefusesValuesOutsideTheirRangesAndKeepsTheOldOnes) {
    const DefaultsAfter restore;
    StreamSettings other = embed::detail::default_stream_settings();
    other.row_hint = PrefetchHint::t2;
    other.gather_rows_ahead = 5;
    embed::detail::set_stream_settings(other);
    ASSERT_TRUE(same(embed::detail::stream_settings(), other));

    StreamSettings bad = other;
    bad.row_distance_bytes = -64;
    expect_refused(bad, "prefetch distance in bytes -64 is outside [0, 65536]");
    bad = other;
    bad.row_distance_bytes = 65537;
    expect_refused(bad, "65537");
    bad = other;
    bad.rows_per_step = 3;
    expect_refused(bad, "rows per step 3 is not one of 1, 2, 4");
    bad = other;
    bad.gather_rows_ahead = 65;
    expect_refused(bad, "gather rows ahead 65 is outside [0, 64]");
    bad = other;
    bad.row_hint = static_cast<PrefetchHint>(4);
    expect_refused(bad, "row prefetch hint 4");
    bad = other;
    bad.gather_hint = static_cast<PrefetchHint>(-2);
    expect_refused(bad, "gather prefetch hint -2");
}

TEST(StreamSettings, NamesEveryHint) {
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::none), "none");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::nta), "nta");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t2), "t2");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t1), "t1");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t0), "t0");
}

// A table of twice the splitting threshold's work at d = 72 (9 lines a row),
// at 2 threads: every setting's loops run in several pieces.
TEST(StreamSettings, EverySettingGivesTheExplicitLoopsValues) {
    const DefaultsAfter restore;
    embed::detail::set_worker_count(2);
    const Index dim = 72;
    const Index vocab = 2 * embed::detail::kMinWorkPerPiece / dim + 5;
    const Table table = embed::make_table(vocab, dim, 11);
    ASSERT_GT(embed::detail::piece_count(vocab, dim), 1);
    embed::Vector hidden(dim);
    for (Index c = 0; c < dim; ++c) hidden[c] = 0.25 * static_cast<double>(c % 5) - 0.5;
    std::vector<Index> ids;
    for (Index i = 0; i < 4 * embed::detail::kMinWorkPerPiece / dim; ++i) ids.push_back((i * 7919) % vocab);
    ASSERT_GT(embed::detail::piece_count(static_cast<Index>(ids.size()), dim), 1);

    for (const int hint : {-1, 0, 1, 2, 3}) {
        for (const Index step : {1, 2, 4}) {
            StreamSettings setting = embed::detail::default_stream_settings();
            setting.row_hint = setting.gather_hint = static_cast<PrefetchHint>(hint);
            setting.rows_per_step = step;
            setting.row_distance_bytes = 512 * step;
            setting.gather_rows_ahead = step - 1;
            embed::detail::set_stream_settings(setting);
            const std::string where = std::string("hint ") + embed::detail::hint_name(setting.row_hint) + " step " +
                                      std::to_string(step);

            const embed::Vector scores = embed::logits(table, hidden);
            for (Index t = 0; t < vocab; ++t) {
                const embed::Vector row = table.row(t).transpose();
                ASSERT_EQ(scores[t], embed_test::dot_in_documented_order(row.data(), hidden.data(), dim))
                    << where << " token " << t;
            }
            const Table rows = embed::lookup(table, ids);
            const Table scaled = embed::scaled_lookup(table, ids, dim);
            const double factor = std::sqrt(static_cast<double>(dim));
            for (std::size_t i = 0; i < ids.size(); ++i) {
                for (Index c = 0; c < dim; ++c) {
                    const double value = table(ids[i], c);
                    ASSERT_EQ(rows(static_cast<Index>(i), c), value) << where << " id " << ids[i];
                    ASSERT_EQ(scaled(static_cast<Index>(i), c), value * factor) << where << " id " << ids[i];
                }
            }
        }
    }
}

}  // namespace
