// rms, scaled_lookup and rounding to 16-bit formats. Rounded values were
// worked out by hand and confirmed once with CPython (struct's 'e' format for
// fp16, exact Fraction arithmetic for bf16); they are hard-coded here.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/lookup.hpp>
#include <embed/precision.hpp>
#include <embed/scaling.hpp>
#include <embed/similarity.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::Vector;
using embed_test::AllClose;
using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Rms, IsTheRootOfTheMeanSquare) {
    Vector a(2);
    a << 3.0, 4.0;
    EXPECT_EQ(embed::rms(a), std::sqrt(12.5));  // (9 + 16) / 2
}

TEST(Rms, OfATableRowEqualsAnExplicitLoop) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    double squares = 0.0;
    for (Index c = 0; c < table.cols(); ++c) squares += table(137, c) * table(137, c);
    EXPECT_NEAR(embed::rms(table.row(137)), std::sqrt(squares / 64.0), 1e-15);
}

TEST(Rms, OfAnEmptyVectorIsZero) {
    EXPECT_EQ(embed::rms(Vector(0)), 0.0);
}

TEST(ScaledLookup, IsLookupTimesTheSquareRootOfDim) {
    const Table table = embed::make_table(10, 3, 6);
    const std::vector<Index> ids{4, 0, 4, 9};
    for (const Index dim : {Index{64}, Index{3}, Index{768}}) {
        Table want(4, 3);
        for (Index i = 0; i < 4; ++i) {
            for (Index c = 0; c < 3; ++c) {
                want(i, c) = table(ids[static_cast<std::size_t>(i)], c) * std::sqrt(static_cast<double>(dim));
            }
        }
        EXPECT_TRUE(AllClose(embed::scaled_lookup(table, ids, dim), want, 0.0)) << "dim " << dim;
    }
}

TEST(ScaledLookup, MultipliesBySqrtDimNotDim) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> ids{137};
    const Table scaled = embed::scaled_lookup(table, ids, embed::DIM);
    EXPECT_EQ(scaled(0, 5), table(137, 5) * 8.0);  // sqrt(64) = 8, exact
}

TEST(ScaledLookup, GrowsRmsBySqrtDimAndKeepsCosines) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> ids{137, 3};
    const Table plain = embed::lookup(table, ids);
    const Table scaled = embed::scaled_lookup(table, ids, embed::DIM);
    EXPECT_NEAR(embed::rms(scaled.row(0)) / embed::rms(plain.row(0)), 8.0, 8.0 * 1e-12);
    EXPECT_NEAR(embed::cosine(plain.row(0), scaled.row(0)), 1.0, 1e-12);
    EXPECT_NEAR(embed::cosine(scaled.row(0), scaled.row(1)), embed::cosine(plain.row(0), plain.row(1)), 1e-12);
}

TEST(ScaledLookup, DimZeroGivesZeros) {
    const Table table = embed::make_table(5, 2, 6);
    const std::vector<Index> ids{1};
    EXPECT_TRUE(AllClose(embed::scaled_lookup(table, ids, 0), Table::Zero(1, 2), 0.0));
}

TEST(ScaledLookup, RejectsANegativeDimNamingItAndChangesNothing) {
    const Table table = embed::make_table(5, 2, 6);
    const Table before = table;
    const std::vector<Index> ids{1};
    EXPECT_THAT([&] { embed::scaled_lookup(table, ids, -1); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("dim must be >= 0, got -1")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(ScaledLookup, RejectsBadIdsLikeLookup) {
    const Table table = embed::make_table(5, 2, 6);
    const std::vector<Index> ids{1, 5};
    EXPECT_THAT([&] { embed::scaled_lookup(table, ids, 2); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 5 is outside the vocabulary [0, 5)")));
}

TEST(RoundToFp16, KeepsRepresentableValues) {
    EXPECT_EQ(embed::round_to_fp16(8.0), 8.0);  // sqrt(64)
    EXPECT_EQ(embed::round_to_fp16(65504.0), 65504.0);  // the largest half
    EXPECT_EQ(embed::round_to_fp16(-0.5), -0.5);
}

TEST(RoundToFp16, RoundsToTheNearestHalf) {
    EXPECT_EQ(embed::round_to_fp16(std::sqrt(768.0)), 27.71875);  // 27.7128..., spacing 2^-6 there
    EXPECT_EQ(embed::round_to_fp16(0.001), 0.0010004043579101562);
    EXPECT_EQ(embed::round_to_fp16(65519.0), 65504.0);
}

TEST(RoundToFp16, BreaksTiesToEven) {
    EXPECT_EQ(embed::round_to_fp16(1.0 + 0x1p-11), 1.0);  // halfway to 1 + 2^-10: the even one is 1
    EXPECT_EQ(embed::round_to_fp16(1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9);
    EXPECT_EQ(embed::round_to_fp16(-1.0 - 0x1p-11), -1.0);
}

TEST(RoundToFp16, RoundsIntoAndOutOfSubnormals) {
    EXPECT_EQ(embed::round_to_fp16(0x1p-24), 0x1p-24);  // the smallest subnormal
    EXPECT_EQ(embed::round_to_fp16(1023 * 0x1p-24), 1023 * 0x1p-24);  // the largest
    EXPECT_EQ(embed::round_to_fp16(0.75 * 0x1p-24), 0x1p-24);
    EXPECT_EQ(embed::round_to_fp16(1.5 * 0x1p-24), 2 * 0x1p-24);  // tie, to even
    EXPECT_EQ(embed::round_to_fp16(0x1p-25), 0.0);  // tie between 0 and the smallest: 0
}

TEST(RoundToFp16, OverflowsToInfinity) {
    EXPECT_EQ(embed::round_to_fp16(65520.0), kInf);  // halfway to 2^16, rounds up, past the largest
    EXPECT_EQ(embed::round_to_fp16(1e6), kInf);
    EXPECT_EQ(embed::round_to_fp16(-1e6), -kInf);
    EXPECT_EQ(embed::round_to_fp16(kInf), kInf);
}

TEST(RoundToFp16, PassesNaNAndSignedZeroThrough) {
    EXPECT_TRUE(std::isnan(embed::round_to_fp16(std::numeric_limits<double>::quiet_NaN())));
    EXPECT_EQ(embed::round_to_fp16(0.0), 0.0);
    EXPECT_TRUE(std::signbit(embed::round_to_fp16(-0.0)));
}

TEST(RoundToBf16, KeepsRepresentableValues) {
    EXPECT_EQ(embed::round_to_bf16(8.0), 8.0);
    EXPECT_EQ(embed::round_to_bf16(0x1.fep127), 0x1.fep127);  // the largest bfloat16
}

TEST(RoundToBf16, RoundsToTheNearestBfloat16) {
    EXPECT_EQ(embed::round_to_bf16(27.712812921102035), 27.75);  // sqrt(768); spacing 2^-3 there
    EXPECT_EQ(embed::round_to_bf16(0.1), 0.10009765625);
    EXPECT_EQ(embed::round_to_bf16(0.001), 0.00099945068359375);
}

TEST(RoundToBf16, BreaksTiesToEven) {
    EXPECT_EQ(embed::round_to_bf16(1.0 + 0x1p-8), 1.0);
    EXPECT_EQ(embed::round_to_bf16(1.0 + 3 * 0x1p-8), 1.015625);  // 1 + 2^-6
    EXPECT_EQ(embed::round_to_bf16(-(1.0 + 0x1p-8)), -1.0);
}

TEST(RoundToBf16, RoundsIntoAndOutOfSubnormals) {
    EXPECT_EQ(embed::round_to_bf16(0x1p-133), 0x1p-133);  // the smallest subnormal
    EXPECT_EQ(embed::round_to_bf16(1.5 * 0x1p-133), 0x1p-132);  // tie, to even
    EXPECT_EQ(embed::round_to_bf16(0x1p-134), 0.0);
}

TEST(RoundToBf16, OverflowsToInfinity) {
    EXPECT_EQ(embed::round_to_bf16(0x1.ffp127), kInf);  // halfway to 2^128, rounds to even, past the largest
    EXPECT_EQ(embed::round_to_bf16(0x1.fefffffffffffp127), 0x1.fep127);  // just below halfway
    EXPECT_EQ(embed::round_to_bf16(-1e300), -kInf);
}

TEST(RoundToBf16, PassesNaNAndInfinityThrough) {
    EXPECT_TRUE(std::isnan(embed::round_to_bf16(std::numeric_limits<double>::quiet_NaN())));
    EXPECT_EQ(embed::round_to_bf16(-kInf), -kInf);
    EXPECT_TRUE(std::signbit(embed::round_to_bf16(-0.0)));
}

}  // namespace
