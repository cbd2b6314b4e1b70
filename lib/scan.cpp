// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// the small matrix-vector products of the Rayleigh-Ritz step) may read an uninitialised register. The
// warning is reported at the intrinsic's header line, so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "embed/scan.hpp"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "kernels/base.hpp"
#include "kernels/multiversion.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/row_kernels.hpp"
#include "stored_tables.hpp"
#include "floating_point/float_mode.hpp"
#include "threads/parallel.hpp"

// Lanes are 64-byte vectors used inside one function, so the calling convention GCC warns about never
// reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Every reduction over rows runs over these groups, fixed by the row count alone: each group's partial
// is summed by one thread in row order and the partials are added in group order, so the result never
// depends on how many threads ran which group.
constexpr Index kGroups = 64;
// Rows per group at the least, so that a group is worth a thread.
constexpr Index kMinGroupRows = 32;
// A covariance pass widens and centres this many bytes of rows at a time: with the kernel's partial sums
// (8 x d doubles) they stay in a core's L2 cache, and few enough rows (d doubles apart) share an L1 set.
// The block size changes no result: every sum runs over the rows in order, across blocks.
constexpr Index kBlockBytes = Index{192} << 10;

Index rows_per_block(Index dim) {
    return std::clamp<Index>(kBlockBytes / (Index{sizeof(double)} * std::max<Index>(dim, 1)), 8, 64);
}
// Vectors the Krylov basis grows by in one pass over the table (a pass costs 4 * 8 * V * d flops).
constexpr Index kVectors = 8;
// The Davis-Kahan bound that counts as converged, and the passes allowed before giving up on it.
constexpr double kTolerance = 1e-12;
constexpr int kMaxPasses = 24;
// Krylov convergence speeds up as the basis grows: a bound that has not halved in this many passes belongs
// to a (near-)repeated eigenvalue, and further passes would only cost time.
constexpr std::size_t kStallPasses = 4;

detail::Pieces row_groups(Index rows) {
    const Index count = std::max<Index>(1, std::min<Index>(kGroups, detail::ceil_div(rows, kMinGroupRows)));
    return detail::Pieces{rows, count, detail::ceil_div(rows, count)};
}

// Runs body(group, begin, end) for every group, in parallel; an exception inside (a failed allocation)
// is rethrown here, after every group has stopped.
template <class Body>
void for_each_group(const detail::Pieces& groups, Index cost_per_row, Body&& body) {
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(groups.count));
    detail::parallel_for_pieces(groups, cost_per_row, [&](Index g, Index begin, Index end) {
        try {
            body(g, begin, end);
        } catch (...) {
            failures[static_cast<std::size_t>(g)] = std::current_exception();
        }
    });
    for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
    }
}

// rows [first, first + count) of table, widened to double (exact) into out (count, d).
template <class Scalar>
void widen_rows(BasicTableView<Scalar> table, Index first, Index count, double* out) {
    const Scalar* rows = table.data() + first * table.cols();
    if constexpr (std::same_as<Scalar, double>) {
        std::memcpy(out, rows, static_cast<std::size_t>(count * table.cols()) * sizeof(double));
    } else {
        detail::widen_values(rows, count * table.cols(), out);
    }
}

double cosine_from_parts(double dot_ab, double square_a, double square_b) {
    const double norms = std::sqrt(square_a) * std::sqrt(square_b);
    return norms == 0.0 ? 0.0 : dot_ab / norms;
}

// zt (8, dim) += yt (8, count) times block (count, dim): each entry adds its count products in row
// order, one rounded multiply and one rounded add each (no fused multiply-add: -ffp-contract=off), so
// every instruction set gives the same bits.
EMBED_MULTIVERSION void add_block_products(const double* yt, Index count, const double* block, Index dim,
                                           double* zt) {
    using detail::Lanes;
    Index c = 0;
    for (; c + detail::kLanes <= dim; c += detail::kLanes) {
        Lanes acc[kVectors];
        for (Index j = 0; j < kVectors; ++j) std::memcpy(&acc[j], zt + j * dim + c, sizeof(Lanes));
        for (Index r = 0; r < count; ++r) {
            Lanes x;
            std::memcpy(&x, block + r * dim + c, sizeof x);
            for (Index j = 0; j < kVectors; ++j) acc[j] += yt[j * count + r] * x;
        }
        for (Index j = 0; j < kVectors; ++j) std::memcpy(zt + j * dim + c, &acc[j], sizeof(Lanes));
    }
    for (; c < dim; ++c) {
        for (Index j = 0; j < kVectors; ++j) {
            double acc = zt[j * dim + c];
            for (Index r = 0; r < count; ++r) acc += yt[j * count + r] * block[r * dim + c];
            zt[j * dim + c] = acc;
        }
    }
}

// What the first pass learns of each row.
struct RowStatistics {
    Vector input_norm;
    Vector output_norm;
    std::optional<Vector> input_output_cosine;
    std::vector<char> output_finite;  // 1 where the output row holds no NaN or infinity
    Index finite_rows = 0;
    Vector mean;  // (d') mean of the finite output rows; zeros when there are none
};

// Norms, cosines and the finite rows' mean in one pass over both tables.
template <class Scalar>
RowStatistics row_statistics(BasicTableView<Scalar> input, BasicTableView<Scalar> output, bool tied,
                             bool want_cosine) {
    const Index rows = input.rows();
    const Index dim_in = input.cols();
    const Index dim_out = output.cols();
    RowStatistics stats;
    stats.input_norm.resize(rows);
    stats.output_norm.resize(rows);
    if (want_cosine) stats.input_output_cosine.emplace(rows);
    stats.output_finite.assign(static_cast<std::size_t>(rows), 0);
    const detail::Pieces groups = row_groups(rows);
    RowMatrix sums = RowMatrix::Zero(groups.count, dim_out);
    std::vector<Index> finite(static_cast<std::size_t>(groups.count), 0);
    for_each_group(groups, dim_in + dim_out, [&](Index g, Index begin, Index end) {
        std::vector<double> in_row(static_cast<std::size_t>(dim_in));
        std::vector<double> out_row(static_cast<std::size_t>(dim_out));
        double* sum = sums.row(g).data();
        for (Index i = begin; i < end; ++i) {
            widen_rows(input, i, 1, in_row.data());
            const double in_square = detail::dot_kernel(in_row.data(), in_row.data(), dim_in);
            stats.input_norm[i] = std::sqrt(in_square);
            double out_square = in_square;
            if (!tied) {
                widen_rows(output, i, 1, out_row.data());
                out_square = detail::dot_kernel(out_row.data(), out_row.data(), dim_out);
            } else {
                out_row = in_row;
            }
            stats.output_norm[i] = std::sqrt(out_square);
            if (want_cosine) {
                const double dot_io = detail::dot_kernel(in_row.data(), out_row.data(), dim_in);
                (*stats.input_output_cosine)[i] = cosine_from_parts(dot_io, in_square, out_square);
            }
            // A sum of squares is finite exactly when every value is (an overflow to infinity aside,
            // which only values near the double range can cause; their rows are left out too).
            if (std::isfinite(out_square)) {
                stats.output_finite[static_cast<std::size_t>(i)] = 1;
                ++finite[static_cast<std::size_t>(g)];
                for (Index c = 0; c < dim_out; ++c) sum[c] += out_row[static_cast<std::size_t>(c)];
            }
        }
    });
    Vector total = Vector::Zero(dim_out);
    for (Index g = 0; g < groups.count; ++g) {
        total += sums.row(g).transpose();
        stats.finite_rows += finite[static_cast<std::size_t>(g)];
    }
    stats.mean = stats.finite_rows > 0 ? Vector(total / static_cast<double>(stats.finite_rows)) : total;
    return stats;
}

// C W for the finite output rows' covariance C (dividing by finite_rows - 1) and wt = W^T (k, d'), k <=
// kVectors: returns (C W)^T (k, d'). One pass over the table, in blocks that are widened and centred
// first, so no cancellation against the mean; non-finite rows are zeroed and add nothing.
template <class Scalar>
RowMatrix covariance_times(BasicTableView<Scalar> output, const RowStatistics& stats, const RowMatrix& wt) {
    const Index rows = output.rows();
    const Index dim = output.cols();
    const Index k = wt.rows();
    RowMatrix padded = RowMatrix::Zero(kVectors, dim);  // the kernel always takes kVectors vectors
    padded.topRows(k) = wt;
    const detail::Pieces groups = row_groups(rows);
    std::vector<RowMatrix> partial(static_cast<std::size_t>(groups.count));
    for_each_group(groups, 4 * kVectors * dim, [&](Index g, Index begin, Index end) {
        RowMatrix& zt = partial[static_cast<std::size_t>(g)];
        zt = RowMatrix::Zero(kVectors, dim);
        const Index block_rows = rows_per_block(dim);
        RowMatrix block(block_rows, dim);
        RowMatrix yt(kVectors, block_rows);
        for (Index first = begin; first < end; first += block_rows) {
            const Index count = std::min(block_rows, end - first);
            widen_rows(output, first, count, block.data());
            for (Index r = 0; r < count; ++r) {
                double* row = block.data() + r * dim;
                if (stats.output_finite[static_cast<std::size_t>(first + r)] != 0) {
                    for (Index c = 0; c < dim; ++c) row[c] -= stats.mean[c];
                } else {
                    std::fill(row, row + dim, 0.0);
                }
            }
            // yt (kVectors, count): yt(j, r) = w_j . (row r - mean).
            detail::dot_all_pairs(padded.data(), kVectors, block.data(), count, dim, yt.data(), count);
            add_block_products(yt.data(), count, block.data(), dim, zt.data());
        }
    });
    RowMatrix total = RowMatrix::Zero(kVectors, dim);
    for (const RowMatrix& zt : partial) total += zt;
    return total.topRows(k) / static_cast<double>(stats.finite_rows - 1);
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

// Block Krylov (block Lanczos with full reorthogonalisation) on the implicit covariance: each pass over the
// table multiplies the newest block of kVectors basis vectors by C; Rayleigh-Ritz over the whole basis gives
// the top Ritz pair, and since C times the basis is kept, its residual costs no extra pass. It stops when
// the Davis-Kahan bound is <= kTolerance, when the basis spans everything, or when the bound stalls (a
// (near-)repeated top eigenvalue, which no number of passes separates).
template <class Scalar>
void find_principal_component(BasicTableView<Scalar> output, const RowStatistics& stats, VocabularyScan& scan) {
    const Index dim = output.cols();
    scan.principal_component = Vector::Zero(dim);
    scan.component_error_bound = std::numeric_limits<double>::infinity();
    if (dim == 0 || stats.finite_rows < 2) return;
    RowMatrix basis(0, dim);        // orthonormal rows
    RowMatrix times_basis(0, dim);  // C times each row of basis
    RowMatrix block = start_vectors(std::min(kVectors, dim), dim);
    std::vector<double> bounds;
    for (int pass = 1; pass <= kMaxPasses && block.rows() > 0; ++pass) {
        const RowMatrix product = covariance_times(output, stats, block);
        scan.iterations = pass;
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
        scan.principal_eigenvalue = theta;
        scan.eigenvalue_gap = gap;
        scan.component_error_bound = bound;
        scan.principal_component_converged = bound <= kTolerance;
        v.normalize();
        scan.principal_component = v;
        bounds.push_back(bound);
        const bool whole_space = basis.rows() >= dim;
        const bool stalled = bounds.size() > kStallPasses &&
                             !(bound < 0.5 * bounds[bounds.size() - 1 - kStallPasses]);
        if (scan.principal_component_converged || whole_space || stalled || !(theta > 0.0)) break;
        block = orthogonal_to(basis, product.topRows(std::min(product.rows(), dim - basis.rows())));
    }
    if (!(scan.principal_eigenvalue > 0.0)) {
        // The rows do not vary (or the covariance is not finite): there is no direction to remove.
        scan.principal_component = Vector::Zero(dim);
        scan.principal_component_converged = false;
        return;
    }
    fix_sign(scan.principal_component);
}

// U'_i = U_i minus its projection on v, into row (d).
void project_out(double* row, const Vector& v) {
    const Index dim = v.size();
    const double along = detail::dot_kernel(row, v.data(), dim);
    for (Index c = 0; c < dim; ++c) row[c] -= along * v[c];
}

// output_distance_i = 1 - cosine(U'_i, r'), r' the mean of U' over the (sorted, unique) finite reference
// rows; NaN for a non-finite row.
template <class Scalar>
Vector output_distances(BasicTableView<Scalar> output, const RowStatistics& stats, const Vector& v,
                        const std::vector<Index>& references) {
    const Index rows = output.rows();
    const Index dim = output.cols();
    Vector reference = Vector::Zero(dim);
    std::vector<double> row(static_cast<std::size_t>(dim));
    Index used = 0;
    for (const Index id : references) {
        if (stats.output_finite[static_cast<std::size_t>(id)] == 0) continue;
        widen_rows(output, id, 1, row.data());
        project_out(row.data(), v);
        for (Index c = 0; c < dim; ++c) reference[c] += row[static_cast<std::size_t>(c)];
        ++used;
    }
    if (used > 0) reference /= static_cast<double>(used);
    const double reference_square = detail::dot_kernel(reference.data(), reference.data(), dim);
    Vector distance(rows);
    for_each_group(row_groups(rows), 4 * dim, [&](Index, Index begin, Index end) {
        std::vector<double> u(static_cast<std::size_t>(dim));
        for (Index i = begin; i < end; ++i) {
            if (stats.output_finite[static_cast<std::size_t>(i)] == 0) {
                distance[i] = std::numeric_limits<double>::quiet_NaN();
                continue;
            }
            widen_rows(output, i, 1, u.data());
            project_out(u.data(), v);
            const double dot_ur = detail::dot_kernel(u.data(), reference.data(), dim);
            const double square = detail::dot_kernel(u.data(), u.data(), dim);
            distance[i] = 1.0 - cosine_from_parts(dot_ur, square, reference_square);
        }
    });
    return distance;
}

// numpy.nanpercentile's default (linear) rule: NaN values are left out; virtual index (n - 1) * q / 100,
// then numpy's two-sided interpolation between its neighbours. NaN when every value is NaN.
double percentile_of(const Vector& values, double percentile) {
    std::vector<double> sorted;
    sorted.reserve(static_cast<std::size_t>(values.size()));
    for (const double x : values) {
        if (!std::isnan(x)) sorted.push_back(x);
    }
    if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(sorted.begin(), sorted.end());
    const auto n = static_cast<double>(sorted.size());
    const double virtual_index = (n - 1.0) * (percentile / 100.0);
    const double below = std::floor(virtual_index);
    if (virtual_index >= n - 1.0) return sorted.back();
    const double a = sorted[static_cast<std::size_t>(below)];
    const double b = sorted[static_cast<std::size_t>(below) + 1];
    const double t = virtual_index - below;
    const double difference = b - a;
    return t >= 0.5 ? b - difference * (1.0 - t) : a + difference * t;
}

// Ids whose indicator is <= threshold, by (indicator, id); NaN is never <= anything.
std::vector<Index> candidates_of(const Vector& indicator, double threshold) {
    std::vector<Index> ids;
    for (Index i = 0; i < indicator.size(); ++i) {
        if (indicator[i] <= threshold) ids.push_back(i);
    }
    std::sort(ids.begin(), ids.end(), [&](Index a, Index b) {
        return indicator[a] != indicator[b] ? indicator[a] < indicator[b] : a < b;
    });
    return ids;
}

std::vector<Index> checked_references(const ScanOptions& options, Index rows) {
    std::vector<Index> ids = options.reference_ids;
    for (const Index id : ids) {
        if (id < 0 || id >= rows) {
            throw std::out_of_range("scan_vocabulary: reference id " + std::to_string(id) +
                                    " is outside the vocabulary [0, " + std::to_string(rows) + ")");
        }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

template <class Scalar>
bool same_values(BasicTableView<Scalar> a, BasicTableView<Scalar> b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    if (a.data() == b.data() || a.size() == 0) return true;
    return std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(Scalar)) == 0;
}

template <class Scalar>
VocabularyScan scan(BasicTableView<Scalar> input, BasicTableView<Scalar> output, const ScanOptions& options) {
    if (std::isnan(options.percentile) || options.percentile < 0.0 || options.percentile > 100.0) {
        throw std::invalid_argument("scan_vocabulary: percentile must be in [0, 100], got " +
                                    std::to_string(options.percentile));
    }
    if (input.rows() != output.rows()) {
        throw std::invalid_argument("scan_vocabulary: the input table has " + std::to_string(input.rows()) +
                                    " rows and the output table " + std::to_string(output.rows()) +
                                    "; they must be equal");
    }
    const std::vector<Index> references = checked_references(options, input.rows());
    const detail::DefaultFloatMode float_mode;
    const bool tied = same_values(input, output);
    const bool same_shape = input.cols() == output.cols();
    RowStatistics stats = row_statistics(input, output, tied, !tied && same_shape);
    VocabularyScan result;
    result.input_norm = std::move(stats.input_norm);
    result.output_norm = std::move(stats.output_norm);
    result.input_output_cosine = std::move(stats.input_output_cosine);
    if (!references.empty()) {
        find_principal_component(output, stats, result);
        result.output_distance = output_distances(output, stats, result.principal_component, references);
        result.main_indicator = "output_distance";
    } else {
        result.main_indicator = "input_norm";
    }
    const Vector& indicator = result.output_distance ? *result.output_distance : result.input_norm;
    result.threshold = percentile_of(indicator, options.percentile);
    result.candidates = candidates_of(indicator, result.threshold);
    return result;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

template <TableOrView T>
VocabularyScan scan_vocabulary(const T& input, const T& output, const ScanOptions& options) {
    return scan(view_of(input), view_of(output), options);
}

std::vector<Index> unused_ids(const Vocabulary& vocabulary) {
    std::vector<Index> ids;
    for (Index id = 0; id < vocabulary.size(); ++id) {
        const TokenType type = vocabulary.type(id);
        if (type == TokenType::unused) {
            ids.push_back(id);
        } else if (type == TokenType::control) {
            const std::string& token = vocabulary.token(id);
            if (contains(token, "unused") || contains(token, "reserved")) ids.push_back(id);
        }
    }
    return ids;
}

#define EMBED_INSTANTIATE(T) template VocabularyScan scan_vocabulary<T>(const T&, const T&, const ScanOptions&);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
