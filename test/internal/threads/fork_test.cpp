// A process that forks after the library has split work between threads:
// the child has none of the parent's helper threads, and must still finish
// every threaded call with the parent's bits (Python's multiprocessing forks
// like this by default on Linux). A regression would hang, so the child runs
// under a deadline and the test fails when it passes.
#include <gtest/gtest.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <ostream>
#include <thread>
#include <vector>

#include "embed/embed.hpp"
#include "threads/parallel.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::Vector;

// Enough helper threads that the pool exists on any machine, one core included.
constexpr int kThreads = 3;
constexpr auto kDeadline = std::chrono::seconds(60);

// A table whose row loops are split between kThreads threads: its row count comes from the
// splitting threshold itself, not from a shape picked by hand.
Table splittable_table() {
    const Index dim = 64;
    const Index rows = 4 * embed::detail::kMinWorkPerPiece * kThreads / dim + 3;
    return embed::make_table(rows, dim, 7);
}

bool same_bits(const Eigen::Ref<const Eigen::MatrixXd>& a, const Eigen::Ref<const Eigen::MatrixXd>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Index r = 0; r < a.rows(); ++r) {
        for (Index c = 0; c < a.cols(); ++c) {
            const double x = a(r, c);
            const double y = b(r, c);
            if (std::memcmp(&x, &y, sizeof(double)) != 0) return false;
        }
    }
    return true;
}

enum class ChildOutcome { same_bits, different_bits, hung, crashed };

std::ostream& operator<<(std::ostream& out, ChildOutcome outcome) {
    constexpr const char* kNames[] = {"same bits", "different bits", "hung", "crashed"};
    return out << kNames[static_cast<int>(outcome)];
}

// Forks; the child runs `same_as_parent` and exits 0 when it returns true. The parent waits
// at most kDeadline, then kills the child and reports it as hung.
ChildOutcome outcome_in_forked_child(const std::function<bool()>& same_as_parent) {
    const pid_t child = fork();
    if (child == 0) {
        alarm(static_cast<unsigned>(kDeadline.count()) + 5);  // a backstop should the parent die first
        _exit(same_as_parent() ? 0 : 1);
    }
    if (child < 0) return ChildOutcome::crashed;
    const auto give_up = std::chrono::steady_clock::now() + kDeadline;
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > give_up) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            return ChildOutcome::hung;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!WIFEXITED(status)) return ChildOutcome::crashed;
    return WEXITSTATUS(status) == 0 ? ChildOutcome::same_bits : ChildOutcome::different_bits;
}

class AfterFork : public ::testing::Test {
protected:
    void SetUp() override {
        embed::detail::set_worker_count(kThreads);
        ASSERT_GT(embed::detail::piece_count(table_.rows(), table_.cols()), 1)
            << "the table must be large enough for its rows to be split between threads";
        // Parallel work in the parent first, so the pool's helpers are running when it forks.
        parent_logits_ = embed::logits(table_, hidden_);
    }

    const Table table_ = splittable_table();
    const Vector hidden_ = table_.row(11).transpose();
    Vector parent_logits_;
};

TEST_F(AfterFork, ChildComputesLogitsWithTheParentsBits) {
    EXPECT_EQ(outcome_in_forked_child([&] { return same_bits(embed::logits(table_, hidden_), parent_logits_); }),
              ChildOutcome::same_bits);
}

TEST_F(AfterFork, ChildComputesBatchedLogitsWithTheParentsBits) {
    const Table hidden_rows = embed::lookup(table_, std::vector<Index>{3, 5, 8});
    const Table parent = embed::logits(table_, hidden_rows);
    EXPECT_EQ(outcome_in_forked_child([&] { return same_bits(embed::logits(table_, hidden_rows), parent); }),
              ChildOutcome::same_bits);
}

TEST_F(AfterFork, ChildRanksNeighboursAsTheParentDoes) {
    const std::vector<Index> by_dot = embed::nearest_by_dot(table_, 11, 50);
    const std::vector<Index> by_cosine = embed::nearest_by_cosine(table_, 11, 50);
    EXPECT_EQ(outcome_in_forked_child([&] {
                  return embed::nearest_by_dot(table_, 11, 50) == by_dot &&
                         embed::nearest_by_cosine(table_, 11, 50) == by_cosine;
              }),
              ChildOutcome::same_bits);
}

TEST_F(AfterFork, ChildGathersRowsAsTheParentDoes) {
    std::vector<Index> ids;
    for (Index i = 0; i < table_.rows(); i += 3) ids.push_back((i * 7919) % table_.rows());
    const Table rows = embed::lookup(table_, ids);
    const Table scaled = embed::scaled_lookup(table_, ids, table_.cols());
    EXPECT_EQ(outcome_in_forked_child([&] {
                  Table into(static_cast<Index>(ids.size()), table_.cols());
                  embed::lookup_into(table_, ids, into);
                  return same_bits(embed::lookup(table_, ids), rows) && same_bits(into, rows) &&
                         same_bits(embed::scaled_lookup(table_, ids, table_.cols()), scaled);
              }),
              ChildOutcome::same_bits);
}

TEST_F(AfterFork, ChildMakesTheParentsTable) {
    EXPECT_EQ(outcome_in_forked_child([&] { return same_bits(splittable_table(), table_); }),
              ChildOutcome::same_bits);
}

// A grandchild forks from a child that has already rebuilt its pool.
TEST_F(AfterFork, GrandchildStillComputesTheParentsBits) {
    EXPECT_EQ(outcome_in_forked_child([&] {
                  if (!same_bits(embed::logits(table_, hidden_), parent_logits_)) return false;
                  return outcome_in_forked_child([&] {
                             return same_bits(embed::logits(table_, hidden_), parent_logits_);
                         }) == ChildOutcome::same_bits;
              }),
              ChildOutcome::same_bits);
}

}  // namespace
