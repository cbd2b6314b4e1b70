#include "threads/parallel.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "floating_point/float_mode.hpp"

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

// Cores this process may run on.
int usable_cores() {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(CPU_COUNT(&set), 1);
#endif
    return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1U));
}

int detect_workers() {
    if (const char* env = std::getenv("EMBED_NUM_THREADS")) {
        const long requested = std::strtol(env, nullptr, 10);
        if (requested >= 1) return static_cast<int>(std::min<long>(requested, kMaxWorkers));
    }
    return usable_cores();
}

// Tells the core a thread is spinning (lets a hyperthread sibling run, and saves power).
inline void pause_a_moment() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// How long a thread checks for the next step before it sleeps. Waking a
// sleeping thread costs a system call on one side and a reschedule on the
// other, which can cost a small call more than a second thread saves.
// Calls often come back to back (a Python loop over
// the module, a batch of lookups), so the helpers spin this long after a
// loop before they sleep, as OpenMP's threads do, and so does a caller
// waiting for the helpers to finish.
constexpr auto kSpinFor = std::chrono::microseconds(200);

// Checks ready() until it is true (returns true) or kSpinFor has passed (returns ready()).
template <class Ready>
bool spin_until(Ready ready) {
    const auto give_up = std::chrono::steady_clock::now() + kSpinFor;
    for (unsigned spins = 1;; ++spins) {
        if (ready()) return true;
        pause_a_moment();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() >= give_up) return ready();
    }
}

// Helper threads that sleep until a loop is posted. One loop runs at a time;
// a second caller arriving meanwhile does its own work alone.
//
// A loop is cut into more pieces than threads, and the pieces into one
// contiguous share per thread. Each thread claims the next unclaimed piece of
// its own share, then of the others' in turn, until none is left. On a shared
// virtual machine one core can run at half speed for a while; with claimed
// pieces the faster core takes over what the slower one has not started. And
// while the threads keep pace, each runs the same share call after call: a
// gather of the same ids into the same result finds its rows in its own
// core's caches, which every piece open to every thread from the start lost.
class Pool {
public:
    // Spinning only pays while every thread has a core of its own: a helper
    // spinning on a core the caller needs would slow the caller down.
    explicit Pool(int helpers)
        : shares_(std::make_unique<Share[]>(static_cast<std::size_t>(helpers) + 1)),
          spin_(helpers < usable_cores()) {
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
            stopping_.store(true, std::memory_order_release);
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
        {
            std::lock_guard<std::mutex> lock(mutex_);
            body_ = body;
            context_ = context;
            n_ = n;
            piece_ = piece = ceil_div(n, pieces);
            const Index piece_total = ceil_div(n, piece);
            // Thread t's share: the t-th of `threads` contiguous runs of pieces, their sizes differing by at
            // most one (t * each <= piece_total, so nothing overflows).
            const Index each = piece_total / threads;
            const Index longer = piece_total % threads;  // the first `longer` shares have one piece more
            for (Index t = 0; t < threads; ++t) {
                Share& share = shares_[static_cast<std::size_t>(t)];
                const Index first = t * each + std::min(t, longer);
                share.next.store(first, std::memory_order_relaxed);
                share.end = first + each + (t < longer ? 1 : 0);
            }
            threads_ = threads;
            pending_.store(threads - 1, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();  // no system call when every helper is still spinning
        take_pieces(0, threads, body, context, n, piece);
        const auto helpers_done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
        if (spin_ && spin_until(helpers_done)) return;
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, helpers_done);
    }

private:
    // Runs unclaimed pieces until there are none, those of thread `slot`'s own share first; every piece runs
    // exactly once.
    void take_pieces(Index slot, Index threads, ChunkFunction body, void* context, Index n, Index piece) {
        for (Index k = 0; k < threads; ++k) {
            Share& share = shares_[static_cast<std::size_t>((slot + k) % threads)];
            for (;;) {
                const Index claimed = share.next.fetch_add(1, std::memory_order_relaxed);
                if (claimed >= share.end) break;
                const Index begin = claimed * piece;
                body(context, begin, begin + std::min(piece, n - begin));  // begin + piece may pass 2^63
            }
        }
    }

    void serve(Index slot) {
        // A helper inherits the mode of whichever thread started the pool; it only ever runs our loops.
        set_default_float_mode();
        unsigned long seen = 0;
        for (;;) {
            ChunkFunction body = nullptr;
            void* context = nullptr;
            Index n = 0;
            Index piece = 0;
            Index threads = 0;
            const auto posted = [&] {
                return stopping_.load(std::memory_order_acquire) ||
                       generation_.load(std::memory_order_acquire) != seen;
            };
            if (spin_) spin_until(posted);
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, posted);
                if (stopping_.load(std::memory_order_relaxed)) return;
                seen = generation_.load(std::memory_order_relaxed);
                if (slot >= threads_) continue;
                body = body_;
                context = context_;
                n = n_;
                piece = piece_;
                threads = threads_;
            }
            take_pieces(slot, threads, body, context, n, piece);
            {
                // Under the lock, so a caller about to sleep on done_ cannot miss it.
                std::lock_guard<std::mutex> lock(mutex_);
                pending_.fetch_sub(1, std::memory_order_release);
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
    // One thread's pieces [next, end): next is claimed with fetch_add, by its owner first and then by any
    // thread done with its own. A line each, so claims on different shares do not contend.
    struct alignas(64) Share {
        std::atomic<Index> next{0};
        Index end = 0;
    };
    std::unique_ptr<Share[]> shares_;  // one per thread: the caller's at 0, helper h's at h
    Index threads_ = 0;
    // Read while spinning, outside the lock; written under it.
    std::atomic<Index> pending_{0};
    std::atomic<unsigned long> generation_{0};
    std::atomic<bool> stopping_{false};
    const bool spin_;
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
