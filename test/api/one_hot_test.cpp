// Lookup as a product: a one-hot row times the table. Checked against explicit
// loops, and the whole route against lookup with zero difference.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/lookup.hpp>
#include <embed/one_hot.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"

namespace {

using embed::Index;
using embed::RowVector;
using embed::Shape;
using embed::Table;
using embed_test::AllClose;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(OneHot, HasASingleOneAtTheToken) {
    const RowVector vec = embed::one_hot(3, 6);
    ASSERT_EQ(vec.size(), 6);
    for (Index i = 0; i < 6; ++i) EXPECT_EQ(vec[i], i == 3 ? 1.0 : 0.0) << "position " << i;
}

TEST(OneHot, RejectsTokensOutsideTheVocabulary) {
    EXPECT_THAT([] { embed::one_hot(-1, 6); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 6)")));
    EXPECT_THAT([] { embed::one_hot(6, 6); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 6 is outside the vocabulary [0, 6)")));
}

TEST(OneHot, RejectsANegativeVocabularyNamingIt) {
    EXPECT_THAT([] { embed::one_hot(0, -2); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("vocab must be >= 0, got -2")));
}

// vec is (V), matrix is (V, d), returns (d) by the definition's double loop.
RowVector row_times_matrix_by_loop(const RowVector& vec, const Table& matrix) {
    RowVector out = RowVector::Zero(matrix.cols());
    for (Index c = 0; c < matrix.cols(); ++c) {
        for (Index r = 0; r < matrix.rows(); ++r) out[c] += vec[r] * matrix(r, c);
    }
    return out;
}

TEST(RowTimesMatrix, EqualsTheSumOverRows) {
    const Table matrix = embed::make_table(9, 5, 2);
    RowVector vec(9);
    for (Index r = 0; r < 9; ++r) vec[r] = 0.25 * static_cast<double>(r) - 1.0;
    EXPECT_TRUE(AllClose(embed::row_times_matrix(vec, matrix), row_times_matrix_by_loop(vec, matrix), 1e-14));
}

TEST(RowTimesMatrix, RejectsAVectorOfTheWrongLengthNamingIt) {
    const Table matrix = embed::make_table(9, 5, 2);
    EXPECT_THAT([&] { embed::row_times_matrix(RowVector::Ones(8), matrix); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 8, expected 9")));
}

class LookupViaOneHotShapes : public testing::TestWithParam<Shape> {};

TEST_P(LookupViaOneHotShapes, EqualsLookupExactly) {
    const auto [vocab, dim] = GetParam();
    for (const std::uint64_t seed : {1ULL, 2ULL, 20260917ULL}) {
        const Table table = embed::make_table(vocab, dim, seed);
        std::vector<Index> ids;
        for (Index t = 0; t < vocab; t += 1 + vocab / 17) ids.push_back(t);
        ids.push_back(vocab - 1);
        ids.push_back(0);
        EXPECT_TRUE(AllClose(embed::lookup_via_one_hot(table, ids), embed::lookup(table, ids), 0.0)) << "seed " << seed;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LookupViaOneHotShapes,
                         testing::Values(Shape{1, 1}, Shape{7, 3}, Shape{3, 7}, Shape{512, 64}));

// The same bits, where a NaN matches any NaN (which operand's payload an addition keeps is the compiler's choice).
bool SameBitsOrBothNaN(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Entry (id, c) of the one-hot product by the definition, written out here: a sum from 0.0 over the rows in
// order of (r == id ? 1 : 0) times table(r, c), every product taken (zeros times infinity give NaN).
double one_hot_entry_by_loop(const Table& table, Index id, Index c) {
    double sum = 0.0;
    for (Index r = 0; r < table.rows(); ++r) sum += (r == id ? 1.0 : 0.0) * table(r, c);
    return sum;
}

// Every row of the batched product is the explicit loop's one-hot row times the table, summed over the rows
// in order, bit for bit: on tables holding -0.0, infinities and NaN, with vocabularies across the kernel's
// chunks of 256 rows, widths around its blocks of columns (8 or 16, then 4 or 8, then single columns), and id
// counts around its blocks (5 or 8 ids) and groups (10 or 16), repeated ids among them.
TEST(LookupViaOneHot, EachRowIsTheOneHotLoopBitForBit) {
    for (const auto& [vocab, dim] :
         {Shape{1, 1}, Shape{9, 3}, Shape{300, 8}, Shape{513, 13}, Shape{257, 67}, Shape{100, 29}}) {
        Table table = embed::make_table(vocab, dim, 7);
        table(0, 0) = -0.0;
        table(vocab - 1, dim - 1) = std::numeric_limits<double>::infinity();
        if (vocab > 2) table(vocab / 2, 0) = std::numeric_limits<double>::quiet_NaN();
        for (const Index n : {1, 4, 6, 9, 17, 70}) {
            std::vector<Index> ids;
            for (Index k = 0; k < n; ++k) ids.push_back((k * 37 + k / 3) % vocab);
            const Table rows = embed::lookup_via_one_hot(table, ids);
            ASSERT_EQ(rows.rows(), n);
            ASSERT_EQ(rows.cols(), dim);
            for (Index k = 0; k < n; ++k) {
                const Index id = ids[static_cast<std::size_t>(k)];
                for (Index c = 0; c < dim; ++c) {
                    const double want = one_hot_entry_by_loop(table, id, c);
                    ASSERT_TRUE(SameBitsOrBothNaN(rows(k, c), want))
                        << vocab << "x" << dim << " n " << n << " row " << k << " column " << c << ": " << rows(k, c)
                        << " against " << want;
                }
            }
        }
    }
}

TEST(LookupViaOneHot, RejectsBadIdsLikeLookup) {
    const Table table = embed::make_table(5, 2, 1);
    const Table before = table;
    const std::vector<Index> ids{1, -1};
    EXPECT_THAT([&] { embed::lookup_via_one_hot(table, ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 5)")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(OneHotMults, IsVocabTimesDimTimesCount) {
    EXPECT_EQ(embed::one_hot_mults(512, 64, 1), 32768);
    EXPECT_EQ(embed::one_hot_mults(512, 64, 3), 98304);
    EXPECT_EQ(embed::one_hot_mults(7, 5, 0), 0);
}

TEST(OneHotMults, RejectsNegativeArgumentsNamingThem) {
    EXPECT_THAT([] { embed::one_hot_mults(-5, 64, 1); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-5")));
    EXPECT_THAT([] { embed::one_hot_mults(512, 64, -2); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("count must be >= 0, got -2")));
}

TEST(OneHotMults, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::one_hot_mults(Index{1} << 31, Index{1} << 31, 2), std::overflow_error);
    EXPECT_THROW(embed::one_hot_mults(std::numeric_limits<Index>::max(), 2, 1), std::overflow_error);
}

}  // namespace
