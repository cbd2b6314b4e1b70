// Several threads of a program calling the library at once on one table: one
// of them gets the pool, the others do their loops alone, and every caller
// gets the bits a lone caller gets. The ThreadSanitizer build runs this too.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "embed/embed.hpp"
#include "threads/parallel.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::Vector;

constexpr int kCallers = 6;
constexpr int kThreads = 3;  // a pool on any machine, one core included
constexpr int kCallsEach = 4;

bool same_bits(const Vector& a, const Vector& b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// Rows enough that every call is split between the pool's threads.
Table splittable_table() {
    const Index dim = 48;
    const Index rows = 4 * embed::detail::kMinWorkPerPiece * kThreads / dim + 5;
    return embed::make_table(rows, dim, 99);
}

TEST(ConcurrentCallers, EveryCallerGetsTheBitsOfALoneCaller) {
    embed::detail::set_worker_count(kThreads);
    const Table table = splittable_table();
    ASSERT_GT(embed::detail::piece_count(table.rows(), table.cols()), 1)
        << "the table must be large enough for its rows to be split";
    std::vector<Vector> hidden;
    std::vector<Vector> alone_logits;
    std::vector<std::vector<Index>> alone_neighbours;
    for (int caller = 0; caller < kCallers; ++caller) {
        hidden.push_back(table.row(3 * caller + 1).transpose());
        alone_logits.push_back(embed::logits(table, hidden.back()));
        alone_neighbours.push_back(embed::nearest_by_cosine(table, 3 * caller + 1, 20));
    }

    std::vector<int> mismatches(kCallers, 0);
    std::vector<std::thread> callers;
    for (int caller = 0; caller < kCallers; ++caller) {
        callers.emplace_back([&, caller] {
            const auto slot = static_cast<std::size_t>(caller);
            for (int call = 0; call < kCallsEach; ++call) {
                if (!same_bits(embed::logits(table, hidden[slot]), alone_logits[slot])) ++mismatches[slot];
                if (embed::nearest_by_cosine(table, 3 * caller + 1, 20) != alone_neighbours[slot]) ++mismatches[slot];
            }
        });
    }
    for (std::thread& caller : callers) caller.join();
    for (int caller = 0; caller < kCallers; ++caller) {
        EXPECT_EQ(mismatches[static_cast<std::size_t>(caller)], 0) << "caller " << caller;
    }
}

}  // namespace
