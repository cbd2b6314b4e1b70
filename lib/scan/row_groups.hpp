#pragma once
// How the vocabulary scan goes over a table's rows: in groups fixed by the row count alone, each widened to
// double. Shared by the indicators (lib/scan.cpp) and the principal component (principal_component.cpp).
// The table is a stored one (a BasicTableView) or a quantised one, whose rows are dequantised a few at a
// time into a float32 buffer and widened from there: the doubles the float32 table load_table_f32 gives
// would be widened to, so every step after the reading is the float32 table's, bit for bit.

#include <algorithm>
#include <concepts>
#include <cstring>
#include <exception>
#include <vector>

#include <Eigen/Core>

#include "embed/quantised_table.hpp"
#include "embed/types.hpp"
#include "kernels/narrow_kernels.hpp"
#include "threads/parallel.hpp"

namespace embed::detail {

/// A dense matrix of doubles stored row by row, like the tables.
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Every reduction over rows runs over these groups, fixed by the row count alone: each group's partial
// is summed by one thread in row order and the partials are added in group order, so the result never
// depends on how many threads ran which group.
inline constexpr Index kScanGroups = 64;
// Rows per group at the least, so that a group is worth a thread.
inline constexpr Index kScanMinGroupRows = 32;

/// The groups of `rows` rows: at most kScanGroups, each of at least kScanMinGroupRows rows but the last.
inline Pieces row_groups(Index rows) {
    const Index count = std::max<Index>(1, std::min<Index>(kScanGroups, ceil_div(rows, kScanMinGroupRows)));
    return Pieces{rows, count, ceil_div(rows, count)};
}

/// Runs body(group, begin, end) for every group, in parallel; an exception inside (a failed allocation)
/// is rethrown here, after every group has stopped.
template <class Body>
void for_each_group(const Pieces& groups, Index cost_per_row, Body&& body) {
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(groups.count));
    parallel_for_pieces(groups, cost_per_row, [&](Index g, Index begin, Index end) {
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

/// rows [first, first + count) of table, widened to double (exact) into out (count, d).
template <class Scalar>
void widen_rows(BasicTableView<Scalar> table, Index first, Index count, double* out) {
    const Scalar* rows = table.data() + first * table.cols();
    if constexpr (std::same_as<Scalar, double>) {
        std::memcpy(out, rows, static_cast<std::size_t>(count * table.cols()) * sizeof(double));
    } else {
        widen_values(rows, count * table.cols(), out);
    }
}

/// Reads rows of one table widened to double: a stored table's where they lie; each reader is used by one
/// thread at a time.
template <class Source>
class RowReader {
public:
    explicit RowReader(const Source& table) : table_(table) {}
    /// rows [first, first + count) into out (count, d).
    void widen(Index first, Index count, double* out) { widen_rows(table_, first, count, out); }

private:
    const Source& table_;
};

/// A quantised table's rows: dequantised as ggml does it into the reader's own float32 buffer (grown to the
/// largest count asked for), then widened exactly as a float32 table's rows are.
template <>
class RowReader<QuantisedTable> {
public:
    explicit RowReader(const QuantisedTable& table) : table_(table) {}
    void widen(Index first, Index count, double* out) {
        buffer_.resize(static_cast<std::size_t>(count * table_.cols()));
        table_.dequantise_rows(first, count, buffer_.data());
        widen_values(buffer_.data(), count * table_.cols(), out);
    }

private:
    const QuantisedTable& table_;
    std::vector<float> buffer_;
};

}  // namespace embed::detail
