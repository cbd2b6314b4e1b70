#pragma once
// The row gather behind lookup and scaled_lookup, for tables of every stored
// type, split between the cores: each output row is filled from one table
// row by exactly one thread.

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "checks.hpp"
#include "embed/types.hpp"
#include "threads/parallel.hpp"
#include "kernels/streaming.hpp"

namespace embed::detail {

/// length bytes from first: asks for every cache line they touch, to be read soon, with locality Hint
/// (PrefetchHint; -1 asks nothing). From first's own line to its last byte's: a row that does not start on a
/// line (a numpy table's rows start 16 bytes past one) touches one line more than its length in lines, and
/// stepping 64 bytes from first left that last line unasked for.
template <int Hint>
inline void prefetch_bytes(const void* first, std::size_t length) {
    if constexpr (Hint >= 0) {
        constexpr std::uintptr_t kLine = 64;
        const auto start = reinterpret_cast<std::uintptr_t>(first);
        for (std::uintptr_t line = start / kLine * kLine; line < start + length; line += kLine) {
            __builtin_prefetch(reinterpret_cast<const void*>(line), 0, Hint);
        }
    }
}

/// Copies `bytes` bytes from `from` to `to` (apart), the target's 16-byte pieces with non-temporal stores
/// (SSE2, every x86-64; memcpy elsewhere). Why: an ordinary store first reads the target's line from memory;
/// glibc's memcpy avoids that (`rep movsb`) only where source and target sit at the same place in their
/// lines, and a numpy table's rows start 16 bytes past one while a fresh result's start on one. These stores
/// beat memcpy either way on large results. The caller ends with a store fence (gather_rows_with).
inline void copy_row_streaming(void* to, const void* from, std::size_t bytes) {
    if (bytes == 0) return;  // no pointer needs to be valid then
#if defined(__SSE2__)
    constexpr std::size_t kPiece = 16;
    auto* target = static_cast<unsigned char*>(to);
    const auto* source = static_cast<const unsigned char*>(from);
    const std::size_t head = std::min(bytes, (kPiece - reinterpret_cast<std::uintptr_t>(target) % kPiece) % kPiece);
    std::memcpy(target, source, head);  // up to the target's first 16-byte boundary
    std::size_t done = head;
    for (; done + kPiece <= bytes; done += kPiece) {
        const __m128i piece = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + done));
        _mm_stream_si128(reinterpret_cast<__m128i*>(target + done), piece);
    }
    std::memcpy(target + done, source + done, bytes - done);
#else
    std::memcpy(to, from, bytes);
#endif
}

/// Makes this thread's non-temporal stores visible to the others before it reports its part done.
inline void end_streaming_stores() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/// How a gather writes a result's rows: with memcpy, with non-temporal stores (copy_row_streaming), or with
/// those only where a row's source and target sit at different places in their cache lines.
enum class ResultStores { ordinary, streamed, streamed_where_lines_differ };

/// Results of more than this many bytes whose rows do not line up with the table's (a numpy table's rows start
/// 16 bytes past a line, a fresh result's on one) are streamed, whatever the settings' bound: glibc's memcpy
/// reads each target line first unless source and target line up, and a result past this size no longer
/// stays in the caches for the next call.
inline constexpr Index kStreamMisplacedRowsAboveBytes = Index{8} << 20;

/// How a gather writes a result of `result_bytes` bytes: streamed past the settings' bound
/// (StreamSettings::stream_results_above_bytes), where the result does not stay in the caches and reading its
/// lines in before overwriting them only costs memory traffic; past kStreamMisplacedRowsAboveBytes, rows that do
/// not line up streamed; smaller results, which stay in the caches, with memcpy.
inline ResultStores result_stores_for(Index result_bytes) {
    if (result_bytes > stream_settings().stream_results_above_bytes) return ResultStores::streamed;
    if (result_bytes > kStreamMisplacedRowsAboveBytes) return ResultStores::streamed_where_lines_differ;
    return ResultStores::ordinary;
}

/// Copies a row of `bytes` bytes from `from` to `to` as `stores` says.
inline void copy_row(void* to, const void* from, std::size_t bytes, ResultStores stores) {
    constexpr std::uintptr_t kLine = 64;
    const bool lines_differ =
        (reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(from)) % kLine != 0;
    if (stores == ResultStores::streamed || (stores == ResultStores::streamed_where_lines_differ && lines_differ)) {
        copy_row_streaming(to, from, bytes);
    } else if (bytes > 0) {
        std::memcpy(to, from, bytes);
    }
}

/// Fills output rows [begin, end) of the gather (see gather_rows_with), asking for the row rows_ahead ahead of each.
template <int Hint, class Scalar, class OutScalar, class WriteRow>
inline void gather_range(const Scalar* source, Ids ids, Index dim, OutScalar* target, Index stride,
                         Index rows_ahead, Index begin, Index end, const WriteRow& write_row) {
    const auto row_bytes = static_cast<std::size_t>(dim) * sizeof(Scalar);
    for (Index i = begin; i < end; ++i) {
        // The rows are scattered, so the hardware prefetchers only catch on
        // partway through each: ask for a row ahead while copying this one.
        if (i + rows_ahead < end) {
            prefetch_bytes<Hint>(source + ids[static_cast<std::size_t>(i + rows_ahead)] * dim, row_bytes);
        }
        write_row(source + ids[static_cast<std::size_t>(i)] * dim, target + i * stride);
    }
}

/// The gather's prefetch hint for a table of `table_bytes` bytes: none for a table small enough to stay in the
/// caches (the rows are there already, and each prefetch costs a load slot, a large share of a small
/// lookup), else the settings'.
inline PrefetchHint gather_hint_for(Index table_bytes, const StreamSettings& settings) {
    return streams_from_memory(table_bytes) ? settings.gather_hint : PrefetchHint::none;
}

/// table is (V, d), ids is (n) and already checked, out is (n, d), its rows out.outerStride() apart and apart
/// from the table: write_row(from, to) fills output row i from table row ids[i]. The prefetch hint and the rows
/// ahead are the streaming settings' whatever the stored type, so the sweep's choice holds for every table.
template <class Scalar, class OutScalar, class WriteRow>
void gather_rows_with(BasicTableView<Scalar> table, Ids ids, Eigen::Ref<BasicTable<OutScalar>> out,
                      const WriteRow& write_row) {
    const Index dim = table.cols();
    const Scalar* source = table.data();
    OutScalar* target = out.data();
    const Index stride = out.outerStride();
    const StreamSettings settings = stream_settings();
    const Index ahead = settings.gather_rows_ahead;
    const PrefetchHint hint = gather_hint_for(table.size() * Index{sizeof(Scalar)}, settings);
    if (out.size() > 0) {
        prefault_for_writing(target, static_cast<std::size_t>(strided_extent(out)) * sizeof(OutScalar));
    }
    // Each output row is written by exactly one thread, so the pages of the
    // fresh result are also first touched by both cores at once.
    parallel_for(static_cast<Index>(ids.size()), dim, [&](Index begin, Index end) {
        const auto range = [&]<int Hint>() {
            gather_range<Hint>(source, ids, dim, target, stride, ahead, begin, end, write_row);
        };
        switch (hint) {
            case PrefetchHint::none: range.template operator()<-1>(); break;
            case PrefetchHint::nta: range.template operator()<0>(); break;
            case PrefetchHint::t2: range.template operator()<1>(); break;
            case PrefetchHint::t1: range.template operator()<2>(); break;
            case PrefetchHint::t0: range.template operator()<3>(); break;
        }
        end_streaming_stores();  // write_row may have streamed (copy_row)
    });
}

/// table is (V, d), ids is (n) and already checked, out is (n, d), its rows out.outerStride() apart and apart
/// from the table: row i = table row ids[i] times factor. A factor of 1.0 copies the rows (x * 1.0 is x, so the
/// values are the same, and a copy is cheaper).
inline void gather_rows(TableView table, Ids ids, double factor, Eigen::Ref<Table> out) {
    const Index dim = table.cols();
    if (factor == 1.0) {
        const auto row_bytes = static_cast<std::size_t>(dim) * sizeof(double);
        const ResultStores stores = result_stores_for(out.size() * Index{sizeof(double)});
        gather_rows_with<double, double>(table, ids, out, [row_bytes, stores](const double* from, double* to) {
            copy_row(to, from, row_bytes, stores);
        });
        return;
    }
    gather_rows_with<double, double>(table, ids, out, [dim, factor](const double* from, double* to) {
        for (Index c = 0; c < dim; ++c) to[c] = from[c] * factor;
    });
}

}  // namespace embed::detail
