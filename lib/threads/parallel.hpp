#pragma once
// Splitting a loop over rows between the machine's cores. Work is cut into
// contiguous pieces, a few per thread, which the threads claim (their own
// share first, then what the others have not started), and
// every row is computed by the same code whichever thread runs it, so results
// never depend on the thread count or on which thread was faster.
// The helper threads are started once and reused: a call allocates nothing
// and pays a wake-up, not a thread start.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "embed/types.hpp"

namespace embed::detail {

/// Most threads a loop is split between, whatever EMBED_NUM_THREADS or set_worker_count ask for.
inline constexpr int kMaxWorkers = 256;

/// Threads worth using: the cores this process may run on, overridable by EMBED_NUM_THREADS.
int worker_count();

/// Uses `threads` threads (clamped to [1, kMaxWorkers]) from now on, whatever the cores; for tests
/// that compare thread counts. Not while another thread is inside a library call.
void set_worker_count(int threads);

/// A chunk of work: body(context, begin, end) over rows [begin, end). It must not throw.
using ChunkFunction = void (*)(void* context, Index begin, Index end);

/// Runs body over `pieces` contiguous chunks of [0, n), each once, on up to `threads` threads (the
/// caller among them): each claims the chunks of its own contiguous share first, then those the others
/// have not started; if the helpers are busy with another caller's loop, the caller runs all of [0, n).
void run_chunks(Index n, Index threads, Index pieces, ChunkFunction body, void* context);

/// Maps the pages of a fresh, not yet written buffer before it is filled, both cores at once, with
/// madvise(MADV_POPULATE_WRITE); contents already there are left as they are. Does nothing where
/// that is not supported or the buffer is small.
void prefault_for_writing(void* data, std::size_t bytes);

/// A fresh (rows, cols) table, contents unset, its pages mapped up front by prefault_for_writing: huge
/// pages where it is large, so every later pass reads it at full speed (in 4 KiB pages the TLB misses
/// hold a streaming pass well below what memory gives).
template <class Scalar>
BasicTable<Scalar> mapped_table(Index rows, Index cols) {
    BasicTable<Scalar> table(rows, cols);
    prefault_for_writing(table.data(), static_cast<std::size_t>(table.size()) * sizeof(Scalar));
    return table;
}

/// n / d rounded up, without the overflow of (n + d - 1) / d for n near 2^63; d > 0.
inline Index ceil_div(Index n, Index d) { return n / d + (n % d != 0 ? 1 : 0); }

/// Pieces a thread's share is cut into: enough for a fast core to take over from a slow one, few
/// enough that each piece stays one long sequential stream.
inline constexpr Index kPiecesPerThread = 8;

/// Work (items times cost) below which one more thread or piece does not pay: this much streaming
/// takes several times what a wake-up and a claim cost.
inline constexpr Index kMinWorkPerPiece = Index{1} << 16;

/// Threads parallel_for uses for n items of cost_per_item each: 1 means it runs on the caller alone.
inline Index thread_count(Index n, Index cost_per_item) {
    const Index work = n * std::max<Index>(cost_per_item, 1);
    return std::max<Index>(std::min<Index>({worker_count(), work / kMinWorkPerPiece, n}), 1);
}

/// Chunks parallel_for cuts n items of cost_per_item each into (1 when it runs on the caller alone).
inline Index piece_count(Index n, Index cost_per_item) {
    const Index threads = thread_count(n, cost_per_item);
    if (threads <= 1) return 1;
    const Index work = n * std::max<Index>(cost_per_item, 1);
    return std::min<Index>({threads * kPiecesPerThread, work / kMinWorkPerPiece, n});
}

/// Calls body(begin, end) on contiguous chunks covering [0, n), in parallel once n * cost_per_item
/// passes a threshold. Each item is in exactly one chunk; body must not throw.
template <class Body>
void parallel_for(Index n, Index cost_per_item, Body&& body) {
    const Index threads = thread_count(n, cost_per_item);
    if (threads <= 1) {
        body(Index{0}, n);
        return;
    }
    using BodyType = std::remove_reference_t<Body>;
    run_chunks(
        n, threads, piece_count(n, cost_per_item),
        [](void* context, Index begin, Index end) { (*static_cast<BodyType*>(context))(begin, end); },
        const_cast<void*>(static_cast<const void*>(&body)));
}

/// parallel_for over whole blocks of `block` items (the last one may be short): body(begin, end) gets item
/// ranges that start and end on block boundaries, or at n.
template <class Body>
void parallel_for_blocks(Index n, Index block, Index cost_per_item, Body&& body) {
    parallel_for(ceil_div(n, block), block * cost_per_item, [&](Index first, Index last) {
        body(first * block, std::min(last * block, n));
    });
}

/// The contiguous pieces a loop over n items is cut into, fixed before any thread runs: piece p holds
/// items [begin(p), end(p)). For loops that keep one partial result per piece and merge the pieces'
/// results afterwards, so that the merge sees the same pieces whichever thread ran which.
struct Pieces {
    Index n = 0;      // items in all
    Index count = 1;  // pieces, at least 1
    Index size = 0;   // items per piece; the last may hold fewer, trailing ones none
    Index begin(Index p) const { return std::min(n, p * size); }
    Index end(Index p) const { return std::min(n, begin(p) + size); }
};

/// The pieces parallel_for would cut n items of cost_per_item each into.
inline Pieces pieces_of(Index n, Index cost_per_item) {
    const Index count = piece_count(n, cost_per_item);
    return Pieces{n, count, ceil_div(n, count)};
}

/// Calls body(p, begin, end) once for every piece p of pieces, in parallel as parallel_for would; body
/// must not throw.
template <class Body>
void parallel_for_pieces(const Pieces& pieces, Index cost_per_item, Body&& body) {
    parallel_for(pieces.count, pieces.size * cost_per_item, [&](Index first, Index last) {
        for (Index p = first; p < last; ++p) body(p, pieces.begin(p), pieces.end(p));
    });
}

/// A double table of at most this many bytes stays in every core's cache: batched logits then splits its
/// hidden rows between the cores instead of the table's rows, so no core waits on memory.
inline constexpr Index kCachedTableBytes = Index{256} << 10;

/// Hidden rows per piece of that split: one register block of the GEMM's rows (kARows in
/// kernels/packed_gemm.hpp). Larger pieces ran slower with both cores busy than with one.
inline constexpr Index kHiddenRowsPerGroup = 4;

}  // namespace embed::detail
