// scan_vocabulary and unused_ids. Every indicator is checked against numpy in
// float64 (np.linalg.eigh(np.cov(U.T)), a script run with the Python that has
// numpy) and against loops written here; the principal component against
// Eigen's SelfAdjointEigenSolver on the explicit covariance.

// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own reductions inlined here (the
// reference eigensolver) may read an uninitialised register; reported at the intrinsic's header line,
// so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // the same false report, as -O1 words it
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include "embed/io.hpp"
#include "embed/scan.hpp"
#include "file_bytes.hpp"
#include "threads/parallel.hpp"
#include "worker_count.hpp"

namespace {

using embed::Index;
using embed::ScanOptions;
using embed::Table;
using embed::Vector;
using embed::VocabularyScan;

// Ordinary random rows, plus `planted` rows (at the end) that never moved from a common start: start plus
// noise of 1e-6. Output rows get a shared offset and one strong direction, as trained output matrices have.
struct Planted {
    Table input;
    Table output;
    std::vector<Index> planted;
};

Planted planted_tables(Index rows, Index dim, Index planted, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::normal_distribution<double> normal;
    Planted t;
    t.input.resize(rows, dim);
    t.output.resize(rows, dim);
    Vector start_in(dim), start_out(dim), offset(dim), spike(dim);
    for (Index c = 0; c < dim; ++c) {
        start_in[c] = 0.01 * normal(random);
        start_out[c] = 0.01 * normal(random);
        offset[c] = 0.5 * normal(random);
        spike[c] = normal(random);
    }
    spike.normalize();
    for (Index i = 0; i < rows; ++i) {
        const bool is_planted = i >= rows - planted;
        const double strength = 4.0 * normal(random);
        for (Index c = 0; c < dim; ++c) {
            if (is_planted) {
                t.input(i, c) = start_in[c] + 1e-6 * normal(random);
                t.output(i, c) = start_out[c] + 1e-6 * normal(random);
            } else {
                t.input(i, c) = normal(random);
                t.output(i, c) = offset[c] + normal(random) + strength * spike[c];
            }
        }
        if (is_planted) t.planted.push_back(i);
    }
    return t;
}

// ---- numpy's float64 answer ------------------------------------------------------------------------

class TempDir {
public:
    TempDir() {
        char pattern[] = "/tmp/embed_scan_XXXXXX";
        if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

void write_doubles(const std::filesystem::path& path, const double* values, Index count) {
    std::ofstream out(path, std::ios::binary);
    const auto bytes = static_cast<std::streamsize>(count) * static_cast<std::streamsize>(sizeof(double));
    out.write(reinterpret_cast<const char*>(values), bytes);
}

std::vector<double> read_doubles(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<double> values;
    double x = 0.0;
    while (in.read(reinterpret_cast<char*>(&x), sizeof x)) values.push_back(x);
    return values;
}

bool have_numpy() {
#ifdef EMBED_TEST_NUMPY_PYTHON
    return true;
#else
    return false;
#endif
}

// The obvious numpy code, in float64. Writes input_norm, output_norm, output_distance (or nothing without
// reference ids), input_output_cosine, then for each percentile its threshold, the candidates' count and
// the candidates, as doubles.
constexpr const char* kNumpyScan = R"(
import sys
import numpy as np
d = sys.argv[1]
V, d_in, d_out, tied = (int(x) for x in sys.argv[2:6])
qs = [float(x) for x in sys.argv[6].split(",")]
refs = np.unique(np.array([int(x) for x in sys.argv[7:]], dtype=np.int64))
E = np.fromfile(d + "/input", dtype="<f8").reshape(V, d_in)
U = E if tied else np.fromfile(d + "/output", dtype="<f8").reshape(V, d_out)
input_norm = np.linalg.norm(E, axis=1)
output_norm = np.linalg.norm(U, axis=1)
def cosine(a, b, na, nb):
    n = na * nb
    return np.where(n == 0, 0.0, np.sum(a * b, axis=-1) / np.where(n == 0, 1.0, n))
parts = [input_norm, output_norm]
if len(refs):
    w, vecs = np.linalg.eigh(np.cov(U.T))
    v = vecs[:, -1]
    Up = U - np.outer(U @ v, v)
    r = Up[refs].mean(axis=0)
    dist = 1.0 - cosine(Up, r, np.linalg.norm(Up, axis=1), np.linalg.norm(r))
    parts.append(dist)
    indicator = dist
else:
    indicator = input_norm
if not tied:
    parts.append(cosine(E, U, input_norm, output_norm))
order = np.lexsort((np.arange(V), indicator))
for q in qs:
    threshold = np.percentile(indicator, q)
    candidates = [i for i in order if indicator[i] <= threshold]
    parts.append(np.array([threshold, len(candidates)]))
    parts.append(np.array(candidates, dtype=np.float64))
np.concatenate(parts).astype("<f8").tofile(d + "/result")
)";

struct NumpyScan {
    Vector input_norm, output_norm, output_distance, input_output_cosine;
    double threshold = 0.0;  // at the first percentile
    std::vector<Index> candidates;
    std::vector<double> thresholds;  // at each percentile
    std::vector<std::vector<Index>> candidate_lists;
};

// numpy's scan at options.percentile and at each of more_percentiles.
NumpyScan numpy_scan(const Table& input, const Table* output, const ScanOptions& options,
                     const std::vector<double>& more_percentiles = {}) {
#ifdef EMBED_TEST_NUMPY_PYTHON
    const TempDir dir;
    write_doubles(dir.path() / "input", input.data(), input.size());
    const bool tied = output == nullptr;
    if (!tied) write_doubles(dir.path() / "output", output->data(), output->size());
    const Index rows = input.rows();
    {
        std::ofstream script(dir.path() / "scan.py");
        script << kNumpyScan;
    }
    std::ostringstream command;
    command.precision(17);
    command << "'" << EMBED_TEST_NUMPY_PYTHON << "' " << (dir.path() / "scan.py") << " " << dir.path() << " "
            << rows << " " << input.cols() << " " << (tied ? input.cols() : output->cols()) << " " << tied << " "
            << options.percentile;
    for (const double q : more_percentiles) command << "," << q;
    for (const Index id : options.reference_ids) command << " " << id;
    if (std::system(command.str().c_str()) != 0) throw std::runtime_error("numpy failed: " + command.str());
    const std::vector<double> values = read_doubles(dir.path() / "result");
    NumpyScan result;
    std::size_t at = 0;
    const auto take = [&](Index n) {
        Vector v(n);
        for (Index i = 0; i < n; ++i) v[i] = values.at(at++);
        return v;
    };
    result.input_norm = take(rows);
    result.output_norm = take(rows);
    if (!options.reference_ids.empty()) result.output_distance = take(rows);
    if (!tied) result.input_output_cosine = take(rows);
    while (at < values.size()) {
        result.thresholds.push_back(values.at(at++));
        const auto count = static_cast<std::size_t>(values.at(at++));
        std::vector<Index> ids;
        for (std::size_t i = 0; i < count; ++i) ids.push_back(static_cast<Index>(values.at(at++)));
        result.candidate_lists.push_back(std::move(ids));
    }
    result.threshold = result.thresholds.at(0);
    result.candidates = result.candidate_lists.at(0);
    return result;
#else
    (void)input, (void)output, (void)options;
    throw std::logic_error("no python3 with numpy was found at configure time");
#endif
}

#define EMBED_REQUIRE_NUMPY()                                                                   \
    do {                                                                                        \
        if (!have_numpy()) GTEST_SKIP() << "no python3 with numpy was found when configuring"; \
    } while (false)

void expect_close(const Vector& got, const Vector& expected, double tolerance, const char* what) {
    ASSERT_EQ(got.size(), expected.size()) << what;
    for (Index i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], expected[i], tolerance) << what << " row " << i;
    }
}

// ---- independent loops ----------------------------------------------------------------------------

// The explicit covariance (mean removed, divided by V - 1), formed entry by entry.
Eigen::MatrixXd explicit_covariance(const Table& u) {
    const Index rows = u.rows();
    const Index dim = u.cols();
    Vector mean = Vector::Zero(dim);
    for (Index i = 0; i < rows; ++i) {
        for (Index c = 0; c < dim; ++c) mean[c] += u(i, c);
    }
    mean /= static_cast<double>(rows);
    Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(dim, dim);
    for (Index i = 0; i < rows; ++i) {
        for (Index a = 0; a < dim; ++a) {
            for (Index b = 0; b < dim; ++b) cov(a, b) += (u(i, a) - mean[a]) * (u(i, b) - mean[b]);
        }
    }
    return cov / static_cast<double>(rows - 1);
}

// The largest absolute difference between got and expected, or got and -expected, whichever is smaller.
double distance_up_to_sign(const Vector& got, const Vector& expected) {
    return std::min((got - expected).cwiseAbs().maxCoeff(), (got + expected).cwiseAbs().maxCoeff());
}

void expect_same_bits(const VocabularyScan& a, const VocabularyScan& b) {
    const auto same = [](const Vector& x, const Vector& y) {
        // An empty vector's data() may be null, which memcmp must not be given.
        return x.size() == y.size() &&
               (x.size() == 0 ||
                std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.size()) * sizeof(double)) == 0);
    };
    EXPECT_TRUE(same(a.input_norm, b.input_norm));
    EXPECT_TRUE(same(a.output_norm, b.output_norm));
    ASSERT_EQ(a.output_distance.has_value(), b.output_distance.has_value());
    if (a.output_distance) {
        EXPECT_TRUE(same(*a.output_distance, *b.output_distance));
    }
    ASSERT_EQ(a.input_output_cosine.has_value(), b.input_output_cosine.has_value());
    if (a.input_output_cosine) {
        EXPECT_TRUE(same(*a.input_output_cosine, *b.input_output_cosine));
    }
    EXPECT_TRUE(same(a.principal_component, b.principal_component));
    EXPECT_EQ(std::memcmp(&a.principal_eigenvalue, &b.principal_eigenvalue, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&a.threshold, &b.threshold, sizeof(double)), 0);
    EXPECT_EQ(a.candidates, b.candidates);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.main_indicator, b.main_indicator);
}

using Workers = embed_test::WorkerCount;

// ---- the method -----------------------------------------------------------------------------------

TEST(Scan, PlantedRowsAreCandidatesAndEveryIndicatorMatchesNumpy) {
    EMBED_REQUIRE_NUMPY();
    const Planted t = planted_tables(600, 24, 10, 1);
    ScanOptions options;
    options.reference_ids = {t.planted[0], t.planted[3], t.planted[3], t.planted[7]};  // a duplicate counts once
    const VocabularyScan scan = embed::scan_vocabulary(t.input, t.output, options);
    EXPECT_TRUE(scan.principal_component_converged) << scan.component_error_bound;
    EXPECT_EQ(scan.main_indicator, "output_distance");
    for (const Index id : t.planted) {
        EXPECT_NE(std::find(scan.candidates.begin(), scan.candidates.end(), id), scan.candidates.end()) << id;
    }
    const NumpyScan expected = numpy_scan(t.input, &t.output, options);
    expect_close(scan.input_norm, expected.input_norm, 1e-9, "input_norm");
    expect_close(scan.output_norm, expected.output_norm, 1e-9, "output_norm");
    ASSERT_TRUE(scan.output_distance && scan.input_output_cosine);
    expect_close(*scan.output_distance, expected.output_distance, 1e-9, "output_distance");
    expect_close(*scan.input_output_cosine, expected.input_output_cosine, 1e-9, "input_output_cosine");
    EXPECT_NEAR(scan.threshold, expected.threshold, 1e-9);
    EXPECT_EQ(scan.candidates, expected.candidates);
}

TEST(Scan, WithoutReferencesTheInputNormDecidesAndMatchesNumpy) {
    EMBED_REQUIRE_NUMPY();
    const Planted t = planted_tables(500, 16, 8, 2);
    const VocabularyScan scan = embed::scan_vocabulary(t.input, t.output);
    EXPECT_EQ(scan.main_indicator, "input_norm");
    EXPECT_FALSE(scan.output_distance);
    for (const Index id : t.planted) {
        EXPECT_NE(std::find(scan.candidates.begin(), scan.candidates.end(), id), scan.candidates.end()) << id;
    }
    const NumpyScan expected = numpy_scan(t.input, &t.output, ScanOptions{});
    expect_close(scan.input_norm, expected.input_norm, 1e-9, "input_norm");
    EXPECT_EQ(scan.threshold, expected.threshold);
    EXPECT_EQ(scan.candidates, expected.candidates);
}

TEST(Scan, TiedTablesHaveNoInputOutputCosineAndMatchNumpy) {
    EMBED_REQUIRE_NUMPY();
    const Planted t = planted_tables(400, 12, 6, 3);
    ScanOptions options;
    options.reference_ids = {t.planted[1], t.planted[2]};
    const Table copy = t.output;  // equal bit for bit, another object
    const NumpyScan expected = numpy_scan(t.output, nullptr, options);
    for (const Table* input : {&t.output, &copy}) {
        const VocabularyScan scan = embed::scan_vocabulary(*input, t.output, options);
        EXPECT_FALSE(scan.input_output_cosine);
        EXPECT_EQ(scan.output_norm, scan.input_norm);
        ASSERT_TRUE(scan.output_distance);
        expect_close(*scan.output_distance, expected.output_distance, 1e-9, "output_distance");
        EXPECT_EQ(scan.candidates, expected.candidates);
    }
    // Different widths: no cosine either, and each table keeps its own width.
    const Table narrower = t.input.leftCols(5);
    const VocabularyScan scan = embed::scan_vocabulary(narrower, t.output, options);
    EXPECT_FALSE(scan.input_output_cosine);
    EXPECT_EQ(scan.principal_component.size(), 12);
}

TEST(Scan, ComponentMatchesTheExplicitCovariancesEigenvector) {
    for (const Index dim : {Index{6}, Index{40}, Index{130}}) {
        const Planted t = planted_tables(1500, dim, 5, 4 + static_cast<std::uint64_t>(dim));
        ScanOptions options;
        options.reference_ids = {t.planted[0]};
        const VocabularyScan scan = embed::scan_vocabulary(t.input, t.output, options);
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> exact(explicit_covariance(t.output));
        const Vector top = exact.eigenvectors().col(dim - 1);
        EXPECT_TRUE(scan.principal_component_converged) << dim << ": bound " << scan.component_error_bound;
        EXPECT_LE(distance_up_to_sign(scan.principal_component, top), 1e-12) << dim;
        EXPECT_NEAR(scan.principal_eigenvalue, exact.eigenvalues()[dim - 1], 1e-12 * exact.eigenvalues()[dim - 1]);
        // The gap estimate errs on the safe side, and not by much.
        const double gap = exact.eigenvalues()[dim - 1] - exact.eigenvalues()[dim - 2];
        EXPECT_LE(scan.eigenvalue_gap, gap * (1 + 1e-12)) << dim;
        EXPECT_GE(scan.eigenvalue_gap, 0.9 * gap) << dim;
        // The documented sign: the entry of largest magnitude is positive.
        Index largest = 0;
        scan.principal_component.cwiseAbs().maxCoeff(&largest);
        EXPECT_GT(scan.principal_component[largest], 0.0);
    }
}

// Rows +-a_j e_j: the covariance is exactly diagonal, with the top eigenvalue repeated (or nearly).
Table diagonal_design(Index dim, double second_scale) {
    Table u = Table::Zero(2 * dim, dim);
    for (Index j = 0; j < dim; ++j) {
        const double a = j == 0 ? 2.0 : j == 1 ? 2.0 * second_scale : 1.0;
        u(2 * j, j) = a;
        u(2 * j + 1, j) = -a;
    }
    return u;
}

TEST(Scan, RepeatedTopEigenvalueIsReportedNotConverged) {
    for (const double second_scale : {1.0, 1.0 - 1e-15}) {
        for (const Index dim : {Index{5}, Index{20}}) {
            const Table u = diagonal_design(dim, second_scale);
            ScanOptions options;
            options.reference_ids = {2 * dim - 1};
            const VocabularyScan scan = embed::scan_vocabulary(u, u, options);
            EXPECT_FALSE(scan.principal_component_converged) << dim << " " << second_scale;
            EXPECT_GT(scan.component_error_bound, 1e-12);
            EXPECT_NEAR(scan.principal_eigenvalue, 8.0 / static_cast<double>(2 * dim - 1), 1e-12);
        }
    }
}

TEST(Scan, SameResultAtOneTwoAndSevenThreads) {
    const Planted t = planted_tables(4000, 64, 20, 5);
    ScanOptions options;
    options.reference_ids = {t.planted[0], t.planted[5]};
    VocabularyScan one;
    {
        const Workers workers(1);
        one = embed::scan_vocabulary(t.input, t.output, options);
    }
    for (const int threads : {2, 7}) {
        const Workers workers(threads);
        expect_same_bits(embed::scan_vocabulary(t.input, t.output, options), one);
    }
}

TEST(Scan, NarrowTablesGiveTheScanOfTheirWidenedValues) {
    const Planted t = planted_tables(700, 24, 6, 6);
    ScanOptions options;
    options.reference_ids = {t.planted[0], t.planted[1]};
    const embed::TableF32 in32 = t.input.cast<float>();
    const embed::TableF32 out32 = t.output.cast<float>();
    expect_same_bits(embed::scan_vocabulary(in32, out32, options),
                     embed::scan_vocabulary(Table(in32.cast<double>()), Table(out32.cast<double>()), options));
    const embed::TableBF16 in16 = in32.cast<Eigen::bfloat16>();
    const embed::TableBF16 out16 = out32.cast<Eigen::bfloat16>();
    const Table in16_wide = in16.cast<float>().cast<double>();
    const Table out16_wide = out16.cast<float>().cast<double>();
    expect_same_bits(embed::scan_vocabulary(in16, out16, options),
                     embed::scan_vocabulary(in16_wide, out16_wide, options));
    // A view of the same storage gives the same scan as the owned table.
    const embed::TableViewF32 view(in32.data(), in32.rows(), in32.cols());
    const embed::TableViewF32 out_view(out32.data(), out32.rows(), out32.cols());
    expect_same_bits(embed::scan_vocabulary(view, out_view, options), embed::scan_vocabulary(in32, out32, options));
}

// ---- quantised tables in their blocks ---------------------------------------------------------------

// A table quantised into a .gguf by save_table, opened in its blocks, and the float32 table of the same file
// (load_table_f32: ggml's dequantisation, the values the scan of the blocks must see).
struct QuantisedPair {
    embed::QuantisedTable blocks;
    embed::TableF32 widened;
};

QuantisedPair quantised_file(const std::filesystem::path& file) {
    embed::OpenedTable opened = embed::open_table(file);
    return {std::get<embed::QuantisedTable>(opened.table), embed::load_table_f32(file)};
}

QuantisedPair quantised(const Table& t, embed::ElementType type, const embed_test::TempDir& dir,
                        const std::string& name) {
    const std::filesystem::path file = dir.path() / (name + ".gguf");
    embed::save_table(file, t, "token_embd.weight", type);
    return quantised_file(file);
}

void expect_same_component_bits(const VocabularyScan& a, const VocabularyScan& b) {
    EXPECT_EQ(std::memcmp(&a.eigenvalue_gap, &b.eigenvalue_gap, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&a.component_error_bound, &b.component_error_bound, sizeof(double)), 0);
    EXPECT_EQ(a.principal_component_converged, b.principal_component_converged);
}

// A Q4_K input beside a Q6_K output (a llama.cpp Q4_K_M model's pair), enough rows that every thread count
// splits the groups: each field is the scan of the float32 tables, bit for bit, at 1, 2 and 7 threads.
TEST(Scan, QuantisedTablesGiveTheScanOfTheirFloat32TablesAtAnyThreadCount) {
    const embed_test::TempDir dir;
    const Planted t = planted_tables(3000, 256, 12, 8);
    const QuantisedPair input = quantised(t.input, embed::ElementType::q4_k, dir, "input");
    const QuantisedPair output = quantised(t.output, embed::ElementType::q6_k, dir, "output");
    ScanOptions options;
    options.reference_ids = {t.planted[0], t.planted[3], t.planted[7]};
    const VocabularyScan want = embed::scan_vocabulary(input.widened, output.widened, options);
    ASSERT_TRUE(want.output_distance && want.input_output_cosine);
    ASSERT_GT(want.iterations, 0);
    for (const int threads : {1, 2, 7}) {
        SCOPED_TRACE(threads);
        const Workers workers(threads);
        const VocabularyScan got = embed::scan_vocabulary(input.blocks, output.blocks, options);
        expect_same_bits(got, want);
        expect_same_component_bits(got, want);
    }
}

// Tied: one table passed twice, or two objects holding equal values (a copy of the blocks, or another type that
// dequantises alike), is one table, as the float32 tables compare equal; without references, input_norm decides.
TEST(Scan, QuantisedTablesThatAreOneTableScanAsTied) {
    const embed_test::TempDir dir;
    const Planted t = planted_tables(700, 64, 5, 9);
    const QuantisedPair table = quantised(t.input, embed::ElementType::q8_0, dir, "table");
    const embed::QuantisedTable copy(table.blocks.type(), table.blocks.rows(), table.blocks.cols(),
                                     std::span(table.blocks.data(), static_cast<std::size_t>(table.blocks.bytes())));
    ScanOptions options;
    options.reference_ids = {t.planted[1]};
    const VocabularyScan want = embed::scan_vocabulary(table.widened, table.widened, options);
    EXPECT_FALSE(want.input_output_cosine);
    expect_same_bits(embed::scan_vocabulary(table.blocks, table.blocks, options), want);
    expect_same_bits(embed::scan_vocabulary(table.blocks, copy, options), want);
    expect_same_bits(embed::scan_vocabulary(table.blocks, table.blocks, ScanOptions{}),
                     embed::scan_vocabulary(table.widened, table.widened, ScanOptions{}));
    // Another table of the same shape is not the same table: its cosine is there, as for the float32 pair.
    const QuantisedPair other = quantised(t.output, embed::ElementType::q8_0, dir, "other");
    const VocabularyScan untied = embed::scan_vocabulary(table.blocks, other.blocks, options);
    ASSERT_TRUE(untied.input_output_cosine);
    expect_same_bits(untied, embed::scan_vocabulary(table.widened, other.widened, options));
}

// A Q8_0 block whose fp16 scale is NaN dequantises to NaN: that row is left out of the component and its
// distance is NaN, as in the float32 table; rows of a zero scale are all zeros.
TEST(Scan, QuantisedRowsOfNaNOrZeroScalesAreTheFloat32TablesRows) {
    const embed_test::TempDir dir;
    const Planted t = planted_tables(400, 64, 4, 10);
    embed::save_table(dir.path() / "clean.gguf", t.output, "token_embd.weight", embed::ElementType::q8_0);
    const embed::QuantisedTable clean = std::get<embed::QuantisedTable>(embed::open_table(dir.path() / "clean.gguf").table);
    std::string blocks(reinterpret_cast<const char*>(clean.data()), static_cast<std::size_t>(clean.bytes()));
    const auto set_scale = [&](Index row, Index block, std::uint16_t half) {
        const auto at = static_cast<std::size_t>(row * clean.row_bytes() + block * 34);
        blocks[at] = static_cast<char>(half & 0xFF);
        blocks[at + 1] = static_cast<char>(half >> 8);
    };
    set_scale(17, 1, 0x7E00);  // NaN
    set_scale(230, 0, 0x0000);  // +0: the block's values are zeros
    set_scale(230, 1, 0x8000);  // -0
    const std::filesystem::path file = dir.write(
        "planted.gguf",
        embed_test::gguf_file({{"token_embd.weight", {64, 400}, 8, 0}}, blocks));
    const QuantisedPair planted = quantised_file(file);
    ASSERT_TRUE(std::isnan(planted.widened(17, 32)));
    ScanOptions options;
    options.reference_ids = {t.planted[0], t.planted[2], 17};
    const VocabularyScan want = embed::scan_vocabulary(planted.widened, planted.widened, options);
    ASSERT_TRUE(want.output_distance && std::isnan((*want.output_distance)[17]));
    for (const int threads : {1, 7}) {
        const Workers workers(threads);
        const VocabularyScan got = embed::scan_vocabulary(planted.blocks, planted.blocks, options);
        ASSERT_TRUE(got.output_distance);
        EXPECT_TRUE(std::isnan((*got.output_distance)[17]));
        expect_same_bits(got, want);
    }
}

TEST(Scan, PercentileFollowsNumpysLinearRuleOnTies) {
    EMBED_REQUIRE_NUMPY();
    // Input norms with ties: row i is (norm_i, 0).
    const std::vector<double> norms = {3, 1, 2, 2, 8, 1, 2, 5, 2, 3, 13, 1};
    Table input = Table::Zero(static_cast<Index>(norms.size()), 2);
    for (std::size_t i = 0; i < norms.size(); ++i) input(static_cast<Index>(i), 0) = norms[i];
    const std::vector<double> percentiles = {0.0, 2.0, 37.5, 50.0, 62.1, 99.9, 100.0};
    ScanOptions options;
    const NumpyScan expected = numpy_scan(input, nullptr, options, percentiles);
    ASSERT_EQ(expected.thresholds.size(), percentiles.size() + 1);
    for (std::size_t p = 0; p < percentiles.size(); ++p) {
        options.percentile = percentiles[p];
        const VocabularyScan scan = embed::scan_vocabulary(input, input, options);
        EXPECT_EQ(scan.threshold, expected.thresholds[p + 1]) << percentiles[p];
        EXPECT_EQ(scan.candidates, expected.candidate_lists[p + 1]) << percentiles[p];
    }
}

// ---- edge cases and bad input ---------------------------------------------------------------------

TEST(Scan, BadInputIsRejectedNamingTheValue) {
    const Planted t = planted_tables(50, 4, 2, 7);
    const auto message_of = [&](const ScanOptions& options, const Table& output) -> std::string {
        try {
            embed::scan_vocabulary(t.input, output, options);
        } catch (const std::exception& e) {
            return e.what();
        }
        return "no error";
    };
    ScanOptions options;
    options.reference_ids = {3, 50};
    EXPECT_THROW(embed::scan_vocabulary(t.input, t.output, options), std::out_of_range);
    EXPECT_NE(message_of(options, t.output).find("reference id 50 is outside the vocabulary [0, 50)"),
              std::string::npos);
    options.reference_ids = {-1};
    EXPECT_THROW(embed::scan_vocabulary(t.input, t.output, options), std::out_of_range);
    options.reference_ids = {};
    for (const double q : {-0.5, 100.5, std::numeric_limits<double>::quiet_NaN()}) {
        options.percentile = q;
        EXPECT_THROW(embed::scan_vocabulary(t.input, t.output, options), std::invalid_argument) << q;
    }
    options.percentile = 101.0;
    EXPECT_NE(message_of(options, t.output).find("got 101"), std::string::npos);
    options.percentile = 2.0;
    const Table shorter = t.output.topRows(49);
    EXPECT_THROW(embed::scan_vocabulary(t.input, shorter, options), std::invalid_argument);
    EXPECT_NE(message_of(options, shorter).find("50 rows and the output table 49"), std::string::npos);
}

TEST(Scan, EmptyAndZeroTablesGiveDocumentedResults) {
    ScanOptions options;
    const Table empty(0, 8);
    const VocabularyScan none = embed::scan_vocabulary(empty, empty, options);
    EXPECT_EQ(none.input_norm.size(), 0);
    EXPECT_TRUE(std::isnan(none.threshold));
    EXPECT_TRUE(none.candidates.empty());

    const Table zeros = Table::Zero(6, 3);
    options.reference_ids = {1};
    const VocabularyScan flat = embed::scan_vocabulary(zeros, zeros, options);
    EXPECT_FALSE(flat.principal_component_converged);
    EXPECT_EQ(flat.principal_component, Vector::Zero(3));
    // Every U' is zero, so every cosine is 0 and every distance 1: all tie, all are candidates.
    EXPECT_EQ(*flat.output_distance, Vector::Constant(6, 1.0));
    EXPECT_EQ(flat.candidates, (std::vector<Index>{0, 1, 2, 3, 4, 5}));

    const Table one_row = Table::Constant(1, 3, 2.0);
    options.reference_ids = {0};
    const VocabularyScan single = embed::scan_vocabulary(one_row, one_row, options);
    EXPECT_EQ(single.principal_component, Vector::Zero(3));
    EXPECT_EQ(single.candidates, (std::vector<Index>{0}));
}

TEST(Scan, NonFiniteRowsAreLeftOutAndNeverCandidates) {
    EMBED_REQUIRE_NUMPY();
    const Planted t = planted_tables(300, 10, 4, 8);
    Table input = t.input;
    Table output = t.output;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    input(5, 2) = nan;
    output(7, 1) = nan;
    output(9, 0) = std::numeric_limits<double>::infinity();
    ScanOptions options;
    options.reference_ids = {t.planted[0], 7};  // a NaN reference row adds nothing to r'
    options.percentile = 50.0;
    const VocabularyScan scan = embed::scan_vocabulary(input, output, options);
    EXPECT_TRUE(std::isnan(scan.input_norm[5]));
    EXPECT_TRUE(std::isnan((*scan.output_distance)[7]));
    EXPECT_TRUE(std::isnan((*scan.output_distance)[9]));
    for (const Index id : scan.candidates) EXPECT_TRUE(id != 7 && id != 9) << id;
    // The same as numpy on the table without those rows (the rows' ids shift down past 7 and 9).
    Table kept_in(298, 10), kept_out(298, 10);
    for (Index i = 0, k = 0; i < 300; ++i) {
        if (i == 7 || i == 9) continue;
        kept_in.row(k) = t.input.row(i);
        kept_out.row(k++) = output.row(i);
    }
    ScanOptions kept_options;
    kept_options.reference_ids = {t.planted[0] - 2};
    kept_options.percentile = 50.0;
    const NumpyScan expected = numpy_scan(kept_in, &kept_out, kept_options);
    for (Index i = 0, k = 0; i < 300; ++i) {
        if (i == 7 || i == 9) continue;
        EXPECT_NEAR((*scan.output_distance)[i], expected.output_distance[k++], 1e-9) << i;
    }
    EXPECT_NEAR(scan.threshold, expected.threshold, 1e-9);
}

// ---- unused_ids -----------------------------------------------------------------------------------

TEST(UnusedIds, UnusedTypesAndControlTokensNamedUnusedOrReserved) {
    using embed::TokenType;
    const embed::Vocabulary vocabulary(
        {"a", "<unused0>", "<|reserved_special_token_3|>", "<s>", "b", "[UNUSED]", "x", "<unused1>", ""},
        {TokenType::normal, TokenType::control, TokenType::control, TokenType::control, TokenType::unused,
         TokenType::control, TokenType::normal, TokenType::normal, TokenType::unused},
        embed::TokenReading::as_stored);
    // "[UNUSED]" does not match (case-sensitive); a normal "<unused1>" is no control token.
    EXPECT_EQ(embed::unused_ids(vocabulary), (std::vector<Index>{1, 2, 4, 8}));
    EXPECT_TRUE(embed::unused_ids(embed::Vocabulary()).empty());
}

}  // namespace
