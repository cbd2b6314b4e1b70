// The rotation's polar factor (lib/compare/polar_factor.cpp) against test/support/polar_reference.py, the
// documented iteration in CPython floats, bit for bit: a build with other flags (.ci/run's -march=native
// -ffast-math) that moved one bit fails here. Also against Eigen's JacobiSVD (U V^T, an independent
// decomposition) for accuracy, and the singular cases' documented answers.

// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// the SVD's small products) may read an uninitialised register. The warning is reported at the intrinsic's
// header line, so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // the same false report, as -O1 words it
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/SVD>
#include <gtest/gtest.h>

#include "compare/measures.hpp"
#include "cpython.hpp"
#include "embed/table.hpp"
#include "worker_count.hpp"

namespace {

using embed::Index;
using embed::Table;

std::string hex(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%a", value);
    return text;
}

// polar_reference.py's answer for m (n, n), or an empty table when there is no python3.
Table cpython_polar_factor(const Table& m) {
#ifdef EMBED_TEST_PYTHON
    // Appended piece by piece: GCC 12 warns, wrongly, of an overlapping copy in " " + text.
    std::string command = "'";
    command.append(EMBED_TEST_PYTHON).append("' '").append(EMBED_POLAR_REFERENCE).append("' ");
    command.append(std::to_string(m.rows()));
    for (Index i = 0; i < m.rows(); ++i) {
        for (Index j = 0; j < m.cols(); ++j) command.append(" ").append(hex(m(i, j)));
    }
    const std::vector<double> values = embed_test::parse_hex_doubles([&] {
        FILE* pipe = popen(command.c_str(), "r");
        std::string output;
        if (pipe == nullptr) return output;
        char buffer[4096];
        std::size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
        if (pclose(pipe) != 0) output.clear();
        return output;
    }());
    if (static_cast<Index>(values.size()) != m.size()) return Table(0, 0);
    Table out(m.rows(), m.cols());
    for (Index k = 0; k < m.size(); ++k) out.data()[k] = values[static_cast<std::size_t>(k)];
    return out;
#else
    static_cast<void>(m);
    return Table(0, 0);
#endif
}

// Every entry's bits equal, reported as hex.
void expect_same_bits(const Table& got, const Table& want, const std::string& what) {
    ASSERT_EQ(got.rows(), want.rows()) << what;
    ASSERT_EQ(got.cols(), want.cols()) << what;
    int differing = 0;
    for (Index i = 0; i < got.rows(); ++i) {
        for (Index j = 0; j < got.cols(); ++j) {
            if (std::bit_cast<std::uint64_t>(got(i, j)) == std::bit_cast<std::uint64_t>(want(i, j))) continue;
            if (++differing <= 5) {
                ADD_FAILURE() << what << " (" << i << ", " << j << "): library " << hex(got(i, j)) << ", CPython "
                              << hex(want(i, j));
            }
        }
    }
    EXPECT_EQ(differing, 0) << what;
}

void expect_cpythons_bits(const Table& m, const std::string& what) {
    const Table want = cpython_polar_factor(m);
    ASSERT_EQ(want.rows(), m.rows()) << what << ": polar_reference.py failed";
    expect_same_bits(embed::detail::polar_factor(m), want, what);
}

// max |R^T R - I| by explicit loops.
double orthogonality_error(const Table& r) {
    double worst = 0.0;
    for (Index i = 0; i < r.cols(); ++i) {
        for (Index j = 0; j < r.cols(); ++j) {
            double dot = 0.0;
            for (Index k = 0; k < r.rows(); ++k) dot += r(k, i) * r(k, j);
            worst = std::max(worst, std::abs(dot - (i == j ? 1.0 : 0.0)));
        }
    }
    return worst;
}

// trace(R^T M) by explicit loops: the Procrustes objective R maximises, at most the sum of M's singular values.
double procrustes_trace(const Table& r, const Table& m) {
    double total = 0.0;
    for (Index i = 0; i < m.rows(); ++i) {
        for (Index j = 0; j < m.cols(); ++j) total += r(i, j) * m(i, j);
    }
    return total;
}

Eigen::JacobiSVD<Eigen::MatrixXd> jacobi_svd(const Table& m) {
    return Eigen::JacobiSVD<Eigen::MatrixXd>(Eigen::MatrixXd(m), Eigen::ComputeFullU | Eigen::ComputeFullV);
}

// A_m^T B_m for rows random tables (rows, n): the matrix fit_rotation hands over.
Table cross_product(Index rows, Index n, std::uint64_t seed) {
    const Table a = embed::make_table(rows, n, seed);
    const Table b = embed::make_table(rows, n, seed + 1);
    Table m = Table::Zero(n, n);
    for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < n; ++j) {
            for (Index k = 0; k < rows; ++k) m(i, j) += a(k, i) * b(k, j);
        }
    }
    return m;
}

TEST(PolarFactor, RandomMatricesAreCPythonsBitForBit) {
    EMBED_REQUIRE_PYTHON();
    expect_cpythons_bits(embed::make_table(5, 5, 1), "5 x 5");
    expect_cpythons_bits(embed::make_table(9, 9, 2), "9 x 9");
    expect_cpythons_bits(cross_product(200, 9, 3), "9 x 9 cross product");
    expect_cpythons_bits(cross_product(300, 40, 5), "40 x 40 cross product");
    // Past several of the elimination's 16-pivot panels, the last one partial, with row swaps across them.
    expect_cpythons_bits(embed::make_table(70, 70, 4), "70 x 70");
}

// The elimination splits its row updates between threads once a panel's work passes the pool's threshold (from
// about 100 x 100): 300 x 300 at 1, 2 and 7 threads gives one set of bits, and so does a 70 x 70 that CPython
// checked above (one thread's work there, whatever the count).
TEST(PolarFactor, ThreadCountChangesNoBit) {
    const Table m = embed::make_table(300, 300, 6);
    Table one_thread;
    {
        const embed_test::WorkerCount threads(1);
        one_thread = embed::detail::polar_factor(m);
    }
    for (const int count : {2, 7}) {
        const embed_test::WorkerCount threads(count);
        expect_same_bits(embed::detail::polar_factor(m), one_thread, std::to_string(count) + " threads");
    }
    EXPECT_LT(orthogonality_error(one_thread), 1e-13);
}

TEST(PolarFactor, NearlySingularMatricesAreCPythonsBitForBit) {
    EMBED_REQUIRE_PYTHON();
    // Row 6 is row 0 plus 1e-13 of row 1: condition number about 1e14.
    Table m = embed::make_table(7, 7, 7);
    m.row(6) = m.row(0) + 1e-13 * m.row(1);
    expect_cpythons_bits(m, "7 x 7 nearly singular");
    EXPECT_LT(orthogonality_error(embed::detail::polar_factor(m)), 1e-13);
    // Three pairs in eight dimensions: rank 3, singular up to rounding.
    const Table low_rank = cross_product(3, 8, 9);
    expect_cpythons_bits(low_rank, "8 x 8 of rank 3");
    // A column of zeros (a dimension no row of b uses): an exact zero pivot, so the shifted retry answers.
    Table dead = cross_product(50, 6, 11);
    dead.col(2).setZero();
    expect_cpythons_bits(dead, "6 x 6, column 2 zero");
}

TEST(PolarFactor, NonsingularMatricesGiveTheSvdsRotation) {
    for (const Table& m : {embed::make_table(5, 5, 1), embed::make_table(9, 9, 2), cross_product(300, 40, 5)}) {
        const auto svd = jacobi_svd(m);
        const Table want = svd.matrixU() * svd.matrixV().transpose();
        const Table got = embed::detail::polar_factor(m);
        EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-12) << m.rows();
        EXPECT_LT(orthogonality_error(got), 1e-14) << m.rows();
    }
}

// Singular M: R is not unique, but every answer must be orthogonal and reach the largest trace(R^T M) (the sum
// of M's singular values), as a minimiser of ||A R - B||_F does.
TEST(PolarFactor, SingularMatricesGiveAnOrthogonalMinimiser) {
    Table dead = cross_product(50, 6, 11);
    dead.col(2).setZero();
    Table dead_row = cross_product(50, 6, 12);
    dead_row.row(4).setZero();
    for (const Table& m : {cross_product(3, 8, 9), cross_product(1, 5, 13), dead, dead_row}) {
        const Table r = embed::detail::polar_factor(m);
        EXPECT_LT(orthogonality_error(r), 1e-13) << m.rows();
        const double nuclear = jacobi_svd(m).singularValues().sum();
        EXPECT_NEAR(procrustes_trace(r, m), nuclear, 1e-10 * nuclear) << m.rows();
    }
    // The zero column leaves e_2 free: the shifted matrix's polar factor maps it onto M's left null vector u_0,
    // with the sign that leans to the identity (R(2, 2) = |u_0[2]| > 0).
    const Table r = embed::detail::polar_factor(dead);
    const auto svd = jacobi_svd(dead);
    ASSERT_LT(svd.singularValues()(5), 1e-12 * svd.singularValues()(0));
    const Eigen::VectorXd left_null = svd.matrixU().col(5);
    // The shift moves R by about 2^-40 (1e-12) over M's smallest nonzero singular value (relative).
    EXPECT_NEAR(std::abs(r.col(2).dot(left_null)), 1.0, 1e-10);
    EXPECT_NEAR(r(2, 2), std::abs(left_null(2)), 1e-10);
    EXPECT_GT(r(2, 2), 0.01);
}

TEST(PolarFactor, ShiftStillSingularGivesTheIdentity) {
    // Normalised (largest entry 1 -> 0.5), the diagonal is (0, -2^-40, 0.5): singular, and the shift by 2^-40
    // makes it (2^-40, 0, 0.5 + 2^-40), singular again.
    Table m = Table::Zero(3, 3);
    m(1, 1) = -std::ldexp(1.0, -39);
    m(2, 2) = 1.0;
    EXPECT_EQ(embed::detail::polar_factor(m), Table(Table::Identity(3, 3)));
    if (embed_test::have_python()) expect_cpythons_bits(m, "shift still singular");
}

TEST(PolarFactor, ZeroNonFiniteAndEmptyMatrices) {
    EXPECT_EQ(embed::detail::polar_factor(Table::Zero(4, 4)), Table(Table::Identity(4, 4)));
    Table m = embed::make_table(4, 4, 3);
    m(1, 2) = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(embed::detail::polar_factor(m).array().isNaN().all());
    m(1, 2) = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(embed::detail::polar_factor(m).array().isNaN().all());
    EXPECT_EQ(embed::detail::polar_factor(Table(0, 0)).size(), 0);
    // A 1 x 1 matrix's polar factor is its sign.
    EXPECT_EQ(embed::detail::polar_factor(Table::Constant(1, 1, -3.0))(0, 0), -1.0);
    EXPECT_EQ(embed::detail::polar_factor(Table::Constant(1, 1, 1e-300))(0, 0), 1.0);
}

}  // namespace
