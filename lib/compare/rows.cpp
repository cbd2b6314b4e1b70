#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "compare/measures.hpp"
#include "embed/logits.hpp"
#include "kernels/narrow_kernels.hpp"

namespace embed::detail {

namespace {

// Rows ids of a stored table, each widened exactly (a double row copied).
template <class Scalar>
Table widened_rows(BasicTableView<Scalar> table, std::span<const Index> ids) {
    const Index dim = table.cols();
    Table out(static_cast<Index>(ids.size()), dim);
    for (Index r = 0; r < out.rows(); ++r) {
        const Scalar* row = table.data() + ids[static_cast<std::size_t>(r)] * dim;
        if constexpr (std::is_same_v<Scalar, double>) {
            std::memcpy(out.data() + r * dim, row, static_cast<std::size_t>(dim) * sizeof(double));
        } else {
            widen_values(row, dim, out.data() + r * dim);
        }
    }
    return out;
}

// Rows ids of a quantised table, each dequantised into a float32 row and widened from there: its float32
// table's rows widened, bit for bit.
Table widened_rows(const QuantisedTable& table, std::span<const Index> ids) {
    const Index dim = table.cols();
    Table out(static_cast<Index>(ids.size()), dim);
    std::vector<float> row(static_cast<std::size_t>(dim));
    for (Index r = 0; r < out.rows(); ++r) {
        table.dequantise_rows(ids[static_cast<std::size_t>(r)], 1, row.data());
        widen_values(row.data(), dim, out.data() + r * dim);
    }
    return out;
}

}  // namespace

Table widened_rows(const AnyTableView& table, std::span<const Index> ids) {
    return std::visit([&](const auto& view) { return widened_rows(view, ids); }, table);
}

Table all_scores(const AnyTableView& table, const Table& hidden) {
    return std::visit([&](const auto& view) { return logits(view, hidden); }, table);
}

// (rows R)(i, e) = sum over c of R^T(e, c) rows(i, c): the batched logits of the transposed rotation, whose
// kernel sums in a fixed order on every machine.
Table times_rotation(const Table& rows, const Table& rotation) {
    const Table transposed = rotation.transpose();
    return logits(transposed, rows);
}

std::vector<Index> top_indices(const double* score, const Index* key, Index n, Index count, Index skip) {
    std::vector<Index> order;
    order.reserve(static_cast<std::size_t>(n));
    for (Index t = 0; t < n; ++t) {
        if (t != skip) order.push_back(t);
    }
    const auto better = [&](Index x, Index y) {
        const double sx = score[x];
        const double sy = score[y];
        const bool nan_x = std::isnan(sx);
        const bool nan_y = std::isnan(sy);
        if (nan_x != nan_y) return nan_y;
        if (!nan_x && sx != sy) return sx > sy;
        return key[x] < key[y];
    };
    const auto middle = order.begin() + count;
    if (middle != order.end()) std::nth_element(order.begin(), middle, order.end(), better);
    std::sort(order.begin(), middle, better);
    order.resize(static_cast<std::size_t>(count));
    return order;
}

}  // namespace embed::detail
