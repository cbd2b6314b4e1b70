// measure() and render_json() against values computed here with explicit
// loops over the table, for the contract's inputs and several others.

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "print_inputs.hpp"
#include "report.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::report::ReportInputs;
using nlohmann::json;

}  // namespace

namespace {

double loop_dot(const Table& t, Index a, Index b) {
    double sum = 0.0;
    for (Index c = 0; c < t.cols(); ++c) sum += t(a, c) * t(b, c);
    return sum;
}

double loop_cosine(const Table& t, Index a, Index b) {
    const double na = std::sqrt(loop_dot(t, a, a));
    const double nb = std::sqrt(loop_dot(t, b, b));
    return na == 0.0 || nb == 0.0 ? 0.0 : loop_dot(t, a, b) / (na * nb);
}

// The spec's sort key (-score, id), over every other token.
std::vector<Index> loop_rank(const Table& t, Index probe, Index k, bool by_cosine) {
    std::vector<std::pair<double, Index>> scored;
    for (Index other = 0; other < t.rows(); ++other) {
        if (other == probe) continue;
        scored.emplace_back(-(by_cosine ? loop_cosine(t, probe, other) : loop_dot(t, probe, other)), other);
    }
    std::sort(scored.begin(), scored.end());
    std::vector<Index> ids;
    for (Index i = 0; i < k; ++i) ids.push_back(scored[static_cast<std::size_t>(i)].second);
    return ids;
}

Table loop_stretch(Table t, Index row, double factor) {
    for (Index c = 0; c < t.cols(); ++c) t(row, c) = t(row, c) * factor;
    return t;
}

double loop_rms(const std::vector<double>& v) {
    double sum = 0.0;
    for (double x : v) sum += x * x;
    return std::sqrt(sum / static_cast<double>(v.size()));
}

// The spec's float comparison: abs(a - b) <= 1e-12 + 1e-9 * abs(b).
void expect_close(const json& actual, double expected, const char* key) {
    ASSERT_TRUE(actual.is_number_float()) << key << " is " << actual.dump();
    const double a = actual.get<double>();
    EXPECT_LE(std::fabs(a - expected), 1e-12 + 1e-9 * std::fabs(expected)) << key << ": " << a << " vs " << expected;
}

void expect_int(const json& j, const char* key, Index expected) {
    ASSERT_TRUE(j.at(key).is_number_integer()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<Index>(), expected) << key;
}

void expect_bool(const json& j, const char* key, bool expected) {
    ASSERT_TRUE(j.at(key).is_boolean()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<bool>(), expected) << key;
}

void expect_ids(const json& j, const char* key, const std::vector<Index>& expected) {
    ASSERT_TRUE(j.at(key).is_array()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<std::vector<Index>>(), expected) << key;
}

class ReportValues : public testing::TestWithParam<ReportInputs> {};

TEST_P(ReportValues, EveryJsonValueMatchesALoopOverTheTable) {
    const ReportInputs in = GetParam();
    const json j = json::parse(embed::report::render_json(embed::report::measure(in)));
    // The table itself comes from make_table, which the library's own tests check against CPython.
    const Table t = embed::make_table(in.vocab, in.dim, in.seed);
    const Index V = in.vocab;
    const Index d = in.dim;
    const Index p = in.probe;

    const std::vector<std::string> keys = {
        "vocab", "dim", "seed", "probe", "table_shape", "params", "tied_params", "untied_params", "saved",
        "bigger_vocab", "bigger_tied", "bigger_untied", "lookup_mults", "one_hot_mults", "max_abs_diff",
        "repeat_same", "logit_len", "logit_argmax", "logit_argmax_is_self", "cos_neighbors", "dot_neighbors",
        "neighbors_differ", "stretch_target", "stretch_factor", "cos_after_stretch", "dot_after_stretch",
        "cos_unchanged_by_scale", "rms_plain", "rms_scaled", "rms_ratio"};
    const auto in_file_order = nlohmann::ordered_json::parse(embed::report::render_json(embed::report::measure(in)));
    std::vector<std::string> written;
    for (const auto& item : in_file_order.items()) written.push_back(item.key());
    EXPECT_EQ(written, keys);

    expect_int(j, "vocab", V);
    expect_int(j, "dim", d);
    ASSERT_TRUE(j.at("seed").is_number_unsigned());
    EXPECT_EQ(j.at("seed").get<std::uint64_t>(), in.seed);
    expect_int(j, "probe", p);
    expect_ids(j, "table_shape", {V, d});
    expect_int(j, "params", V * d);
    expect_int(j, "tied_params", V * d);
    expect_int(j, "untied_params", 2 * V * d);
    expect_int(j, "saved", V * d);
    expect_int(j, "bigger_vocab", V * in.growth);
    expect_int(j, "bigger_tied", V * in.growth * d);
    expect_int(j, "bigger_untied", 2 * V * in.growth * d);
    expect_int(j, "lookup_mults", 0);
    expect_int(j, "one_hot_mults", V * d);

    // One-hot route by hand: out[c] = sum over r of onehot[r] * t(r, c), all V * d products.
    double max_diff = 0.0;
    for (Index c = 0; c < d; ++c) {
        double sum = 0.0;
        for (Index r = 0; r < V; ++r) sum += (r == p ? 1.0 : 0.0) * t(r, c);
        max_diff = std::max(max_diff, std::fabs(sum - t(p, c)));
    }
    expect_close(j.at("max_abs_diff"), max_diff, "max_abs_diff");
    expect_bool(j, "repeat_same", true);

    Index argmax = 0;
    for (Index r = 1; r < V; ++r) {
        if (loop_dot(t, r, p) > loop_dot(t, argmax, p)) argmax = r;
    }
    expect_int(j, "logit_len", V);
    expect_int(j, "logit_argmax", argmax);
    expect_bool(j, "logit_argmax_is_self", argmax == p);

    const auto cos_nb = loop_rank(t, p, in.k, true);
    const auto dot_nb = loop_rank(t, p, in.k, false);
    expect_ids(j, "cos_neighbors", cos_nb);
    expect_ids(j, "dot_neighbors", dot_nb);
    expect_bool(j, "neighbors_differ", cos_nb != dot_nb);
    const Index target = cos_nb[static_cast<std::size_t>(in.pick)];
    expect_int(j, "stretch_target", target);
    expect_close(j.at("stretch_factor"), in.stretch_factor, "stretch_factor");
    const Table stretched = loop_stretch(t, target, in.stretch_factor);
    expect_ids(j, "cos_after_stretch", loop_rank(stretched, p, in.k, true));
    expect_ids(j, "dot_after_stretch", loop_rank(stretched, p, in.k, false));

    const double root = std::sqrt(static_cast<double>(d));
    std::vector<double> plain;
    std::vector<double> scaled;
    for (Index c = 0; c < d; ++c) {
        plain.push_back(t(p, c));
        scaled.push_back(t(p, c) * root);
    }
    Table both(2, d);
    for (Index c = 0; c < d; ++c) {
        both(0, c) = t(p, c) * root;
        both(1, c) = t(cos_nb[0], c) * root;
    }
    Table pair(2, d);
    pair.row(0) = t.row(p);
    pair.row(1) = t.row(cos_nb[0]);
    Table plain_and_scaled(2, d);
    plain_and_scaled.row(0) = t.row(p);
    plain_and_scaled.row(1) = both.row(0);
    const bool unchanged = std::fabs(loop_cosine(plain_and_scaled, 0, 1) - 1.0) <= 1e-12 &&
                           std::fabs(loop_cosine(pair, 0, 1) - loop_cosine(both, 0, 1)) <= 1e-12;
    expect_bool(j, "cos_unchanged_by_scale", unchanged);
    expect_close(j.at("rms_plain"), loop_rms(plain), "rms_plain");
    expect_close(j.at("rms_scaled"), loop_rms(scaled), "rms_scaled");
    expect_close(j.at("rms_ratio"), loop_rms(scaled) / loop_rms(plain), "rms_ratio");
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

TEST(ReportValues, DefaultsAreTheContractsConstants) {
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

TEST(ReportValues, StretchingMovesTheTargetInTheDotRankingOnly) {
    const auto r = embed::report::measure(ReportInputs{});
    EXPECT_EQ(embed::report::ids_of(r.cos_neighbors), embed::report::ids_of(r.cos_after_stretch));
    EXPECT_LT(embed::report::position_of(r.dot_after_stretch, r.stretch_target),
              embed::report::position_of(r.dot_neighbors, r.stretch_target));
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
