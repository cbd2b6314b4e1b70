// lookup is a row gather: checked against an explicit loop over the ids, and
// for the errors against the wording of SPECIFICATION.md, Errors ("[0, V)").
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/lookup.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"
#include "defaults_after.hpp"
#include "kernels/gather.hpp"

namespace {

using embed::Index;
using embed::Shape;
using embed::Table;
using embed_test::AllClose;
using testing::AllOf;
using testing::HasSubstr;
using testing::ThrowsMessage;

// table is (V, d), ids is (n), returns (n, d), copied entry by entry.
Table gather_by_loop(const Table& table, const std::vector<Index>& ids) {
    Table rows(static_cast<Index>(ids.size()), table.cols());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        for (Index c = 0; c < table.cols(); ++c) rows(static_cast<Index>(i), c) = table(ids[i], c);
    }
    return rows;
}

// Every id of a vocabulary once, backwards, then the first and last again.
std::vector<Index> every_id_backwards_and_the_ends(Index vocab) {
    std::vector<Index> ids;
    for (Index t = vocab - 1; t >= 0; --t) ids.push_back(t);
    ids.push_back(0);
    ids.push_back(vocab - 1);
    return ids;
}

class LookupShapes : public testing::TestWithParam<Shape> {};

TEST_P(LookupShapes, GathersTheSameRowsAsAnExplicitLoop) {
    const auto [vocab, dim] = GetParam();
    const Table table = embed::make_table(vocab, dim, 5);
    const std::vector<Index> ids = every_id_backwards_and_the_ends(vocab);
    EXPECT_TRUE(AllClose(embed::lookup(table, ids), gather_by_loop(table, ids), 0.0));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LookupShapes,
                         testing::Values(Shape{1, 1}, Shape{7, 1}, Shape{1, 7}, Shape{10, 3}, Shape{512, 64}));

TEST(Lookup, RepeatedIdsGiveIdenticalRows) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> ids{137, 4, 137, 137};
    const Table rows = embed::lookup(table, ids);
    EXPECT_TRUE(AllClose(rows.row(0), rows.row(2), 0.0));
    EXPECT_TRUE(AllClose(rows.row(0), rows.row(3), 0.0));
    EXPECT_TRUE(AllClose(rows.row(0), table.row(137), 0.0));
}

TEST(Lookup, ResultIsACopyNotAViewOfTheTable) {
    const Table table = embed::make_table(6, 4, 11);
    const Table before = table;
    const std::vector<Index> ids{2};
    Table rows = embed::lookup(table, ids);
    rows.setConstant(123.0);
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(Lookup, EmptyIdsGiveZeroRowsOfWidthD) {
    const Table table = embed::make_table(6, 4, 11);
    const Table rows = embed::lookup(table, std::vector<Index>{});
    EXPECT_EQ(embed::shape(rows), (Shape{0, 4}));
}

TEST(Lookup, RejectsNegativeIdsInsteadOfWrapping) {
    const Table table = embed::make_table(10, 3, 1);
    const std::vector<Index> ids{-1};
    EXPECT_THAT([&] { embed::lookup(table, ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 10)")));
}

TEST(Lookup, RejectsTheIdEqualToTheVocabularySize) {
    const Table table = embed::make_table(10, 3, 1);
    const std::vector<Index> ids{10};
    EXPECT_THAT([&] { embed::lookup(table, ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 10 is outside the vocabulary [0, 10)")));
}

TEST(Lookup, RejectsAHugeIdWithoutTruncatingIt) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> ids{Index{1} << 40};
    EXPECT_THAT([&] { embed::lookup(table, ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 1099511627776 is outside the vocabulary [0, 512)")));
}

TEST(Lookup, EveryIdOfAnEmptyTableIsOutOfRange) {
    const Table table(0, 4);
    const std::vector<Index> ids{0};
    EXPECT_THAT([&] { embed::lookup(table, ids); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 0 is outside the vocabulary [0, 0)")));
}

TEST(Lookup, OneBadIdAmongGoodOnesChangesNothingAndReturnsNothing) {
    const Table table = embed::make_table(10, 3, 1);
    const Table before = table;
    const std::vector<Index> ids{0, 1, 2, 3, 42, 4};
    Table result = Table::Constant(2, 2, -9.0);
    EXPECT_THAT([&] { result = embed::lookup(table, ids); }, ThrowsMessage<std::out_of_range>(HasSubstr("token id 42 is outside the vocabulary [0, 10)")));
    EXPECT_TRUE(AllClose(result, Table::Constant(2, 2, -9.0), 0.0));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

// lookup_into fills a caller's matrix with the same rows, or throws before writing anything.

TEST_P(LookupShapes, IntoWritesTheSameRowsAsAnExplicitLoop) {
    const auto [vocab, dim] = GetParam();
    const Table table = embed::make_table(vocab, dim, 5);
    const std::vector<Index> ids = every_id_backwards_and_the_ends(vocab);
    Table out = Table::Constant(static_cast<Index>(ids.size()), dim, -7.0);
    embed::lookup_into(table, ids, out);
    EXPECT_TRUE(AllClose(out, gather_by_loop(table, ids), 0.0));
}

TEST(LookupInto, FillsABlockOfALargerMatrixAndLeavesTheRestAlone) {
    const Table table = embed::make_table(20, 5, 3);
    const std::vector<Index> ids{19, 0, 7};
    Table big = Table::Constant(6, 9, -7.0);
    embed::lookup_into(table, ids, big.block(2, 3, 3, 5));  // rows 9 apart
    const Table want_rows = gather_by_loop(table, ids);
    for (Index r = 0; r < big.rows(); ++r) {
        for (Index c = 0; c < big.cols(); ++c) {
            const bool inside = r >= 2 && r < 5 && c >= 3 && c < 8;
            EXPECT_EQ(big(r, c), inside ? want_rows(r - 2, c - 3) : -7.0) << r << ", " << c;
        }
    }
}

TEST(LookupInto, NoIdsIntoZeroRowsIsFine) {
    const Table table = embed::make_table(6, 4, 11);
    Table out(0, 4);
    EXPECT_NO_THROW(embed::lookup_into(table, std::vector<Index>{}, out));
}

TEST(LookupInto, RejectsAWrongShapeNamingBothSizesAndWritesNothing) {
    const Table table = embed::make_table(10, 3, 1);
    const std::vector<Index> ids{1, 2};
    Table too_many_rows = Table::Constant(3, 3, -9.0);
    EXPECT_THAT([&] { embed::lookup_into(table, ids, too_many_rows); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("rows"), HasSubstr("has length 3, expected 2"))));
    EXPECT_TRUE(AllClose(too_many_rows, Table::Constant(3, 3, -9.0), 0.0));
    Table too_narrow = Table::Constant(2, 4, -9.0);
    EXPECT_THAT([&] { embed::lookup_into(table, ids, too_narrow); },
                ThrowsMessage<std::invalid_argument>(
                    AllOf(HasSubstr("columns"), HasSubstr("has length 4, expected 3"))));
    EXPECT_TRUE(AllClose(too_narrow, Table::Constant(2, 4, -9.0), 0.0));
}

TEST(LookupInto, OneBadIdAmongGoodOnesWritesNothing) {
    const Table table = embed::make_table(10, 3, 1);
    const std::vector<Index> ids{0, 1, Index{1} << 40, 2};
    Table out = Table::Constant(4, 3, -9.0);
    EXPECT_THAT([&] { embed::lookup_into(table, ids, out); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 1099511627776 is outside the vocabulary [0, 10)")));
    EXPECT_TRUE(AllClose(out, Table::Constant(4, 3, -9.0), 0.0));
}

// Gathering into the table being read would copy rows it has already overwritten.
TEST(LookupInto, RejectsAnOutputInsideTheTableAndChangesNothing) {
    Table table = embed::make_table(10, 3, 1);
    const Table before = table;
    const std::vector<Index> ids{9, 8};
    EXPECT_THAT([&] { embed::lookup_into(table, ids, table.topRows(2)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("overlaps")));
    EXPECT_THAT([&] { embed::lookup_into(table, ids, table.block(8, 0, 2, 3)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("overlaps")));
    EXPECT_TRUE(AllClose(table, before, 0.0));
}

TEST(CheckIds, AcceptsIdsInsideTheVocabulary) {
    const std::vector<Index> ids{0, 5, 9};
    EXPECT_NO_THROW(embed::check_ids(ids, 10));
}

// "10" alone would also match the range "[0, 10)", so the id is matched as the message states it.
TEST(CheckIds, NamesTheFirstBadIdAndTheRange) {
    const std::vector<Index> ids{0, 10, -3};
    EXPECT_THAT([&] { embed::check_ids(ids, 10); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 10 is outside the vocabulary [0, 10)")));
}

// The check decides in one pass over every id, then looks for the first bad one: wherever it sits in a long
// list, whichever way it is out (below 0, at V, at 2^40, the most negative Index), it is named.
TEST(CheckIds, NamesTheFirstBadIdWhereverItSitsAndWhicheverWayItIsOut) {
    const Index bad_ids[] = {-1, 10, Index{1} << 40, std::numeric_limits<Index>::min()};
    for (const Index bad : bad_ids) {
        for (const std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{4095}}) {
            std::vector<Index> ids(4096, 9);
            ids[at] = bad;
            if (at + 1 < ids.size()) ids[at + 1] = 11;  // a second bad id, after the first
            EXPECT_THAT([&] { embed::check_ids(ids, 10); },
                        ThrowsMessage<std::out_of_range>(
                            HasSubstr("token id " + std::to_string(bad) + " is outside the vocabulary [0, 10)")))
                << "id " << bad << " at " << at;
        }
    }
    EXPECT_NO_THROW(embed::check_ids(std::vector<Index>(4096, 9), 10));
    EXPECT_NO_THROW(embed::check_ids(std::vector<Index>{}, 0));
    EXPECT_THAT([] { embed::check_ids(std::vector<Index>{0}, 0); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 0 is outside the vocabulary [0, 0)")));
}

// Results past the streaming settings' bound (stream_results_above_bytes) are written with
// non-temporal stores, 16 bytes at a time between a head and a tail copied as they come.

// Every place in a 64-byte line the source and target can start at (bytes), lengths around the 16-byte
// pieces: the target gets exactly the source's bytes, and no byte around it changes.
TEST(CopyRowStreaming, CopiesEveryByteFromAndToEveryPlaceAndTouchesNothingElse) {
    constexpr std::size_t kRoom = 64 + 256 + 64;
    alignas(64) unsigned char source[kRoom];
    alignas(64) unsigned char target[kRoom];
    for (std::size_t i = 0; i < kRoom; ++i) source[i] = static_cast<unsigned char>(i * 7 + 3);
    constexpr std::size_t kLengths[] = {0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 256};
    for (const std::size_t length : kLengths) {
        for (std::size_t from = 0; from < 64; ++from) {
            for (std::size_t to = 0; to < 64; ++to) {
                std::memset(target, 0xEE, kRoom);
                embed::detail::copy_row_streaming(target + to, source + from, length);
                embed::detail::end_streaming_stores();
                for (std::size_t i = 0; i < kRoom; ++i) {
                    const bool inside = i >= to && i < to + length;
                    const unsigned char expected = inside ? source[from + (i - to)] : 0xEE;
                    ASSERT_EQ(target[i], expected)
                        << "length " << length << " from " << from << " to " << to << " byte " << i;
                }
            }
        }
    }
}

// A table whose rows hold NaN with a payload, -0.0 and infinity, so that only a copy of the bits passes.
template <class Scalar>
embed::BasicTable<Scalar> table_with_special_values(Index vocab, Index dim) {
    embed::BasicTable<Scalar> table = embed::make_table(vocab, dim, 9).template cast<Scalar>();
    std::uint32_t payload_bits = 0x7fc01234u;
    float payload_nan = 0.0f;
    std::memcpy(&payload_nan, &payload_bits, sizeof payload_nan);
    for (Index t = 0; t < vocab; t += 3) {
        table(t, 0) = static_cast<Scalar>(-0.0);
        table(t, dim / 2) = static_cast<Scalar>(payload_nan);
        table(t, dim - 1) = static_cast<Scalar>(-std::numeric_limits<double>::infinity());
    }
    return table;
}

// out row i holds table row ids[i], compared byte for byte.
template <class Scalar, class Out>
::testing::AssertionResult same_bytes_as_rows(const Out& out, const embed::BasicTable<Scalar>& table,
                                              const std::vector<Index>& ids) {
    const auto row_bytes = static_cast<std::size_t>(table.cols()) * sizeof(Scalar);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (std::memcmp(&out(static_cast<Index>(i), 0), &table(ids[i], 0), row_bytes) != 0) {
            return ::testing::AssertionFailure() << "row " << i << " (id " << ids[i] << ") differs";
        }
    }
    return ::testing::AssertionSuccess();
}

// Enough ids of a 257-wide table (rows of 2056 bytes in double, 1028 in float32: not whole 16-byte pieces) for
// a result past `bytes`.
std::vector<Index> ids_for_a_result_past(Index bytes, Index vocab, Index dim, std::size_t value_bytes) {
    const auto needed = static_cast<std::size_t>(bytes) / value_bytes / static_cast<std::size_t>(dim) + 7;
    std::vector<Index> ids(needed);
    for (std::size_t i = 0; i < needed; ++i) {
        ids[i] = static_cast<Index>((i * 131 + 17) % static_cast<std::size_t>(vocab));
    }
    return ids;
}

template <class Scalar>
class StreamedLookup : public testing::Test {};
using StoredTypes = testing::Types<double, float>;
TYPED_TEST_SUITE(StreamedLookup, StoredTypes);

// From a table held one value past where it was allocated (as a numpy array's rows are 16 bytes past a line),
// into a fresh result and into a block of a larger matrix one column in: the rows bit for bit, the rest alone.
// Under a bound of 1 MiB every row of the result streams; under 64 MiB, past 8 MiB, only the rows that do not
// line up with the table's (embed::detail::result_stores_for says which).
TYPED_TEST(StreamedLookup, StreamedResultsAreTheRowsBitForBitFromAnyPlace) {
    using Scalar = TypeParam;
    using embed::detail::ResultStores;
    const Index vocab = 600;
    const Index dim = 257;
    const embed::BasicTable<Scalar> table = table_with_special_values<Scalar>(vocab, dim);
    std::vector<Scalar> shifted(static_cast<std::size_t>(vocab * dim + 1));
    std::memcpy(shifted.data() + 1, table.data(), static_cast<std::size_t>(vocab * dim) * sizeof(Scalar));
    const embed_test::DefaultsAfter restore;
    const std::pair<Index, Index> cases[] = {{Index{1} << 20, Index{1} << 20}, {Index{64} << 20, Index{8} << 20}};
    for (const auto& [bound, past] : cases) {
        embed::detail::StreamSettings streaming = embed::detail::default_stream_settings();
        streaming.stream_results_above_bytes = bound;
        embed::detail::set_stream_settings(streaming);
        const std::vector<Index> ids = ids_for_a_result_past(past, vocab, dim, sizeof(Scalar));
        const auto n = static_cast<Index>(ids.size());
        ASSERT_NE(embed::detail::result_stores_for(n * dim * Index{sizeof(Scalar)}), ResultStores::ordinary);

        for (const Scalar* start : {table.data(), static_cast<const Scalar*>(shifted.data() + 1)}) {
            const embed::BasicTableView<Scalar> source(start, vocab, dim);
            EXPECT_TRUE(same_bytes_as_rows(embed::lookup(source, ids), table, ids)) << bound;

            embed::BasicTable<Scalar> big = embed::BasicTable<Scalar>::Constant(n + 2, dim + 3, Scalar(-7.0));
            embed::lookup_into(source, ids, big.block(1, 1, n, dim));
            EXPECT_TRUE(same_bytes_as_rows(big.block(1, 1, n, dim), table, ids)) << bound;
            for (Index r = 0; r < n + 2; ++r) {
                for (Index c = 0; c < dim + 3; ++c) {
                    if (r >= 1 && r <= n && c >= 1 && c <= dim) continue;
                    ASSERT_EQ(big(r, c), Scalar(-7.0)) << "outside the block at " << r << ", " << c;
                }
            }
        }
    }
}

}  // namespace
