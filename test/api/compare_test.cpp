// compare_tables: hand-computed answers, CPython's draws, narrow tables equal to their widened copies, the
// same bits at 1, 2 and 7 threads, and errors. Every measure against numpy's float64 code is in
// test/python/test_compare.py.

#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/draws.hpp"
#include "compare/measures.hpp"
#include "cpython.hpp"
#include "embed/compare.hpp"
#include "embed/similarity.hpp"
#include "embed/io.hpp"
#include "embed/table.hpp"
#include "file_bytes.hpp"
#include "threads/parallel.hpp"
#include "worker_count.hpp"

namespace {

using embed::Alignment;
using embed::CompareOptions;
using embed::Index;
using embed::RowMatch;
using embed::RowPair;
using embed::Table;
using embed::TableComparison;
using embed::Vector;
using testing::HasSubstr;

using Workers = embed_test::WorkerCount;

TEST(CompareDraws, SampleIsCPythonsForSmallAndLargePopulations) {
    EMBED_REQUIRE_PYTHON();
    // (n, count): the pool branch, the set branch, and a population past 32 bits (getrandbits over two words).
    const std::vector<std::pair<Index, Index>> cases = {{10, 10}, {30, 7}, {100000, 1000}, {(Index{1} << 40) + 5, 3}};
    for (const auto& [n, count] : cases) {
        const std::string code = "import random\nprint(*random.Random(12345).sample(range(" + std::to_string(n) +
                                 "), " + std::to_string(count) + "))";
        const std::vector<unsigned long long> want = embed_test::parse_integers(embed_test::run_python(code));
        const std::vector<Index> got = embed::detail::python_sample(12345, n, count);
        ASSERT_EQ(got.size(), want.size()) << n;
        for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(static_cast<unsigned long long>(got[i]), want[i]) << n;
    }
}

TEST(CompareDraws, GaussRowsAreCPythonsBitForBit) {
    EMBED_REQUIRE_PYTHON();
    const std::string code =
        "import random\ng = random.Random(7)\nprint(*[g.gauss(0.0, 1.0).hex() for _ in range(3 * 5)])";
    const std::vector<double> want = embed_test::parse_hex_doubles(embed_test::run_python(code));
    const Table got = embed::detail::python_gauss_rows(7, 3, 5);
    ASSERT_EQ(want.size(), 15U);
    for (Index i = 0; i < 15; ++i) EXPECT_EQ(got(i / 5, i % 5), want[static_cast<std::size_t>(i)]) << i;
}

TEST(CompareTables, HandComputedRowsNormsAndChanges) {
    const Table a = embed::from_rows({{1, 0}, {0, 1}, {1, 1}, {0, 0}});
    const Table b = embed::from_rows({{0, 1}, {0, 1}, {2, 2}, {3, 4}, {9, 9}});
    CompareOptions options;
    options.probes = 0;
    const TableComparison c = embed::compare_tables(a, b, options);
    EXPECT_EQ(c.matched, 4);
    EXPECT_EQ(c.unmatched_a, 0);
    EXPECT_EQ(c.unmatched_b, 1);
    EXPECT_EQ(c.unmatched_b_examples, std::vector<Index>{4});
    ASSERT_TRUE(c.row_cosine && c.relative_change);
    EXPECT_DOUBLE_EQ((*c.row_cosine)[0], 0.0);
    EXPECT_DOUBLE_EQ((*c.row_cosine)[1], 1.0);
    EXPECT_DOUBLE_EQ((*c.row_cosine)[2], 1.0);
    EXPECT_EQ((*c.row_cosine)[3], 0.0);  // a's row is zero
    EXPECT_DOUBLE_EQ((*c.relative_change)[0], std::sqrt(2.0));
    EXPECT_EQ((*c.relative_change)[1], 0.0);
    EXPECT_DOUBLE_EQ((*c.relative_change)[2], 1.0);
    EXPECT_TRUE(std::isnan((*c.relative_change)[3]));
    EXPECT_DOUBLE_EQ(c.norm_a[2], std::sqrt(2.0));
    EXPECT_DOUBLE_EQ(c.norm_b[3], 5.0);
    // Lowest cosine first, ties (rows 0 and 3 at 0.0) by a's id.
    EXPECT_EQ(embed::moved_pairs(c, 2), (std::vector<Index>{0, 3}));
    // Percentiles of the norms of b, {1, 1, 2 sqrt 2, 5}, numpy's linear rule at 50: halfway between 1 and 2.83.
    EXPECT_DOUBLE_EQ(c.norm_b_percentiles.values[2], (1.0 + std::sqrt(8.0)) / 2.0);
}

TEST(CompareTables, HandComputedNeighboursAndLogits) {
    // In a, row 0's nearest (k = 1) is row 1; in b it is row 2.
    const Table a = embed::from_rows({{1, 0}, {1, 0.1}, {0, 1}});
    const Table b = embed::from_rows({{1, 0}, {0, 1}, {1, 0.1}});
    CompareOptions options;
    options.k = 1;
    options.probe_ids = std::vector<Index>{0};
    options.hidden = embed::from_rows({{1, 0}, {0, 1}});
    const TableComparison c = embed::compare_tables(a, b, options);
    ASSERT_EQ(c.neighbour_overlap.size(), 1);
    EXPECT_EQ(c.neighbour_overlap[0], 0.0);
    // h = (1, 0): z_a = (1, 1, 0), z_b = (1, 0, 1): argmax 0 both (tie by lower index). h = (0, 1): z_a = (0,
    // 0.1, 1) argmax 2, z_b = (0, 1, 0.1) argmax 1.
    EXPECT_EQ(*c.top1_agreement, 0.5);
    EXPECT_EQ(*c.topk_overlap, 0.5);
    EXPECT_EQ(*c.max_abs_logit_diff, 1.0);
    const auto kl = [](std::vector<double> za, std::vector<double> zb) {
        double sa = 0;
        double sb = 0;
        for (std::size_t t = 0; t < za.size(); ++t) {
            sa += std::exp(za[t]);
            sb += std::exp(zb[t]);
        }
        double total = 0;
        for (std::size_t t = 0; t < za.size(); ++t) {
            total += std::exp(za[t]) / sa * (std::log(std::exp(za[t]) / sa) - std::log(std::exp(zb[t]) / sb));
        }
        return total;
    };
    const double want = (kl({1, 1, 0}, {1, 0, 1}) + kl({0, 0.1, 1}, {0, 1, 0.1})) / 2.0;
    EXPECT_NEAR(*c.kl_divergence, want, 1e-15);
}

Table random_table(Index rows, Index cols, std::uint64_t seed) { return embed::make_table(rows, cols, seed); }

CompareOptions aligned_options() {
    CompareOptions options;
    options.align = Alignment::orthogonal;
    options.probes = 40;
    options.k = 7;
    options.seed = 5;
    return options;
}

void expect_same(const TableComparison& x, const TableComparison& y) {
    EXPECT_EQ(x.pairs, y.pairs);
    EXPECT_EQ(*x.rotation, *y.rotation);
    EXPECT_EQ(*x.row_cosine, *y.row_cosine);
    EXPECT_EQ(*x.relative_change, *y.relative_change);
    EXPECT_EQ(x.norm_a, y.norm_a);
    EXPECT_EQ(x.norm_b, y.norm_b);
    EXPECT_EQ(x.probe_ids, y.probe_ids);
    EXPECT_EQ(x.neighbour_overlap, y.neighbour_overlap);
    EXPECT_EQ(*x.top1_agreement, *y.top1_agreement);
    EXPECT_EQ(*x.topk_overlap, *y.topk_overlap);
    EXPECT_EQ(*x.kl_divergence, *y.kl_divergence);
    EXPECT_EQ(*x.max_abs_logit_diff, *y.max_abs_logit_diff);
}

TEST(CompareTables, SameBitsAtOneTwoAndSevenThreads) {
    const Table a = random_table(2500, 40, 1);
    const Table b = random_table(2400, 40, 2);
    TableComparison one;
    {
        const Workers workers(1);
        one = embed::compare_tables(a, b, aligned_options());
    }
    for (const int threads : {2, 7}) {
        const Workers workers(threads);
        SCOPED_TRACE(threads);
        expect_same(one, embed::compare_tables(a, b, aligned_options()));
    }
}

TEST(CompareTables, NarrowTablesGiveTheirWidenedCopysResults) {
    const Table a = random_table(300, 16, 3);
    const embed::TableF32 b32 = random_table(280, 16, 4).cast<float>();
    const embed::TableBF16 b16 = random_table(280, 16, 4).cast<Eigen::bfloat16>();
    expect_same(embed::compare_tables(a, b32, aligned_options()),
                embed::compare_tables(a, Table(b32.cast<double>()), aligned_options()));
    expect_same(embed::compare_tables(b16, a, aligned_options()),
                embed::compare_tables(Table(b16.cast<double>()), a, aligned_options()));
    const embed::StoredTable stored = b32;
    expect_same(embed::compare_tables(embed::StoredTable(a), stored, aligned_options()),
                embed::compare_tables(a, b32, aligned_options()));
}

// The float32 screen's lists against the double path's (the cosines all in double), at 1, 2 and 7 threads.
// covered says whether the screen is meant to run on the table (else the comparison takes the double path).
template <class Stored>
void expect_screen_matches_double(const embed::BasicTable<Stored>& table, Index count, bool covered) {
    const embed::AnyTableView view(embed::view_of(table));
    Vector norms(table.rows());
    embed::detail::NeighbourSide side{&view, &norms, {}};
    for (Index r = 0; r < table.rows(); ++r) {
        side.ids.push_back(r);
        norms[r] = embed::norm(Vector(table.row(r).template cast<double>().transpose()));
    }
    ASSERT_EQ(embed::detail::screen_covers(side), covered);
    std::vector<Index> probes;
    for (Index r = 0; r < table.rows(); r += 7) probes.push_back(r);
    const auto want = embed::detail::nearest_pairs_in_double(side, probes, count);
    for (const int threads : {1, 2, 7}) {
        const Workers workers(threads);
        SCOPED_TRACE(threads);
        if (covered) {
            EXPECT_EQ(embed::detail::nearest_pairs_screened(side, probes, count), want);
        }
    }
}

TEST(CompareNeighbourScreen, RandomTablesOfEveryStoredType) {
    // d = 37: whole vectors of 16 and of 8 plus a tail.
    const Table values = random_table(1500, 37, 11);
    expect_screen_matches_double(values, 10, true);
    expect_screen_matches_double(embed::TableF32(values.cast<float>()), 10, true);
    expect_screen_matches_double(embed::TableBF16(values.cast<Eigen::bfloat16>()), 10, true);
    // Every other row is a neighbour: the cut is the lowest bound.
    expect_screen_matches_double(embed::TableF32(random_table(200, 37, 12).cast<float>()), 199, true);
}

TEST(CompareNeighbourScreen, NearTiesAndRowsFloat32CannotTellApart) {
    // Rows a few double ulps from one of 20 bases: float32 rounds each group to one row, so the screen sees
    // hundreds of ties and only the double scores order them.
    const Table bases = random_table(20, 24, 13);
    Table near(1200, 24);
    std::mt19937_64 draw(14);
    for (Index r = 0; r < near.rows(); ++r) {
        for (Index c = 0; c < near.cols(); ++c) {
            const double base = bases(r % 20, c);
            near(r, c) = base + base * 0x1p-40 * static_cast<double>(static_cast<int>(draw() % 7) - 3);
        }
    }
    expect_screen_matches_double(near, 10, true);
    expect_screen_matches_double(near, 150, true);
}

TEST(CompareNeighbourScreen, EqualRowsZeroRowsAndExtremeScales) {
    // Many equal rows (ties broken by the lower id), rows of zeros (cosine 0.0 with everything), and rows
    // scaled by 2^-90 (their float32 products underflow) and 2^40.
    Table table = random_table(1500, 19, 15);
    for (Index r = 0; r < table.rows(); ++r) {
        if (r % 3 == 0) table.row(r) = table.row(0);
        if (r % 11 == 0) table.row(r).setZero();
        if (r % 7 == 1) table.row(r) *= 0x1p-90;
        if (r % 13 == 2) table.row(r) *= 0x1p40;
    }
    expect_screen_matches_double(table, 10, true);
    expect_screen_matches_double(embed::TableF32(table.cast<float>()), 25, true);
}

TEST(CompareNeighbourScreen, TablesTheBoundDoesNotCoverTakeTheDoublePath) {
    Table table = random_table(400, 16, 16);
    table(5, 3) = std::numeric_limits<double>::quiet_NaN();
    expect_screen_matches_double(table, 10, false);
    table(5, 3) = std::numeric_limits<double>::infinity();
    expect_screen_matches_double(table, 10, false);
    table(5, 3) = 0x1p70;  // float32 products and sums would overflow
    expect_screen_matches_double(table, 10, false);
    // Through compare_tables: the NaN row's pair gets NaN cosines, ranked below every number, on both paths.
    table(5, 3) = std::numeric_limits<double>::quiet_NaN();
    CompareOptions options;
    options.probes = 400;
    options.k = 5;
    const TableComparison with_nan = embed::compare_tables(table, table, options);
    for (Index q = 0; q < with_nan.neighbour_overlap.size(); ++q) EXPECT_EQ(with_nan.neighbour_overlap[q], 1.0);
}

// A table quantised into a .gguf by save_table and opened two ways: in its blocks (open_table) and as the
// float32 table of ggml's dequantisation (load_table_f32).
struct Opened {
    std::filesystem::path file;
    embed::OpenedTable blocks;
    embed::TableF32 widened;
};

Opened quantised(const Table& t, embed::ElementType type, const embed_test::TempDir& dir, const std::string& name) {
    const std::filesystem::path file = dir.path() / (name + ".gguf");
    embed::save_table(file, t, "token_embd.weight", type);
    Opened opened{file, embed::open_table(file), embed::load_table_f32(file)};
    EXPECT_TRUE(std::holds_alternative<embed::QuantisedTable>(opened.blocks.table)) << name;
    return opened;
}

void expect_same_percentiles(const TableComparison& x, const TableComparison& y) {
    EXPECT_EQ(x.row_cosine_percentiles->values, y.row_cosine_percentiles->values);
    EXPECT_EQ(x.relative_change_percentiles->values, y.relative_change_percentiles->values);
    EXPECT_EQ(x.norm_a_percentiles.values, y.norm_a_percentiles.values);
    EXPECT_EQ(x.norm_b_percentiles.values, y.norm_b_percentiles.values);
    EXPECT_EQ(x.hidden_count, y.hidden_count);
}

// A Q4_K table against a Q8_0 one of other values (rows enough that the chunks and the threads split them):
// every measure, the rotation included, is the float32 tables' bit for bit, at 1, 2 and 7 threads; a quantised
// table against a stored float64 one, through OpenedTable, too.
TEST(CompareTables, QuantisedTablesGiveTheirFloat32TablesResultsAtAnyThreadCount) {
    const embed_test::TempDir dir;
    const Opened a = quantised(random_table(2300, 256, 11), embed::ElementType::q4_k, dir, "a");
    const Opened b = quantised(random_table(2200, 256, 12), embed::ElementType::q8_0, dir, "b");
    const TableComparison want = embed::compare_tables(a.widened, b.widened, aligned_options());
    for (const int threads : {1, 2, 7}) {
        SCOPED_TRACE(threads);
        const Workers workers(threads);
        const TableComparison got = embed::compare_tables(a.blocks, b.blocks, aligned_options());
        expect_same(got, want);
        expect_same_percentiles(got, want);
    }
    // The files, opened by compare_table_files in their blocks, give the same.
    expect_same(embed::compare_table_files(a.file, b.file, aligned_options()), want);
    const Table c = random_table(2000, 256, 13);
    const embed::OpenedTable stored{c, embed::ElementType::f64};
    const TableComparison mixed = embed::compare_tables(stored, a.blocks, aligned_options());
    expect_same(mixed, embed::compare_tables(c, a.widened, aligned_options()));
}

// Tables of different widths (no rotation, no logits) through the variant of views: the norms and the
// neighbourhoods are the float32 tables'.
TEST(CompareTables, QuantisedTablesOfDifferentWidthsGiveTheirFloat32TablesNorms) {
    const embed_test::TempDir dir;
    const Opened a = quantised(random_table(300, 64, 14), embed::ElementType::q8_0, dir, "a");
    const Opened b = quantised(random_table(310, 256, 15), embed::ElementType::q6_k, dir, "b");
    CompareOptions options;
    options.probes = 30;
    options.k = 5;
    const embed::AnyTableView a_view = std::get<embed::QuantisedTable>(a.blocks.table);
    const embed::AnyTableView b_view = std::get<embed::QuantisedTable>(b.blocks.table);
    const TableComparison got = embed::compare_tables(a_view, b_view, options);
    const TableComparison want = embed::compare_tables(a.widened, b.widened, options);
    EXPECT_FALSE(got.row_cosine);
    EXPECT_FALSE(got.top1_agreement);
    EXPECT_EQ(got.norm_a, want.norm_a);
    EXPECT_EQ(got.norm_b, want.norm_b);
    EXPECT_EQ(got.probe_ids, want.probe_ids);
    EXPECT_EQ(got.neighbour_overlap, want.neighbour_overlap);
}

TEST(CompareTables, PairsByTextKeepTextsHeldOnceOnEachSide) {
    const embed::Vocabulary a({"x", "cat", "dup", "dup", "dog", ""}, {}, embed::TokenReading::as_stored,
                              {false, false, false, false, false, true});
    const embed::Vocabulary b({"dog", "dup", "cat", "x", "<no token 5>"}, {}, embed::TokenReading::as_stored);
    // b has 3 rows only: "x" (id 3) has no row. a's missing id 5 never matches, even b's token spelled as its text.
    EXPECT_EQ(embed::pairs_by_text(a, 6, b, 3), (std::vector<RowPair>{{1, 2}, {4, 0}}));
    EXPECT_EQ(embed::pairs_by_text(a, 6, b, 5), (std::vector<RowPair>{{0, 3}, {1, 2}, {4, 0}}));
    // a's table has 2 rows: "dup" is held once, by id 2.
    EXPECT_EQ(embed::pairs_by_text(a, 3, b, 5), (std::vector<RowPair>{{0, 3}, {1, 2}, {2, 1}}));
}

TEST(CompareTables, BadOptionsNameTheValue) {
    const Table a = random_table(10, 4, 1);
    const Table narrow = random_table(10, 3, 1);
    CompareOptions options;
    options.k = 0;
    EXPECT_THAT([&] { embed::compare_tables(a, a, options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("k must be >= 1, got 0")));
    options = {};
    options.probes = -2;
    EXPECT_THAT([&] { embed::compare_tables(a, a, options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("-2")));
    options = {};
    options.probes = std::numeric_limits<Index>::max() / 2;
    EXPECT_THROW(embed::compare_tables(a, a, options), std::overflow_error);
    options = {};
    options.align = Alignment::orthogonal;
    EXPECT_THAT([&] { embed::compare_tables(a, narrow, options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("got 4 and 3")));
    options = {};
    options.match = RowMatch::text;
    EXPECT_THAT([&] { embed::compare_tables(a, a, options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("vocabularies")));
    options = {};
    options.probe_ids = std::vector<Index>{10};
    EXPECT_THAT([&] { embed::compare_tables(a, a, options); },
                testing::ThrowsMessage<std::out_of_range>(HasSubstr("token id 10")));
    options.probe_ids = std::vector<Index>{5};
    EXPECT_THAT([&] { embed::compare_tables(a, Table(a.topRows(5)), options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("probe id 5")));
    options = {};
    options.hidden = Table::Zero(2, 3);
    EXPECT_THAT([&] { embed::compare_tables(a, a, options); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("hidden")));
}

TEST(CompareTables, EmptyTablesAndOnePairGiveNaNNotCrashes) {
    const TableComparison empty = embed::compare_tables(Table(0, 3), random_table(4, 3, 1));
    EXPECT_EQ(empty.matched, 0);
    EXPECT_EQ(empty.unmatched_b, 4);
    EXPECT_EQ(empty.neighbour_overlap.size(), 0);
    EXPECT_TRUE(std::isnan(*empty.top1_agreement));
    EXPECT_TRUE(std::isnan(empty.norm_a_percentiles.values[0]));
    CompareOptions options;
    options.align = Alignment::orthogonal;
    const TableComparison one = embed::compare_tables(random_table(1, 3, 1), random_table(1, 3, 2), options);
    ASSERT_EQ(one.neighbour_overlap.size(), 1);
    EXPECT_TRUE(std::isnan(one.neighbour_overlap[0]));  // no other pair to be a neighbour
    EXPECT_EQ(*one.top1_agreement, 1.0);                // one candidate: always agreed
}

}  // namespace
