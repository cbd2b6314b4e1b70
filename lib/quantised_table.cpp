// The quantised table and its row gather and scores. Rows are dequantised a few at a time into a small
// float32 buffer per piece of work and scored there by the float32 tables' row kernels: their sums are
// dot_kernel's on the widened values, so each score is the widened double table's, bit for bit.

#include "embed/quantised_table.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "checks.hpp"
#include "embed/lookup.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/quantised_rows.hpp"
#include "floating_point/float_mode.hpp"
#include "threads/parallel.hpp"

namespace embed {
namespace {

/// Values of one buffer of single-vector scoring: 32 KiB of float32, the size of a core's L1 data cache, so
/// a row decoded there is still in it when the dot product reads it.
constexpr Index kScoreBufferValues = 8192;

/// Values of one buffer of batched scoring: 256 KiB, in L2. Each decoded row meets every hidden row, so the
/// GEMM wants many table rows at once more than it wants them in L1.
constexpr Index kBatchBufferValues = Index{1} << 16;

/// Rows [first, first + count) of table, already checked, dequantised into out (count * d).
void decode_rows(const QuantisedTable& table, Index first, Index count, float* out) {
    detail::dequantise_values(table.type(), table.data() + first * table.row_bytes(), count * table.cols(), out);
}

/// Throws invalid_argument unless type is block-quantised.
void require_quantised(ElementType type) {
    if (is_quantised(type)) return;
    throw std::invalid_argument("element type " + std::string(element_type_name(type)) +
                                " is not block-quantised; a QuantisedTable holds q4_0, q4_1, q5_0, q5_1, q8_0, "
                                "q2_k, q3_k, q4_k, q5_k or q6_k");
}

/// One float32 buffer of `values` per piece, allocated before the pieces run (they must not throw).
struct PieceBuffers {
    Index values;
    std::vector<float> storage;
    PieceBuffers(Index pieces, Index values_each)
        : values(values_each), storage(static_cast<std::size_t>(detail::checked_mul(pieces, values_each, "buffer"))) {}
    float* of(Index piece) { return storage.data() + piece * values; }
};

/// Bytes a (rows, cols) table of type takes, every argument checked (QuantisedTable's constructor says how).
Index table_bytes(ElementType type, Index rows, Index cols) {
    require_quantised(type);
    detail::require_non_negative(rows, "rows");
    detail::require_non_negative(cols, "cols");
    return detail::checked_mul(rows, row_bytes(type, cols), "quantised table bytes");
}

/// Throws invalid_argument unless given, the bytes passed for a (rows, cols) table of type, is that table's.
void require_table_bytes(ElementType type, Index rows, Index cols, std::uint64_t given) {
    const Index want = table_bytes(type, rows, cols);
    if (given == static_cast<std::uint64_t>(want)) return;
    throw std::invalid_argument("a (" + std::to_string(rows) + ", " + std::to_string(cols) + ") " +
                                std::string(element_type_name(type)) + " table takes " + std::to_string(want) +
                                " bytes; " + std::to_string(given) + " were given");
}

/// A copy of blocks, once they are checked to be a (rows, cols) table of type.
std::shared_ptr<const std::byte[]> checked_copy(ElementType type, Index rows, Index cols,
                                                std::span<const std::byte> blocks) {
    require_table_bytes(type, rows, cols, blocks.size());
    auto copy = std::make_unique_for_overwrite<std::byte[]>(blocks.size());
    if (!blocks.empty()) std::memcpy(copy.get(), blocks.data(), blocks.size());
    return copy;
}

}  // namespace

QuantisedTable::QuantisedTable() = default;

QuantisedTable::QuantisedTable(ElementType type, Index rows, Index cols, std::span<const std::byte> blocks)
    : QuantisedTable(type, rows, cols, checked_copy(type, rows, cols, blocks), static_cast<Index>(blocks.size())) {}

QuantisedTable::QuantisedTable(ElementType type, Index rows, Index cols, std::shared_ptr<const std::byte[]> blocks,
                               Index bytes)
    : type_(type), rows_(rows), cols_(cols), blocks_(std::move(blocks)) {
    require_table_bytes(type, rows, cols, static_cast<std::uint64_t>(bytes));
    if (blocks_ == nullptr && bytes != 0) throw std::invalid_argument("no buffer given for a table's blocks");
    row_bytes_ = embed::row_bytes(type, cols);
}

void QuantisedTable::dequantise_rows(Index first, Index count, float* out) const {
    if (first < 0 || count < 0 || first > rows_ || count > rows_ - first) {
        throw std::out_of_range("rows [" + std::to_string(first) + ", " + std::to_string(first) + " + " +
                                std::to_string(count) + ") are outside the table's [0, " + std::to_string(rows_) + ")");
    }
    decode_rows(*this, first, count, out);
}

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
    const detail::Pieces pieces = detail::pieces_of(table.rows(), dim);
    const Index group = detail::rows_per_buffer(dim, kScoreBufferValues, pieces.size);
    PieceBuffers buffers(pieces.count, group * dim);
    const double* h = hidden.data();
    double* scores = out.data();
    detail::parallel_for_pieces(pieces, dim, [&](Index p, Index begin, Index end) {
        float* rows = buffers.of(p);
        for (Index first = begin; first < end; first += group) {
            const Index count = std::min(group, end - first);
            decode_rows(table, first, count, rows);
            detail::dot_rows(rows, count, dim, h, scores + first, false);  // in L1: nothing to ask for ahead
        }
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

}  // namespace embed
