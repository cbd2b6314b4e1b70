// TiedEmbedding owns one table that serves both directions; UntiedEmbedding
// owns two. Identity is checked by address, values against the free functions.
#include <stdexcept>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/table.hpp>
#include <embed/tied_embedding.hpp>

#include "all_close.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::TiedEmbedding;
using embed::UntiedEmbedding;
using embed::Vector;
using embed_test::AllClose;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(TiedEmbedding, BothDirectionsAreTheSameObject) {
    const TiedEmbedding model(embed::make_table(10, 4, 1));
    EXPECT_EQ(&model.input_weights(), &model.output_weights());
}

TEST(TiedEmbedding, HoldsTheTableItWasGiven) {
    const Table table = embed::make_table(10, 4, 1);
    const TiedEmbedding model(table);
    EXPECT_TRUE(AllClose(model.input_weights(), table, 0.0));
}

TEST(TiedEmbedding, EmbedEqualsLookupOnTheTable) {
    const Table table = embed::make_table(10, 4, 1);
    const TiedEmbedding model(table);
    const std::vector<Index> ids{3, 3, 0, 9};
    EXPECT_TRUE(AllClose(model.embed(ids), embed::lookup(table, ids), 0.0));
}

TEST(TiedEmbedding, LogitsEqualLogitsOnTheTable) {
    const Table table = embed::make_table(10, 4, 1);
    const TiedEmbedding model(table);
    const Vector hidden = table.row(7).transpose();
    EXPECT_TRUE(AllClose(model.logits(hidden), embed::logits(table, hidden), 0.0));
}

TEST(TiedEmbedding, CountsTheTableOnce) {
    const TiedEmbedding model(embed::make_table(512, 64, 1));
    EXPECT_EQ(model.param_count(), 32768);  // 512 * 64, not 2 * 512 * 64
}

TEST(TiedEmbedding, CopyHasItsOwnTableStillSharedByBothDirections) {
    const TiedEmbedding original(embed::make_table(10, 4, 1));
    const TiedEmbedding copy = original;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    EXPECT_NE(&copy.input_weights(), &original.input_weights());
    EXPECT_NE(copy.input_weights().data(), original.input_weights().data());
    EXPECT_EQ(&copy.input_weights(), &copy.output_weights());
    EXPECT_TRUE(AllClose(copy.input_weights(), original.input_weights(), 0.0));
}

TEST(TiedEmbedding, MoveKeepsTheTie) {
    TiedEmbedding original(embed::make_table(10, 4, 1));
    const Table expected = original.input_weights();
    const TiedEmbedding moved = std::move(original);
    EXPECT_EQ(&moved.input_weights(), &moved.output_weights());
    EXPECT_TRUE(AllClose(moved.output_weights(), expected, 0.0));
}

TEST(TiedEmbedding, RejectsBadIdsAndLeavesTheTableAlone) {
    const TiedEmbedding model(embed::make_table(10, 4, 1));
    const Table before = model.input_weights();
    const std::vector<Index> ids{2, 10};
    // "10" alone would also match the range "[0, 10)": the id is matched as the message states it.
    EXPECT_THAT([&] { model.embed(ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 10 is outside the vocabulary [0, 10)")));
    const Vector wrong = Vector::Ones(5);
    EXPECT_THAT([&] { model.logits(wrong); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 5, expected 4")));
    EXPECT_TRUE(AllClose(model.input_weights(), before, 0.0));
}

TEST(UntiedEmbedding, HasTwoDifferentObjects) {
    const UntiedEmbedding model(embed::make_table(10, 4, 1), embed::make_table(10, 4, 2));
    EXPECT_NE(&model.input_weights(), &model.output_weights());
}

TEST(UntiedEmbedding, CountsBothTables) {
    const UntiedEmbedding model(embed::make_table(512, 64, 1), embed::make_table(512, 64, 2));
    EXPECT_EQ(model.param_count(), 65536);  // 2 * 512 * 64
}

TEST(UntiedEmbedding, EmbedsWithTheInputAndScoresWithTheOutput) {
    const Table input = embed::make_table(10, 4, 1);
    const Table output = embed::make_table(10, 4, 2);
    const UntiedEmbedding model(input, output);
    const std::vector<Index> ids{1, 8};
    EXPECT_TRUE(AllClose(model.embed(ids), embed::lookup(input, ids), 0.0));
    const Vector hidden = input.row(1).transpose();
    EXPECT_TRUE(AllClose(model.logits(hidden), embed::logits(output, hidden), 0.0));
}

TEST(UntiedEmbedding, RejectsTablesOfDifferentShapesNamingThem) {
    // Each shape is matched with the table it belongs to: "4" and "5" alone would pass with the two swapped.
    EXPECT_THAT([] { UntiedEmbedding(embed::make_table(10, 4, 1), embed::make_table(10, 5, 2)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("input is 10 x 4, output is 10 x 5")));
    EXPECT_THAT([] { UntiedEmbedding(embed::make_table(9, 4, 1), embed::make_table(10, 4, 2)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("input is 9 x 4, output is 10 x 4")));
}

}  // namespace
