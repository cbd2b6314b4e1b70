// measure() and render_json() against values computed here with explicit
// loops over the table, for the exercise's inputs and several others.

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loop_reference.hpp"
#include "print_inputs.hpp"
#include "report.hpp"

namespace {

using namespace embed::report::testing_loops;
using embed::Index;
using embed::Table;
using embed::report::ReportInputs;
using nlohmann::json;

}  // namespace

namespace {

class ReportValues : public testing::TestWithParam<ReportInputs> {};

TEST_P(ReportValues, EveryJsonValueMatchesALoopOverTheTable) {
    const ReportInputs in = GetParam();
    const json j = json::parse(embed::report::render_json(embed::report::measure(in)));
    // The table itself comes from make_table, which the library's own tests check against CPython.
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const auto in_file_order = nlohmann::ordered_json::parse(embed::report::render_json(embed::report::measure(in)));
    std::vector<std::string> written;
    for (const auto& item : in_file_order.items()) written.push_back(item.key());
    EXPECT_EQ(written, REPORT_KEYS);

    ASSERT_TRUE(j.at("seed").is_number_unsigned());
    EXPECT_EQ(j.at("seed").get<std::uint64_t>(), in.seed);
    expect_values_match_loops(j, t, in);
}

ReportInputs with(Index vocab, Index dim, std::uint64_t seed, Index probe, Index k, Index pick, double factor,
                  Index growth) {
    return {vocab, dim, seed, probe, k, pick, factor, growth};
}

INSTANTIATE_TEST_SUITE_P(Inputs, ReportValues,
                         testing::Values(ReportInputs{}, with(300, 24, 7, 11, 7, 2, 3.5, 3),
                                         with(2, 1, 0, 0, 1, 0, 4.0, 1),
                                         with(50, 8, 18446744073709551615ULL, 49, 3, 1, -2.0, 1),
                                         with(64, 3, 1, 5, 63, 10, 0.0, 5)));

TEST(ReportValues, DefaultsAreTheExercisesConstants) {
    const ReportInputs in;
    EXPECT_EQ(in.vocab, 512);
    EXPECT_EQ(in.dim, 64);
    EXPECT_EQ(in.seed, 20260917u);
    EXPECT_EQ(in.probe, 137);
    EXPECT_EQ(in.k, 5);
    EXPECT_EQ(in.pick, 4);
    EXPECT_EQ(in.stretch_factor, 4.0);
    EXPECT_EQ(in.growth, 2);
}

// Where id stands in a top-k list of ids; an id missing from the list ranks below all of it (place k).
std::size_t place_in(const std::vector<Index>& ranked, Index id) {
    return static_cast<std::size_t>(std::find(ranked.begin(), ranked.end(), id) - ranked.begin());
}

TEST(ReportValues, StretchingMovesTheTargetUpInTheDotRankingOnly) {
    const auto r = embed::report::measure(ReportInputs{});
    EXPECT_EQ(embed::report::ids_of(r.cos_neighbors), embed::report::ids_of(r.cos_after_stretch));
    const std::vector<Index> dot_after = embed::report::ids_of(r.dot_after_stretch);
    // A target that fell out of the list after the stretch must fail here, not count as place -1.
    ASSERT_LT(place_in(dot_after, r.stretch_target), dot_after.size()) << "the target left the dot top-k";
    EXPECT_LT(place_in(dot_after, r.stretch_target),
              place_in(embed::report::ids_of(r.dot_neighbors), r.stretch_target));
}

TEST(ReportValues, PointsHoldEveryOtherTokenWithLoopScores) {
    const ReportInputs in = with(40, 6, 3, 7, 4, 3, 2.5, 2);
    const auto r = embed::report::measure(in);
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const Table s = loop_stretch(t, r.stretch_target, in.stretch_factor);
    ASSERT_EQ(r.points.size(), 39u);
    for (const auto& point : r.points) {
        ASSERT_NE(point.id, in.probe);
        EXPECT_NEAR(point.cosine_before, loop_cosine(t, in.probe, point.id), 1e-12) << point.id;
        EXPECT_NEAR(point.dot_before, loop_dot(t, in.probe, point.id), 1e-12) << point.id;
        EXPECT_NEAR(point.cosine_after, loop_cosine(s, in.probe, point.id), 1e-12) << point.id;
        EXPECT_NEAR(point.dot_after, loop_dot(s, in.probe, point.id), 1e-12) << point.id;
    }
}

TEST(ReportValues, SqrtDStoredInNarrowFormatsIsRoundedNotQuoted) {
    // sqrt(10) = 3.16227766...: bf16 keeps 8 significand bits (3.15625), fp16 keeps 11 (3.162109375).
    const auto r = embed::report::measure(with(20, 10, 1, 0, 2, 0, 2.0, 2));
    EXPECT_EQ(r.sqrt_d.exact, std::sqrt(10.0));
    EXPECT_EQ(r.sqrt_d.bf16, 3.15625);
    EXPECT_EQ(r.sqrt_d.fp16, 3.162109375);
}

TEST(ReportValues, MemoryRowsAreParamsTimesBytesPerValue) {
    const auto r = embed::report::measure(ReportInputs{});
    ASSERT_EQ(r.memory.size(), 3u);
    const Index bytes[] = {4, 2, 2};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.memory[i].tied, 512 * 64 * bytes[i]);
        EXPECT_EQ(r.memory[i].untied, 2 * 512 * 64 * bytes[i]);
        EXPECT_EQ(r.memory[i].bigger_untied, 2 * 1024 * 64 * bytes[i]);
        EXPECT_EQ(r.memory[i].bigger_saved, 1024 * 64 * bytes[i]);
    }
}

// The stretch is done on the table in place and undone afterwards (a copy would
// double a loaded table's memory); the scaling section, measured after it, must
// see the original row. With pick 0 the stretched row is the first cosine
// neighbour that section uses, and a negative factor would flip its cosine.
TEST(ReportValues, TheStretchedRowIsPutBackBeforeScalingIsMeasured) {
    const ReportInputs in = with(60, 5, 9, 4, 3, 0, -3.0, 1);
    const auto r = embed::report::measure(in);
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const Index first = loop_rank(t, in.probe, 1, true)[0];
    ASSERT_EQ(r.stretch_target, first);
    EXPECT_NEAR(r.cos_first_neighbour, loop_cosine(t, in.probe, first), 1e-12);
    EXPECT_GT(r.cos_first_neighbour, 0.0);
}

}  // namespace
