#pragma once
// Tests that run one computation at several thread counts set the pool's worker count for a scope and put
// the previous count back after, so no test leaves its count to the next. Links embed::internal.

#include "threads/parallel.hpp"

namespace embed_test {

/// Sets the worker count for one scope (1, 2, 7 ...) and restores the previous count after.
class WorkerCount {
public:
    explicit WorkerCount(int threads) : previous_(embed::detail::worker_count()) {
        embed::detail::set_worker_count(threads);
    }
    ~WorkerCount() { embed::detail::set_worker_count(previous_); }
    WorkerCount(const WorkerCount&) = delete;
    WorkerCount& operator=(const WorkerCount&) = delete;

private:
    int previous_;
};

}  // namespace embed_test
