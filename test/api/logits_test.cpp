// logits scores a hidden vector against every row of the same table. Checked
// against an explicit double loop; the batched form against the single one.
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"
#include "documented_order.hpp"

namespace {

using embed::Index;
using embed::Shape;
using embed::Table;
using embed::Vector;
using embed_test::AllClose;
using testing::AllOf;
using testing::HasSubstr;
using testing::ThrowsMessage;

// table is (V, d), hidden is (d), returns (V) by the definition's double loop.
Vector logits_by_loop(const Table& table, const Vector& hidden) {
    Vector out = Vector::Zero(table.rows());
    for (Index t = 0; t < table.rows(); ++t) {
        for (Index c = 0; c < table.cols(); ++c) out[t] += table(t, c) * hidden[c];
    }
    return out;
}

// A hidden vector (d) that is not any row of the table.
Vector some_hidden(Index dim) {
    Vector hidden(dim);
    for (Index c = 0; c < dim; ++c) hidden[c] = 0.5 - 0.125 * static_cast<double>(c % 9);
    return hidden;
}

// The first position of the largest value, by a plain scan.
Index argmax_by_loop(const Vector& values) {
    Index best = 0;
    for (Index i = 1; i < values.size(); ++i) {
        if (values[i] > values[best]) best = i;
    }
    return best;
}

class LogitsShapes : public testing::TestWithParam<Shape> {};

TEST_P(LogitsShapes, EqualTheSumOverColumns) {
    const auto [vocab, dim] = GetParam();
    const Table table = embed::make_table(vocab, dim, 8);
    const Vector hidden = some_hidden(dim);
    EXPECT_TRUE(AllClose(embed::logits(table, hidden), logits_by_loop(table, hidden), 1e-13));
}

TEST_P(LogitsShapes, IntoWritesTheSameValuesIntoTheGivenVector) {
    const auto [vocab, dim] = GetParam();
    const Table table = embed::make_table(vocab, dim, 8);
    const Vector hidden = some_hidden(dim);
    Vector out = Vector::Constant(vocab, -77.0);
    const double* storage = out.data();
    embed::logits_into(table, hidden, out);
    EXPECT_EQ(out.data(), storage);
    EXPECT_TRUE(AllClose(out, logits_by_loop(table, hidden), 1e-13));
}

TEST_P(LogitsShapes, BatchedRowsEqualOneLogitsCallPerRow) {
    const auto [vocab, dim] = GetParam();
    const Table table = embed::make_table(vocab, dim, 8);
    const Table hidden_rows = embed::make_table(6, dim, 9);
    const Table batched = embed::logits(table, hidden_rows);
    ASSERT_EQ(embed::shape(batched), (Shape{6, vocab}));
    for (Index i = 0; i < hidden_rows.rows(); ++i) {
        const Vector hidden = hidden_rows.row(i).transpose();
        // A matrix product may sum in another order than the loop: compare with a tolerance.
        EXPECT_TRUE(AllClose(batched.row(i).transpose(), logits_by_loop(table, hidden), 1e-12)) << "row " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LogitsShapes,
                         testing::Values(Shape{1, 1}, Shape{7, 1}, Shape{1, 7}, Shape{13, 9}, Shape{512, 64}));

TEST(Logits, OwnRowScoresHighestForEveryTokenOfTheSpecificationTable) {
    // Checked once in CPython as well: for all 512 rows of make_table(512, 64, 20260917)
    // the largest dot product with the other rows is the row's own.
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    for (Index t = 0; t < table.rows(); ++t) {
        const Vector hidden = table.row(t).transpose();
        ASSERT_EQ(argmax_by_loop(embed::logits(table, hidden)), t);
    }
}

TEST(Logits, RejectsAHiddenVectorOfTheWrongLengthNamingIt) {
    const Table table = embed::make_table(10, 4, 1);
    const Table before = table;
    const Vector short_hidden = Vector::Ones(3);
    EXPECT_THAT([&] { embed::logits(table, short_hidden); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 3, expected 4")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(Logits, EmptyTableGivesNoLogits) {
    const Vector hidden = Vector::Ones(4);
    EXPECT_EQ(embed::logits(Table(0, 4), hidden).size(), 0);
}

TEST(LogitsInto, RejectsAnOutputOfTheWrongSizeAndLeavesItAlone) {
    const Table table = embed::make_table(10, 4, 1);
    Vector out = Vector::Constant(9, -1.0);
    EXPECT_THAT([&] { embed::logits_into(table, Vector::Ones(4), out); },
                ThrowsMessage<std::invalid_argument>(
                    AllOf(HasSubstr("output"), HasSubstr("has length 9, expected 10"))));
    EXPECT_TRUE(AllClose(out, Vector::Constant(9, -1.0), 0.0));
}

TEST(LogitsInto, RejectsAHiddenVectorOfTheWrongLengthAndLeavesOutAlone) {
    const Table table = embed::make_table(10, 4, 1);
    Vector out = Vector::Constant(10, -1.0);
    EXPECT_THAT([&] { embed::logits_into(table, Vector::Ones(5), out); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 5, expected 4")));
    EXPECT_TRUE(AllClose(out, Vector::Constant(10, -1.0), 0.0));
}

TEST(LogitsInto, WritesIntoASegmentOfALargerVectorOnly) {
    const Table table = embed::make_table(10, 4, 1);
    const Vector hidden = some_hidden(4);
    Vector buffer = Vector::Constant(14, -5.0);
    embed::logits_into(table, hidden, buffer.segment(2, 10));
    EXPECT_TRUE(AllClose(buffer.segment(2, 10), logits_by_loop(table, hidden), 1e-13));
    EXPECT_EQ(buffer[0], -5.0);
    EXPECT_EQ(buffer[1], -5.0);
    EXPECT_EQ(buffer[12], -5.0);
    EXPECT_EQ(buffer[13], -5.0);
}

TEST(BatchedLogits, RejectsHiddenRowsOfTheWrongWidthNamingIt) {
    const Table table = embed::make_table(10, 4, 1);
    const Table before = table;
    const Table wide_rows = Table::Ones(2, 6);
    EXPECT_THAT([&] { embed::logits(table, wide_rows); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 6, expected 4")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(Logits, TakesEigenExpressionsAsTheHiddenVector) {
    const Table table = embed::make_table(12, 5, 3);
    const Vector hidden = table.row(7).transpose();
    const Vector expected = logits_by_loop(table, hidden);
    // A table row, its transpose and a nullary expression each give a (V) vector.
    EXPECT_TRUE(AllClose(embed::logits(table, table.row(7)), expected, 1e-13));
    EXPECT_TRUE(AllClose(embed::logits(table, table.row(7).transpose()), expected, 1e-13));
    EXPECT_TRUE(AllClose(embed::logits(table, Vector::Ones(5)), logits_by_loop(table, Vector::Ones(5)), 1e-13));
    EXPECT_THAT([&] { embed::logits(table, Vector::Ones(4)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 4, expected 5")));
}

TEST(BatchedLogits, TakesAMatrixExpressionAsHiddenRows) {
    const Table table = embed::make_table(12, 5, 3);
    const Table scores = embed::logits(table, table.topRows(3));
    ASSERT_EQ(embed::shape(scores), (Shape{3, 12}));
    for (Index i = 0; i < 3; ++i) {
        const Vector hidden = table.row(i).transpose();
        EXPECT_TRUE(AllClose(Vector(scores.row(i).transpose()), logits_by_loop(table, hidden), 1e-12));
    }
}

TEST(BatchedLogits, NoHiddenRowsGiveZeroByV) {
    const Table table = embed::make_table(10, 4, 1);
    EXPECT_EQ(embed::shape(embed::logits(table, Table(0, 4))), (Shape{0, 10}));
}

// Each score is the documented sum bit for bit, wherever its row starts: odd
// widths put the rows at every offset from a 64-byte line, and widths past 16
// take the kernel's whole-line loop with the lanes rotated.
TEST(Logits, EveryScoreIsTheDocumentedSumWhereverItsRowStarts) {
    for (const Index dim : {1, 7, 8, 9, 15, 16, 17, 23, 64, 67, 771}) {
        const Table table = embed::make_table(24, dim, 9);
        const Vector hidden = some_hidden(dim);
        const Vector scores = embed::logits(table, hidden);
        for (Index t = 0; t < table.rows(); ++t) {
            ASSERT_EQ(scores[t], embed_test::dot_in_documented_order(table.row(t).data(), hidden.data(), dim))
                << "dim " << dim << ", token " << t;
        }
    }
}

// Every entry of the batched form is the single form's sum, bit for bit, at
// every edge of the kernel's blocks: widths around whole blocks of 8 lanes,
// hidden row counts around the block height, vocabularies that leave a
// remainder of table rows in each thread's share.
TEST(BatchedLogits, RowsEqualOneLogitsCallPerRowExactlyAtEveryBlockEdge) {
    for (const Index dim : {1, 7, 8, 9, 63, 64, 65, 768 + 3}) {
        for (const Index vocab : {1, 5, 513}) {
            const Table table = embed::make_table(vocab, dim, 11);
            for (const Index n : {1, 3, 4, 5, 64, 67}) {
                const Table hidden_rows = embed::make_table(n, dim, 12);
                const Table batched = embed::logits(table, hidden_rows);
                ASSERT_EQ(embed::shape(batched), (Shape{n, vocab}));
                for (Index i = 0; i < n; ++i) {
                    const Vector single = embed::logits(table, Vector(hidden_rows.row(i).transpose()));
                    for (Index t = 0; t < vocab; ++t) {
                        ASSERT_EQ(batched(i, t), single[t])
                            << "dim " << dim << ", vocab " << vocab << ", n " << n << ", row " << i << ", token " << t;
                    }
                }
            }
        }
    }
}

// The batched form copies the hidden rows when they sit at another offset
// from a 64-byte cache line than the table's rows, so that the GEMM's loads
// read whole lines (the copy itself is tested in kernels_isa_test). Either
// way every entry must be the single form's. Hidden matrices of 1 to 24 rows
// land at whatever offsets the allocator gives.
TEST(BatchedLogits, RowsEqualOneLogitsCallPerRowWhereverTheHiddenRowsSit) {
    for (const Index dim : {8, 64, 768}) {
        const Table table = embed::make_table(61, dim, 13);
        for (Index n = 1; n <= 24; ++n) {
            const Table hidden_rows = embed::make_table(n, dim, 14);
            const Table batched = embed::logits(table, hidden_rows);
            for (Index i = 0; i < n; ++i) {
                const Vector single = embed::logits(table, Vector(hidden_rows.row(i).transpose()));
                for (Index t = 0; t < table.rows(); ++t) {
                    ASSERT_EQ(batched(i, t), single[t]) << "dim " << dim << ", n " << n << ", row " << i;
                }
            }
        }
    }
}

}  // namespace
