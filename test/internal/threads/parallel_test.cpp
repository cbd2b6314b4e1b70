// The loop splitter every row loop runs on: each item exactly once, in
// contiguous chunks, and a slow thread's share taken over by a fast one.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "threads/parallel.hpp"

namespace {

using embed::Index;
using embed::detail::parallel_for;
using embed::detail::piece_count;
using embed::detail::set_worker_count;
using embed::detail::thread_count;
using embed::detail::worker_count;

// Runs parallel_for over n items and counts, item by item, how often the body saw it.
std::vector<int> visits_per_item(Index n, Index cost_per_item) {
    std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
    parallel_for(n, cost_per_item, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) visits[static_cast<std::size_t>(i)].fetch_add(1);
    });
    std::vector<int> counts;
    for (const auto& v : visits) counts.push_back(v.load());
    return counts;
}

TEST(ParallelFor, EveryItemRunsExactlyOnce) {
    for (const Index n : {Index{1}, Index{2}, Index{7}, Index{1000}, Index{100003}}) {
        for (const Index cost : {Index{1}, Index{1} << 10, Index{1} << 20}) {
            const std::vector<int> counts = visits_per_item(n, cost);
            for (Index i = 0; i < n; ++i) {
                ASSERT_EQ(counts[static_cast<std::size_t>(i)], 1) << "item " << i << " of " << n << ", cost " << cost;
            }
        }
    }
}

TEST(ParallelFor, NoItemsMeansNoWork) {
    Index items_seen = 0;
    parallel_for(0, Index{1} << 20, [&](Index begin, Index end) { items_seen += end - begin; });
    EXPECT_EQ(items_seen, 0);
}

// The chunks parallel_for hands out for n items of cost_per_item each, in order of their start.
std::vector<std::pair<Index, Index>> chunks_of(Index n, Index cost_per_item) {
    std::mutex guard;
    std::vector<std::pair<Index, Index>> chunks;
    parallel_for(n, cost_per_item, [&](Index begin, Index end) {
        std::lock_guard<std::mutex> lock(guard);
        chunks.emplace_back(begin, end);
    });
    std::sort(chunks.begin(), chunks.end());
    return chunks;
}

// Whether sorted chunks tile [0, n): each starts where the last ended, none is empty, the last ends at n.
void expect_tiling(const std::vector<std::pair<Index, Index>>& chunks, Index n) {
    Index next = 0;
    for (const auto& [begin, end] : chunks) {
        EXPECT_EQ(begin, next);
        EXPECT_LT(begin, end);
        next = end;
    }
    EXPECT_EQ(next, n);
}

TEST(ParallelFor, ChunksAreContiguousAndCoverTheRangeWithoutOverlap) {
    const Index n = 50257;
    const auto chunks = chunks_of(n, 768);
    expect_tiling(chunks, n);
    EXPECT_EQ(static_cast<Index>(chunks.size()), piece_count(n, 768));
}

// A loop near 2^63 items (a loaded table may claim that many empty rows) is cut without overflow:
// the chunks still tile it exactly. The body only records the bounds.
TEST(ParallelFor, ChunksOfAHugeRangeCoverItExactly) {
    set_worker_count(3);
    const Index n = std::numeric_limits<Index>::max() - 5;
    const auto chunks = chunks_of(n, 1);
    ASSERT_GT(chunks.size(), 1U);
    expect_tiling(chunks, n);
}

TEST(ParallelFor, PiecesAreBetweenOneAndTheItemCount) {
    for (const Index n : {Index{1}, Index{3}, Index{16}, Index{4096}, Index{131072}}) {
        for (const Index cost : {Index{1}, Index{64}, Index{1024}, Index{1} << 16}) {
            const Index pieces = piece_count(n, cost);
            EXPECT_GE(pieces, 1) << n << " items of cost " << cost;
            EXPECT_LE(pieces, n) << n << " items of cost " << cost;
            EXPECT_LE(thread_count(n, cost), std::max<Index>(pieces, 1)) << n << " items of cost " << cost;
        }
    }
    // Tiny loops stay on the caller: a wake-up would cost more than the work.
    EXPECT_EQ(thread_count(4, 1), 1);
    EXPECT_EQ(piece_count(4, 1), 1);
}

// A helper that stalls on every piece it takes (as a core does when the host
// takes it away) must not hold up the rest: the caller claims the pieces left.
TEST(ParallelFor, AFastThreadTakesOverFromASlowOne) {
    const int workers_before = worker_count();
    set_worker_count(2);  // one helper beside the caller, whatever the machine
    const Index n = 16;
    const Index cost = Index{1} << 20;
    ASSERT_EQ(piece_count(n, cost), n) << "expected one item per piece for this test";
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<Index> by_caller{0};
    std::atomic<Index> by_helpers{0};
    std::atomic<bool> helper_started{false};
    parallel_for(n, cost, [&](Index begin, Index end) {
        if (std::this_thread::get_id() == caller) {
            // Without waiting, the caller often claimed all 16 pieces before the helper woke, and the
            // test passed with nothing taken over. The bound only keeps a pool whose helper never runs
            // from hanging the test; the assertions below then fail.
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!helper_started.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
            by_caller += end - begin;
        } else {
            helper_started = true;
            by_helpers += end - begin;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    set_worker_count(workers_before);
    EXPECT_EQ(by_caller + by_helpers, n);
    ASSERT_GE(by_helpers.load(), 1) << "the helper ran no piece, so there was nothing to take over";
    // With one fixed half per thread the helper would run 8 of the 16.
    EXPECT_GT(by_caller.load(), by_helpers.load());
}

// While the threads keep pace, each starts on its own contiguous share of the pieces (the caller on the
// first, the helper on the second half), so a loop repeated over the same data finds it in the same core's
// caches every call.
TEST(ParallelFor, EachThreadStartsOnItsOwnShare) {
    const int workers_before = worker_count();
    set_worker_count(2);
    const Index n = 16;
    const Index cost = Index{1} << 20;
    ASSERT_EQ(piece_count(n, cost), n) << "expected one item per piece for this test";
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<Index> caller_first{-1};
    std::atomic<Index> helper_first{-1};
    parallel_for(n, cost, [&](Index begin, Index) {
        const bool on_caller = std::this_thread::get_id() == caller;
        std::atomic<Index>& mine = on_caller ? caller_first : helper_first;
        const std::atomic<Index>& other = on_caller ? helper_first : caller_first;
        Index unset = -1;
        if (!mine.compare_exchange_strong(unset, begin)) return;
        // Each thread waits in its first piece until the other has claimed one, so that neither can take
        // over the other's share before the other starts. Bounded so that a thread that never runs fails
        // the test instead of hanging it.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (other.load() < 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    });
    set_worker_count(workers_before);
    EXPECT_EQ(caller_first.load(), 0);
    EXPECT_EQ(helper_first.load(), n / 2);
}

// The neighbour searches keep one partial result per piece: every piece must be visited exactly once, with
// the bounds pieces_of fixed beforehand, and the pieces must tile [0, n) in order.
TEST(ParallelForPieces, EveryPieceRunsOnceWithTheBoundsFixedBeforehand) {
    const int workers_before = worker_count();
    set_worker_count(2);
    for (const Index n : {Index{0}, Index{1}, Index{7}, Index{1000}, Index{100003}}) {
        for (const Index cost : {Index{1}, Index{1} << 10, Index{1} << 20}) {
            const embed::detail::Pieces pieces = embed::detail::pieces_of(n, cost);
            ASSERT_GE(pieces.count, 1);
            Index covered = 0;
            for (Index p = 0; p < pieces.count; ++p) {
                ASSERT_EQ(pieces.begin(p), covered) << "piece " << p << " of n = " << n << ", cost " << cost;
                ASSERT_GE(pieces.end(p), pieces.begin(p));
                covered = pieces.end(p);
            }
            ASSERT_EQ(covered, n) << "cost " << cost;
            std::vector<std::atomic<int>> visits(static_cast<std::size_t>(pieces.count));
            std::vector<Index> begins(static_cast<std::size_t>(pieces.count), -1);
            std::vector<Index> ends(static_cast<std::size_t>(pieces.count), -1);
            embed::detail::parallel_for_pieces(pieces, cost, [&](Index p, Index begin, Index end) {
                visits[static_cast<std::size_t>(p)].fetch_add(1);
                begins[static_cast<std::size_t>(p)] = begin;
                ends[static_cast<std::size_t>(p)] = end;
            });
            for (Index p = 0; p < pieces.count; ++p) {
                const auto i = static_cast<std::size_t>(p);
                ASSERT_EQ(visits[i].load(), 1) << "piece " << p << " of n = " << n << ", cost " << cost;
                ASSERT_EQ(begins[i], pieces.begin(p));
                ASSERT_EQ(ends[i], pieces.end(p));
            }
        }
    }
    set_worker_count(workers_before);
}

}  // namespace
