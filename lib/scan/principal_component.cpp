// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// the small matrix-vector products of the Rayleigh-Ritz step) may read an uninitialised register. The
// warning is reported at the intrinsic's header line, so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "scan/principal_component.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "kernels/block_products.hpp"
#include "kernels/row_kernels.hpp"
#include "scan/row_groups.hpp"

namespace embed::detail {
namespace {

// A covariance pass widens and centres this many bytes of rows at a time: with the kernel's partial sums
// (8 x d doubles) they stay in a core's L2 cache, and few enough rows (d doubles apart) share an L1 set.
// The block size changes no result: every sum runs over the rows in order, across blocks.
constexpr Index kBlockBytes = Index{192} << 10;

Index rows_per_block(Index dim) {
    return std::clamp<Index>(kBlockBytes / (Index{sizeof(double)} * std::max<Index>(dim, 1)), 8, 64);
}
// Vectors the Krylov basis grows by in one pass over the table (a pass costs 4 * 8 * V * d flops): as many
// as the kernel multiplies at once.
constexpr Index kVectors = kProductVectors;
// The Davis-Kahan bound that counts as converged, and the passes allowed before giving up on it.
constexpr double kTolerance = 1e-12;
constexpr int kMaxPasses = 24;
// Krylov convergence speeds up as the basis grows: a bound that has not halved in this many passes belongs
// to a (near-)repeated eigenvalue, and further passes would only cost time.
constexpr std::size_t kStallPasses = 4;

// C W for the finite output rows' covariance C (dividing by stats.count - 1) and wt = W^T (k, d'), k <=
// kVectors: returns (C W)^T (k, d'). One pass over the table, in blocks that are widened and centred
// first, so no cancellation against the mean; non-finite rows are zeroed and add nothing.
template <class Source>
RowMatrix covariance_times(const Source& output, const CovarianceRows& stats, const RowMatrix& wt) {
    const Index rows = output.rows();
    const Index dim = output.cols();
    const Index k = wt.rows();
    RowMatrix padded = RowMatrix::Zero(kVectors, dim);  // the kernel always takes kVectors vectors
    padded.topRows(k) = wt;
    const Pieces groups = row_groups(rows);
    std::vector<RowMatrix> partial(static_cast<std::size_t>(groups.count));
    for_each_group(groups, 4 * kVectors * dim, [&](Index g, Index begin, Index end) {
        RowMatrix& zt = partial[static_cast<std::size_t>(g)];
        zt = RowMatrix::Zero(kVectors, dim);
        const Index block_rows = rows_per_block(dim);
        RowMatrix block(block_rows, dim);
        RowMatrix yt(kVectors, block_rows);
        RowReader<Source> rows_read(output);
        for (Index first = begin; first < end; first += block_rows) {
            const Index count = std::min(block_rows, end - first);
            rows_read.widen(first, count, block.data());
            for (Index r = 0; r < count; ++r) {
                double* row = block.data() + r * dim;
                if (stats.finite[static_cast<std::size_t>(first + r)] != 0) {
                    for (Index c = 0; c < dim; ++c) row[c] -= stats.mean[c];
                } else {
                    std::fill(row, row + dim, 0.0);
                }
            }
            // yt (kVectors, count): yt(j, r) = w_j . (row r - mean).
            dot_all_pairs(padded.data(), kVectors, block.data(), count, dim, yt.data(), count);
            add_block_products(yt.data(), count, block.data(), dim, zt.data());
        }
    });
    RowMatrix total = RowMatrix::Zero(kVectors, dim);
    for (const RowMatrix& zt : partial) total += zt;
    return total.topRows(k) / static_cast<double>(stats.count - 1);
}

// Rows of wt (k, d) made orthonormal, spanning the same space (Householder QR, deterministic).
RowMatrix orthonormal_rows(const RowMatrix& wt) {
    const Eigen::MatrixXd w = wt.transpose();
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(w);
    const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(w.rows(), w.cols());
    return q.transpose();
}

// The iteration's start: fixed pseudo-random values (splitmix64 of each entry's index), so that every
// run starts alike and no direction of the table is missed by construction.
RowMatrix start_vectors(Index k, Index dim) {
    RowMatrix wt(k, dim);
    for (Index e = 0; e < k * dim; ++e) {
        std::uint64_t z = static_cast<std::uint64_t>(e) + 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        wt.data()[e] = static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
    }
    return orthonormal_rows(wt);
}

// The sign convention: the entry of largest magnitude (the first such) is positive.
void fix_sign(Vector& v) {
    Index largest = 0;
    for (Index c = 1; c < v.size(); ++c) {
        if (std::abs(v[c]) > std::abs(v[largest])) largest = c;
    }
    if (v.size() > 0 && v[largest] < 0.0) v = -v;
}

// rows (n, d) with the components along every row of basis (m, d, orthonormal rows) removed, twice (once
// is not enough in floating point), then made orthonormal; rows that vanish are dropped (the Krylov space
// has stopped growing there).
RowMatrix orthogonal_to(const RowMatrix& basis, RowMatrix rows) {
    const double scale = rows.norm();
    for (int round = 0; round < 2; ++round) {
        if (basis.rows() > 0) rows -= (rows * basis.transpose()) * basis;
        rows = orthonormal_rows(rows);
    }
    // Householder QR always returns orthonormal rows; a row that was (numerically) in the basis's span
    // comes back as an arbitrary direction, so keep only the rows with a real new part.
    RowMatrix kept(0, rows.cols());
    const RowMatrix again = basis.rows() > 0 ? RowMatrix(rows - (rows * basis.transpose()) * basis) : rows;
    for (Index r = 0; r < rows.rows(); ++r) {
        if (scale > 0.0 && again.row(r).norm() > 0.5) {
            kept.conservativeResize(kept.rows() + 1, Eigen::NoChange);
            kept.row(kept.rows() - 1) = rows.row(r);
        }
    }
    return kept;
}

}  // namespace

// Block Krylov (block Lanczos with full reorthogonalisation) on the implicit covariance: each pass over the
// table multiplies the newest block of kVectors basis vectors by C; Rayleigh-Ritz over the whole basis gives
// the top Ritz pair, and since C times the basis is kept, its residual costs no extra pass. It stops when
// the Davis-Kahan bound is <= kTolerance, when the basis spans everything, or when the bound stalls (a
// (near-)repeated top eigenvalue, which no number of passes separates).
template <class Source>
PrincipalComponent principal_component(const Source& output, const CovarianceRows& stats) {
    const Index dim = output.cols();
    PrincipalComponent result;
    result.component = Vector::Zero(dim);
    if (dim == 0 || stats.count < 2) return result;
    RowMatrix basis(0, dim);        // orthonormal rows
    RowMatrix times_basis(0, dim);  // C times each row of basis
    RowMatrix block = start_vectors(std::min(kVectors, dim), dim);
    std::vector<double> bounds;
    for (int pass = 1; pass <= kMaxPasses && block.rows() > 0; ++pass) {
        const RowMatrix product = covariance_times(output, stats, block);
        result.iterations = pass;
        const Index m = basis.rows();
        basis.conservativeResize(m + block.rows(), Eigen::NoChange);
        basis.bottomRows(block.rows()) = block;
        times_basis.conservativeResize(m + block.rows(), Eigen::NoChange);
        times_basis.bottomRows(block.rows()) = product;

        Eigen::MatrixXd h = basis * times_basis.transpose();
        h = 0.5 * (h + h.transpose()).eval();
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz(h);
        const Index top = h.rows() - 1;  // Ritz values ascending
        const double theta = ritz.eigenvalues()[top];
        Vector v = basis.transpose() * ritz.eigenvectors().col(top);
        const double residual = (times_basis.transpose() * ritz.eigenvectors().col(top) - theta * v).norm();
        // The second Ritz value is at most lambda_2 (interlacing) and converges more slowly, so theta_1 -
        // theta_2 alone would overstate the gap; adding its residual (some eigenvalue lies within it)
        // keeps the estimate on the safe side.
        double gap = std::numeric_limits<double>::infinity();
        if (top >= 1) {
            const double theta2 = ritz.eigenvalues()[top - 1];
            const Vector v2 = basis.transpose() * ritz.eigenvectors().col(top - 1);
            const double residual2 = (times_basis.transpose() * ritz.eigenvectors().col(top - 1) - theta2 * v2).norm();
            gap = theta - (theta2 + residual2);
        }
        const double bound = gap > 0.0 ? residual / gap : std::numeric_limits<double>::infinity();
        result.eigenvalue = theta;
        result.gap = gap;
        result.error_bound = bound;
        result.converged = bound <= kTolerance;
        v.normalize();
        result.component = v;
        bounds.push_back(bound);
        const bool whole_space = basis.rows() >= dim;
        const bool stalled = bounds.size() > kStallPasses &&
                             !(bound < 0.5 * bounds[bounds.size() - 1 - kStallPasses]);
        if (result.converged || whole_space || stalled || !(theta > 0.0)) break;
        block = orthogonal_to(basis, product.topRows(std::min(product.rows(), dim - basis.rows())));
    }
    if (!(result.eigenvalue > 0.0)) {
        // The rows do not vary (or the covariance is not finite): there is no direction to remove.
        result.component = Vector::Zero(dim);
        result.converged = false;
        return result;
    }
    fix_sign(result.component);
    return result;
}

template PrincipalComponent principal_component(const BasicTableView<double>&, const CovarianceRows&);
template PrincipalComponent principal_component(const BasicTableView<float>&, const CovarianceRows&);
template PrincipalComponent principal_component(const BasicTableView<Eigen::bfloat16>&, const CovarianceRows&);
template PrincipalComponent principal_component(const QuantisedTable&, const CovarianceRows&);

}  // namespace embed::detail
