// Tables stored in float32 and bfloat16. Every operation is compared, bit for
// bit, with the same operation on the table widened to double by a plain loop
// here; the conversions are compared with a rounding written out below on the
// values' bits. The tables have awkward widths (below 8, not a multiple of 8),
// NaN, both infinities, -0.0, subnormals and duplicated rows (ties), and some
// are large enough that the threaded paths run at 1, 2 and 7 threads.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/one_hot.hpp>
#include <embed/table.hpp>
#include <embed/precision.hpp>
#include <embed/scaling.hpp>
#include <embed/similarity.hpp>
#include <embed/tied_embedding.hpp>

#include "narrow_reference.hpp"
#include "threads/parallel.hpp"
#include "worker_count.hpp"

namespace {

using embed::Index;
using embed::Neighbour;
using embed::Score;
using embed::Table;
using embed::Vector;
using testing::HasSubstr;
using testing::ThrowsMessage;

using namespace narrow_reference;

template <class Scalar>
class NarrowTables : public testing::Test {};

using NarrowTypes = testing::Types<float, Eigen::bfloat16>;

class TypeNames {
public:
    template <class T>
    static std::string GetName(int) {
        return std::is_same_v<T, float> ? "F32" : "BF16";
    }
};
TYPED_TEST_SUITE(NarrowTables, NarrowTypes, TypeNames);

// Widths below 8, at 8, not a multiple of 8, and past several blocks and cache lines.
const Index kWidths[] = {1, 3, 7, 8, 9, 17, 67, 130};
constexpr Index kVocab = 41;

// ---- Conversions ----

// Doubles around every edge of the narrow formats: exact ties at both parities, one step either side
// of a tie, the subnormal range and its lower edge, the largest finite and the overflow threshold.
std::vector<double> conversion_cases(int p) {
    std::vector<double> cases = {0.0, -0.0, 1.0, -1.0, kInf, -kInf, 1e-300, -1e-300, 1e300, -1e300,
                                 std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()};
    const double ulp_of_one = std::ldexp(1.0, -(p - 1));
    for (const double base : {1.0, 1.5, -1.75, std::ldexp(1.0, -126), std::ldexp(1.0, -130), std::ldexp(1.0, 127)}) {
        for (int steps = 0; steps < 4; ++steps) {
            const double value = base + steps * ulp_of_one * std::fabs(base);
            for (const double tie : {value + 0.5 * ulp_of_one * std::fabs(base), value - 0.5 * ulp_of_one * std::fabs(base)}) {
                cases.push_back(tie);
                cases.push_back(std::nextafter(tie, kInf));
                cases.push_back(std::nextafter(tie, -kInf));
            }
        }
    }
    // The smallest subnormal of the format, half of it (ties to 0, even), and a bit more than half.
    const double smallest = std::ldexp(1.0, -126 - (p - 1));
    for (const double v : {smallest, smallest / 2, std::nextafter(smallest / 2, 1.0), smallest * 1.5, smallest * 2.5}) {
        cases.push_back(v);
        cases.push_back(-v);
    }
    // The largest finite, the tie above it (rounds to infinity) and just below that tie.
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, -(p - 1)), 127);
    const double overflow_tie = std::ldexp(2.0 - std::ldexp(1.0, -p), 127);
    for (const double v : {largest, overflow_tie, std::nextafter(overflow_tie, 0.0)}) {
        cases.push_back(v);
        cases.push_back(-v);
    }
    // Random bit patterns over every exponent.
    std::mt19937_64 rng(99);
    for (int i = 0; i < 20000; ++i) {
        const double v = std::bit_cast<double>(rng());
        if (!std::isnan(v)) cases.push_back(v);
    }
    // Random values near the narrow range.
    std::uniform_real_distribution<double> exponent(-160.0, 130.0);
    for (int i = 0; i < 20000; ++i) cases.push_back(std::ldexp(1.0 + static_cast<double>(rng() % 1000003) / 1e6, static_cast<int>(exponent(rng))));
    return cases;
}

template <class Scalar>
embed::BasicTable<Scalar> narrowed_by_library(const Table& table) {
    if constexpr (std::is_same_v<Scalar, float>) {
        return embed::to_f32(table);
    } else {
        return embed::to_bf16(table);
    }
}

TYPED_TEST(NarrowTables, NarrowingRoundsToNearestEvenOnceKeepingSpecials) {
    using Scalar = TypeParam;
    const std::vector<double> cases = conversion_cases(kPrecision<Scalar>);
    const Table column = Eigen::Map<const Table>(cases.data(), static_cast<Index>(cases.size()), 1);
    const embed::BasicTable<Scalar> narrowed = narrowed_by_library<Scalar>(column);
    ASSERT_EQ(narrowed.rows(), column.rows());
    for (Index i = 0; i < column.rows(); ++i) {
        const std::uint32_t want = rounded_bits(column(i, 0), kPrecision<Scalar>);
        ASSERT_EQ(stored_bits(narrowed(i, 0)), want) << "x = " << column(i, 0) << " (bits " << std::hex
                                                     << bits_of(column(i, 0)) << ")";
    }
}

TYPED_TEST(NarrowTables, NarrowingKeepsNaNAndItsSign) {
    using Scalar = TypeParam;
    Table nans(1, 3);
    nans << kNaN, -kNaN, std::bit_cast<double>(std::uint64_t{0x7FF0000000000001});  // the last one signalling
    const embed::BasicTable<Scalar> narrowed = narrowed_by_library<Scalar>(nans);
    for (Index c = 0; c < 3; ++c) {
        EXPECT_TRUE(std::isnan(decoded(narrowed(0, c)))) << c;
        EXPECT_EQ(std::signbit(decoded(narrowed(0, c))), std::signbit(nans(0, c))) << c;
    }
}

TYPED_TEST(NarrowTables, NarrowingAViewGivesTheSameTable) {
    using Scalar = TypeParam;
    const Table table = widened(awkward_table<Scalar>(9, 5, 3)) * 1.1;
    const embed::BasicTable<Scalar> from_table = narrowed_by_library<Scalar>(table);
    embed::BasicTable<Scalar> from_view;
    if constexpr (std::is_same_v<Scalar, float>) {
        from_view = embed::to_f32(embed::view_of(table));
    } else {
        from_view = embed::to_bf16(embed::view_of(table));
    }
    EXPECT_TRUE(SameStored(from_table, from_view));
}

// Every stored bit pattern (all 65536 for bfloat16, a spread of them for float32) widens to the value
// its fields spell, NaN to NaN of the same sign.
TYPED_TEST(NarrowTables, WideningIsExactForEveryBitPattern) {
    using Scalar = TypeParam;
    std::vector<std::uint32_t> patterns;
    if constexpr (std::is_same_v<Scalar, float>) {
        std::mt19937 rng(5);
        for (int i = 0; i < 70000; ++i) patterns.push_back(static_cast<std::uint32_t>(rng()));
        for (std::uint32_t low = 0; low < 300; ++low) {  // subnormals, zeros, the largest finite, infinities
            for (const std::uint32_t high : {0x00000000U, 0x80000000U, 0x7F7FFF00U, 0x7F800000U, 0x00800000U}) {
                patterns.push_back(high | low);
            }
        }
    } else {
        for (std::uint32_t bits = 0; bits < 65536; ++bits) patterns.push_back(bits);
    }
    // Odd widths so that the vector loop and its tail both run.
    const Index cols = 13;
    const Index rows = static_cast<Index>(patterns.size()) / cols;
    embed::BasicTable<Scalar> table(rows, cols);
    for (Index i = 0; i < table.size(); ++i) table.data()[i] = from_bits<Scalar>(patterns[static_cast<std::size_t>(i)]);
    const Table wide = embed::to_double(table);
    const Table wide_from_view = embed::to_double(embed::view_of(table));
    for (Index i = 0; i < table.size(); ++i) {
        const double want = decoded(table.data()[i]);
        const double got = wide.data()[i];
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << std::hex << stored_bits(table.data()[i]);
            ASSERT_EQ(std::signbit(got), std::signbit(want));
        } else {
            ASSERT_EQ(bits_of(got), bits_of(want)) << std::hex << stored_bits(table.data()[i]);
        }
    }
    EXPECT_TRUE(SameBits(wide, wide_from_view));
}

TYPED_TEST(NarrowTables, RoundTripThroughDoubleGivesTheSameBits) {
    using Scalar = TypeParam;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, 9, 4);
    EXPECT_TRUE(SameStored(narrowed_by_library<Scalar>(embed::to_double(table)), table));
}

// ---- Lookup ----

TYPED_TEST(NarrowTables, LookupCopiesTheStoredRows) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 6);
        const std::vector<Index> ids{3, 0, 40, 3, 5, 4};
        const embed::BasicTable<Scalar> rows = embed::lookup(table, ids);
        embed::BasicTable<Scalar> expected(static_cast<Index>(ids.size()), dim);
        for (std::size_t i = 0; i < ids.size(); ++i) expected.row(static_cast<Index>(i)) = table.row(ids[i]);
        EXPECT_TRUE(SameStored(rows, expected)) << "d " << dim;
        EXPECT_TRUE(SameStored(embed::lookup(embed::view_of(table), ids), expected)) << "d " << dim;
        // Into a block of a larger matrix: the rest of it stays as it was.
        const auto n = static_cast<Index>(ids.size());
        embed::BasicTable<Scalar> big(n + 2, dim + 3);
        big.setConstant(narrow<Scalar>(7.0));
        embed::lookup_into(table, ids, big.block(1, 2, n, dim));
        embed::BasicTable<Scalar> want_big(n + 2, dim + 3);
        want_big.setConstant(narrow<Scalar>(7.0));
        want_big.block(1, 2, n, dim) = expected;
        EXPECT_TRUE(SameStored(big, want_big)) << "d " << dim;
        embed::BasicTable<Scalar> out(n, dim);
        embed::lookup_into(embed::view_of(table), ids, out);
        EXPECT_TRUE(SameStored(out, expected)) << "d " << dim;
    }
}

TYPED_TEST(NarrowTables, LookupRejectsBadIdsAndShapesChangingNothing) {
    using Scalar = TypeParam;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(7, 3, 7);
    EXPECT_THAT([&] { (void)embed::lookup(table, std::vector<Index>{0, 7}); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 7 is outside the vocabulary [0, 7)")));
    EXPECT_THAT([&] { (void)embed::lookup(embed::view_of(table), std::vector<Index>{-1}); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1 is outside the vocabulary [0, 7)")));
    embed::BasicTable<Scalar> out(2, 3);
    out.setConstant(narrow<Scalar>(5.0));
    const embed::BasicTable<Scalar> before = out;
    EXPECT_THAT([&] { embed::lookup_into(table, std::vector<Index>{1, 9}, out); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 9")));
    EXPECT_THAT([&] { embed::lookup_into(table, std::vector<Index>{1, 2, 3}, out); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("lookup output rows")));
    embed::BasicTable<Scalar> narrow_out(2, 2);
    EXPECT_THAT([&] { embed::lookup_into(table, std::vector<Index>{1, 2}, narrow_out); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 2, expected 3")));
    EXPECT_TRUE(SameStored(out, before));
    // Into the table's own storage: refused before anything is written.
    embed::BasicTable<Scalar> own = table;
    const embed::BasicTable<Scalar> own_before = own;
    EXPECT_THAT([&] { embed::lookup_into(embed::view_of(own), std::vector<Index>{5, 6}, own.topRows(2)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("overlaps the table")));
    EXPECT_TRUE(SameStored(own, own_before));
}

TYPED_TEST(NarrowTables, ScaledLookupIsTheWidenedTablesBitForBit) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 8);
        const Table wide = widened(table);
        const std::vector<Index> ids{5, 4, 3, 0, 5};
        for (const Index scale_dim : {Index{0}, Index{1}, Index{64}, dim}) {
            EXPECT_TRUE(SameBits(embed::scaled_lookup(table, ids, scale_dim), embed::scaled_lookup(wide, ids, scale_dim)))
                << "d " << dim << " scale " << scale_dim;
            EXPECT_TRUE(SameBits(embed::scaled_lookup(embed::view_of(table), ids, scale_dim),
                                 embed::scaled_lookup(wide, ids, scale_dim)));
        }
    }
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(7, 3, 8);
    EXPECT_THAT([&] { (void)embed::scaled_lookup(table, std::vector<Index>{1}, -1); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("dim must be >= 0, got -1")));
    EXPECT_THAT([&] { (void)embed::scaled_lookup(table, std::vector<Index>{7}, 4); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 7")));
}

// Each product is 1 or 0 times a stored value: the widened table's bits, and on a table of finite values
// exactly the stored rows. 4096 rows of 7 put three ids and three columns in each block, so the ids and
// the columns both span several blocks.
TYPED_TEST(NarrowTables, LookupViaOneHotIsTheWidenedTablesBitForBit) {
    using Scalar = TypeParam;
    const std::vector<Index> ids{3, 0, 40, 3, 5, 4, 39, 1};
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 12);
        const Table want = embed::lookup_via_one_hot(widened(table), ids);
        EXPECT_TRUE(SameBits(embed::lookup_via_one_hot(table, ids), want)) << "d " << dim;
        EXPECT_TRUE(SameBits(embed::lookup_via_one_hot(embed::view_of(table), ids), want)) << "d " << dim;
    }
    const embed::BasicTable<Scalar> finite = narrowed_by_library<Scalar>(embed::make_table(4096, 7, 13));
    const std::vector<Index> spread{4095, 0, 17, 2048, 4095, 1, 3000, 9, 12, 100};
    const Table rows = embed::lookup_via_one_hot(finite, spread);
    ASSERT_EQ(rows.rows(), static_cast<Index>(spread.size()));
    for (std::size_t i = 0; i < spread.size(); ++i) {
        for (Index c = 0; c < 7; ++c) {
            EXPECT_EQ(bits_of(rows(static_cast<Index>(i), c)), bits_of(decoded(finite(spread[i], c))))
                << "id " << spread[i] << " column " << c;
        }
    }
    EXPECT_THAT([&] { (void)embed::lookup_via_one_hot(finite, std::vector<Index>{4096}); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 4096 is outside the vocabulary [0, 4096)")));
}

// ---- Scores ----

TYPED_TEST(NarrowTables, LogitsAreTheWidenedTablesBitForBit) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 9);
        const Table wide = widened(table);
        const Vector hidden = some_hidden(dim, 10);
        const Vector want = embed::logits(wide, hidden);
        EXPECT_TRUE(SameBits(embed::logits(table, hidden), want)) << "d " << dim;
        EXPECT_TRUE(SameBits(embed::logits(embed::view_of(table), hidden), want)) << "d " << dim;
        Vector out(kVocab);
        embed::logits_into(table, hidden, out);
        EXPECT_TRUE(SameBits(out, want)) << "d " << dim;
        out.setZero();
        embed::logits_into(embed::view_of(table), hidden, out);
        EXPECT_TRUE(SameBits(out, want)) << "d " << dim;
    }
}

TYPED_TEST(NarrowTables, BatchedLogitsAreTheWidenedTablesBitForBit) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 11);
        const Table wide = widened(table);
        for (const Index n : {1, 5, 9}) {
            Table hidden_rows(n, dim);
            for (Index i = 0; i < n; ++i) hidden_rows.row(i) = some_hidden(dim, 12 + static_cast<unsigned>(i)).transpose();
            const Table want = embed::logits(wide, hidden_rows);
            EXPECT_TRUE(SameBits(embed::logits(table, hidden_rows), want)) << "d " << dim << " n " << n;
            EXPECT_TRUE(SameBits(embed::logits(embed::view_of(table), hidden_rows), want)) << "d " << dim;
        }
    }
}

TYPED_TEST(NarrowTables, LogitsRejectAWrongWidthChangingNothing) {
    using Scalar = TypeParam;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(7, 3, 13);
    EXPECT_THAT([&] { (void)embed::logits(table, Vector::Zero(4)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("hidden vector (must equal the table's width d) has length 4, expected 3")));
    EXPECT_THAT([&] { (void)embed::logits(table, Table::Zero(2, 4)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("hidden rows (must equal the table's width d) has length 4, expected 3")));
    Vector out = Vector::Constant(7, 2.5);
    EXPECT_THAT([&] { embed::logits_into(table, Vector::Zero(2), out); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 2, expected 3")));
    Vector short_out = Vector::Constant(6, 2.5);
    EXPECT_THAT([&] { embed::logits_into(table, Vector::Zero(3), short_out); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("logits output (must equal the vocabulary V) has length 6, expected 7")));
    EXPECT_TRUE(SameBits(out, Vector::Constant(7, 2.5)));
    EXPECT_TRUE(SameBits(short_out, Vector::Constant(6, 2.5)));
}

TYPED_TEST(NarrowTables, NeighboursAreTheWidenedTablesBitForBit) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 14);
        const Table wide = widened(table);
        // Row 2's copy is the last row: a tie; rows 3 and 4 give NaN scores.
        for (const Index token : {Index{0}, Index{2}, Index{3}, Index{4}, Index{5}, Index{6}, Index{17}}) {
            for (const Index k : {Index{0}, Index{1}, Index{5}, kVocab + 3}) {
                for (const Score score : {Score::dot, Score::cosine}) {
                    EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, token, k, score),
                                               embed::rank_neighbours(wide, token, k, score)))
                        << "d " << dim << " token " << token << " k " << k;
                    EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(embed::view_of(table), token, k, score),
                                               embed::rank_neighbours(wide, token, k, score)));
                }
                EXPECT_EQ(embed::nearest_by_dot(table, token, k), embed::nearest_by_dot(wide, token, k));
                EXPECT_EQ(embed::nearest_by_cosine(table, token, k), embed::nearest_by_cosine(wide, token, k));
                EXPECT_EQ(embed::nearest_by_dot(embed::view_of(table), token, k), embed::nearest_by_dot(wide, token, k));
                EXPECT_EQ(embed::nearest_by_cosine(embed::view_of(table), token, k),
                          embed::nearest_by_cosine(wide, token, k));
            }
        }
    }
}

// Rows 0 and 1 are copies: each is the other's best dot and cosine neighbour only if the tie with row 2's
// copies does not get in the way; checked here directly on a small table with known ties.
TYPED_TEST(NarrowTables, EqualScoresGoToTheSmallerId) {
    using Scalar = TypeParam;
    embed::BasicTable<Scalar> table(5, 2);
    table << narrow<Scalar>(1.0), narrow<Scalar>(0.0), narrow<Scalar>(0.5), narrow<Scalar>(0.5),
        narrow<Scalar>(0.5), narrow<Scalar>(0.5), narrow<Scalar>(1.0), narrow<Scalar>(0.0), narrow<Scalar>(0.25),
        narrow<Scalar>(0.0);
    // Query row 0: dots 0.5 (ids 1, 2), 1.0 (id 3), 0.25 (id 4).
    EXPECT_EQ(embed::nearest_by_dot(table, 0, 4), (std::vector<Index>{3, 1, 2, 4}));
    // Cosines: 1 for ids 3 and 4, 1/sqrt(2) for ids 1 and 2.
    EXPECT_EQ(embed::nearest_by_cosine(table, 0, 4), (std::vector<Index>{3, 4, 1, 2}));
}

TYPED_TEST(NarrowTables, NeighboursRejectBadArguments) {
    using Scalar = TypeParam;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(7, 3, 15);
    EXPECT_THAT([&] { (void)embed::nearest_by_dot(table, 7, 2); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 7 is outside the vocabulary [0, 7)")));
    EXPECT_THAT([&] { (void)embed::nearest_by_cosine(table, -1, 2); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id -1")));
    EXPECT_THAT([&] { (void)embed::rank_neighbours(table, 1, -2, Score::dot); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("k must be >= 0, got -2")));
}

// ---- Stretch ----

TYPED_TEST(NarrowTables, StretchRoundsTheStretchedRowOnceAndLeavesTheRest) {
    using Scalar = TypeParam;
    for (const Index dim : kWidths) {
        const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, dim, 16);
        const embed::BasicTable<Scalar> before = table;
        for (const double factor : {4.0, -0.3, 1e30, 1e-30}) {
            for (const Index token : {Index{0}, Index{3}, Index{5}, kVocab - 1}) {
                const embed::BasicTable<Scalar> stretched = embed::stretch(table, token, factor);
                // The reference: every value of the widened table's stretch, rounded by hand.
                const Table wide_stretched = embed::stretch(widened(table), token, factor);
                embed::BasicTable<Scalar> want(kVocab, dim);
                for (Index r = 0; r < kVocab; ++r) {
                    for (Index c = 0; c < dim; ++c) {
                        want(r, c) = r == token ? narrow<Scalar>(wide_stretched(r, c)) : table(r, c);
                    }
                }
                EXPECT_TRUE(SameStored(stretched, want)) << "d " << dim << " token " << token << " x " << factor;
                EXPECT_TRUE(SameStored(embed::stretch(embed::view_of(table), token, factor), want));
            }
        }
        EXPECT_TRUE(SameStored(table, before));
    }
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(7, 3, 16);
    EXPECT_THAT([&] { (void)embed::stretch(table, 7, 2.0); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 7 is outside the vocabulary [0, 7)")));
}

// ---- Empty tables ----

// No rows or no columns: every function gives what it gives on the widened (empty) double table.
TYPED_TEST(NarrowTables, EmptyTablesGiveTheWidenedTablesResults) {
    using Scalar = TypeParam;
    for (const auto& [vocab, dim] : {std::pair<Index, Index>{0, 4}, {3, 0}, {1, 5}, {0, 0}}) {
        const embed::BasicTable<Scalar> table = embed::BasicTable<Scalar>::Constant(vocab, dim, narrow<Scalar>(0.5));
        const Table wide = widened(table);
        const Vector hidden = some_hidden(dim, 22);
        const Table hidden_rows = Table::Constant(2, dim, 0.25);
        EXPECT_TRUE(SameBits(embed::logits(table, hidden), embed::logits(wide, hidden))) << vocab << "x" << dim;
        EXPECT_TRUE(SameBits(embed::logits(table, hidden_rows), embed::logits(wide, hidden_rows))) << vocab << "x" << dim;
        EXPECT_TRUE(SameBits(embed::to_double(table), wide)) << vocab << "x" << dim;
        EXPECT_TRUE(SameStored(narrowed_by_library<Scalar>(wide), table)) << vocab << "x" << dim;
        const std::vector<Index> no_ids;
        EXPECT_EQ(embed::lookup(table, no_ids).rows(), 0);
        EXPECT_EQ(embed::lookup(table, no_ids).cols(), dim);
        if (vocab > 0) {
            const std::vector<Index> ids{0, 0};
            EXPECT_TRUE(SameStored(embed::lookup(table, ids), embed::BasicTable<Scalar>(table.topRows(1).replicate(2, 1))));
            EXPECT_TRUE(SameBits(embed::scaled_lookup(table, ids, 4), embed::scaled_lookup(wide, ids, 4)));
            EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, 0, 3, Score::cosine),
                                       embed::rank_neighbours(wide, 0, 3, Score::cosine)));
        }
    }
}

// ---- Weight tying ----

TYPED_TEST(NarrowTables, TiedEmbeddingServesBothDirectionsFromOneTable) {
    using Scalar = TypeParam;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(kVocab, 9, 17);
    const Table wide = widened(table);
    const embed::BasicTiedEmbedding<Scalar> tied(table);
    EXPECT_EQ(&tied.input_weights(), &tied.output_weights());
    EXPECT_EQ(tied.param_count(), kVocab * 9);
    const std::vector<Index> ids{2, 5, 2};
    EXPECT_TRUE(SameStored(tied.embed(ids), embed::lookup(table, ids)));
    const Vector hidden = some_hidden(9, 18);
    EXPECT_TRUE(SameBits(tied.logits(hidden), embed::logits(wide, hidden)));
    // A copy has its own single table, still tied.
    const embed::BasicTiedEmbedding<Scalar> copy = tied;
    EXPECT_EQ(&copy.input_weights(), &copy.output_weights());
    EXPECT_NE(&copy.input_weights(), &tied.input_weights());
    EXPECT_TRUE(SameBits(copy.logits(hidden), embed::logits(wide, hidden)));
    EXPECT_THAT([&] { (void)tied.embed(std::vector<Index>{kVocab}); },
                ThrowsMessage<std::out_of_range>(HasSubstr("token id 41 is outside the vocabulary [0, 41)")));
    EXPECT_THAT([&] { (void)tied.logits(Vector::Zero(8)); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("has length 8, expected 9")));
}

// ---- Threads ----

using Workers = embed_test::WorkerCount;

// A table whose work is many times the splitting threshold, so 2 and 7 threads cut it into pieces.
TYPED_TEST(NarrowTables, EveryThreadCountGivesTheWidenedTablesBits) {
    using Scalar = TypeParam;
    constexpr Index dim = 67;
    constexpr Index vocab = embed::detail::kMinWorkPerPiece * 21 / dim + 5;
    const embed::BasicTable<Scalar> table = awkward_table<Scalar>(vocab, dim, 19);
    const Table wide = widened(table);
    const Vector hidden = some_hidden(dim, 20);
    Table hidden_rows(3, dim);
    for (Index i = 0; i < 3; ++i) hidden_rows.row(i) = some_hidden(dim, 21 + static_cast<unsigned>(i)).transpose();
    std::vector<Index> ids;
    for (Index i = 0; i < vocab; i += 3) ids.push_back((i * 7919) % vocab);
    const Vector want_logits = embed::logits(wide, hidden);
    const Table want_batch = embed::logits(wide, hidden_rows);
    const std::vector<Neighbour> want_dot = embed::rank_neighbours(wide, 2, 9, Score::dot);
    const std::vector<Neighbour> want_cosine = embed::rank_neighbours(wide, 2, 9, Score::cosine);
    const Table want_scaled = embed::scaled_lookup(wide, ids, 64);
    // stretch: every row as stored, row 2 times -3 rounded by the reference rounding.
    embed::BasicTable<Scalar> want_stretch = table;
    for (Index c = 0; c < dim; ++c) want_stretch(2, c) = narrow<Scalar>(wide(2, c) * -3.0);
    for (const int threads : {1, 2, 7}) {
        const Workers workers(threads);
        ASSERT_EQ(embed::detail::thread_count(vocab, dim), std::min<Index>(threads, 21)) << "the split must happen";
        EXPECT_TRUE(SameBits(embed::logits(table, hidden), want_logits)) << threads << " threads";
        EXPECT_TRUE(SameBits(embed::logits(table, hidden_rows), want_batch)) << threads << " threads";
        EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, 2, 9, Score::dot), want_dot)) << threads;
        EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, 2, 9, Score::cosine), want_cosine)) << threads;
        EXPECT_TRUE(SameBits(embed::scaled_lookup(table, ids, 64), want_scaled)) << threads << " threads";
        const embed::BasicTable<Scalar> rows = embed::lookup(table, ids);
        bool same_rows = true;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            same_rows = same_rows && std::memcmp(rows.row(static_cast<Index>(i)).data(), table.row(ids[i]).data(),
                                                 static_cast<std::size_t>(dim) * sizeof(Scalar)) == 0;
        }
        EXPECT_TRUE(same_rows) << threads << " threads";
        EXPECT_TRUE(SameBits(embed::to_double(table), wide)) << threads << " threads";
        EXPECT_TRUE(SameStored(narrowed_by_library<Scalar>(wide), table)) << threads << " threads";
        // A block of the result's size freed just before, holding other values: a copy that skipped
        // rows cannot pass on the bytes of the last table freed (the narrowing's, equal to table).
        { const embed::BasicTable<Scalar> poison = embed::BasicTable<Scalar>::Constant(vocab, dim, Scalar(7.0)); }
        EXPECT_TRUE(SameStored(embed::stretch(table, 2, -3.0), want_stretch)) << threads << " threads";
    }
}

}  // namespace
