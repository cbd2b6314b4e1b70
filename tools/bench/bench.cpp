// Google Benchmark suite for the library, plus the machine's bandwidth probe
// and a peak-memory mode. Shapes: the exercise's 512 x 64, GPT-2's 50257 x 768
// and a 1 GiB table, 131072 x 1024, all double precision; and float32 and
// bfloat16 tables (SPECIFICATION.md, Narrow tables) on GPT-2's shape and Llama 3's 128256 x 4096
// (and on 512 x 64, for the smoke test).
//
//   embed_bench [google benchmark flags]       run the suite (names: op/VxD for double,
//                                              f32/op/VxD and bf16/op/VxD for the narrow
//                                              tables, widened_f32/op/VxD for the float32
//                                              table widened to double)
//   embed_bench --sweep [--shape=VxD] [--rounds=N]
//                                              every streaming setting on one table
//                                              (default GPT-2's shape, 7 rounds), then
//                                              the default and the fastest head to head
//                                              quantised tables (q8_0, q4_k, q6_k) as
//                                              type/op/VxD, the float32 table of their values
//                                              as type_as_f32/op/VxD, type/read/VxD a pass
//                                              that only reads their bytes
//   embed_bench --peak=logits|dot|cosine [--shape=VxD] [--dtype=f64|f32|bf16]
//                                              one call on a fresh table, then
//                                              print its bytes and the peak RSS as JSON

#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>

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
#include "threads/parallel.hpp"
#include "sweep.hpp"

namespace {

using embed::Index;

struct Shape {
    Index vocab;
    Index dim;
    std::string name() const { return std::to_string(vocab) + "x" + std::to_string(dim); }
};

constexpr Shape kShapes[] = {{512, 64}, {50257, 768}, {131072, 1024}};
// float32 and bfloat16 tables: GPT-2's shape and Llama 3's vocabulary (2.1 GB in float32, 1.05 GB in bf16);
// 512 x 64 for the smoke test and compare.py --smoke.
constexpr Shape kNarrowShapes[] = {{512, 64}, {50257, 768}, {128256, 4096}};
constexpr Index kLookupIds = 4096;
constexpr Index kOneHotIds = 64;  // one-hot is V times the work of lookup by design
constexpr Index kBatch = 64;
constexpr Index kProbeToken = 137;
constexpr std::size_t kProbeBytes = std::size_t{2} << 30;  // twice the 1 GiB double table, far past every cache

Index shape_key(const Shape& s) { return s.vocab * 100000 + s.dim; }

// Tables are made once per shape and kept: the 1 GiB one takes a second to make.
const embed::Table& table_for(const Shape& shape) {
    static std::map<Index, std::unique_ptr<embed::Table>> tables;
    auto& slot = tables[shape_key(shape)];
    if (!slot) slot = std::make_unique<embed::Table>(embed::make_table(shape.vocab, shape.dim, embed::SEED));
    return *slot;
}

template <embed::NarrowScalar Scalar>
constexpr const char* type_tag() {
    return std::same_as<Scalar, float> ? "f32" : "bf16";
}

/// Asks the kernel for transparent huge pages over the whole 2 MiB pages of [data, data + bytes), before
/// they are first written (this machine's setting may be "madvise", which gives them only when asked).
void ask_for_huge_pages(void* data, std::size_t bytes) {
    constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
    const auto address = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t first = (address + kHugePage - 1) / kHugePage * kHugePage;
    const std::uintptr_t last = (address + bytes) / kHugePage * kHugePage;
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

/// returns (V, d) of Scalar: make_table's values rounded to Scalar (to_f32 / to_bf16), converted a block of
/// rows at a time, so the double table, two or four times the size, never exists whole.
template <embed::NarrowScalar Scalar>
embed::BasicTable<Scalar> make_narrow_table(const Shape& s) {
    embed::BasicTable<Scalar> table(s.vocab, s.dim);
    // In huge pages, as the tables load_table, to_f32 and to_bf16 return: in 4 KiB pages the TLB misses hold
    // a streaming pass well below the probe, and the goals are about the kernels.
    ask_for_huge_pages(table.data(), static_cast<std::size_t>(table.size()) * sizeof(Scalar));
    embed::PythonRandom rng(embed::SEED);  // make_table fills row-major from this generator, minus 0.5
    // 256 KiB of doubles at a time: small beside any table whose peak memory --peak reports.
    const Index block = std::max<Index>(1, (Index{1} << 15) / s.dim);
    embed::Table rows(block, s.dim);
    for (Index first = 0; first < s.vocab; first += block) {
        const Index count = std::min(block, s.vocab - first);
        rng.fill_random(std::span<double>(rows.data(), static_cast<std::size_t>(count * s.dim)), -0.5);
        const embed::TableView part(rows.data(), count, s.dim);
        if constexpr (std::same_as<Scalar, float>) {
            table.middleRows(first, count) = embed::to_f32(part);
        } else {
            table.middleRows(first, count) = embed::to_bf16(part);
        }
    }
    return table;
}

// Made once per shape and kept, as table_for's.
template <embed::NarrowScalar Scalar>
const embed::BasicTable<Scalar>& narrow_table_for(const Shape& shape) {
    static std::map<Index, std::unique_ptr<embed::BasicTable<Scalar>>> tables;
    auto& slot = tables[shape_key(shape)];
    if (!slot) slot = std::make_unique<embed::BasicTable<Scalar>>(make_narrow_table<Scalar>(shape));
    return *slot;
}

// The float32 table widened to double: the double kernels on the very values the float32 ones read.
// Only the latest shape's is kept: Llama 3's is 4.2 GB.
const embed::Table& widened_table_for(const Shape& shape) {
    static Index kept_key = -1;
    static std::unique_ptr<embed::Table> kept;
    if (kept_key != shape_key(shape)) {
        kept.reset();
        kept = std::make_unique<embed::Table>(embed::to_double(narrow_table_for<float>(shape)));
        kept_key = shape_key(shape);
    }
    return *kept;
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

/// returns (kBatch, dim): hidden_for(dim) times 1, 2, ..., kBatch.
embed::Table hidden_rows_for(Index dim) {
    embed::Table hidden(kBatch, dim);
    for (Index i = 0; i < kBatch; ++i) hidden.row(i) = hidden_for(dim).transpose() * static_cast<double>(i + 1);
    return hidden;
}

double table_bytes(const Shape& s) { return static_cast<double>(s.vocab * s.dim) * sizeof(double); }

/// The bytes a table holds in its own type: what one pass over it reads.
template <class Stored>
double stored_bytes(const Stored& table) {
    return static_cast<double>(table.size()) * sizeof(typename Stored::Scalar);
}

/// A quantised table's bytes: its blocks, what one pass over it reads.
double stored_bytes(const embed::QuantisedTable& table) { return static_cast<double>(table.bytes()); }

/// Bytes lookup of kLookupIds rows moves: each row read once and written once, in the table's type.
template <class Stored>
double lookup_bytes(const Stored& table) {
    return 2.0 * kLookupIds * static_cast<double>(table.cols()) * sizeof(typename Stored::Scalar);
}

std::int64_t bytes_done(const benchmark::State& state, double bytes_per_iteration) {
    return static_cast<std::int64_t>(static_cast<double>(state.iterations()) * bytes_per_iteration);
}

/// Registers name with the suite's settings: milliseconds, wall time, medians of 5 repetitions on tables
/// past 2^25 values (9 below).
template <class Body>
void add_timed(const std::string& name, const Shape& s, Body body) {
    const bool huge = s.vocab * s.dim > (Index{1} << 25);
    benchmark::RegisterBenchmark(name.c_str(), body)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(huge ? 5 : 9)
        ->ReportAggregatesOnly(true);
}

// The bodies of the operations every table type has; table_of(shape) gives the (cached) table to run on.

template <class TableOf>
auto lookup_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        const auto ids = random_ids(kLookupIds, s.vocab);
        for (auto _ : state) benchmark::DoNotOptimize(embed::lookup(t, ids));
        state.SetBytesProcessed(bytes_done(state, lookup_bytes(t)));
    };
}

/// The same gather into one result reused across calls: the copy without the fresh memory.
template <class TableOf>
auto lookup_into_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        const auto ids = random_ids(kLookupIds, s.vocab);
        auto out = embed::lookup(t, ids);
        for (auto _ : state) {
            embed::lookup_into(t, ids, out);
            benchmark::ClobberMemory();
        }
        state.SetBytesProcessed(bytes_done(state, lookup_bytes(t)));
    };
}

template <class TableOf>
auto logits_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        const embed::Vector h = hidden_for(s.dim);
        for (auto _ : state) benchmark::DoNotOptimize(embed::logits(t, h));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    };
}

template <class TableOf>
auto logits_batched_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        const embed::Table hidden = hidden_rows_for(s.dim);
        for (auto _ : state) benchmark::DoNotOptimize(embed::logits(t, hidden));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    };
}

template <class TableOf>
auto nearest_by_dot_body(const Shape& s, TableOf table_of, Index k) {
    return [s, table_of, k](benchmark::State& state) {
        const auto& t = table_of(s);
        for (auto _ : state) benchmark::DoNotOptimize(embed::nearest_by_dot(t, kProbeToken, k));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    };
}

/// The shape's table as a view 16 bytes past each line, where a numpy array's rows usually start: V - 1 rows
/// from the table's third value.
embed::TableView off_lines_view_for(const Shape& s) {
    const embed::Table& t = table_for(s);
    return embed::TableView(t.data() + 2, s.vocab - 1, s.dim);
}

/// op/VxD. (Appended, not "/" + name: GCC 12 warns wrongly on that concatenation, -Wrestrict.)
std::string bench_name(std::string op, const Shape& s) {
    op += '/';
    op += s.name();
    return op;
}

void register_shape(const Shape& s) {
    auto add = [&](const std::string& op, auto body) { add_timed(bench_name(op, s), s, body); };

    add("make_table", [s](benchmark::State& state) {
        for (auto _ : state) benchmark::DoNotOptimize(embed::make_table(s.vocab, s.dim, embed::SEED));
        state.SetBytesProcessed(bytes_done(state, table_bytes(s)));
    });

    add("lookup", lookup_body(s, table_for));
    add("lookup_into", lookup_into_body(s, table_for));

    if (s.vocab * s.dim <= 512 * 64) {
        add("lookup_via_one_hot", [s](benchmark::State& state) {
            const embed::Table& t = table_for(s);
            const auto ids = random_ids(kOneHotIds, s.vocab);
            for (auto _ : state) benchmark::DoNotOptimize(embed::lookup_via_one_hot(t, ids));
        });
    }

    add("logits", logits_body(s, table_for));
    // The same memory read 16 bytes past each line, which once read faster than `logits` on lines: beside it,
    // this shows whether "The first line apart" (lib/kernels/row_loops.hpp) still closes that gap.
    add("logits_rows_off_lines", logits_body(s, off_lines_view_for));
    add("logits_batched", logits_batched_body(s, table_for));

    for (const Index k : {Index{5}, Index{100}}) {
        add("nearest_by_dot_k" + std::to_string(k), nearest_by_dot_body(s, table_for, k));
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
        state.SetBytesProcessed(bytes_done(state, lookup_bytes(t)));
    });
}

/// The vocabulary scan with 64 reference ids (SPECIFICATION.md, Vocabulary scan). The table's values are
/// uniform noise, whose top covariance eigenvalues nearly coincide, so the iteration runs to its limit: the
/// worst case.
template <class TableOf>
auto scan_vocabulary_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        embed::ScanOptions options;
        for (Index id = 0; id < 64; ++id) options.reference_ids.push_back(id * (s.vocab / 64));
        for (auto _ : state) benchmark::DoNotOptimize(embed::scan_vocabulary(t, t, options));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    };
}

/// Two tables side by side: the table against itself, aligned, with 1000 probes and hidden vectors and k = 10.
/// The same values on both sides change no operation count (every measure is computed in full), and keep the
/// memory at one table, so Llama 3's shape fits beside its numpy peer.
template <class TableOf>
auto compare_tables_body(const Shape& s, TableOf table_of) {
    return [s, table_of](benchmark::State& state) {
        const auto& t = table_of(s);
        embed::CompareOptions options;
        options.align = embed::Alignment::orthogonal;
        for (auto _ : state) benchmark::DoNotOptimize(embed::compare_tables(t, t, options));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    };
}

/// float32 or bfloat16 tables: the passes and the gather, named type/op/VxD.
template <embed::NarrowScalar Scalar>
void register_narrow(const Shape& s) {
    const std::string type = type_tag<Scalar>();
    add_timed(bench_name(type + "/logits", s), s, logits_body(s, narrow_table_for<Scalar>));
    add_timed(bench_name(type + "/nearest_by_dot_k5", s), s, nearest_by_dot_body(s, narrow_table_for<Scalar>, 5));
    add_timed(bench_name(type + "/logits_batched", s), s, logits_batched_body(s, narrow_table_for<Scalar>));
    add_timed(bench_name(type + "/lookup", s), s, lookup_body(s, narrow_table_for<Scalar>));
    add_timed(bench_name(type + "/lookup_into", s), s, lookup_into_body(s, narrow_table_for<Scalar>));
    if constexpr (std::same_as<Scalar, float>) {
        add_timed(bench_name(type + "/scan_vocabulary", s), s, scan_vocabulary_body(s, narrow_table_for<Scalar>));
        add_timed(bench_name(type + "/compare_tables", s), s, compare_tables_body(s, narrow_table_for<Scalar>));
    }
}

void register_narrow_shape(const Shape& s) {
    register_narrow<float>(s);
    register_narrow<Eigen::bfloat16>(s);
    // The yardstick of float32 batched logits: double batched logits on the same values (GB/s over 8-byte values).
    add_timed(bench_name("widened_f32/logits_batched", s), s, logits_batched_body(s, widened_table_for));
}

// Quantised tables: GPT-2's and Llama 3's shapes in Q8_0, Q4_K and Q6_K, against the float32 table holding
// the same values. Random quant bits with finite fp16 scales near 2^-7 (speed does not depend on the values).
constexpr Shape kQuantisedShapes[] = {{50257, 768}, {128256, 4096}};

/// The offsets of type's fp16 fields (scales and mins) in its block.
std::vector<Index> half_fields(embed::ElementType type) {
    switch (type) {
        case embed::ElementType::q8_0: return {0};
        case embed::ElementType::q4_k: return {0, 2};
        case embed::ElementType::q6_k: return {208};
        default: break;
    }
    return {};
}

embed::QuantisedTable make_quantised_table(embed::ElementType type, const Shape& s) {
    const Index bytes = s.vocab * embed::row_bytes(type, s.dim);
    auto blocks = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    ask_for_huge_pages(blocks.get(), static_cast<std::size_t>(bytes));
    std::mt19937_64 rng(embed::SEED);
    for (Index i = 0; i < bytes; i += 8) {
        const std::uint64_t word = rng();
        std::memcpy(blocks.get() + i, &word, static_cast<std::size_t>(std::min<Index>(8, bytes - i)));
    }
    const Index block = embed::block_bytes(type);
    for (Index b = 0; b < bytes / block; ++b) {
        for (const Index field : half_fields(type)) {
            const auto half = static_cast<std::uint16_t>((rng() & 0x83FF) | 0x2000);  // sign, 2^-7, fraction
            std::memcpy(blocks.get() + b * block + field, &half, sizeof half);
        }
    }
    return embed::QuantisedTable(type, s.vocab, s.dim, std::shared_ptr<const std::byte[]>(std::move(blocks)), bytes);
}

/// Only the latest type and shape's table is kept, and its float32 values: Llama 3's are 2.1 GB.
Index quantised_key(embed::ElementType type, const Shape& s) { return shape_key(s) * 16 + static_cast<Index>(type); }

const embed::QuantisedTable& quantised_table_for(embed::ElementType type, const Shape& shape) {
    static Index kept_key = -1;
    static std::unique_ptr<embed::QuantisedTable> kept;
    if (kept_key != quantised_key(type, shape)) {
        kept.reset();
        kept = std::make_unique<embed::QuantisedTable>(make_quantised_table(type, shape));
        kept_key = quantised_key(type, shape);
    }
    return *kept;
}

const embed::TableF32& dequantised_table_for(embed::ElementType type, const Shape& shape) {
    static Index kept_key = -1;
    static std::unique_ptr<embed::TableF32> kept;
    if (kept_key != quantised_key(type, shape)) {
        kept.reset();
        const embed::QuantisedTable& q = quantised_table_for(type, shape);
        kept = std::make_unique<embed::TableF32>(shape.vocab, shape.dim);
        ask_for_huge_pages(kept->data(), static_cast<std::size_t>(kept->size()) * sizeof(float));
        q.dequantise_rows(0, shape.vocab, kept->data());
        kept_key = quantised_key(type, shape);
    }
    return *kept;
}

/// A pass that reads every byte of the table and does nothing else (an xor of its 8-byte words, both
/// cores): the floor under any operation on it.
std::uint64_t read_every_byte(const embed::QuantisedTable& t) {
    const Index words = t.bytes() / 8;
    const embed::detail::Pieces pieces = embed::detail::pieces_of(words, 1);
    std::vector<std::uint64_t> partial(static_cast<std::size_t>(pieces.count), 0);
    embed::detail::parallel_for_pieces(pieces, 1, [&](Index p, Index begin, Index end) {
        std::uint64_t x = 0;
        for (Index w = begin; w < end; ++w) {
            std::uint64_t word;
            std::memcpy(&word, t.data() + 8 * w, sizeof word);
            x ^= word;
        }
        partial[static_cast<std::size_t>(p)] = x;
    });
    std::uint64_t all = 0;
    for (const std::uint64_t x : partial) all ^= x;
    return all;
}

void register_quantised(embed::ElementType type, const Shape& s) {
    const std::string tag(embed::element_type_name(type));
    const auto quantised = [type](const Shape& shape) -> const embed::QuantisedTable& {
        return quantised_table_for(type, shape);
    };
    const auto as_f32 = [type](const Shape& shape) -> const embed::TableF32& {
        return dequantised_table_for(type, shape);
    };
    add_timed(bench_name(tag + "/read", s), s, [s, quantised](benchmark::State& state) {
        const auto& t = quantised(s);
        for (auto _ : state) benchmark::DoNotOptimize(read_every_byte(t));
        state.SetBytesProcessed(bytes_done(state, stored_bytes(t)));
    });
    add_timed(bench_name(tag + "/logits", s), s, logits_body(s, quantised));
    add_timed(bench_name(tag + "/nearest_by_dot_k5", s), s, nearest_by_dot_body(s, quantised, 5));
    add_timed(bench_name(tag + "_as_f32/logits", s), s, logits_body(s, as_f32));
    add_timed(bench_name(tag + "_as_f32/nearest_by_dot_k5", s), s, nearest_by_dot_body(s, as_f32, 5));
}

void register_probe() {
    // Huge pages, as numpy's and embed's own large buffers get: the probe
    // must show the best this machine streams, not the cost of 4 KiB TLB misses.
    // Made on first use, each once: a run of the read probe alone (beside one
    // operation, as the comparison runs it) never fills the copy's target.
    auto make = [](double value) {
        auto* p = static_cast<double*>(std::aligned_alloc(std::size_t{2} << 20, kProbeBytes));
        if (p == nullptr) throw std::bad_alloc();
        ask_for_huge_pages(p, kProbeBytes);
        std::fill(p, p + kProbeBytes / sizeof(double), value);
        return p;
    };
    static double* source = nullptr;
    static double* target = nullptr;
    auto ensure_source = [=] {
        if (source == nullptr) source = make(1.0);
    };
    auto ensure = [=] {
        ensure_source();
        if (target == nullptr) target = make(0.0);
    };
    constexpr std::size_t kProbeDoubles = kProbeBytes / sizeof(double);
    const int threads = static_cast<int>(std::thread::hardware_concurrency());
    benchmark::RegisterBenchmark("probe_read/2GiB", [=](benchmark::State& state) {
        ensure_source();
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

/// This process's peak resident set in bytes: VmHWM from /proc/self/status, which starts afresh at exec.
/// getrusage's ru_maxrss does not: it keeps the peak of the process that forked this one (a Python script
/// holding GPT-2's tables would pass its own on), so it is only the fallback where /proc is not mounted.
long peak_rss_bytes() {
    if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
        char line[256];
        long kib = -1;
        while (kib < 0 && std::fgets(line, sizeof line, status) != nullptr) {
            if (std::sscanf(line, "VmHWM: %ld kB", &kib) != 1) kib = -1;
        }
        std::fclose(status);
        if (kib >= 0) return kib * 1024L;
    }
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

/// One call of op (logits, dot or cosine) on table, then its bytes and the peak RSS as one JSON line; 2 for an
/// unknown op.
template <class Stored>
int report_peak(const Stored& table, const std::string& op, const Shape& s, long before_table) {
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
                "\"peak_rss\": %ld, \"check\": %.17g, \"peak_rss_before_table\": %ld}\n",
                op.c_str(), s.name().c_str(), stored_bytes(table), after_table, peak_rss_bytes(), check, before_table);
    return 0;
}

/// --peak: a fresh table of dtype (f64, f32 or bf16; narrow ones made without a whole double table), one call.
int run_peak(const std::string& op, const std::string& shape_text, const std::string& dtype) {
    Shape s{131072, 1024};
    if (!parse_shape(shape_text, s)) return 2;
    const long before_table = peak_rss_bytes();  // the program and its libraries
    if (dtype == "f64") return report_peak(embed::make_table(s.vocab, s.dim, embed::SEED), op, s, before_table);
    if (dtype == "f32") return report_peak(make_narrow_table<float>(s), op, s, before_table);
    if (dtype == "bf16") return report_peak(make_narrow_table<Eigen::bfloat16>(s), op, s, before_table);
    std::fprintf(stderr, "embed_bench: --dtype wants f64, f32 or bf16, got %s\n", dtype.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string peak;
    std::string shape;
    std::string dtype = "f64";
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
        } else if (arg.rfind("--dtype=", 0) == 0) {
            dtype = arg.substr(8);
        } else if (arg.rfind("--shape=", 0) == 0) {
            shape = arg.substr(8);
        } else {
            rest.push_back(argv[i]);
        }
    }
    if (!peak.empty()) return run_peak(peak, shape, dtype);
    if (sweep) {
        Shape s{50257, 768};
        if (!parse_shape(shape, s)) return 2;
        return embed_bench::run_sweep(s.vocab, s.dim, rounds);
    }
    register_probe();
    for (const Shape& s : kShapes) register_shape(s);
    for (const Shape& s : kNarrowShapes) register_narrow_shape(s);
    for (const Shape& s : kQuantisedShapes) {
        for (const auto type : {embed::ElementType::q8_0, embed::ElementType::q4_k, embed::ElementType::q6_k}) {
            register_quantised(type, s);
        }
    }
    int rest_count = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_count, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
