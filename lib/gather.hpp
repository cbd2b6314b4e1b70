#pragma once
// The row gather behind lookup and scaled_lookup, split between the cores.

#include <cstring>

#include "checks.hpp"
#include "embed/types.hpp"
#include "parallel.hpp"
#include "streaming.hpp"

namespace embed::detail {

/// row is (dim): asks for all its cache lines, to be read soon, with locality Hint (PrefetchHint; -1 asks nothing).
template <int Hint>
inline void prefetch_row(const double* row, Index dim) {
    if constexpr (Hint >= 0) {
        const auto* bytes = reinterpret_cast<const char*>(row);
        const auto length = static_cast<std::size_t>(dim) * sizeof(double);
        for (std::size_t offset = 0; offset < length; offset += 64) __builtin_prefetch(bytes + offset, 0, Hint);
    }
}

/// Copies rows [begin, end) of the gather (see gather_rows), asking for the row rows_ahead ahead of each.
template <int Hint>
inline void gather_range(const double* source, Ids ids, Index dim, double factor, double* target, Index stride,
                         Index rows_ahead, Index begin, Index end) {
    const bool scale = factor != 1.0;
    for (Index i = begin; i < end; ++i) {
        // The rows are scattered, so the hardware prefetchers only catch on
        // partway through each: ask for a row ahead while copying this one.
        if (i + rows_ahead < end) prefetch_row<Hint>(source + ids[static_cast<std::size_t>(i + rows_ahead)] * dim, dim);
        const double* from = source + ids[static_cast<std::size_t>(i)] * dim;
        double* to = target + i * stride;
        if (scale) {
            for (Index c = 0; c < dim; ++c) to[c] = from[c] * factor;
        } else if (dim > 0) {
            std::memcpy(to, from, static_cast<std::size_t>(dim) * sizeof(double));
        }
    }
}

/// table is (V, d), ids is (n) and already checked, out is (n, d), its rows out.outerStride() apart and apart
/// from the table: row i = table row ids[i] times factor. A factor of 1.0 copies the rows (x * 1.0 is x, so the
/// values are the same, and memcpy is cheaper).
inline void gather_rows(TableView table, Ids ids, double factor, Eigen::Ref<Table> out) {
    const Index dim = table.cols();
    const double* source = table.data();
    double* target = out.data();
    const Index stride = out.outerStride();
    const StreamSettings settings = stream_settings();
    const Index ahead = settings.gather_rows_ahead;
    if (out.size() > 0) {
        prefault_for_writing(target, static_cast<std::size_t>(strided_extent(out)) * sizeof(double));
    }
    // Each output row is written by exactly one thread, so the pages of the
    // fresh result are also first touched by both cores at once.
    parallel_for(static_cast<Index>(ids.size()), dim, [&](Index begin, Index end) {
        switch (settings.gather_hint) {
            case PrefetchHint::none: return gather_range<-1>(source, ids, dim, factor, target, stride, ahead, begin, end);
            case PrefetchHint::nta: return gather_range<0>(source, ids, dim, factor, target, stride, ahead, begin, end);
            case PrefetchHint::t2: return gather_range<1>(source, ids, dim, factor, target, stride, ahead, begin, end);
            case PrefetchHint::t1: return gather_range<2>(source, ids, dim, factor, target, stride, ahead, begin, end);
            case PrefetchHint::t0: return gather_range<3>(source, ids, dim, factor, target, stride, ahead, begin, end);
        }
    });
}

}  // namespace embed::detail
