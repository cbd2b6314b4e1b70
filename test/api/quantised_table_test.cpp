// A GGUF quantised table opened in its blocks (open_table, QuantisedTable) and scored as stored: every
// result must equal, bit for bit (NaN where NaN), the same operation on load_table(file), the values
// widened to double, at 1, 2 and 7 threads. Fixtures hold random quant bits and fp16 scales of every kind
// (NaN, infinities, zeros, subnormals) spread over the whole table, and enough rows that 2 and 7 threads
// really split the work (as in threaded_paths_test.cpp). The rows themselves are also checked against the
// test's own per-value ggml reference (test/support/ggml_reference.hpp).

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/io.hpp>
#include <embed/logits.hpp>
#include <embed/quantised_table.hpp>
#include <embed/similarity.hpp>

#include "ggml_reference.hpp"
#include "table_files.hpp"
#include "threads/parallel.hpp"
#include "worker_count.hpp"

namespace {

using embed::ElementType;
using embed::FileFormatError;
using embed::Index;
using embed::Neighbour;
using embed::QuantisedTable;
using embed::Score;
using embed::Table;
using embed::TableF32;
using embed::Vector;
using embed_test::GgmlQuantType;
using embed_test::TempDir;
using testing::HasSubstr;

constexpr int kThreadCounts[] = {1, 2, 7};

/// fp16 scales spread over every fixture: NaNs (quiet, signalling, negative), infinities, zeros of both
/// signs, subnormals of both signs, the largest finite halves.
const std::vector<std::uint16_t> special_halves{0x7E00, 0x7C01, 0xFE00, 0x7C00, 0xFC00, 0x0000,
                                                0x8000, 0x0001, 0x83FF, 0x03FF, 0x7BFF, 0xFBFF};

/// A random finite fp16 near 1: scores stay finite where the scales are ordinary.
std::uint16_t random_scale(std::mt19937& random) {
    const auto sign = static_cast<std::uint16_t>(random() & 1u);
    const auto exponent = static_cast<std::uint16_t>(10 + random() % 8u);
    const auto fraction = static_cast<std::uint16_t>(random() & 0x3FFu);
    return static_cast<std::uint16_t>(sign << 15 | exponent << 10 | fraction);
}

/// blocks blocks of type: random bytes, each fp16 field a random scale, except that every 37th block
/// (from block 3) carries the next special half in its first field.
std::string random_blocks(const GgmlQuantType& type, Index blocks, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::string bytes;
    std::size_t next_special = 0;
    for (Index b = 0; b < blocks; ++b) {
        std::string block;
        for (int i = 0; i < type.block_bytes; ++i) block += static_cast<char>(random() & 0xFFu);
        for (std::size_t k = 0; k < type.half_fields.size(); ++k) {
            std::uint16_t half = random_scale(random);
            if (k == 0 && b % 37 == 3) half = special_halves[next_special++ % special_halves.size()];
            block[static_cast<std::size_t>(type.half_fields[k])] = static_cast<char>(half & 0xFF);
            block[static_cast<std::size_t>(type.half_fields[k]) + 1] = static_cast<char>(half >> 8);
        }
        bytes += block;
    }
    return bytes;
}

/// The public element type named like the ggml type ("Q4_K" is q4_k).
ElementType element_type_of(const GgmlQuantType& type) { return embed::parse_element_type(type.name); }

/// Several blocks per row, and rows enough for 9 pieces of work at the splitting threshold, so 2 and 7
/// threads cut every operation into more pieces than threads (plus some rows, so they do not divide evenly).
Index fixture_dim(const GgmlQuantType& type) { return type.block_values == 32 ? 96 : 512; }
Index fixture_rows(const GgmlQuantType& type) {
    return embed::detail::kMinWorkPerPiece * 9 / fixture_dim(type) + 5;
}

/// One type's fixture: its blocks and the .gguf holding them as token_embd.weight.
struct Fixture {
    Index rows;
    Index dim;
    std::string blocks;
    std::filesystem::path file;
};

Fixture write_fixture(const TempDir& dir, const GgmlQuantType& type) {
    Fixture f{fixture_rows(type), fixture_dim(type), {}, {}};
    f.blocks = random_blocks(type, f.rows * f.dim / type.block_values, type.id * 7919u);
    f.file = dir.write(type.name + ".gguf", embed_test::gguf_file({{"token_embd.weight",
                                                                     {static_cast<std::uint64_t>(f.dim),
                                                                      static_cast<std::uint64_t>(f.rows)},
                                                                     type.id, 0}},
                                                                   f.blocks));
    return f;
}

/// Same bits, or both NaN.
template <class T>
bool same_value(T got, T want) {
    if (std::isnan(want)) return std::isnan(got);
    return std::memcmp(&got, &want, sizeof(T)) == 0;
}

template <class Got, class Want>
testing::AssertionResult SameBits(const Got& got, const Want& want, const std::string& what) {
    if (got.rows() != want.rows() || got.cols() != want.cols()) {
        return testing::AssertionFailure() << what << ": shape (" << got.rows() << ", " << got.cols()
                                           << "), expected (" << want.rows() << ", " << want.cols() << ")";
    }
    for (Index r = 0; r < want.rows(); ++r) {
        for (Index c = 0; c < want.cols(); ++c) {
            if (!same_value(got(r, c), want(r, c))) {
                return testing::AssertionFailure() << what << ": (" << r << ", " << c << ") is " << got(r, c)
                                                   << ", expected " << want(r, c);
            }
        }
    }
    return testing::AssertionSuccess();
}

testing::AssertionResult SameNeighbours(const std::vector<Neighbour>& got, const std::vector<Neighbour>& want,
                                        const std::string& what) {
    if (got.size() != want.size()) {
        return testing::AssertionFailure() << what << ": " << got.size() << " neighbours, expected " << want.size();
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (got[i].id != want[i].id || !same_value(got[i].score, want[i].score)) {
            return testing::AssertionFailure() << what << ": neighbour " << i << " is (" << got[i].id << ", "
                                               << got[i].score << "), expected (" << want[i].id << ", "
                                               << want[i].score << ")";
        }
    }
    return testing::AssertionSuccess();
}

/// n hidden vectors (n, d) of mixed magnitudes and signs.
Table hidden_rows(Index n, Index dim, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::normal_distribution<double> normal;
    Table h(n, dim);
    for (Index i = 0; i < n; ++i) {
        for (Index c = 0; c < dim; ++c) h(i, c) = normal(random) * std::ldexp(1.0, static_cast<int>(random() % 9) - 4);
    }
    return h;
}

class QuantisedTypes : public testing::TestWithParam<GgmlQuantType> {
protected:
    // Each test sets counts of its own; the count before it comes back after it.
    embed_test::WorkerCount restore_{embed::detail::worker_count()};
};

std::string type_name(const testing::TestParamInfo<GgmlQuantType>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Gguf, QuantisedTypes, testing::ValuesIn(embed_test::ggml_quant_types()), type_name);

TEST_P(QuantisedTypes, OpenTableKeepsTheFileBlocksAsStored) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    const Fixture f = write_fixture(dir, type);
    const embed::OpenedTable opened = embed::open_table(f.file);
    EXPECT_EQ(opened.type, element_type_of(type));
    ASSERT_TRUE(std::holds_alternative<QuantisedTable>(opened.table));
    const auto& table = std::get<QuantisedTable>(opened.table);
    EXPECT_EQ(table.type(), element_type_of(type));
    EXPECT_EQ(table.rows(), f.rows);
    EXPECT_EQ(table.cols(), f.dim);
    ASSERT_EQ(table.bytes(), static_cast<Index>(f.blocks.size()));
    EXPECT_EQ(std::memcmp(table.data(), f.blocks.data(), f.blocks.size()), 0);
}

// The rows against the test's own reference, value by value, and against load_table_f32.
TEST_P(QuantisedTypes, LookupDequantisesRowsAsGgmlDoes) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    const Fixture f = write_fixture(dir, type);
    const auto table = std::get<QuantisedTable>(embed::open_table(f.file).table);
    const std::vector<Index> ids{0, f.rows - 1, 3, 3, f.rows / 2, 1};
    const std::vector<float> reference = embed_test::reference_values(type, f.blocks);
    TableF32 want(static_cast<Index>(ids.size()), f.dim);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        for (Index c = 0; c < f.dim; ++c) want(static_cast<Index>(i), c) = reference[static_cast<std::size_t>(ids[i] * f.dim + c)];
    }
    const TableF32 stored = embed::load_table_f32(f.file);
    for (const int threads : kThreadCounts) {
        embed::detail::set_worker_count(threads);
        EXPECT_TRUE(SameBits(embed::lookup(table, ids), want, "lookup at " + std::to_string(threads) + " threads"));
        std::vector<Index> all(static_cast<std::size_t>(f.rows));
        for (Index r = 0; r < f.rows; ++r) all[static_cast<std::size_t>(r)] = r;
        EXPECT_TRUE(SameBits(embed::lookup(table, all), stored, "every row at " + std::to_string(threads)));
    }
    // Into a block of a larger matrix: only that block is written.
    TableF32 big = TableF32::Constant(static_cast<Index>(ids.size()) + 2, f.dim + 3, 7.0f);
    embed::lookup_into(table, ids, big.block(1, 2, static_cast<Index>(ids.size()), f.dim));
    EXPECT_TRUE(SameBits(TableF32(big.block(1, 2, static_cast<Index>(ids.size()), f.dim)), want, "lookup_into"));
    EXPECT_EQ(big(0, 0), 7.0f);
    EXPECT_EQ(big(static_cast<Index>(ids.size()) + 1, f.dim + 2), 7.0f);
}

TEST_P(QuantisedTypes, LogitsEqualTheWidenedTableBitForBit) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    const Fixture f = write_fixture(dir, type);
    const auto table = std::get<QuantisedTable>(embed::open_table(f.file).table);
    const Table widened = embed::load_table(f.file);
    const Table hidden = hidden_rows(3, f.dim, 11);
    const Vector h = hidden.row(1).transpose();
    const Vector want = embed::logits(widened, h);
    const Table want_batch = embed::logits(widened, hidden);
    for (const int threads : kThreadCounts) {
        embed::detail::set_worker_count(threads);
        // The fixture is large enough that every thread count splits the rows into more pieces than threads.
        if (threads > 1) {
            ASSERT_GT(embed::detail::piece_count(f.rows, f.dim), threads);
        }
        const std::string at = " at " + std::to_string(threads) + " threads";
        EXPECT_TRUE(SameBits(embed::logits(table, h), want, "logits" + at));
        Vector into = Vector::Zero(f.rows);
        embed::logits_into(table, h, into);
        EXPECT_TRUE(SameBits(into, want, "logits_into" + at));
        EXPECT_TRUE(SameBits(embed::logits(table, hidden.row(1)), want, "logits of a table row" + at));
        EXPECT_TRUE(SameBits(embed::logits(table, hidden), want_batch, "batched logits" + at));
    }
}

TEST_P(QuantisedTypes, NeighboursEqualTheWidenedTableBitForBit) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    const Fixture f = write_fixture(dir, type);
    const auto table = std::get<QuantisedTable>(embed::open_table(f.file).table);
    const Table widened = embed::load_table(f.file);
    // A row of ordinary scales, the row holding the first special scale (NaN), and a whole ranking.
    const Index special_row = 3 * type.block_values / f.dim;
    const std::vector<std::pair<Index, Index>> queries{{f.rows / 2 + 1, 7}, {special_row, 5}, {f.rows - 1, f.rows + 4}};
    for (const auto& [query, k] : queries) {
        const auto want_dot = embed::rank_neighbours(widened, query, k, Score::dot);
        const auto want_cosine = embed::rank_neighbours(widened, query, k, Score::cosine);
        for (const int threads : kThreadCounts) {
            embed::detail::set_worker_count(threads);
            const std::string at = " of " + std::to_string(query) + " at " + std::to_string(threads) + " threads";
            EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, query, k, Score::dot), want_dot, "dot" + at));
            EXPECT_TRUE(SameNeighbours(embed::rank_neighbours(table, query, k, Score::cosine), want_cosine,
                                       "cosine" + at));
            EXPECT_EQ(embed::nearest_by_dot(table, query, k), embed::nearest_by_dot(widened, query, k));
            EXPECT_EQ(embed::nearest_by_cosine(table, query, k), embed::nearest_by_cosine(widened, query, k));
        }
    }
}

// The fixtures must hold what the tests above claim: NaN and infinite values, and scores both NaN and
// finite, or a NaN that the rankings never meet would go unnoticed.
TEST_P(QuantisedTypes, FixturesHoldNaNInfinityAndNumbers) {
    const TempDir dir;
    const Fixture f = write_fixture(dir, GetParam());
    const Table widened = embed::load_table(f.file);
    EXPECT_TRUE(widened.array().isNaN().any());
    EXPECT_TRUE(widened.array().isInf().any());
    const Vector scores = embed::logits(widened, Vector(Vector::Ones(f.dim)));
    EXPECT_TRUE(scores.array().isNaN().any());
    EXPECT_GT(scores.array().isFinite().count(), f.rows / 2);
}

TEST(QuantisedTable, OpenTableOfOtherTypesIsLoadStoredTable) {
    const TempDir dir;
    Table values(3, 2);
    values << 1.0, -2.5, 0.125, 3.0, -0.0, 7.0;
    const auto file = dir.path() / "t.npy";
    embed::save_table(file, values);
    const embed::OpenedTable opened = embed::open_table(file);
    EXPECT_EQ(opened.type, ElementType::f64);
    ASSERT_TRUE(std::holds_alternative<Table>(opened.table));
    EXPECT_TRUE(SameBits(std::get<Table>(opened.table), values, "f64 table"));
}

TEST(QuantisedTable, OpenTableRaisesLoadTablesErrors) {
    const GgmlQuantType& type = embed_test::ggml_quant_types().front();
    const TempDir dir;
    const Fixture f = write_fixture(dir, type);
    const auto message_of = [](auto&& call) -> std::string {
        try {
            call();
        } catch (const FileFormatError& error) {
            return error.what();
        }
        return "no error";
    };
    const std::string want = message_of([&] { embed::load_table(f.file, "missing"); });
    EXPECT_THAT(want, HasSubstr("missing"));
    EXPECT_EQ(message_of([&] { embed::open_table(f.file, "missing"); }), want);
    // A row width that is not whole blocks: the parser's error, the same for both.
    const auto ragged = dir.write("ragged.gguf", embed_test::gguf_file({{"token_embd.weight", {48, 2}, type.id, 0}},
                                                                        std::string(4096, '\0')));
    const std::string ragged_want = message_of([&] { embed::load_table(ragged); });
    EXPECT_THAT(ragged_want, HasSubstr("48"));
    EXPECT_EQ(message_of([&] { embed::open_table(ragged); }), ragged_want);
}

TEST(QuantisedTable, BadArgumentsThrowBeforeWriting) {
    const GgmlQuantType& type = embed_test::ggml_quant_types()[4];  // Q8_0
    const std::string blocks = random_blocks(type, 4, 5);
    const auto bytes = std::as_bytes(std::span(blocks.data(), blocks.size()));
    const QuantisedTable table(ElementType::q8_0, 2, 64, bytes);
    const std::vector<Index> bad_ids{0, 2};
    EXPECT_THAT([&] { embed::lookup(table, bad_ids); },
                testing::ThrowsMessage<std::out_of_range>(HasSubstr("token id 2 is outside the vocabulary [0, 2)")));
    TableF32 out = TableF32::Constant(2, 64, 5.0f);
    EXPECT_THROW(embed::lookup_into(table, bad_ids, out), std::out_of_range);
    EXPECT_TRUE((out.array() == 5.0f).all());
    EXPECT_THROW(embed::lookup_into(table, std::vector<Index>{0}, out), std::invalid_argument);
    EXPECT_THAT([&] { embed::logits(table, Vector(Vector::Zero(63))); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("63")));
    Vector scores = Vector::Constant(3, 9.0);
    EXPECT_THROW(embed::logits_into(table, Vector::Zero(64), scores), std::invalid_argument);
    EXPECT_TRUE((scores.array() == 9.0).all());
    EXPECT_THROW(embed::nearest_by_dot(table, -1, 1), std::out_of_range);
    EXPECT_THROW(embed::nearest_by_cosine(table, 0, -1), std::invalid_argument);
    EXPECT_TRUE(embed::nearest_by_dot(table, 1, 0).empty());
    std::vector<float> row(64);
    EXPECT_THROW(table.dequantise_rows(1, 2, row.data()), std::out_of_range);
}

TEST(QuantisedTable, ConstructorChecksTypeShapeAndBytes) {
    const std::vector<std::byte> blocks(68);
    EXPECT_THAT([&] { QuantisedTable(ElementType::f32, 1, 2, blocks); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("f32")));
    EXPECT_THAT([&] { QuantisedTable(ElementType::q8_0, 1, 48, blocks); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("48")));
    EXPECT_THAT([&] { QuantisedTable(ElementType::q8_0, 3, 64, blocks); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("204 bytes; 68")));
    EXPECT_THROW(QuantisedTable(ElementType::q8_0, -1, 64, blocks), std::invalid_argument);
    EXPECT_THROW(QuantisedTable(ElementType::q8_0, Index{1} << 62, Index{1} << 10, blocks), std::overflow_error);
    EXPECT_NO_THROW(QuantisedTable(ElementType::q8_0, 2, 32, blocks));
}

TEST(QuantisedTable, EmptyTablesGiveEmptyResults) {
    const QuantisedTable empty;
    EXPECT_EQ(empty.rows(), 0);
    EXPECT_EQ(embed::logits(empty, Vector(0)).size(), 0);
    EXPECT_EQ(embed::lookup(empty, std::vector<Index>{}).size(), 0);
    const QuantisedTable no_rows(ElementType::q4_k, 0, 512, std::span<const std::byte>{});
    EXPECT_EQ(embed::logits(no_rows, Table(Table::Zero(2, 512))).rows(), 2);
    EXPECT_EQ(embed::logits(no_rows, Table(Table::Zero(2, 512))).cols(), 0);
}

}  // namespace
