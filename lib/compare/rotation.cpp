#include <algorithm>
#include <cmath>

#include "compare/measures.hpp"

namespace embed::detail {
namespace {

// Pairs summed into A_m^T B_m per step: the sum runs chunk after chunk in pair order, so the chunk size
// (fixed) and not the thread count decides how it rounds.
constexpr Index kRotationChunk = 1024;

bool finite_row(const Table& rows, Index r) { return rows.row(r).array().isFinite().all(); }

// out (cols, count) = the first count rows of rows, transposed, in tiles that stay in L1: row by row, each
// row's values land a whole row of out apart, one page or more, and the tile keeps those lines cached.
void transpose_rows(const Table& rows, Index count, Table& out) {
    constexpr Index kTile = 32;
    const Index cols = rows.cols();
    for (Index r0 = 0; r0 < count; r0 += kTile) {
        for (Index c0 = 0; c0 < cols; c0 += kTile) {
            for (Index r = r0; r < std::min(count, r0 + kTile); ++r) {
                for (Index c = c0; c < std::min(cols, c0 + kTile); ++c) out(c, r) = rows(r, c);
            }
        }
    }
}

}  // namespace

// A_m^T B_m chunk by chunk: each chunk's (d, d) product is the batched logits of the transposed chunks (a
// fixed-order kernel), and the chunks' products are added in order. The buffers are kept from chunk to chunk:
// fresh ones are fresh pages each time. R is then M's polar factor (polar_factor.cpp), whose operations are
// in a fixed order too: an SVD's would follow the compiler's flags.
Table fit_rotation(const AnyTableView& a, const AnyTableView& b, const std::vector<RowPair>& pairs) {
    const Index dim = std::visit([](const auto& view) { return view.cols(); }, a);
    Table product = Table::Zero(dim, dim);
    Index fitted = 0;
    const auto count = static_cast<Index>(pairs.size());
    std::vector<Index> a_ids;
    std::vector<Index> b_ids;
    Table a_t;
    Table b_t;
    for (Index first = 0; first < count; first += kRotationChunk) {
        const Index last = std::min(count, first + kRotationChunk);
        a_ids.clear();
        b_ids.clear();
        for (Index p = first; p < last; ++p) {
            const RowPair& pair = pairs[static_cast<std::size_t>(p)];
            a_ids.push_back(pair.a);
            b_ids.push_back(pair.b);
        }
        Table a_rows = widened_rows(a, a_ids);
        Table b_rows = widened_rows(b, b_ids);
        Index kept = 0;
        for (Index r = 0; r < a_rows.rows(); ++r) {
            if (!finite_row(a_rows, r) || !finite_row(b_rows, r)) continue;
            if (kept != r) {
                a_rows.row(kept) = a_rows.row(r);
                b_rows.row(kept) = b_rows.row(r);
            }
            ++kept;
        }
        if (kept == 0) continue;
        fitted += kept;
        a_t.resize(dim, kept);
        b_t.resize(dim, kept);
        transpose_rows(a_rows, kept, a_t);
        transpose_rows(b_rows, kept, b_t);
        // out(h, t) = sum over i of a_t(t, i) b_t(h, i) = (A^T B)(t, h).
        product += all_scores(AnyTableView(view_of(a_t)), b_t).transpose();
    }
    if (fitted == 0) return Table::Identity(dim, dim);
    return polar_factor(product);
}

}  // namespace embed::detail
