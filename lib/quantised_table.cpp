// The quantised table itself: its blocks, checked against its shape and type, and its rows dequantised as
// ggml does it. Its row gather and scores are in quantised_scores.cpp.

#include "embed/quantised_table.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "checks.hpp"
#include "kernels/quantised_rows.hpp"

namespace embed {
namespace {

/// Throws invalid_argument unless type is block-quantised.
void require_quantised(ElementType type) {
    if (is_quantised(type)) return;
    throw std::invalid_argument("element type " + std::string(element_type_name(type)) +
                                " is not block-quantised; a QuantisedTable holds q4_0, q4_1, q5_0, q5_1, q8_0, "
                                "q2_k, q3_k, q4_k, q5_k or q6_k");
}

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
    detail::dequantise_values(type_, data() + first * row_bytes_, count * cols_, out);
}

}  // namespace embed
