#pragma once
// The report's values computed again by explicit loops over a table, and a
// check of a rendered JSON against them: the independent side of the report's
// value tests, for generated and loaded tables alike.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "neighbour_order.hpp"
#include "report.hpp"

namespace embed::report::testing_loops {

using embed::Index;
using embed::Table;
using nlohmann::json;

/// The thirty JSON keys in the order of SPECIFICATION.md, Report keys (a loaded table's report adds source
/// after seed).
inline const std::vector<std::string> REPORT_KEYS = {
    "vocab", "dim", "seed", "probe", "table_shape", "params", "tied_params", "untied_params", "saved",
    "bigger_vocab", "bigger_tied", "bigger_untied", "lookup_mults", "one_hot_mults", "max_abs_diff",
    "repeat_same", "logit_len", "logit_argmax", "logit_argmax_is_self", "cos_neighbors", "dot_neighbors",
    "neighbors_differ", "stretch_target", "stretch_factor", "cos_after_stretch", "dot_after_stretch",
    "cos_unchanged_by_scale", "rms_plain", "rms_scaled", "rms_ratio"};

inline double loop_dot(const Table& t, Index a, Index b) {
    double sum = 0.0;
    for (Index c = 0; c < t.cols(); ++c) sum += t(a, c) * t(b, c);
    return sum;
}

inline double loop_cosine(const Table& t, Index a, Index b) {
    const double na = std::sqrt(loop_dot(t, a, a));
    const double nb = std::sqrt(loop_dot(t, b, b));
    return na == 0.0 || nb == 0.0 ? 0.0 : loop_dot(t, a, b) / (na * nb);
}

// Every other token ranked in the library's order (SPECIFICATION.md, Ranking: a higher score first, NaN
// below every number, then the smaller id), the first k ids.
inline std::vector<Index> loop_rank(const Table& t, Index probe, Index k, bool by_cosine) {
    std::vector<embed::Neighbour> scored;
    for (Index other = 0; other < t.rows(); ++other) {
        if (other == probe) continue;
        scored.push_back({other, by_cosine ? loop_cosine(t, probe, other) : loop_dot(t, probe, other)});
    }
    std::sort(scored.begin(), scored.end(), embed_test::ranks_before);
    std::vector<Index> ids;
    for (Index i = 0; i < k; ++i) ids.push_back(scored[static_cast<std::size_t>(i)].id);
    return ids;
}

// The id of the largest logit t(r) . t(probe) in the same order: the first of the best, NaN below numbers.
inline Index loop_argmax(const Table& t, Index probe) {
    Index best = 0;
    for (Index r = 1; r < t.rows(); ++r) {
        if (embed_test::ranks_before({r, loop_dot(t, r, probe)}, {best, loop_dot(t, best, probe)})) best = r;
    }
    return best;
}

// Row p gathered by a copy loop, into out; returns the multiplications it made (a copy makes none).
inline Index loop_gather(const Table& t, Index p, std::vector<double>& out) {
    out.clear();
    for (Index c = 0; c < t.cols(); ++c) out.push_back(t(p, c));
    return 0;
}

// Row p by the one-hot route: out[c] = sum over r of onehot[r] * t(r, c), from 0.0 in row order; returns
// the multiplications it made, every one of the V * d products.
inline Index loop_one_hot_row(const Table& t, Index p, std::vector<double>& out) {
    Index products = 0;
    out.assign(static_cast<std::size_t>(t.cols()), 0.0);
    for (Index c = 0; c < t.cols(); ++c) {
        for (Index r = 0; r < t.rows(); ++r) {
            out[static_cast<std::size_t>(c)] += (r == p ? 1.0 : 0.0) * t(r, c);
            ++products;
        }
    }
    return products;
}

// The largest |a[c] - b[c]|, NaN when any difference is NaN (the two rows then do not agree).
inline double loop_max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double largest = 0.0;
    for (std::size_t c = 0; c < a.size(); ++c) {
        const double difference = std::fabs(a[c] - b[c]);
        if (std::isnan(difference)) return difference;
        largest = std::max(largest, difference);
    }
    return largest;
}

// Whether two rows are equal as numbers, entry by entry (a NaN equals nothing, itself included).
inline bool loop_equal(const std::vector<double>& a, const std::vector<double>& b) {
    for (std::size_t c = 0; c < a.size(); ++c) {
        if (!(a[c] == b[c])) return false;
    }
    return a.size() == b.size();
}

inline Table loop_stretch(Table t, Index row, double factor) {
    for (Index c = 0; c < t.cols(); ++c) t(row, c) = t(row, c) * factor;
    return t;
}

inline double loop_rms(const std::vector<double>& v) {
    double sum = 0.0;
    for (double x : v) sum += x * x;
    return std::sqrt(sum / static_cast<double>(v.size()));
}

// The spec's float comparison: abs(a - b) <= 1e-12 + 1e-9 * abs(b). JSON has no NaN or infinity: where the
// loops give one, the file must hold null.
inline void expect_close(const json& actual, double expected, const char* key) {
    if (!std::isfinite(expected)) {
        EXPECT_TRUE(actual.is_null()) << key << " is " << actual.dump() << ", expected null for " << expected;
        return;
    }
    ASSERT_TRUE(actual.is_number_float()) << key << " is " << actual.dump();
    const double a = actual.get<double>();
    EXPECT_LE(std::fabs(a - expected), 1e-12 + 1e-9 * std::fabs(expected)) << key << ": " << a << " vs " << expected;
}

inline void expect_int(const json& j, const char* key, Index expected) {
    ASSERT_TRUE(j.at(key).is_number_integer()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<Index>(), expected) << key;
}

inline void expect_bool(const json& j, const char* key, bool expected) {
    ASSERT_TRUE(j.at(key).is_boolean()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<bool>(), expected) << key;
}

inline void expect_ids(const json& j, const char* key, const std::vector<Index>& expected) {
    ASSERT_TRUE(j.at(key).is_array()) << key << " is " << j.at(key).dump();
    EXPECT_EQ(j.at(key).get<std::vector<Index>>(), expected) << key;
}

/// Every JSON value but the seed (and source) against loops over t, the table (V, d) the report measured.
inline void expect_values_match_loops(const json& j, const Table& t, const ReportInputs& in) {
    const Index V = in.vocab;
    const Index d = in.dim;
    const Index p = in.probe;
    expect_int(j, "vocab", V);
    expect_int(j, "dim", d);
    expect_int(j, "probe", p);
    expect_ids(j, "table_shape", {V, d});
    expect_int(j, "params", V * d);
    expect_int(j, "tied_params", V * d);
    expect_int(j, "untied_params", 2 * V * d);
    expect_int(j, "saved", V * d);
    expect_int(j, "bigger_vocab", V * in.growth);
    expect_int(j, "bigger_tied", V * in.growth * d);
    expect_int(j, "bigger_untied", 2 * V * in.growth * d);

    // The lookup route and the one-hot route by hand, each counting its own multiplications.
    std::vector<double> gathered;
    std::vector<double> gathered_again;
    std::vector<double> via_one_hot;
    expect_int(j, "lookup_mults", loop_gather(t, p, gathered));
    expect_int(j, "one_hot_mults", loop_one_hot_row(t, p, via_one_hot));
    // The one-hot route adds exact zeros to one exact product, so the difference is exactly the loop's, not
    // merely within the spec's 1e-12 (NaN, and so null, when a NaN or an infinity shares a column with it).
    const double max_diff = loop_max_abs_diff(gathered, via_one_hot);
    if (std::isnan(max_diff)) {
        EXPECT_TRUE(j.at("max_abs_diff").is_null()) << j.at("max_abs_diff").dump();
    } else {
        EXPECT_TRUE(j.at("max_abs_diff").is_number_float());
        EXPECT_EQ(j.at("max_abs_diff").get<double>(), max_diff);
    }
    loop_gather(t, p, gathered_again);
    expect_bool(j, "repeat_same", loop_equal(gathered, gathered_again));

    const Index argmax = loop_argmax(t, p);
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

}  // namespace embed::report::testing_loops
