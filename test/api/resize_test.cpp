// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// the decomposition's small products) may read an uninitialised register. The warning is reported at the
// intrinsic's header line, so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // the same false report, as -O1 words it
#endif

// resize_rows, pad_to_multiple_of and reinitialise_rows against explicit loops written here, CPython's
// random.normalvariate for the sampled rows' draws and Eigen's own Cholesky for their factor, on every
// stored type, and at 1, 2 and 7 threads.

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Cholesky>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/edit.hpp>
#include <embed/table.hpp>

#include "cpython.hpp"
#include "defaults_after.hpp"
#include "narrow_reference.hpp"

namespace {

using embed::BasicTable;
using embed::Index;
using embed::RowInit;
using embed::Table;
using embed::TableBF16;
using embed::TableF32;
using testing::HasSubstr;
using testing::ThrowsMessage;

/// The mean of rows (ascending) of table, column by column, summed in double in row order, as a plain loop.
template <class Scalar>
std::vector<double> loop_mean(const BasicTable<Scalar>& table, const std::vector<Index>& rows) {
    std::vector<double> mean(static_cast<std::size_t>(table.cols()), 0.0);
    for (const Index r : rows) {
        for (Index c = 0; c < table.cols(); ++c) mean[static_cast<std::size_t>(c)] += static_cast<double>(table(r, c));
    }
    for (double& m : mean) m /= static_cast<double>(rows.size());
    return mean;
}

std::vector<Index> range(Index begin, Index end) {
    std::vector<Index> ids;
    for (Index i = begin; i < end; ++i) ids.push_back(i);
    return ids;
}

/// A table of make_table's values stored as Scalar.
template <class Scalar>
BasicTable<Scalar> some_table(Index rows, Index cols, std::uint64_t seed) {
    return embed::make_table(rows, cols, seed).cast<Scalar>();
}

template <class Scalar>
class EditEveryType : public testing::Test {};
using StoredTypes = testing::Types<double, float, Eigen::bfloat16>;
TYPED_TEST_SUITE(EditEveryType, StoredTypes);

/// Whether a and b have one shape and the same bytes.
template <class Scalar>
bool same_stored(const BasicTable<Scalar>& a, const BasicTable<Scalar>& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(Scalar)) == 0;
}

/// Expects got to be x rounded once to Scalar, to nearest with ties to even (the test's own bit rounding).
template <class Scalar>
void expect_rounded_once(Scalar got, double x) {
    if constexpr (std::is_same_v<Scalar, double>) {
        EXPECT_EQ(narrow_reference::bits_of(got), narrow_reference::bits_of(x));
    } else {
        EXPECT_EQ(narrow_reference::stored_bits(got), narrow_reference::rounded_bits(x, narrow_reference::kPrecision<Scalar>));
    }
}

TYPED_TEST(EditEveryType, ShrinkingKeepsTheFirstRowsBitForBit) {
    const auto table = some_table<TypeParam>(9, 5, 3);
    const BasicTable<TypeParam> cut = embed::resize_rows(table, 4);
    EXPECT_TRUE(same_stored<TypeParam>(cut, table.topRows(4)));
    EXPECT_EQ(embed::resize_rows(table, 0).rows(), 0);
    EXPECT_TRUE(same_stored<TypeParam>(embed::resize_rows(table, 9, RowInit::sampled), table));
}

TYPED_TEST(EditEveryType, GrowingByMeanAddsTheColumnMeanRoundedOnce) {
    const auto table = some_table<TypeParam>(7, 6, 11);
    const BasicTable<TypeParam> before = table;
    const BasicTable<TypeParam> grown = embed::resize_rows(table, 10, RowInit::mean);
    ASSERT_EQ(grown.rows(), 10);
    EXPECT_TRUE(same_stored<TypeParam>(grown.topRows(7), table));
    const std::vector<double> mean = loop_mean(table, range(0, 7));
    for (Index r = 7; r < 10; ++r) {
        for (Index c = 0; c < 6; ++c) expect_rounded_once(grown(r, c), mean[static_cast<std::size_t>(c)]);
    }
    EXPECT_TRUE(same_stored(table, before));
}

TYPED_TEST(EditEveryType, GrowingByZerosAddsZeroRows) {
    const auto table = some_table<TypeParam>(3, 4, 5);
    const BasicTable<TypeParam> grown = embed::resize_rows(table, 5, RowInit::zeros);
    for (Index c = 0; c < 4; ++c) {
        EXPECT_EQ(static_cast<double>(grown(3, c)), 0.0);
        EXPECT_EQ(static_cast<double>(grown(4, c)), 0.0);
    }
}

TYPED_TEST(EditEveryType, ReinitialisedRowsTakeTheMeanOfTheOthers) {
    const auto table = some_table<TypeParam>(8, 3, 7);
    const std::vector<Index> ids{6, 1, 6};  // 6 twice: counted once
    const BasicTable<TypeParam> out = embed::reinitialise_rows(table, ids, RowInit::mean);
    const std::vector<double> mean = loop_mean(table, {0, 2, 3, 4, 5, 7});
    for (Index r = 0; r < 8; ++r) {
        for (Index c = 0; c < 3; ++c) {
            if (r == 1 || r == 6) {
                expect_rounded_once(out(r, c), mean[static_cast<std::size_t>(c)]);
            } else {
                expect_rounded_once(out(r, c), static_cast<double>(table(r, c)));
            }
        }
    }
}

TEST(Edit, PadsUpToTheNextMultipleAndNeverShrinks) {
    const Table table = embed::make_table(10, 3, 1);
    EXPECT_EQ(embed::pad_to_multiple_of(table, 8).rows(), 16);
    EXPECT_EQ(embed::pad_to_multiple_of(table, 5).rows(), 10);
    EXPECT_EQ(embed::pad_to_multiple_of(table, 1).rows(), 10);
    EXPECT_EQ(embed::pad_to_multiple_of(table, 64).rows(), 64);
    EXPECT_EQ(embed::pad_to_multiple_of(Table(0, 3), 8).rows(), 0);
    const Table padded = embed::pad_to_multiple_of(table, 4, RowInit::zeros);
    EXPECT_EQ(padded.rows(), 12);
    EXPECT_EQ(padded.row(11).norm(), 0.0);
    EXPECT_THAT([&] { (void)embed::pad_to_multiple_of(table, 0); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("k must be >= 1")));
    EXPECT_THAT([&] { (void)embed::pad_to_multiple_of(table, -3); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("-3")));
    // rows * d past 2^63 - 1: Eigen refuses the allocation before asking for memory.
    EXPECT_THROW((void)embed::pad_to_multiple_of(table, std::numeric_limits<Index>::max() - 1), std::bad_alloc);
}

TEST(Edit, RefusesWhatItCannotDo) {
    const Table table = embed::make_table(4, 2, 1);
    EXPECT_THAT([&] { (void)embed::resize_rows(table, -1); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-1")));
    EXPECT_THAT([&] { (void)embed::resize_rows(Table(0, 2), 3); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("no")));
    EXPECT_EQ(embed::resize_rows(Table(0, 2), 3, RowInit::zeros).rows(), 3);
    const std::vector<Index> outside{2, 4};
    EXPECT_THAT([&] { (void)embed::reinitialise_rows(table, outside); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 4 is outside the vocabulary [0, 4)")));
    const std::vector<Index> negative{-1};
    EXPECT_THAT([&] { (void)embed::reinitialise_rows(table, negative); },
                ThrowsMessage<std::out_of_range>(HasSubstr("-1")));
    const std::vector<Index> every{0, 1, 2, 3, 3};
    EXPECT_THAT([&] { (void)embed::reinitialise_rows(table, every, RowInit::sampled); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("sampled")));
    const Table zeroed = embed::reinitialise_rows(table, every, RowInit::zeros);
    EXPECT_EQ(zeroed.norm(), 0.0);
    EXPECT_TRUE(narrow_reference::SameBits(embed::reinitialise_rows(table, std::vector<Index>{}), table));
    EXPECT_EQ(embed::parse_row_init("sampled"), RowInit::sampled);
    EXPECT_THAT([] { (void)embed::parse_row_init("Mean"); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("\"Mean\" is not one of \"mean\", \"sampled\", \"zeros\"")));
}

TEST(Edit, NonFiniteSourceValuesPropagateIntoTheMean) {
    Table table = embed::make_table(3, 2, 1);
    table(1, 0) = std::numeric_limits<double>::quiet_NaN();
    table(2, 1) = std::numeric_limits<double>::infinity();
    const Table grown = embed::resize_rows(table, 4, RowInit::sampled, 5);
    EXPECT_TRUE(std::isnan(grown(3, 0)));
    EXPECT_EQ(grown(3, 1), std::numeric_limits<double>::infinity());
}

/// count * d successive random.Random(seed).normalvariate(0.0, 1.0) values from CPython.
std::vector<double> python_normals(std::uint64_t seed, Index count) {
    const std::string code = "import random\nr = random.Random(" + std::to_string(seed) + ")\nprint(\" \".join(r.normalvariate(0.0, 1.0).hex() for _ in range(" + std::to_string(count) + ")))";
    return embed_test::parse_hex_doubles(embed_test::run_python(code));
}

TEST(Edit, SampledRowsAreTheMeanPlusCholeskyTimesCPythonsNormals) {
    EMBED_REQUIRE_PYTHON();
    const Index n = 40;
    const Index d = 5;
    const Table table = embed::make_table(n, d, 9);
    const Table grown = embed::resize_rows(table, n + 3, RowInit::sampled, 1234);
    const std::vector<double> mean = loop_mean(table, range(0, n));
    Eigen::MatrixXd covariance = Eigen::MatrixXd::Zero(d, d);
    for (Index r = 0; r < n; ++r) {
        for (Index i = 0; i < d; ++i) {
            for (Index j = 0; j < d; ++j) {
                covariance(i, j) += (table(r, i) - mean[static_cast<std::size_t>(i)]) * (table(r, j) - mean[static_cast<std::size_t>(j)]);
            }
        }
    }
    covariance *= 1e-9 / static_cast<double>(n);
    const Eigen::MatrixXd lower = Eigen::LLT<Eigen::MatrixXd>(covariance).matrixL();
    const std::vector<double> z = python_normals(1234, 3 * d);
    ASSERT_EQ(z.size(), static_cast<std::size_t>(3 * d));
    for (Index r = 0; r < 3; ++r) {
        const Eigen::VectorXd draw = Eigen::Map<const Eigen::VectorXd>(z.data() + r * d, d);
        const Eigen::VectorXd offset = lower * draw;
        for (Index c = 0; c < d; ++c) {
            const double got = grown(n + r, c) - mean[static_cast<std::size_t>(c)];
            // The mean is about 0.01, the offsets about 1e-5: 1e-9 of an offset is far below either's rounding.
            EXPECT_NEAR(got, offset[c], 1e-12) << "row " << n + r << ", column " << c;
        }
        EXPECT_GT(offset.norm(), 1e-7) << "the draws moved the row off the mean";
    }
}

TEST(Edit, SampledFallsBackToTheMeanWhereTheCovarianceIsNotPositiveDefinite) {
    // Three rows in four columns: the covariance has rank 2 at most.
    const Table table = embed::make_table(3, 4, 2);
    const Table grown = embed::resize_rows(table, 5, RowInit::sampled, 3);
    const Table mean_grown = embed::resize_rows(table, 5, RowInit::mean);
    EXPECT_TRUE(narrow_reference::SameBits(grown, mean_grown));
}

TEST(Edit, SampledRowsDependOnTheSeedOnly) {
    const Table table = embed::make_table(50, 4, 4);
    const Table a = embed::resize_rows(table, 53, RowInit::sampled, 77);
    const Table b = embed::resize_rows(table, 53, RowInit::sampled, 77);
    const Table c = embed::resize_rows(table, 53, RowInit::sampled, 78);
    EXPECT_TRUE(narrow_reference::SameBits(a, b));
    EXPECT_FALSE(narrow_reference::SameBits(a, c));
    const std::vector<Index> ids{3, 10};
    const Table re = embed::reinitialise_rows(table, ids, RowInit::sampled, 77);
    EXPECT_NE(re(3, 0), table(3, 0));
    EXPECT_NE(re(3, 0), re(10, 0));
}

TEST(Edit, EveryRuleGivesTheSameRowsAtOneTwoAndSevenThreads) {
    const embed_test::DefaultsAfter restore;
    // Large enough that the mean, the covariance and the Cholesky factor are split between threads.
    const Table table = embed::make_table(5000, 64, 6);
    const TableF32 narrow = table.cast<float>();
    const std::vector<Index> ids{0, 17, 4999};
    std::vector<Table> sampled;
    std::vector<Table> mean;
    std::vector<TableF32> narrow_sampled;
    std::vector<Table> reinitialised;
    for (const int threads : {1, 2, 7}) {
        embed::detail::set_worker_count(threads);
        sampled.push_back(embed::resize_rows(table, 5003, RowInit::sampled, 42));
        mean.push_back(embed::pad_to_multiple_of(table, 64));
        narrow_sampled.push_back(embed::resize_rows(narrow, 5001, RowInit::sampled, 42));
        reinitialised.push_back(embed::reinitialise_rows(table, ids, RowInit::sampled, 8));
    }
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_TRUE(narrow_reference::SameBits(sampled[i], sampled[0]));
        EXPECT_TRUE(narrow_reference::SameBits(mean[i], mean[0]));
        EXPECT_TRUE(same_stored(narrow_sampled[i], narrow_sampled[0]));
        EXPECT_TRUE(narrow_reference::SameBits(reinitialised[i], reinitialised[0]));
    }
    EXPECT_NE(sampled[0](5000, 0), mean[0](5000, 0)) << "64 columns of 5000 rows are positive definite";
}

}  // namespace
