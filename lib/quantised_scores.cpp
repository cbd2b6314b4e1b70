// The quantised table's row gather and scores. logits reads the blocks with the quantised row loops
// (kernels/quantised_kernels.hpp), which decode each block in L1 and feed its values straight to the dot
// products; batched logits dequantises rows a few at a time into a float32 buffer per piece of work and
// scores them there with the float32 GEMM. Either way the sums are dot_kernel's on the widened values, so
// each score is the widened double table's, bit for bit.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checks.hpp"
#include "embed/lookup.hpp"
#include "embed/quantised_table.hpp"
#include "floating_point/float_mode.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/quantised_kernels.hpp"
#include "kernels/quantised_rows.hpp"
#include "threads/parallel.hpp"

namespace embed {
namespace {

/// Values of one buffer of batched scoring and of the one-hot products: 256 KiB, in L2. Each decoded row
/// meets every hidden (or one-hot) row, so the GEMM wants many table rows at once more than it wants them in L1.
constexpr Index kBatchBufferValues = Index{1} << 16;

/// Rows [first, first + count) of table, already checked, dequantised into out (count * d).
void decode_rows(const QuantisedTable& table, Index first, Index count, float* out) {
    detail::dequantise_values(table.type(), table.data() + first * table.row_bytes(), count * table.cols(), out);
}

/// One float32 buffer of `values` per piece, allocated before the pieces run (they must not throw).
struct PieceBuffers {
    Index values;
    std::vector<float> storage;
    PieceBuffers(Index pieces, Index values_each)
        : values(values_each), storage(static_cast<std::size_t>(detail::checked_mul(pieces, values_each, "buffer"))) {}
    float* of(Index piece) { return storage.data() + piece * values; }
};

}  // namespace

void lookup_into(const QuantisedTable& table, Ids ids, Eigen::Ref<TableF32> out) {
    const detail::DefaultFloatMode float_mode;
    check_ids(ids, table.rows());
    const auto n = static_cast<Index>(ids.size());
    detail::require_same_length(out.rows(), n, "lookup output rows (must equal the number of ids)");
    detail::require_same_length(out.cols(), table.cols(), "lookup output columns (must equal the table's width d)");
    // Each row is decoded straight into its place in out: no buffer.
    detail::parallel_for(n, table.cols(), [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) decode_rows(table, ids[static_cast<std::size_t>(i)], 1, out.row(i).data());
    });
}

TableF32 lookup(const QuantisedTable& table, Ids ids) {
    check_ids(ids, table.rows());
    TableF32 rows(static_cast<Index>(ids.size()), table.cols());
    lookup_into(table, ids, rows);
    return rows;
}

void logits_into(const QuantisedTable& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out) {
    const detail::DefaultFloatMode float_mode;
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    detail::require_same_length(out.size(), table.rows(), "logits output (must equal the vocabulary V)");
    const Index dim = table.cols();
    const double* h = hidden.data();
    double* scores = out.data();
    detail::parallel_for(table.rows(), dim, [&](Index begin, Index end) {
        detail::dot_quantised_rows(table.type(), table.data() + begin * table.row_bytes(), end - begin, dim, h,
                                   scores + begin);
    });
}

Vector logits(const QuantisedTable& table, const Vector& hidden) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    Vector out(table.rows());
    logits_into(table, hidden, out);
    return out;
}

// Split by table rows, as a large stored table is: each piece decodes its rows once, a buffer at a time,
// and scores every hidden row against them (dot_all_pairs: dot_kernel's sums, so row i equals logits of
// hidden row i).
Table logits(const QuantisedTable& table, const Table& hidden_rows) {
    const detail::DefaultFloatMode float_mode;
    detail::require_same_length(hidden_rows.cols(), table.cols(), "hidden rows (must equal the table's width d)");
    const Index vocab = table.rows();
    const Index dim = table.cols();
    const Index n = hidden_rows.rows();
    Table out(n, vocab);
    detail::prefault_for_writing(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
    const detail::Pieces pieces = detail::pieces_of(vocab, n * dim);
    const Index group = detail::rows_per_buffer(dim, kBatchBufferValues, pieces.size);
    PieceBuffers buffers(pieces.count, group * dim);
    detail::parallel_for_pieces(pieces, n * dim, [&](Index p, Index begin, Index end) {
        float* rows = buffers.of(p);
        for (Index first = begin; first < end; first += group) {
            const Index count = std::min(group, end - first);
            decode_rows(table, first, count, rows);
            detail::dot_all_pairs(hidden_rows.data(), n, rows, count, dim, out.data() + first, vocab);
        }
    });
    return out;
}

// The one-hot rows times the table, every product taken: each output sums over the table's rows in order
// from 0.0, as the float32 table's kernel (one_hot_gemm.hpp) does, so its bits are that table's. The rows are
// decoded a buffer at a time; the pieces split the ids, each decoding the whole table for its own.
Table lookup_via_one_hot(const QuantisedTable& table, Ids ids) {
    const detail::DefaultFloatMode float_mode;
    check_ids(ids, table.rows());
    const auto n = static_cast<Index>(ids.size());
    const Index vocab = table.rows();
    const Index dim = table.cols();
    Table out = Table::Zero(n, dim);
    const detail::Pieces pieces = detail::pieces_of(n, detail::checked_mul(vocab, dim, "one-hot products"));
    const Index group = detail::rows_per_buffer(dim, kBatchBufferValues, std::max<Index>(vocab, 1));
    PieceBuffers buffers(pieces.count, group * dim);
    detail::parallel_for_pieces(pieces, vocab * dim, [&](Index p, Index begin, Index end) {
        float* rows = buffers.of(p);
        for (Index first = 0; first < vocab; first += group) {
            const Index count = std::min(group, vocab - first);
            decode_rows(table, first, count, rows);
            for (Index i = begin; i < end; ++i) {
                const Index id = ids[static_cast<std::size_t>(i)];
                double* sums = out.data() + i * dim;
                for (Index v = 0; v < count; ++v) {
                    const double one_hot = first + v == id ? 1.0 : 0.0;
                    const float* row = rows + v * dim;
                    for (Index c = 0; c < dim; ++c) sums[c] += one_hot * static_cast<double>(row[c]);
                }
            }
        }
    });
    return out;
}

Table scaled_lookup(const QuantisedTable& table, Ids ids, Index dim) {
    const detail::DefaultFloatMode float_mode;
    detail::require_non_negative(dim, "dim");
    const TableF32 rows = lookup(table, ids);
    const double factor = std::sqrt(static_cast<double>(dim));
    Table out(rows.rows(), rows.cols());
    for (Index i = 0; i < out.size(); ++i) out.data()[i] = static_cast<double>(rows.data()[i]) * factor;
    return out;
}

}  // namespace embed
