#include "probe.hpp"

#include <cstring>
#include <thread>
#include <vector>

namespace embed_bench {
namespace {

// Four independent 8-wide accumulators: enough in flight that the memory
// system, not the adder, limits the loop on any x86-64 this runs on.
__attribute__((target_clones("avx512f", "avx2", "default")))
double sum_range(const double* data, std::size_t n) {
    double acc[32] = {};
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int j = 0; j < 32; ++j) acc[j] += data[i + static_cast<std::size_t>(j)];
    }
    double total = 0.0;
    for (; i < n; ++i) total += data[i];
    for (double a : acc) total += a;
    return total;
}

template <class Work>
void split(std::size_t n, int threads, Work work) {
    std::vector<std::thread> pool;
    const std::size_t chunk = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
    for (int t = 1; t < threads; ++t) {
        const std::size_t begin = std::min(n, static_cast<std::size_t>(t) * chunk);
        pool.emplace_back([=] { work(t, begin, std::min(n, begin + chunk)); });
    }
    work(0, 0, std::min(n, chunk));
    for (std::thread& worker : pool) worker.join();
}

}  // namespace

double probe_read(const double* data, std::size_t n, int threads) {
    std::vector<double> partial(static_cast<std::size_t>(threads), 0.0);
    split(n, threads, [&](int t, std::size_t begin, std::size_t end) {
        partial[static_cast<std::size_t>(t)] = sum_range(data + begin, end - begin);
    });
    double total = 0.0;
    for (double p : partial) total += p;
    return total;
}

void probe_copy(const double* source, double* target, std::size_t n, int threads) {
    split(n, threads, [&](int, std::size_t begin, std::size_t end) {
        std::memcpy(target + begin, source + begin, (end - begin) * sizeof(double));
    });
}

}  // namespace embed_bench
