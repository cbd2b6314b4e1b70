#include "parallel.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__unix__)
#include <pthread.h>
#endif
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
        if (requested >= 1) return static_cast<int>(std::min<long>(requested, kMaxWorkers));
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
                helpers_.emplace_back([this, h] { serve(h + 1); });
            } catch (...) {
                break;  // fewer helpers than asked for; run copes with any number
            }
        }
    }

    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // Wakes the helpers with the stop flag and joins them. Only for a pool no caller is using.
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& helper : helpers_) helper.join();
    }

    void run(Index n, Index threads, Index pieces, ChunkFunction body, void* context) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        threads = std::min<Index>(threads, static_cast<Index>(helpers_.size()) + 1);
        if (!busy.owns_lock() || threads <= 1 || pieces <= 1) {
            body(context, 0, n);
            return;
        }
        Index piece = 0;
        Index piece_total = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            body_ = body;
            context_ = context;
            n_ = n;
            piece_ = piece = (n + pieces - 1) / pieces;
            pieces_ = piece_total = (n + piece - 1) / piece;
            next_piece_.store(0, std::memory_order_relaxed);
            threads_ = threads;
            pending_ = threads - 1;
            ++generation_;
        }
        wake_.notify_all();
        take_pieces(body, context, n, piece, piece_total);
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
                wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
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

    std::vector<std::thread> helpers_;
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
    bool stopping_ = false;
};

// The process's one pool, started on first use. fork() copies only the
// thread that called it: in the child the pool's helpers are gone and its
// mutexes may be held by threads that no longer exist, so a child that
// reused it would wait forever. The fork handlers below hold the slot's lock
// across fork(), so the pointer is never half-written, and the child drops
// the inherited pool (without destroying it: its helpers cannot be joined)
// and starts a fresh one on its first parallel call.
struct PoolSlot {
    std::mutex mutex;
    Pool* pool = nullptr;
    std::atomic<int> workers{0};  // 0 until detected or set
};

PoolSlot& pool_slot() {
    static PoolSlot* const slot = [] {
        auto* created = new PoolSlot;  // never destroyed: helpers may sleep on it at exit
#if defined(__unix__)
        pthread_atfork([] { pool_slot().mutex.lock(); }, [] { pool_slot().mutex.unlock(); },
                       [] {
                           PoolSlot& child = pool_slot();
                           child.pool = nullptr;  // the parent's pool, abandoned: see above
                           child.mutex.unlock();
                       });
#endif
        return created;
    }();
    return *slot;
}

}  // namespace

int worker_count() {
    PoolSlot& slot = pool_slot();
    int workers = slot.workers.load(std::memory_order_relaxed);
    if (workers == 0) {
        int expected = 0;
        slot.workers.compare_exchange_strong(expected, detect_workers(), std::memory_order_relaxed);
        workers = slot.workers.load(std::memory_order_relaxed);
    }
    return workers;
}

void set_worker_count(int threads) {
    PoolSlot& slot = pool_slot();
    Pool* retired = nullptr;
    {
        std::lock_guard<std::mutex> lock(slot.mutex);
        slot.workers.store(std::clamp(threads, 1, kMaxWorkers), std::memory_order_relaxed);
        retired = std::exchange(slot.pool, nullptr);
    }
    delete retired;  // joins its helpers; the next parallel call starts a pool of the new size
}

void run_chunks(Index n, Index threads, Index pieces, ChunkFunction body, void* context) {
    PoolSlot& slot = pool_slot();
    Pool* pool = nullptr;
    {
        std::lock_guard<std::mutex> lock(slot.mutex);
        if (slot.pool == nullptr) slot.pool = new Pool(worker_count() - 1);
        pool = slot.pool;
    }
    // The helpers sleep on a condition variable between loops, and the process may exit while they sleep.
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
