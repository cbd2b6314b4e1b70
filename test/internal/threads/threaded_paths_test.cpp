// Every function that splits its rows between threads, run at 1, 2 and 7
// threads on tables sized from the splitting threshold itself (lib/threads/parallel.hpp),
// so that 2 and 7 threads really cut the work into several pieces: the results
// must be the same bits at every thread count, and the explicit loops' values.
// The table holds copies of one row on both sides of the piece boundaries (ties
// the multi-piece merge must order by id), NaN, both infinities and a zero row.
// Results of 4 MiB and more also go through the page prefaulting.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/scaling.hpp>
#include <embed/similarity.hpp>
#include <embed/table.hpp>

#include "all_close.hpp"
#include "cpython.hpp"
#include "documented_order.hpp"
#include "neighbour_order.hpp"
#include "threads/parallel.hpp"

namespace {

using embed::Index;
using embed::Neighbour;
using embed::Score;
using embed::Table;
using embed::Vector;
using embed::detail::kMinWorkPerPiece;
using embed::detail::piece_count;
using embed::detail::set_worker_count;
using embed::detail::thread_count;
using embed_test::AllClose;
using embed_test::dot_in_documented_order;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One thread (the caller alone), two, and an odd count above this machine's cores.
constexpr int kThreadCounts[] = {1, 2, 7};

// An odd width: rows start at every offset from a cache line, and the kernels' tails run.
constexpr Index kDim = 67;
// 21 pieces' worth of work at the threshold (3 per thread at 7 threads; 2 threads stop at their cap of
// 8 pieces each), plus 5 rows so that the rows do not divide evenly into pieces.
constexpr Index kVocab = kMinWorkPerPiece * 21 / kDim + 5;
// prefault_for_writing leaves buffers under 4 MiB alone (lib/threads/parallel.cpp); the results below pass it.
constexpr Index kPrefaultBytes = Index{4} << 20;
static_assert(kVocab * kDim * Index{sizeof(double)} >= kPrefaultBytes, "a table-sized result must be prefaulted");

constexpr Index kQuery = kVocab / 2 + 7;
constexpr Index kSomeNaN = kVocab / 5;
constexpr Index kAllNaN = kVocab / 4;
constexpr Index kPlusInf = kVocab / 6;
constexpr Index kMinusInf = kVocab / 7;
constexpr Index kZero = kVocab / 8;

#if defined(__GLIBC__)
// glibc raises its mmap threshold after the first large free, so later large results would come from
// heap pages already written, which prefault_for_writing rightly skips. A fixed threshold makes every
// result here a fresh mapping, so the prefault runs each time.
[[maybe_unused]] const int kFreshMappings = mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif

// The first row of rank_neighbours' second piece at `threads` threads.
Index first_piece_boundary(int threads) {
    set_worker_count(threads);
    const Index pieces = piece_count(kVocab, kDim);
    return (kVocab + pieces - 1) / pieces;
}

// Where the query row is copied: on both sides of the first piece boundary at 2 and at 7 threads,
// before the query, and far after it, so equal scores come from different pieces.
std::vector<Index> copies_of_the_query() {
    std::vector<Index> ids{3, kVocab / 3, kVocab - 1};
    for (const int threads : {2, 7}) {
        const Index boundary = first_piece_boundary(threads);
        ids.push_back(boundary - 1);
        ids.push_back(boundary);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

// make_table(kVocab, kDim, 31) with the query row ten times longer (so its copies lead by dot product
// too), copied to copies_of_the_query(), and rows holding NaN, +inf, -inf and only zeros.
Table table_with_ties_and_non_finite_rows() {
    Table table = embed::make_table(kVocab, kDim, 31);
    table.row(kQuery) *= 10.0;
    for (const Index copy : copies_of_the_query()) table.row(copy) = table.row(kQuery);
    table(kSomeNaN, 5) = kNaN;
    table.row(kAllNaN).setConstant(kNaN);
    table(kPlusInf, 0) = kInf;
    table(kMinusInf, 1) = -kInf;
    table.row(kZero).setZero();
    return table;
}

const Table& test_table() {
    static const Table table = table_with_ties_and_non_finite_rows();
    return table;
}

// A loop a function hands to parallel_for: n items of cost_per_item each.
struct Loop {
    Index n;
    Index cost_per_item;
};

// Whether the loop goes to exactly `threads` threads (the worker count must already be set), in more
// than one piece unless there is one thread: without that, comparing thread counts shows nothing.
testing::AssertionResult splits_between(int threads, Loop loop) {
    const Index got_threads = thread_count(loop.n, loop.cost_per_item);
    const Index pieces = piece_count(loop.n, loop.cost_per_item);
    if (got_threads == threads && (threads == 1 ? pieces == 1 : pieces > 1)) return testing::AssertionSuccess();
    return testing::AssertionFailure() << loop.n << " items of cost " << loop.cost_per_item << " at " << threads
                                       << " threads run on " << got_threads << " threads in " << pieces
                                       << " pieces";
}

// The same shape and the same bits everywhere (NaN payloads and the sign of zero included). Tables and
// vectors are contiguous, so one memcmp does it; the scan only runs to name the first difference.
template <class Plain>
testing::AssertionResult same_bits(const Eigen::PlainObjectBase<Plain>& got,
                                   const Eigen::PlainObjectBase<Plain>& want) {
    if (got.rows() != want.rows() || got.cols() != want.cols()) {
        return testing::AssertionFailure() << "shapes differ: " << got.rows() << " x " << got.cols() << " and "
                                           << want.rows() << " x " << want.cols();
    }
    const double* g = got.data();
    const double* w = want.data();
    const auto bytes = static_cast<std::size_t>(got.size()) * sizeof(double);
    if (bytes == 0 || std::memcmp(g, w, bytes) == 0) return testing::AssertionSuccess();
    Index i = 0;
    while (std::bit_cast<std::uint64_t>(g[i]) == std::bit_cast<std::uint64_t>(w[i])) ++i;
    return testing::AssertionFailure() << "first difference at (" << i / got.cols() << ", " << i % got.cols()
                                       << "): " << g[i] << " and " << w[i];
}

testing::AssertionResult same_bits(const std::vector<Neighbour>& got, const std::vector<Neighbour>& want) {
    if (got.size() != want.size()) {
        return testing::AssertionFailure() << got.size() << " neighbours and " << want.size();
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i].id != want[i].id ||
            std::bit_cast<std::uint64_t>(got[i].score) != std::bit_cast<std::uint64_t>(want[i].score)) {
            return testing::AssertionFailure() << "place " << i << ": " << got[i].id << " (" << got[i].score
                                               << ") and " << want[i].id << " (" << want[i].score << ")";
        }
    }
    return testing::AssertionSuccess();
}

// Runs compute() at each thread count, after checking that the loop loop_at() names (at that
// count) splits there.
template <class LoopAt, class Compute>
auto at_each_thread_count(LoopAt loop_at, Compute compute) {
    std::vector<decltype(compute())> results;
    for (const int threads : kThreadCounts) {
        set_worker_count(threads);
        EXPECT_TRUE(splits_between(threads, loop_at()));
        results.push_back(compute());
    }
    return results;
}

// A loop that does not depend on the thread count.
auto fixed(Index n, Index cost_per_item) {
    return [=] { return Loop{n, cost_per_item}; };
}

// rank_neighbours' loop: piece_count(V, d) pieces of the table, each one item of its rows' cost.
Loop ranking_loop() {
    const Index pieces = piece_count(kVocab, kDim);
    return {pieces, (kVocab + pieces - 1) / pieces * kDim};
}

// The bytes of one page, the unit prefault_for_writing's loop counts in.
Index page_bytes() {
#if defined(__linux__)
    return static_cast<Index>(sysconf(_SC_PAGESIZE));
#else
    return 4096;
#endif
}

// ---- references, by explicit loops ----

// Row query against row other by dot product or cosine, each sum in the documented order.
double score_by_loop(const Table& table, Index query, Index other, Score score) {
    const double* q = table.row(query).data();
    const double* r = table.row(other).data();
    const double dot = dot_in_documented_order(q, r, table.cols());
    if (score == Score::dot) return dot;
    const double norm_query = std::sqrt(dot_in_documented_order(q, q, table.cols()));
    const double norm_other = std::sqrt(dot_in_documented_order(r, r, table.cols()));
    if (norm_query == 0.0 || norm_other == 0.0) return 0.0;
    return dot / (norm_query * norm_other);
}

// The min(k, V - 1) best other rows: every score by a loop, then a full sort.
std::vector<Neighbour> rank_by_loop(const Table& table, Index query, Index k, Score score) {
    std::vector<Neighbour> all;
    for (Index t = 0; t < table.rows(); ++t) {
        if (t != query) all.push_back({t, score_by_loop(table, query, t, score)});
    }
    std::sort(all.begin(), all.end(), embed_test::ranks_before);
    all.resize(static_cast<std::size_t>(std::min<Index>(k, table.rows() - 1)));
    return all;
}

// Ids and scores equal; NaN matches NaN (a reference may produce another NaN's bits).
testing::AssertionResult same_ranking(const std::vector<Neighbour>& got, const std::vector<Neighbour>& want) {
    if (got.size() != want.size()) {
        return testing::AssertionFailure() << got.size() << " neighbours, want " << want.size();
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        const bool both_nan = std::isnan(got[i].score) && std::isnan(want[i].score);
        if (got[i].id != want[i].id || !(both_nan || got[i].score == want[i].score)) {
            return testing::AssertionFailure() << "place " << i << ": got " << got[i].id << " (" << got[i].score
                                               << "), want " << want[i].id << " (" << want[i].score << ")";
        }
    }
    return testing::AssertionSuccess();
}

// Every id backwards, then the special rows and the query's copies once more.
std::vector<Index> every_id_and_the_special_rows_again() {
    std::vector<Index> ids;
    for (Index t = kVocab - 1; t >= 0; --t) ids.push_back(t);
    for (const Index t : {kQuery, kSomeNaN, kAllNaN, kPlusInf, kMinusInf, kZero}) ids.push_back(t);
    for (const Index t : copies_of_the_query()) ids.push_back(t);
    return ids;
}

// table is (V, d), ids is (n), returns (n, d): row i = table row ids[i] times factor, entry by entry.
Table gather_by_loop(const Table& table, const std::vector<Index>& ids, double factor) {
    Table rows(static_cast<Index>(ids.size()), table.cols());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        for (Index c = 0; c < table.cols(); ++c) rows(static_cast<Index>(i), c) = table(ids[i], c) * factor;
    }
    return rows;
}

// A hidden vector (d) with both signs and no zeros, so every infinite entry gives an infinite score.
Vector some_hidden() {
    Vector hidden(kDim);
    for (Index c = 0; c < kDim; ++c) hidden[c] = 0.40625 - 0.0625 * static_cast<double>(c % 11);
    return hidden;
}

// ---- the tests ----

TEST(ThreadedPaths, TheTableHasItsSpecialRowsWhereTheTestsExpectThem) {
    std::vector<Index> special{kQuery, kSomeNaN, kAllNaN, kPlusInf, kMinusInf, kZero};
    for (const Index copy : copies_of_the_query()) special.push_back(copy);
    std::sort(special.begin(), special.end());
    EXPECT_EQ(std::adjacent_find(special.begin(), special.end()), special.end()) << "two special rows share an id";
    // Both sides of each first boundary hold a copy, so a tie straddles the pieces at 2 and 7 threads.
    for (const int threads : {2, 7}) {
        const Index boundary = first_piece_boundary(threads);
        EXPECT_GT(boundary, 1) << threads;
        EXPECT_LT(boundary, kVocab) << threads;
    }
}

TEST(ThreadedPaths, LogitsAreTheSameBitsAtEveryThreadCount) {
    const Table& table = test_table();
    const Vector hidden = some_hidden();
    const auto results = at_each_thread_count(fixed(kVocab, kDim), [&] {
        Vector into = Vector::Constant(kVocab, -7.0);
        embed::logits_into(table, hidden, into);
        const Vector scores = embed::logits(table, hidden);
        EXPECT_TRUE(same_bits(into, scores)) << "logits_into and logits";
        return scores;
    });
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    Vector want(kVocab);
    for (Index t = 0; t < kVocab; ++t) want[t] = dot_in_documented_order(table.row(t).data(), hidden.data(), kDim);
    EXPECT_TRUE(AllClose(results[0], want, 0.0));
    EXPECT_TRUE(std::isnan(results[0][kAllNaN]));
    EXPECT_TRUE(std::isinf(results[0][kPlusInf]));
}

TEST(ThreadedPaths, BatchedLogitsAreTheSameBitsAtEveryThreadCount) {
    const Table& table = test_table();
    // Enough hidden rows for an (n, V) result past the prefault size; row 2 holds an infinity.
    const Index n = kPrefaultBytes / (kVocab * Index{sizeof(double)}) + 1;
    Table hidden_rows = embed::make_table(n, kDim, 32);
    hidden_rows(2, 9) = kInf;
    const auto results =
        at_each_thread_count(fixed(kVocab, n * kDim), [&] { return embed::logits(table, hidden_rows); });
    ASSERT_GE(results[0].size() * Index{sizeof(double)}, kPrefaultBytes);
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    // Each hidden row against the special rows, both sides of every piece boundary, and every 97th row.
    std::vector<Index> tokens{kQuery, kSomeNaN, kAllNaN, kPlusInf, kMinusInf, kZero};
    for (const Index copy : copies_of_the_query()) tokens.push_back(copy);
    for (Index t = 0; t < kVocab; t += 97) tokens.push_back(t);
    for (Index i = 0; i < n; ++i) {
        for (const Index t : tokens) {
            const double want = dot_in_documented_order(hidden_rows.row(i).data(), table.row(t).data(), kDim);
            const double got = results[0](i, t);
            ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
                << "hidden row " << i << ", token " << t << ": got " << got << ", want " << want;
        }
    }
}

// A table small enough to stay in the cores' caches: batched logits splits the hidden rows between the
// threads instead (lib/logits.cpp), in groups of kHiddenRowsPerGroup, the last one short here.
TEST(ThreadedPaths, BatchedLogitsOnACachedTableAreTheSameBitsAtEveryThreadCount) {
    using embed::detail::kHiddenRowsPerGroup;
    constexpr Index kSmallVocab = embed::detail::kCachedTableBytes / (kDim * Index{sizeof(double)});
    constexpr Index kGroups = 8;  // more than the most threads here, so each count is used in full
    constexpr Index n = kHiddenRowsPerGroup * (kGroups - 1) + 3;
    Table table = embed::make_table(kSmallVocab, kDim, 41);
    table(7, 3) = kNaN;
    table(kSmallVocab - 1, 0) = -kInf;
    table.row(kSmallVocab / 2).setZero();
    Table hidden_rows = embed::make_table(n, kDim, 42);
    hidden_rows(kHiddenRowsPerGroup, 9) = kInf;  // the first row of the second group
    const auto results = at_each_thread_count(fixed(kGroups, kHiddenRowsPerGroup * kSmallVocab * kDim),
                                              [&] { return embed::logits(table, hidden_rows); });
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    for (Index i = 0; i < n; ++i) {
        for (Index t = 0; t < kSmallVocab; ++t) {
            const double want = dot_in_documented_order(hidden_rows.row(i).data(), table.row(t).data(), kDim);
            const double got = results[0](i, t);
            ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
                << "hidden row " << i << ", token " << t << ": got " << got << ", want " << want;
        }
    }
}

// The multi-piece merge of rank_neighbours: ties across pieces by id, NaN last, everything at k = V - 1.
class ThreadedRanking : public testing::TestWithParam<Score> {};

TEST_P(ThreadedRanking, IsTheSameAtEveryThreadCountAndMatchesALoop) {
    const Table& table = test_table();
    const Score score = GetParam();
    // The query with its copies (k = 40 holds every copy), everything (k = V - 1: NaN last by id), a
    // query whose every score is NaN, one with an infinite entry, and the last row.
    for (const auto& query_and_k : {std::pair<Index, Index>{kQuery, 40}, {kQuery, kVocab - 1}, {kAllNaN, 30},
                                    {kMinusInf, 25}, {kVocab - 1, 12}}) {
        const Index query = query_and_k.first;
        const Index k = query_and_k.second;
        const auto results =
            at_each_thread_count(ranking_loop, [&] { return embed::rank_neighbours(table, query, k, score); });
        for (std::size_t i = 1; i < results.size(); ++i) {
            EXPECT_TRUE(same_bits(results[i], results[0]))
                << kThreadCounts[i] << " threads against 1, query " << query << ", k " << k;
        }
        EXPECT_TRUE(same_ranking(results[0], rank_by_loop(table, query, k, score))) << "query " << query << ", k " << k;
        // The ids nearest_by_* return are the ranking's.
        for (const int threads : kThreadCounts) {
            set_worker_count(threads);
            const std::vector<Index> ids = score == Score::dot ? embed::nearest_by_dot(table, query, k)
                                                               : embed::nearest_by_cosine(table, query, k);
            ASSERT_EQ(ids.size(), results[0].size());
            for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], results[0][i].id) << threads << " threads";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Scores, ThreadedRanking, testing::Values(Score::cosine, Score::dot),
                         [](const testing::TestParamInfo<Score>& param) {
                             return param.param == Score::cosine ? "Cosine" : "Dot";
                         });

TEST(ThreadedPaths, LookupIsTheSameBitsAtEveryThreadCount) {
    const Table& table = test_table();
    const std::vector<Index> ids = every_id_and_the_special_rows_again();
    const auto n = static_cast<Index>(ids.size());
    const auto results = at_each_thread_count(fixed(n, kDim), [&] {
        Table into = Table::Constant(n, kDim, -7.0);
        embed::lookup_into(table, ids, into);
        Table rows = embed::lookup(table, ids);
        EXPECT_TRUE(same_bits(into, rows)) << "lookup_into and lookup";
        return rows;
    });
    ASSERT_GE(results[0].size() * Index{sizeof(double)}, kPrefaultBytes);
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    // A copy moves the bits unchanged, NaN included.
    EXPECT_TRUE(same_bits(results[0], gather_by_loop(table, ids, 1.0)));
}

TEST(ThreadedPaths, ScaledLookupIsTheSameBitsAtEveryThreadCount) {
    const Table& table = test_table();
    const std::vector<Index> ids = every_id_and_the_special_rows_again();
    const Index dim = 768;  // sqrt(768) is not exact: the scaled branch, not the copy
    const auto results = at_each_thread_count(fixed(static_cast<Index>(ids.size()), kDim),
                                              [&] { return embed::scaled_lookup(table, ids, dim); });
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    EXPECT_TRUE(AllClose(results[0], gather_by_loop(table, ids, std::sqrt(768.0)), 0.0));
}

// stretch copies the table into fresh pages, its rows split between the threads, then scales one row.
TEST(ThreadedPaths, StretchIsTheSameBitsAtEveryThreadCount) {
    const Table& table = test_table();
    const Table before = table;
    const auto results = at_each_thread_count(fixed(kVocab, kDim), [&] { return embed::stretch(table, kQuery, -2.5); });
    ASSERT_GE(results[0].size() * Index{sizeof(double)}, kPrefaultBytes);
    for (std::size_t i = 1; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], results[0])) << kThreadCounts[i] << " threads against 1";
    }
    // Every row as it was, NaN and infinities included, and the one row times the factor.
    Table want(kVocab, kDim);
    for (Index r = 0; r < kVocab; ++r) {
        for (Index c = 0; c < kDim; ++c) want(r, c) = r == kQuery ? table(r, c) * -2.5 : table(r, c);
    }
    EXPECT_TRUE(same_bits(results[0], want));
    EXPECT_TRUE(same_bits(table, before)) << "the argument must not change";
}

// make_table's threaded part is mapping the pages before the (sequential) generator fills them: every
// thread count gives the bits CPython's generator gives, entry (r, c) being the (r * d + c)-th
// random.Random(33).random() minus 0.5, one call at a time.
TEST(ThreadedPaths, MakeTableIsCPythonsRandomAtEveryThreadCount) {
    EMBED_REQUIRE_PYTHON();
    const std::vector<double> values = embed_test::parse_hex_doubles(embed_test::run_python(
        "import random\nr = random.Random(33)\nprint(\" \".join((r.random() - 0.5).hex() for _ in range(" +
        std::to_string(kVocab * kDim) + ")))"));
    ASSERT_EQ(static_cast<Index>(values.size()), kVocab * kDim);
    Table want(kVocab, kDim);
    for (Index r = 0; r < kVocab; ++r) {
        for (Index c = 0; c < kDim; ++c) want(r, c) = values[static_cast<std::size_t>(r * kDim + c)];
    }
    const Index page = page_bytes();
    const auto results = at_each_thread_count(fixed(kVocab * kDim * Index{sizeof(double)} / page, page),
                                              [] { return embed::make_table(kVocab, kDim, 33); });
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], want)) << kThreadCounts[i] << " threads against CPython";
    }
}

#if defined(__linux__)
// A caller's block whose rows are a page apart, in a fresh mapping where every page but the block's
// first already holds data between the rows: the prefault maps the untouched pages and must leave the
// written ones as they are; the gather writes the block and nothing else.
TEST(ThreadedPaths, LookupIntoAStridedBlockKeepsWhatLiesBetweenItsRows) {
    const Table& table = test_table();
    const Index page = page_bytes();
    const Index stride = page / Index{sizeof(double)};
    ASSERT_GT(stride, kDim);
    // Enough ids for 8 pieces of work at the threshold, and a block far past the prefault size.
    const Index n = kMinWorkPerPiece * 8 / kDim + 3;
    ASSERT_GE(n * page, kPrefaultBytes);
    std::vector<Index> ids(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = (i * 7919) % kVocab;
    const Table want = gather_by_loop(table, ids, 1.0);
    constexpr double kBetween = -7.0;
    using Block = Eigen::Map<Table, Eigen::Unaligned, Eigen::OuterStride<>>;
    const auto results = at_each_thread_count(fixed(n, kDim), [&] {
        const auto bytes = static_cast<std::size_t>(n * page);
        void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(memory, MAP_FAILED);
        if (memory == MAP_FAILED) return Table();
        auto* values = static_cast<double*>(memory);
        for (Index r = 1; r < n; ++r) std::fill(values + r * stride + kDim, values + (r + 1) * stride, kBetween);
        Block block(values, n, kDim, Eigen::OuterStride<>(stride));
        embed::lookup_into(table, ids, block);
        Table copy = block;
        for (Index r = 0; r < n; ++r) {
            const double expected = r == 0 ? 0.0 : kBetween;  // row 0's page was fresh: zeros
            const double* gap = values + r * stride + kDim;
            const double* gap_end = values + (r + 1) * stride;
            const auto kept = std::all_of(gap, gap_end, [&](double v) { return v == expected; });
            EXPECT_TRUE(kept) << "the values between rows " << r << " and " << r + 1 << " changed";
            if (!kept) break;
        }
        munmap(memory, bytes);
        return copy;
    });
    for (std::size_t i = 0; i < results.size(); ++i) {
        EXPECT_TRUE(same_bits(results[i], want)) << kThreadCounts[i] << " threads against the loop";
    }
}
#endif

}  // namespace
