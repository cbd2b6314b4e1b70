// dot, norm, cosine, stretch and the neighbour rankings. Expected rankings come
// from a brute force in this file: every score by an explicit loop, then the
// best remaining (score high first, NaN last, smaller id on ties) picked k times.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/similarity.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"
#include "documented_order.hpp"
#include "neighbour_order.hpp"

namespace {

using embed::Index;
using embed::Neighbour;
using embed::Score;
using embed::Table;
using embed::Vector;
using embed_test::AllClose;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;
using testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Rows r and s of a table, summed left to right.
double dot_rows(const Table& table, Index r, Index s) {
    double sum = 0.0;
    for (Index c = 0; c < table.cols(); ++c) sum += table(r, c) * table(s, c);
    return sum;
}

double score_by_loop(const Table& table, Index query, Index other, Score score) {
    const double dot = dot_rows(table, query, other);
    if (score == Score::dot) return dot;
    const double norm_query = std::sqrt(dot_rows(table, query, query));
    const double norm_other = std::sqrt(dot_rows(table, other, other));
    if (norm_query == 0.0 || norm_other == 0.0) return 0.0;
    return dot / (norm_query * norm_other);
}

// The min(k, V-1) best others of query, by repeatedly taking the best one left.
std::vector<Neighbour> brute_force(const Table& table, Index query, Index k, Score score) {
    std::vector<Neighbour> left;
    for (Index t = 0; t < table.rows(); ++t) {
        if (t != query) left.push_back({t, score_by_loop(table, query, t, score)});
    }
    std::vector<Neighbour> ranked;
    while (static_cast<Index>(ranked.size()) < k && !left.empty()) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < left.size(); ++i) {
            if (embed_test::ranks_before(left[i], left[best])) best = i;
        }
        ranked.push_back(left[best]);
        left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
    }
    return ranked;
}

std::vector<Index> brute_force_ids(const Table& table, Index query, Index k, Score score) {
    std::vector<Index> ids;
    for (const Neighbour& n : brute_force(table, query, k, score)) ids.push_back(n.id);
    return ids;
}

std::vector<Index> nearest(const Table& table, Index query, Index k, Score score) {
    return score == Score::cosine ? embed::nearest_by_cosine(table, query, k) : embed::nearest_by_dot(table, query, k);
}

// A copy of table with row `token` multiplied by factor, entry by entry.
Table stretch_by_loop(const Table& table, Index token, double factor) {
    Table stretched = table;
    for (Index c = 0; c < table.cols(); ++c) stretched(token, c) = table(token, c) * factor;
    return stretched;
}

TEST(Dot, EqualsTheSumOfProducts) {
    Vector a(5);
    Vector b(5);
    a << 1.0, -2.0, 3.5, 0.25, 8.0;
    b << 4.0, 0.5, -1.0, 2.0, 0.125;
    EXPECT_EQ(embed::dot(a, b), 4.0 - 1.0 - 3.5 + 0.5 + 1.0);  // all exact in binary
}

TEST(Dot, TableRowsBindDirectly) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    EXPECT_NEAR(embed::dot(table.row(1), table.row(2)), dot_rows(table, 1, 2), 1e-14);
}

TEST(Dot, TableColumnsBindToo) {
    const Table table = embed::make_table(6, 3, 4);
    double want = 0.0;
    for (Index r = 0; r < 6; ++r) want += table(r, 0) * table(r, 2);
    EXPECT_NEAR(embed::dot(table.col(0), table.col(2)), want, 1e-14);
}

// dot and norm use the documented order too, bit for bit, for rows starting
// at every offset an odd width gives and widths around whole blocks of 8.
TEST(Dot, AndNormAreTheDocumentedSumsWhereverTheRowsStart) {
    using embed_test::dot_in_documented_order;
    for (const Index dim : {Index{1}, Index{7}, Index{8}, Index{9}, Index{17}, Index{67}, Index{771}}) {
        const Table table = embed::make_table(10, dim, 23);
        for (Index r = 0; r + 1 < table.rows(); ++r) {
            const double* a = table.row(r).data();
            const double* b = table.row(r + 1).data();
            ASSERT_EQ(embed::dot(table.row(r), table.row(r + 1)), dot_in_documented_order(a, b, dim)) << dim;
            ASSERT_EQ(embed::norm(table.row(r)), std::sqrt(dot_in_documented_order(a, a, dim))) << dim;
        }
    }
}

TEST(Dot, RejectsVectorsOfDifferentLengthsNamingThem) {
    EXPECT_THAT([] { embed::dot(Vector::Ones(3), Vector::Ones(4)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 4, expected 3")));
}

TEST(Dot, OfEmptyVectorsIsZero) {
    EXPECT_EQ(embed::dot(Vector(0), Vector(0)), 0.0);
}

TEST(Norm, IsTheSquareRootOfTheSelfDot) {
    Vector a(2);
    a << 3.0, -4.0;
    EXPECT_EQ(embed::norm(a), 5.0);
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    EXPECT_NEAR(embed::norm(table.row(137)), std::sqrt(dot_rows(table, 137, 137)), 1e-14);
}

TEST(Norm, OfAnEmptyVectorIsZero) {
    EXPECT_EQ(embed::norm(Vector(0)), 0.0);
}

TEST(Cosine, EqualsDotOverTheProductOfNorms) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    EXPECT_NEAR(embed::cosine(table.row(137), table.row(3)), score_by_loop(table, 137, 3, Score::cosine), 1e-14);
}

TEST(Cosine, IsOneForParallelAndMinusOneForOppositeVectors) {
    Vector a(3);
    a << 1.0, 2.0, 2.0;
    EXPECT_NEAR(embed::cosine(a, 4.0 * a), 1.0, 1e-15);
    EXPECT_NEAR(embed::cosine(a, -0.5 * a), -1.0, 1e-15);
}

TEST(Cosine, IsZeroNotNaNWhenANormIsZero) {
    const Vector zero = Vector::Zero(3);
    const Vector ones = Vector::Ones(3);
    EXPECT_EQ(embed::cosine(zero, ones), 0.0);
    EXPECT_EQ(embed::cosine(ones, zero), 0.0);
    EXPECT_EQ(embed::cosine(zero, zero), 0.0);
    EXPECT_EQ(embed::cosine(Vector(0), Vector(0)), 0.0);
}

TEST(Cosine, RejectsVectorsOfDifferentLengthsNamingThem) {
    EXPECT_THAT([] { embed::cosine(Vector::Ones(2), Vector::Ones(7)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 7, expected 2")));
}

TEST(Stretch, MultipliesOnlyThatRowAndLeavesTheArgumentAlone) {
    const Table table = embed::make_table(20, 5, 3);
    const Table before = table;
    const Table stretched = embed::stretch(table, 7, 4.0);
    EXPECT_TRUE(AllClose(table, before, 0.0));
    ASSERT_EQ(embed::shape(stretched), embed::shape(table));
    for (Index r = 0; r < table.rows(); ++r) {
        for (Index c = 0; c < table.cols(); ++c) {
            const double want = r == 7 ? table(r, c) * 4.0 : table(r, c);
            EXPECT_EQ(stretched(r, c), want) << r << ", " << c;
        }
    }
}

TEST(Stretch, RejectsTokensOutsideTheVocabularyAndChangesNothing) {
    const Table table = embed::make_table(20, 5, 3);
    const Table before = table;
    EXPECT_THAT([&] { embed::stretch(table, 20, 2.0); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 20 is outside the vocabulary [0, 20)")));
    EXPECT_THAT([&] { embed::stretch(table, -1, 2.0); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 20)")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

class NearestByScore : public testing::TestWithParam<Score> {};

TEST_P(NearestByScore, MatchesABruteForceOnTheSpecificationTable) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    for (const Index query : {Index{0}, Index{137}, Index{511}}) {
        for (const Index k : {Index{1}, Index{5}, Index{50}, Index{511}}) {
            EXPECT_EQ(nearest(table, query, k, GetParam()), brute_force_ids(table, query, k, GetParam()))
                << "query " << query << ", k " << k;
        }
    }
}

TEST_P(NearestByScore, RankNeighboursReportsTheScoresItRankedBy) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Neighbour> got = embed::rank_neighbours(table, 137, 20, GetParam());
    const std::vector<Neighbour> want = brute_force(table, 137, 20, GetParam());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i].id) << "place " << i;
        EXPECT_NEAR(got[i].score, want[i].score, 1e-12) << "place " << i;
    }
}

// Every score a ranking reports is built from the documented sums bit for bit,
// wherever the rows start (odd widths give every offset from a 64-byte line):
// the dot itself, or the dot over the two norms, each norm the square root of
// a row's documented sum with itself.
TEST_P(NearestByScore, ScoresAreTheDocumentedSumsWhereverTheRowsStart) {
    using embed_test::dot_in_documented_order;
    for (const Index dim : {Index{9}, Index{17}, Index{23}, Index{67}, Index{771}}) {
        const Table table = embed::make_table(30, dim, 21);
        const Index query = 5;
        const double* q = table.row(query).data();
        const std::vector<Neighbour> ranked = embed::rank_neighbours(table, query, 29, GetParam());
        ASSERT_EQ(ranked.size(), 29U) << "dim " << dim;  // else the loop below checks nothing
        for (const Neighbour& n : ranked) {
            const double* r = table.row(n.id).data();
            double want = dot_in_documented_order(q, r, dim);
            if (GetParam() == Score::cosine) {
                want /= std::sqrt(dot_in_documented_order(q, q, dim)) * std::sqrt(dot_in_documented_order(r, r, dim));
            }
            ASSERT_EQ(n.score, want) << "dim " << dim << ", token " << n.id;
        }
    }
}

// Rows duplicated far apart, at every alignment an odd width gives, must tie
// exactly and then come out by id.
TEST_P(NearestByScore, DuplicatedRowsTieAndGoToTheSmallerIdFirst) {
    for (const Index dim : {Index{3}, Index{5}, Index{8}, Index{64}}) {
        Table table = embed::make_table(40, dim, 17);
        // Ten times longer than any other row, so its copies lead by dot product as well as by cosine.
        table.row(3) *= 10.0;
        for (const Index copy : {Index{31}, Index{7}, Index{22}, Index{38}}) table.row(copy) = table.row(3);
        const std::vector<Index> got = nearest(table, 3, 39, GetParam());
        ASSERT_GE(got.size(), 4U);
        EXPECT_THAT(std::vector<Index>(got.begin(), got.begin() + 4), ElementsAre(7, 22, 31, 38)) << "d = " << dim;
        EXPECT_EQ(got, brute_force_ids(table, 3, 39, GetParam())) << "d = " << dim;
        // Queried from a copy, the original and the other copies tie the same way.
        EXPECT_THAT(std::vector<Index>(nearest(table, 31, 4, GetParam())), ElementsAre(3, 7, 22, 38)) << "d = " << dim;
    }
}

TEST_P(NearestByScore, NeverReturnsTheQueryItself) {
    Table table = embed::make_table(12, 4, 5);
    table.row(9) = table.row(4);
    const std::vector<Index> got = nearest(table, 4, 11, GetParam());
    EXPECT_EQ(got.size(), 11U);
    EXPECT_THAT(got, testing::Not(testing::Contains(4)));
}

TEST_P(NearestByScore, KZeroGivesNothing) {
    const Table table = embed::make_table(12, 4, 5);
    EXPECT_THAT(nearest(table, 2, 0, GetParam()), IsEmpty());
}

TEST_P(NearestByScore, KBeyondTheOthersGivesAllOthers) {
    const Table table = embed::make_table(12, 4, 5);
    const std::vector<Index> got = nearest(table, 2, 1000, GetParam());
    EXPECT_EQ(got, brute_force_ids(table, 2, 11, GetParam()));
    EXPECT_EQ(got.size(), 11U);
}

TEST_P(NearestByScore, SingleTokenVocabularyHasNoNeighbours) {
    const Table table = embed::make_table(1, 4, 5);
    EXPECT_THAT(nearest(table, 0, 3, GetParam()), IsEmpty());
}

TEST_P(NearestByScore, RejectsNegativeKNamingIt) {
    const Table table = embed::make_table(12, 4, 5);
    const Table before = table;
    EXPECT_THAT([&] { nearest(table, 2, -1, GetParam()); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("k must be >= 0, got -1")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST_P(NearestByScore, RejectsQueriesOutsideTheVocabulary) {
    const Table table = embed::make_table(12, 4, 5);
    EXPECT_THAT([&] { nearest(table, 12, 3, GetParam()); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 12 is outside the vocabulary [0, 12)")));
    EXPECT_THAT([&] { nearest(table, -1, 3, GetParam()); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 12)")));
}

// A table with NaN, both infinities and a zero row among ordinary rows.
Table table_with_non_finite_rows() {
    Table table = embed::make_table(16, 3, 23);
    table.row(2) << kNaN, 0.5, 0.5;
    table.row(5) << kInf, 0.1, -0.2;
    table.row(6) << -kInf, 0.3, 0.3;
    table.row(9) << kInf, -kInf, 1.0;
    table.row(11).setZero();
    table.row(13) << kNaN, kNaN, kNaN;
    return table;
}

TEST_P(NearestByScore, NaNScoresRankLastByIdAndNothingCrashes) {
    const Table table = table_with_non_finite_rows();
    for (Index query = 0; query < table.rows(); ++query) {
        const std::vector<Index> got = nearest(table, query, 15, GetParam());
        EXPECT_EQ(got, brute_force_ids(table, query, 15, GetParam())) << "query " << query;
    }
}

TEST_P(NearestByScore, AllNaNScoresComeOutInIdOrder) {
    const Table table = table_with_non_finite_rows();
    // Row 13 is all NaN, so each of its scores is NaN, except that the cosine
    // with the zero row 11 is defined as 0.0, a number, which ranks first.
    std::vector<Index> want;
    if (GetParam() == Score::cosine) want.push_back(11);
    for (Index t = 0; t < 16; ++t) {
        if (t != 13 && !(GetParam() == Score::cosine && t == 11)) want.push_back(t);
    }
    EXPECT_EQ(nearest(table, 13, 15, GetParam()), want);
}

TEST_P(NearestByScore, NumbersRankAboveNaNEvenMinusInfinity) {
    const Table table = table_with_non_finite_rows();
    const std::vector<Neighbour> ranked = embed::rank_neighbours(table, 0, 15, GetParam());
    ASSERT_EQ(ranked.size(), 15U);
    if (GetParam() == Score::dot) {
        // Rows 5 and 6 hold +inf and -inf in column 0, so one of them scores -inf against row 0
        // (whose column 0 is not zero); cosine makes those NaN (inf over an infinite norm).
        ASSERT_NE(table(0, 0), 0.0);
        ASSERT_TRUE(std::any_of(ranked.begin(), ranked.end(), [](const Neighbour& n) { return n.score == -kInf; }))
            << "the table must give a -inf score for the test to rank one";
    }
    bool seen_nan = false;
    for (const Neighbour& n : ranked) {
        if (std::isnan(n.score)) seen_nan = true;
        EXPECT_FALSE(seen_nan && !std::isnan(n.score)) << "number after NaN at id " << n.id;
    }
    EXPECT_TRUE(seen_nan);  // row 2 and row 13 score NaN against any query
}

INSTANTIATE_TEST_SUITE_P(Scores, NearestByScore, testing::Values(Score::cosine, Score::dot),
                         [](const testing::TestParamInfo<Score>& param) {
                             return param.param == Score::cosine ? "Cosine" : "Dot";
                         });

TEST(NearestByCosine, StretchingTheFifthNeighbourLeavesTheListUnchanged) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> before = brute_force_ids(table, 137, 5, Score::cosine);
    ASSERT_EQ(embed::nearest_by_cosine(table, 137, 5), before);
    const Table stretched = embed::stretch(table, before[4], 4.0);
    // Times 4 is exact in binary, so every cosine is bit-for-bit what it was.
    EXPECT_EQ(embed::nearest_by_cosine(stretched, 137, 5), before);
    EXPECT_EQ(embed::nearest_by_dot(stretched, 137, 5),
              brute_force_ids(stretch_by_loop(table, before[4], 4.0), 137, 5, Score::dot));
}

TEST(NearestByDot, StretchingARowPullsItToTheFront) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const Index target = brute_force_ids(table, 137, 5, Score::cosine)[4];
    // The pull must be visible: before the stretch the target is not first by dot product.
    ASSERT_NE(brute_force_ids(table, 137, 1, Score::dot), std::vector<Index>{target});
    const Table stretched = embed::stretch(table, target, 4.0);
    const std::vector<Index> got = embed::nearest_by_dot(stretched, 137, 5);
    ASSERT_EQ(got.size(), 5U);
    EXPECT_EQ(got.front(), target);
    EXPECT_EQ(got, brute_force_ids(stretch_by_loop(table, target, 4.0), 137, 5, Score::dot));
}

}  // namespace
