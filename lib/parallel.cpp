#include "parallel.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace embed::detail {
namespace {

int detect_workers() {
    if (const char* env = std::getenv("EMBED_NUM_THREADS")) {
        const long requested = std::strtol(env, nullptr, 10);
        if (requested >= 1) return static_cast<int>(std::min(requested, 256L));
    }
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(CPU_COUNT(&set), 1);
#endif
    return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1U));
}

// Helper threads that sleep until a loop is posted. One loop runs at a time;
// a second caller arriving meanwhile does its own work alone.
//
// A loop is cut into more pieces than threads, and each thread claims the
// next unclaimed piece until none is left. On a shared virtual machine one
// core can run at half speed for a while (measured here: in a 1 GiB batched
// logits with one half per core, the caller finished its half in 147 ms and
// then waited up to 110 ms for the other); with claimed pieces the faster
// core takes over what the slower one has not started.
class Pool {
public:
    explicit Pool(int helpers) {
        for (int h = 0; h < helpers; ++h) {
            try {
                std::thread([this, h] { serve(h + 1); }).detach();
                ++helpers_;
            } catch (...) {
                break;  // fewer helpers than cores; run_chunks copes with any number
            }
        }
    }

    void run(Index n, Index threads, Index pieces, ChunkFunction body, void* context) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        threads = std::min<Index>(threads, helpers_ + 1);
        if (!busy.owns_lock() || threads <= 1 || pieces <= 1) {
            body(context, 0, n);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            body_ = body;
            context_ = context;
            n_ = n;
            piece_ = (n + pieces - 1) / pieces;
            pieces_ = (n + piece_ - 1) / piece_;
            next_piece_.store(0, std::memory_order_relaxed);
            threads_ = threads;
            pending_ = threads - 1;
            ++generation_;
        }
        wake_.notify_all();
        take_pieces(body, context, n, piece_, pieces_);
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return pending_ == 0; });
    }

private:
    // Runs unclaimed pieces until there are none; every piece runs exactly once.
    void take_pieces(ChunkFunction body, void* context, Index n, Index piece, Index pieces) {
        for (;;) {
            const Index claimed = next_piece_.fetch_add(1, std::memory_order_relaxed);
            if (claimed >= pieces) return;
            const Index begin = claimed * piece;
            body(context, begin, std::min(n, begin + piece));
        }
    }

    void serve(Index slot) {
        unsigned long seen = 0;
        for (;;) {
            ChunkFunction body = nullptr;
            void* context = nullptr;
            Index n = 0;
            Index piece = 0;
            Index pieces = 0;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (slot >= threads_) continue;
                body = body_;
                context = context_;
                n = n_;
                piece = piece_;
                pieces = pieces_;
            }
            take_pieces(body, context, n, piece, pieces);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                --pending_;
            }
            done_.notify_one();
        }
    }

    std::mutex busy_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    ChunkFunction body_ = nullptr;
    void* context_ = nullptr;
    Index n_ = 0;
    Index piece_ = 0;
    Index pieces_ = 0;
    std::atomic<Index> next_piece_{0};
    Index threads_ = 0;
    Index pending_ = 0;
    unsigned long generation_ = 0;
    Index helpers_ = 0;
};

}  // namespace

int worker_count() {
    static const int workers = detect_workers();
    return workers;
}

void run_chunks(Index n, Index threads, Index pieces, ChunkFunction body, void* context) {
    // Started on first use and never stopped: the helpers sleep on a condition
    // variable between loops, and the process may exit while they sleep.
    static Pool* const pool = new Pool(worker_count() - 1);
    pool->run(n, threads, pieces, body, context);
}

void prefault_for_writing(void* data, std::size_t bytes) {
#if defined(__linux__)
    // A first write to each 4 KiB page costs a fault; on virtual machines a
    // fault can cost more than filling the page. One madvise per chunk maps
    // them all at a fraction of that (Linux >= 5.14; older kernels say EINVAL
    // and the pages fault in as usual).
    // Like numpy, large buffers also ask for transparent huge pages: 512 times fewer faults.
    constexpr std::size_t kMinBytes = std::size_t{4} << 20;
    constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, absent from older headers
    if (bytes < kMinBytes) return;
    constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t huge_first = (address + kHugePage - 1) / kHugePage * kHugePage;
    const std::uintptr_t huge_last = (address + bytes) / kHugePage * kHugePage;
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::uintptr_t first = (address + page - 1) / page * page;
    const std::uintptr_t last = (address + bytes) / page * page;
    if (last <= first) return;
    // Memory malloc hands back from its own heap is already mapped: leave it.
    unsigned char resident = 0;
    if (mincore(reinterpret_cast<void*>(first), page, &resident) == 0 && (resident & 1U) != 0) return;
    if (huge_last > huge_first) {
        madvise(reinterpret_cast<void*>(huge_first), huge_last - huge_first, MADV_HUGEPAGE);
    }
    const auto pages = static_cast<Index>((last - first) / page);
    parallel_for(pages, static_cast<Index>(page), [&](Index begin, Index end) {
        madvise(reinterpret_cast<void*>(first + static_cast<std::uintptr_t>(begin) * page),
                static_cast<std::size_t>(end - begin) * page, kPopulateWrite);
    });
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace embed::detail
