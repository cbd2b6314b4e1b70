// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// the decomposition's small products) may read an uninitialised register. The warning is reported at the
// intrinsic's header line, so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>

#include <Eigen/SVD>

#include "compare/measures.hpp"

namespace embed::detail {
namespace {

// Pairs summed into A_m^T B_m per step: the sum runs chunk after chunk in pair order, so the chunk size
// (fixed) and not the thread count decides how it rounds.
constexpr Index kRotationChunk = 1024;

bool finite_row(const Table& rows, Index r) { return rows.row(r).array().isFinite().all(); }

}  // namespace

// A_m^T B_m chunk by chunk: each chunk's (d, d) product is the batched logits of the transposed chunks (a
// fixed-order kernel), and the chunks' products are added in order.
Table fit_rotation(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs) {
    const Index dim = std::visit([](const auto& view) { return view.cols(); }, a);
    Table product = Table::Zero(dim, dim);
    Index fitted = 0;
    const auto count = static_cast<Index>(pairs.size());
    for (Index first = 0; first < count; first += kRotationChunk) {
        const Index last = std::min(count, first + kRotationChunk);
        std::vector<Index> a_ids;
        std::vector<Index> b_ids;
        for (Index p = first; p < last; ++p) {
            a_ids.push_back(pairs[static_cast<std::size_t>(p)].a);
            b_ids.push_back(pairs[static_cast<std::size_t>(p)].b);
        }
        const Table a_rows = widened_rows(a, a_ids);
        const Table b_rows = widened_rows(b, b_ids);
        Index kept = 0;
        Table a_finite_t(dim, last - first);
        Table b_finite_t(dim, last - first);
        for (Index r = 0; r < a_rows.rows(); ++r) {
            if (!finite_row(a_rows, r) || !finite_row(b_rows, r)) continue;
            a_finite_t.col(kept) = a_rows.row(r).transpose();
            b_finite_t.col(kept) = b_rows.row(r).transpose();
            ++kept;
        }
        if (kept == 0) continue;
        fitted += kept;
        const Table a_t = a_finite_t.leftCols(kept);
        const Table b_t = b_finite_t.leftCols(kept);
        // out(h, t) = sum over i of a_t(t, i) b_t(h, i) = (A^T B)(t, h).
        product += all_scores(AnyTableView(view_of(a_t)), b_t).transpose();
    }
    if (fitted == 0) return Table::Identity(dim, dim);
    const Eigen::MatrixXd m = product;
    const Eigen::BDCSVD<Eigen::MatrixXd> svd(m, Eigen::ComputeFullU | Eigen::ComputeFullV);
    return Table(svd.matrixU() * svd.matrixV().transpose());
}

}  // namespace embed::detail
