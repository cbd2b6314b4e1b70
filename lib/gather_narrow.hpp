#pragma once
// The row gather of gather.hpp for tables stored in float32 or bfloat16:
// lookup copies their rows as they are stored, scaled_lookup widens them to
// double and scales them, in the same single pass split between the cores.

#include <cstring>

#include "checks.hpp"
#include "embed/types.hpp"
#include "narrow_values.hpp"
#include "parallel.hpp"

namespace embed::detail {

/// length bytes from first: asks for all their cache lines, to be read soon.
inline void prefetch_bytes(const void* first, std::size_t length) {
    const auto* bytes = static_cast<const char*>(first);
    for (std::size_t offset = 0; offset < length; offset += 64) __builtin_prefetch(bytes + offset, 0, 0);
}

/// table is (V, d), ids is (n) and already checked, out is (n, d), its rows out.outerStride() apart and apart
/// from the table: write_row(from, to) fills output row i from table row ids[i], each row by one thread.
template <class Scalar, class OutScalar, class WriteRow>
void gather_rows_with(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<OutScalar>> out,
                      WriteRow write_row) {
    const Index dim = table.cols();
    const Scalar* source = table.data();
    OutScalar* target = out.data();
    const Index stride = out.outerStride();
    constexpr Index kRowsAhead = 2;  // as gather.hpp: the rows are scattered, so ask for the next ones early
    if (out.size() > 0) {
        prefault_for_writing(target, static_cast<std::size_t>(strided_extent(out)) * sizeof(OutScalar));
    }
    const auto row_bytes = static_cast<std::size_t>(dim) * sizeof(Scalar);
    parallel_for(static_cast<Index>(ids.size()), dim, [&](Index begin, Index end) {
        for (Index i = begin; i < end; ++i) {
            if (i + kRowsAhead < end) {
                prefetch_bytes(source + ids[static_cast<std::size_t>(i + kRowsAhead)] * dim, row_bytes);
            }
            write_row(source + ids[static_cast<std::size_t>(i)] * dim, target + i * stride);
        }
    });
}

/// table is (V, d), ids is (n) and already checked, out is (n, d) of the table's type and apart from it:
/// row i = table row ids[i], the stored values copied as they are.
template <class Scalar>
void gather_stored_rows(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<Scalar>> out) {
    const auto row_bytes = static_cast<std::size_t>(table.cols()) * sizeof(Scalar);
    gather_rows_with<Scalar, Scalar>(table, ids, out, [row_bytes](const Scalar* from, Scalar* to) {
        if (row_bytes > 0) std::memcpy(to, from, row_bytes);
    });
}

/// table is (V, d), ids is (n) and already checked, out is (n, d) in double: row i = table row ids[i]
/// widened to double and times factor, the same products as the double table's gather.
template <class Scalar>
void gather_widened_rows(BasicTableView<Scalar> table, Ids ids, double factor, Eigen::Ref<Table> out) {
    const Index dim = table.cols();
    gather_rows_with<Scalar, double>(table, ids, out, [dim, factor](const Scalar* from, double* to) {
        for (Index c = 0; c < dim; ++c) to[c] = widen(from[c]) * factor;
    });
}

}  // namespace embed::detail
