// make_table, shape, from_rows and param_count. Table values are checked
// against numbers copied from CPython and against CPython run live.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/table.hpp>

#include "all_close.hpp"
#include "cpython.hpp"

namespace {

using embed::Index;
using embed::Shape;
using embed::Table;
using embed_test::AllClose;
using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr Index kTwoTo31 = Index{1} << 31;
constexpr Index kTwoTo32 = Index{1} << 32;
constexpr Index kTwoTo62 = Index{1} << 62;

TEST(MakeTable, SpecificationTableHoldsCPythonsValues) {
    // CPython: t = [[r.random() - 0.5 for c in range(64)] for t in range(512)] with r = random.Random(20260917)
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    ASSERT_EQ(embed::shape(table), (Shape{512, 64}));
    EXPECT_EQ(table(0, 0), 0.11666082688204615);
    EXPECT_EQ(table(0, 1), 0.15487907810030288);
    EXPECT_EQ(table(137, 5), -0.222715908228325);
    EXPECT_EQ(table(511, 63), -0.46931364710400825);
}

// CPython's table for a shape, filled row by row, as a (vocab, dim) Table; seed is a Python expression.
Table cpython_table(Index vocab, Index dim, const std::string& seed) {
    const std::string n = std::to_string(vocab * dim);
    const std::vector<double> values = embed_test::parse_hex_doubles(embed_test::run_python(
        "import random\nr = random.Random(" + seed + ")\nprint(\" \".join((r.random() - 0.5).hex() for _ in range(" +
        n + ")))"));
    if (values.size() != static_cast<std::size_t>(vocab * dim)) throw std::runtime_error("short python output");
    Table table(vocab, dim);
    for (Index r = 0; r < vocab; ++r) {
        for (Index c = 0; c < dim; ++c) table(r, c) = values[static_cast<std::size_t>(r * dim + c)];
    }
    return table;
}

Table cpython_table(Index vocab, Index dim, std::uint64_t seed) { return cpython_table(vocab, dim, std::to_string(seed)); }

TEST(MakeTable, FillsRowByRowLikeCPythonForNonSquareShapes) {
    EMBED_REQUIRE_PYTHON();
    for (const auto [vocab, dim] : {Shape{3, 5}, Shape{5, 3}, Shape{7, 1}, Shape{1, 7}, Shape{40, 33}}) {
        EXPECT_TRUE(AllClose(embed::make_table(vocab, dim, 99), cpython_table(vocab, dim, 99), 0.0))
            << vocab << " x " << dim;
    }
}

TEST(MakeTable, SpecificationTableMatchesCPythonEverywhere) {
    EMBED_REQUIRE_PYTHON();
    EXPECT_TRUE(AllClose(embed::make_table(embed::VOCAB, embed::DIM, embed::SEED),
                         cpython_table(embed::VOCAB, embed::DIM, embed::SEED), 0.0));
}

TEST(MakeTable, SeedWordsPast64BitsFillLikeCPythonsBigIntSeed) {
    EMBED_REQUIRE_PYTHON();
    // 2**200 + 2**64 + 3 as 32-bit words, least significant first.
    const std::vector<std::uint32_t> words{3U, 0U, 1U, 0U, 0U, 0U, 256U};
    EXPECT_TRUE(AllClose(embed::make_table(40, 33, words), cpython_table(40, 33, "2**200 + 2**64 + 3"), 0.0));
}

TEST(MakeTable, SeedWordsOfA64BitSeedGiveTheSameTableAsTheSeed) {
    const std::vector<std::uint32_t> words{0x89abcdefU, 0x01234567U};
    EXPECT_TRUE(AllClose(embed::make_table(37, 29, words), embed::make_table(37, 29, 0x0123456789abcdefULL), 0.0));
}

TEST(MakeTable, SeedWordsRejectNegativeSizesNamingTheValue) {
    const std::vector<std::uint32_t> words{1U};
    EXPECT_THAT([&] { (void)embed::make_table(-3, 4, words); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("-3")));
}

TEST(MakeTable, ZeroSizesGiveEmptyTablesOfThatShape) {
    EXPECT_EQ(embed::shape(embed::make_table(0, 64, embed::SEED)), (Shape{0, 64}));
    EXPECT_EQ(embed::shape(embed::make_table(512, 0, embed::SEED)), (Shape{512, 0}));
    EXPECT_EQ(embed::shape(embed::make_table(0, 0, embed::SEED)), (Shape{0, 0}));
}

TEST(MakeTable, RejectsNegativeSizesNamingTheValue) {
    EXPECT_THAT([] { embed::make_table(-1, 64, embed::SEED); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("vocab must be >= 0, got -1")));
    EXPECT_THAT([] { embed::make_table(512, -7, embed::SEED); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("dim must be >= 0, got -7")));
}

TEST(MakeTable, RejectsSizesWhoseProductOverflows) {
    EXPECT_THROW(embed::make_table(kTwoTo62, 2, embed::SEED), std::overflow_error);
    EXPECT_THROW(embed::make_table(kTwoTo32, kTwoTo32, embed::SEED), std::overflow_error);
}

TEST(Shape, DefaultTableIsZeroByZero) {
    EXPECT_EQ(embed::shape(Table{}), (Shape{0, 0}));
}

TEST(Shape, UnpacksIntoRowsAndColumns) {
    const auto [rows, cols] = embed::shape(Table(3, 5));
    EXPECT_EQ(rows, 3);
    EXPECT_EQ(cols, 5);
}

TEST(Shape, ComparesBothFields) {
    EXPECT_TRUE((Shape{3, 5} == Shape{3, 5}));
    EXPECT_FALSE((Shape{3, 5} == Shape{5, 3}));
    EXPECT_FALSE((Shape{3, 5} == Shape{3, 4}));
    EXPECT_TRUE((Shape{3, 5} != Shape{4, 5}));
}

TEST(Shape, NoRowsIsZeroByZero) {
    EXPECT_EQ(embed::shape(std::vector<std::vector<double>>{}), (Shape{0, 0}));
}

TEST(Shape, CountsRowsAndTheirCommonLength) {
    using Rows = std::vector<std::vector<double>>;
    EXPECT_EQ(embed::shape(Rows{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}), (Shape{2, 3}));
    EXPECT_EQ(embed::shape(Rows{{}, {}, {}}), (Shape{3, 0}));
}

TEST(Shape, TakesBracedRowsWithoutAmbiguity) {
    EXPECT_EQ(embed::shape({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}), (Shape{2, 3}));
    EXPECT_THAT([] { embed::shape({{1.0, 2.0}, {3.0}}); }, ThrowsMessage<std::invalid_argument>(HasSubstr("row 1")));
}

TEST(Shape, RejectsRaggedRowsNamingTheRow) {
    const std::vector<std::vector<double>> ragged{{1.0, 2.0}, {3.0, 4.0}, {5.0}};
    EXPECT_THAT([&] { embed::shape(ragged); }, ThrowsMessage<std::invalid_argument>(HasSubstr("row 2")));
}

TEST(FromRows, CopiesEveryValueToItsPlace) {
    const std::vector<std::vector<double>> rows{{1.5, -2.0, 3.25}, {0.0, 7.0, -8.5}};
    const Table table = embed::from_rows(rows);
    ASSERT_EQ(embed::shape(table), (Shape{2, 3}));
    for (Index r = 0; r < 2; ++r) {
        for (Index c = 0; c < 3; ++c) {
            EXPECT_EQ(table(r, c), rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]) << r << ", " << c;
        }
    }
}

TEST(FromRows, NoRowsGiveAnEmptyTable) {
    EXPECT_EQ(embed::shape(embed::from_rows({})), (Shape{0, 0}));
}

TEST(FromRows, RejectsRaggedRowsNamingTheRow) {
    const std::vector<std::vector<double>> ragged{{1.0}, {2.0, 3.0}};
    EXPECT_THAT([&] { embed::from_rows(ragged); }, ThrowsMessage<std::invalid_argument>(HasSubstr("row 1")));
}

TEST(ParamCount, IsTheProductNotTheSum) {
    EXPECT_EQ(embed::param_count(512, 64), 32768);  // 512 + 64 would be 576
    EXPECT_EQ(embed::param_count(3, 5), 15);
    EXPECT_EQ(embed::param_count(1, 1), 1);
    EXPECT_EQ(embed::param_count(0, 64), 0);
    EXPECT_EQ(embed::param_count(kTwoTo31, kTwoTo31), kTwoTo62);
    EXPECT_EQ(embed::param_count(std::numeric_limits<Index>::max(), 1), std::numeric_limits<Index>::max());
}

TEST(ParamCount, RejectsNegativeSizesNamingTheValue) {
    EXPECT_THAT([] { embed::param_count(-3, 64); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-3")));
    EXPECT_THAT([] { embed::param_count(512, -64); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-64")));
}

TEST(ParamCount, RejectsProductsPastTheLargestIndex) {
    EXPECT_THROW(embed::param_count(kTwoTo62, 2), std::overflow_error);
    EXPECT_THROW(embed::param_count(kTwoTo32, kTwoTo31), std::overflow_error);
    EXPECT_THROW(embed::param_count(std::numeric_limits<Index>::max(), 2), std::overflow_error);
}

}  // namespace
