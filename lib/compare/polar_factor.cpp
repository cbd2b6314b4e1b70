// The orthogonal polar factor by Higham's scaled Newton iteration, written so that every floating-point
// operation happens in an order the size alone fixes: no library decomposition (Eigen's SVD vectorises per
// instruction set and blocks by the cache sizes, so its bits follow the compiler flags), inner loops that are
// element-wise (a vectorised copy computes the same IEEE operations on each element), and every reduction
// (the norms, the pivot search) one sequential loop. The library is compiled with -ffp-contract=off and
// without fast math, so no FMA or reassociation changes a bit either. test/support/polar_reference.py is the
// same algorithm in CPython floats, and polar_factor_test compares the two bit for bit.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "compare/measures.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {
namespace {

// A square matrix (n, n), row by row.
using Square = std::vector<double>;

// Newton steps at most, per attempt. Scaled Newton needs about 10 from a condition number of 1e16; the cap
// only ends an attempt that rounding keeps from settling.
constexpr int kMaxNewtonSteps = 50;

// The iteration stops once a step moves X by at most this in the Frobenius norm: the error then is about
// the square of it, 2^-53, as each step squares it near the end.
constexpr double kConverged = 0x1p-26;

// Scaling is switched off once a step moves X by at most this share of its norm: near the polar factor the
// scale factors are 1 up to rounding, and the plain step converges quadratically to it.
constexpr double kScalingOff = 0.01;

// The shift added to the diagonal of the normalised M (largest entry in [0.5, 1)) when M is singular.
constexpr double kSingularShift = 0x1p-40;

// sqrt of the squares summed in storage order, one sequential double sum.
double frobenius_norm(const Square& x) {
    double sum = 0.0;
    for (const double v : x) sum += v * v;
    return std::sqrt(sum);
}

// The Frobenius norm of x - y, the differences' squares summed in storage order.
double frobenius_distance(const Square& x, const Square& y) {
    double sum = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double difference = x[i] - y[i];
        sum += difference * difference;
    }
    return std::sqrt(sum);
}

// Pivots per panel of the elimination below: the panel's pivot rows (kPanel x n doubles, 512 KiB at n = 4096)
// stay in cache while each other row takes their updates, so the matrix streams through memory once per
// panel, not once per pivot. The bits do not depend on it: each entry sees the same operations in the same
// order whatever the panel.
constexpr Index kPanel = 16;

// a (n, n) becomes its inverse by Gauss-Jordan elimination in place with partial pivoting. Per column p: the
// first row at or below p with the largest |a(i, p)| (scanned downwards) is swapped up; row p is divided by
// its pivot (a(p, p) set to 1 first, so that column p ends holding the inverse's column); every other row i
// takes a(i, j) - f a(p, j) for every j, f its a(i, p) before a(i, p) is set to 0. At the end the columns are
// swapped back in reverse order of the row swaps. False, with a left half-done, when a pivot is zero (or NaN).
//
// The work runs a panel of kPanel pivots at a time, with every entry's operations as above, in the same
// order, on any number of threads: first the panel's columns go through its pivots (which finds the pivots,
// and each row's factor f per pivot, kept with the row through the swaps); then the other columns take the
// panel's row swaps (they only move values), its pivot rows are brought up to date one after the other and
// kept, and every row takes the updates of the pivots it has not taken yet, in pivot order (the rows split
// between threads).
bool invert_in_place(Square& a, Index n) {
    std::vector<Index> swapped_with(static_cast<std::size_t>(n));
    std::vector<double> factors(static_cast<std::size_t>(n * kPanel));    // (n, kPanel): f per row and pivot
    std::vector<double> pivots(static_cast<std::size_t>(kPanel));
    std::vector<double> pivot_rows(static_cast<std::size_t>(kPanel * n));  // (kPanel, n): row p as pivot p used it
    const auto row = [&](Index i) { return a.data() + i * n; };
    const auto factor_of = [&](Index i, Index panel_pivot) -> double& {
        return factors[static_cast<std::size_t>(i * kPanel + panel_pivot)];
    };
    for (Index first = 0; first < n; first += kPanel) {
        const Index last = std::min(n, first + kPanel);
        // The panel's columns [first, last) through its pivots.
        for (Index p = first; p < last; ++p) {
            Index pivot_row = p;
            double largest = std::abs(row(p)[p]);
            for (Index i = p + 1; i < n; ++i) {
                const double candidate = std::abs(row(i)[p]);
                if (candidate > largest) {
                    largest = candidate;
                    pivot_row = i;
                }
            }
            if (!(largest > 0.0)) return false;
            swapped_with[static_cast<std::size_t>(p)] = pivot_row;
            if (pivot_row != p) {
                std::swap_ranges(row(p) + first, row(p) + last, row(pivot_row) + first);
                std::swap_ranges(&factor_of(p, 0), &factor_of(p, 0) + kPanel, &factor_of(pivot_row, 0));
            }
            double* const row_p = row(p);
            const double pivot = row_p[p];
            pivots[static_cast<std::size_t>(p - first)] = pivot;
            row_p[p] = 1.0;
            for (Index j = first; j < last; ++j) row_p[j] = row_p[j] / pivot;
            for (Index i = 0; i < n; ++i) {
                if (i == p) continue;
                double* const row_i = row(i);
                const double factor = row_i[p];
                factor_of(i, p - first) = factor;
                row_i[p] = 0.0;
                for (Index j = first; j < last; ++j) row_i[j] = row_i[j] - factor * row_p[j];
            }
        }
        // The other columns, [0, first) and [last, n).
        for (Index p = first; p < last; ++p) {
            const Index other = swapped_with[static_cast<std::size_t>(p)];
            if (other == p) continue;
            std::swap_ranges(row(p), row(p) + first, row(other));
            std::swap_ranges(row(p) + last, row(p) + n, row(other) + last);
        }
        const auto take_update = [&](double* target, Index panel_pivot, double factor) {
            const double* const source = pivot_rows.data() + panel_pivot * n;
            for (Index j = 0; j < first; ++j) target[j] = target[j] - factor * source[j];
            for (Index j = last; j < n; ++j) target[j] = target[j] - factor * source[j];
        };
        for (Index p = first; p < last; ++p) {
            double* const row_p = row(p);
            for (Index q = first; q < p; ++q) take_update(row_p, q - first, factor_of(p, q - first));
            const double pivot = pivots[static_cast<std::size_t>(p - first)];
            for (Index j = 0; j < first; ++j) row_p[j] = row_p[j] / pivot;
            for (Index j = last; j < n; ++j) row_p[j] = row_p[j] / pivot;
            std::copy(row_p, row_p + n, pivot_rows.begin() + (p - first) * n);
        }
        // The bulk of the work (n^3 in all), row by row: each row reads only the kept pivot rows and its own
        // factors, so the rows split between threads with every entry's operations unchanged.
        parallel_for(n, (last - first) * n, [&](Index begin, Index end) {
            for (Index i = begin; i < end; ++i) {
                const Index next_pivot = i >= first && i < last ? i + 1 : first;
                for (Index q = next_pivot; q < last; ++q) take_update(row(i), q - first, factor_of(i, q - first));
            }
        });
    }
    for (Index p = n - 1; p >= 0; --p) {
        const Index other = swapped_with[static_cast<std::size_t>(p)];
        if (other == p) continue;
        for (Index i = 0; i < n; ++i) std::swap(row(i)[p], row(i)[other]);
    }
    return true;
}

// Newton's iteration from x (n, n): with Y = X^{-1}, zeta = sqrt(||Y||_F / ||X||_F) while scaling (1 after),
// X' = 0.5 (zeta X + Y^T / zeta) element by element. It stops after the step that moves X by at most
// kConverged, and returns that X'; nothing when a pivot is zero, a value stops being finite, or
// kMaxNewtonSteps pass first.
std::optional<Square> newton_polar(Square x, Index n) {
    Square inverse;
    Square next(x.size());
    bool scaling = true;
    for (int step = 0; step < kMaxNewtonSteps; ++step) {
        inverse = x;
        if (!invert_in_place(inverse, n)) return std::nullopt;
        const double norm_inverse = frobenius_norm(inverse);
        if (!std::isfinite(norm_inverse)) return std::nullopt;
        const double zeta_scale = scaling ? std::sqrt(norm_inverse / frobenius_norm(x)) : 1.0;
        for (Index i = 0; i < n; ++i) {
            for (Index j = 0; j < n; ++j) {
                const auto ij = static_cast<std::size_t>(i * n + j);
                const auto ji = static_cast<std::size_t>(j * n + i);
                next[ij] = 0.5 * (zeta_scale * x[ij] + inverse[ji] / zeta_scale);
            }
        }
        const double moved = frobenius_distance(next, x);
        if (!std::isfinite(moved)) return std::nullopt;
        std::swap(x, next);
        if (moved <= kConverged) return x;
        if (moved <= kScalingOff * frobenius_norm(x)) scaling = false;
    }
    return std::nullopt;
}

Table from_square(const Square& x, Index n) {
    Table out(n, n);
    std::copy(x.begin(), x.end(), out.data());
    return out;
}

}  // namespace

Table polar_factor(const Table& m) {
    const Index n = m.rows();
    if (n == 0) return Table(0, 0);
    if (!m.allFinite()) return Table::Constant(n, n, std::numeric_limits<double>::quiet_NaN());
    double largest = 0.0;
    for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < n; ++j) largest = std::max(largest, std::abs(m(i, j)));
    }
    if (largest == 0.0) return Table::Identity(n, n);
    // M times 2^-exponent has its largest entry in [0.5, 1): exact (bar subnormals), and the polar factor
    // is the same for any positive multiple of M; no square in X_0's norm can overflow (the inverse's can, for
    // a nearly singular M: that counts as singular).
    int exponent = 0;
    static_cast<void>(std::frexp(largest, &exponent));
    Square x(static_cast<std::size_t>(n * n));
    for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < n; ++j) x[static_cast<std::size_t>(i * n + j)] = std::ldexp(m(i, j), -exponent);
    }
    if (std::optional<Square> polar = newton_polar(x, n)) return from_square(*polar, n);
    for (Index i = 0; i < n; ++i) x[static_cast<std::size_t>(i * n + i)] += kSingularShift;
    if (std::optional<Square> polar = newton_polar(x, n)) return from_square(*polar, n);
    return Table::Identity(n, n);
}

}  // namespace embed::detail
