#pragma once
// Splitting a loop over rows between the machine's cores. Work is cut into
// contiguous chunks, one per thread, and every row is computed by the same
// code whichever thread runs it, so results never depend on the thread count.
// The helper threads are started once and reused: a call allocates nothing
// and pays a wake-up, not a thread start.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "embed/types.hpp"

namespace embed::detail {

/// Threads worth using: the cores this process may run on, overridable by EMBED_NUM_THREADS.
int worker_count();

/// A chunk of work: body(context, begin, end) over rows [begin, end). It must not throw.
using ChunkFunction = void (*)(void* context, Index begin, Index end);

/// Runs body over `threads` contiguous chunks of [0, n) at once, the caller taking the first; if the
/// helpers are busy with another caller's loop, the caller runs every chunk itself.
void run_chunks(Index n, Index threads, ChunkFunction body, void* context);

/// Maps the pages of a fresh, not yet written buffer before it is filled, both cores at once, with
/// madvise(MADV_POPULATE_WRITE); contents already there are left as they are. Does nothing where
/// that is not supported or the buffer is small.
void prefault_for_writing(void* data, std::size_t bytes);

/// Calls body(begin, end) on contiguous chunks covering [0, n), in parallel once n * cost_per_item
/// passes a threshold (a wake-up costs microseconds). body must not throw.
template <class Body>
void parallel_for(Index n, Index cost_per_item, Body&& body) {
    constexpr Index kMinWorkPerThread = Index{1} << 16;  // tens of microseconds of streaming
    const Index work = n * std::max<Index>(cost_per_item, 1);
    const Index threads = std::min<Index>({worker_count(), std::max<Index>(work / kMinWorkPerThread, 1), n});
    if (threads <= 1) {
        body(Index{0}, n);
        return;
    }
    using BodyType = std::remove_reference_t<Body>;
    run_chunks(n, threads, [](void* context, Index begin, Index end) { (*static_cast<BodyType*>(context))(begin, end); },
               const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace embed::detail
