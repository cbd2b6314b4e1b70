// Google Benchmark suite for the library, plus the machine's bandwidth probe
// and a peak-memory mode. Shapes: the contract's 512 x 64, GPT-2's 50257 x 768
// and a 1 GiB table, 131072 x 1024, all double precision.
//
//   embed_bench [google benchmark flags]       run the suite (names: op/VxD)
//   embed_bench --sweep [--shape=VxD] [--rounds=N]
//                                              every streaming setting on one table
//                                              (default GPT-2's shape, 7 rounds)
//   embed_bench --peak=logits|dot|cosine [--shape=VxD]
//                                              one call on a fresh table, then
//                                              print its bytes and the peak RSS as JSON

#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <embed/embed.hpp>

#include "probe.hpp"
#include "sweep.hpp"

namespace {

using embed::Index;

struct Shape {
    Index vocab;
    Index dim;
    std::string name() const { return std::to_string(vocab) + "x" + std::to_string(dim); }
};

constexpr Shape kShapes[] = {{512, 64}, {50257, 768}, {131072, 1024}};
constexpr Index kLookupIds = 4096;
constexpr Index kOneHotIds = 64;  // one-hot is V times the work of lookup by design
constexpr Index kBatch = 64;
constexpr Index kProbeToken = 137;
constexpr std::size_t kProbeBytes = std::size_t{2} << 30;  // twice the largest table, far past every cache

// Tables are made once per shape and kept: the 1 GiB one takes a second to make.
const embed::Table& table_for(const Shape& shape) {
    static std::map<Index, std::unique_ptr<embed::Table>> tables;
    auto& slot = tables[shape.vocab * 100000 + shape.dim];
    if (!slot) slot = std::make_unique<embed::Table>(embed::make_table(shape.vocab, shape.dim, embed::SEED));
    return *slot;
}

std::vector<Index> random_ids(Index count, Index vocab) {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<Index> pick(0, vocab - 1);
    std::vector<Index> ids(static_cast<std::size_t>(count));
    for (Index& id : ids) id = pick(rng);
    return ids;
}

embed::Vector hidden_for(Index dim) {
    embed::Vector h(dim);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (Index c = 0; c < dim; ++c) h[c] = u(rng);
    return h;
}

double table_bytes(const Shape& s) { return static_cast<double>(s.vocab * s.dim) * sizeof(double); }

std::int64_t bytes_done(const benchmark::State& state, double bytes_per_iteration) {
    return static_cast<std::int64_t>(static_cast<double>(state.iterations()) * bytes_per_iteration);
}

void register_shape(const Shape& s) {
    std::string tag(1, '/');
    tag += s.name();
    const bool huge = s.vocab * s.dim > (Index{1} << 25);
    const int reps = huge ? 5 : 9;

    auto add = [&](const std::string& op, auto body) {
        return benchmark::RegisterBenchmark((op + tag).c_str(), body)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Repetitions(reps)
            ->ReportAggregatesOnly(true);
    };

    add("make_table", [s](benchmark::State& state) {
        for (auto _ : state) benchmark::DoNotOptimize(embed::make_table(s.vocab, s.dim, embed::SEED));
        state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
    });

    add("lookup", [s](benchmark::State& state) {
        const embed::Table& t = table_for(s);
        const auto ids = random_ids(kLookupIds, s.vocab);
        for (auto _ : state) benchmark::DoNotOptimize(embed::lookup(t, ids));
        state.SetBytesProcessed(state.iterations() * 2 * kLookupIds * s.dim * 8);
    });

    // The same gather into one result reused across calls: the copy without the fresh memory.
    add("lookup_into", [s](benchmark::State& state) {
        const embed::Table& t = table_for(s);
        const auto ids = random_ids(kLookupIds, s.vocab);
        embed::Table out = embed::lookup(t, ids);
        for (auto _ : state) {
            embed::lookup_into(t, ids, out);
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(state.iterations() * 2 * kLookupIds * s.dim * 8);
    });

    if (s.vocab * s.dim <= 512 * 64) {
        add("lookup_via_one_hot", [s](benchmark::State& state) {
            const embed::Table& t = table_for(s);
            const auto ids = random_ids(kOneHotIds, s.vocab);
            for (auto _ : state) benchmark::DoNotOptimize(embed::lookup_via_one_hot(t, ids));
        });
    }

    add("logits", [s](benchmark::State& state) {
        const embed::Table& t = table_for(s);
        const embed::Vector h = hidden_for(s.dim);
        for (auto _ : state) benchmark::DoNotOptimize(embed::logits(t, h));
        state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
    });

    add("logits_batched", [s](benchmark::State& state) {
        const embed::Table& t = table_for(s);
        embed::Table hidden(kBatch, s.dim);
        for (Index i = 0; i < kBatch; ++i) hidden.row(i) = hidden_for(s.dim).transpose() * static_cast<double>(i + 1);
        for (auto _ : state) benchmark::DoNotOptimize(embed::logits(t, hidden));
        state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
    });

    for (const Index k : {Index{5}, Index{100}}) {
        add("nearest_by_dot_k" + std::to_string(k), [s, k](benchmark::State& state) {
            const embed::Table& t = table_for(s);
            for (auto _ : state) benchmark::DoNotOptimize(embed::nearest_by_dot(t, kProbeToken, k));
            state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
        });
        add("nearest_by_cosine_k" + std::to_string(k), [s, k](benchmark::State& state) {
            const embed::Table& t = table_for(s);
            for (auto _ : state) benchmark::DoNotOptimize(embed::nearest_by_cosine(t, kProbeToken, k));
            state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
        });
    }

    add("scaled_lookup", [s](benchmark::State& state) {
        const embed::Table& t = table_for(s);
        const auto ids = random_ids(kLookupIds, s.vocab);
        for (auto _ : state) benchmark::DoNotOptimize(embed::scaled_lookup(t, ids, s.dim));
        state.SetBytesProcessed(state.iterations() * 2 * kLookupIds * s.dim * 8);
    });
}

void register_probe() {
    // Huge pages, as numpy's and embed's own large buffers get: the probe
    // must show the best this machine streams, not the cost of 4 KiB TLB misses.
    static double* source = nullptr;
    static double* target = nullptr;
    auto ensure = [] {
        if (source == nullptr) {
            auto make = [](double value) {
                auto* p = static_cast<double*>(std::aligned_alloc(std::size_t{2} << 20, kProbeBytes));
                if (p == nullptr) throw std::bad_alloc();
                madvise(p, kProbeBytes, MADV_HUGEPAGE);
                std::fill(p, p + kProbeBytes / sizeof(double), value);
                return p;
            };
            source = make(1.0);
            target = make(0.0);
        }
    };
    constexpr std::size_t kProbeDoubles = kProbeBytes / sizeof(double);
    const int threads = static_cast<int>(std::thread::hardware_concurrency());
    benchmark::RegisterBenchmark("probe_read/2GiB", [=](benchmark::State& state) {
        ensure();
        for (auto _ : state) benchmark::DoNotOptimize(embed_bench::probe_read(source, kProbeDoubles, threads));
        state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(kProbeBytes));
    })->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(9)->ReportAggregatesOnly(true);
    // Copy counts bytes read plus bytes written, as STREAM does.
    benchmark::RegisterBenchmark("probe_copy/2GiB", [=](benchmark::State& state) {
        ensure();
        for (auto _ : state) {
            embed_bench::probe_copy(source, target, kProbeDoubles, threads);
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(state.iterations() * 2 * static_cast<std::int64_t>(kProbeBytes));
    })->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(9)->ReportAggregatesOnly(true);
}

long peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss * 1024L;
}

/// Reads --shape's VxD into s (left as it is when text is empty); false, having said why, when it is not VxD.
bool parse_shape(const std::string& text, Shape& s) {
    if (text.empty()) return true;
    if (std::sscanf(text.c_str(), "%ldx%ld", &s.vocab, &s.dim) == 2 && s.vocab > 0 && s.dim > 0) return true;
    std::fprintf(stderr, "embed_bench: --shape wants VxD with V and D positive, got %s\n", text.c_str());
    return false;
}

int run_peak(const std::string& op, const std::string& shape_text) {
    Shape s{131072, 1024};
    if (!parse_shape(shape_text, s)) return 2;
    const embed::Table table = embed::make_table(s.vocab, s.dim, embed::SEED);
    const long after_table = peak_rss_bytes();
    double check = 0.0;
    if (op == "logits") {
        check = embed::logits(table, hidden_for(s.dim)).sum();
    } else if (op == "dot") {
        check = static_cast<double>(embed::nearest_by_dot(table, kProbeToken, 5).front());
    } else if (op == "cosine") {
        check = static_cast<double>(embed::nearest_by_cosine(table, kProbeToken, 5).front());
    } else {
        std::fprintf(stderr, "embed_bench: --peak wants logits, dot or cosine, got %s\n", op.c_str());
        return 2;
    }
    std::printf("{\"op\": \"%s\", \"shape\": \"%s\", \"table_bytes\": %.0f, \"peak_rss_after_table\": %ld, "
                "\"peak_rss\": %ld, \"check\": %.17g}\n",
                op.c_str(), s.name().c_str(), table_bytes(s), after_table, peak_rss_bytes(), check);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string peak;
    std::string shape;
    bool sweep = false;
    int rounds = 7;
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--peak=", 0) == 0) {
            peak = arg.substr(7);
        } else if (arg == "--sweep") {
            sweep = true;
        } else if (arg.rfind("--rounds=", 0) == 0) {
            rounds = std::atoi(arg.c_str() + 9);
            if (rounds < 1 || rounds > 1000) {
                std::fprintf(stderr, "embed_bench: --rounds wants 1 to 1000, got %s\n", arg.c_str() + 9);
                return 2;
            }
        } else if (arg.rfind("--shape=", 0) == 0) {
            shape = arg.substr(8);
        } else {
            rest.push_back(argv[i]);
        }
    }
    if (!peak.empty()) return run_peak(peak, shape);
    if (sweep) {
        Shape s{50257, 768};
        if (!parse_shape(shape, s)) return 2;
        return embed_bench::run_sweep(s.vocab, s.dim, rounds);
    }
    register_probe();
    for (const Shape& s : kShapes) register_shape(s);
    int rest_count = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_count, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
