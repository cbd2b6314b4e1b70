#include "embed/logits.hpp"

#include <cstddef>
#include <type_traits>

#include "checks.hpp"
#include "floating_point/float_mode.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/narrow_kernels.hpp"
#include "threads/parallel.hpp"
#include "stored_tables.hpp"
#include "kernels/streaming.hpp"

namespace embed {

namespace {

// table is (V, d) of any stored type, hidden is (d), out is (V): the scores of every row, whose kernel
// (dot_rows, overloaded per type) widens the values and sums in dot_kernel's order.
template <class Scalar>
void scores_into(BasicTableView<Scalar> table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out) {
    const detail::DefaultFloatMode float_mode;
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    detail::require_same_length(out.size(), table.rows(), "logits output (must equal the vocabulary V)");
    // One pass over the caller's table, row by row: this is weight tying.
    // The rows are split between the cores; each score is dot_kernel's wherever it is computed.
    const Index dim = table.cols();
    const Scalar* rows = table.data();
    const double* h = hidden.data();
    double* scores = out.data();
    // A table that stays in the caches is read without asking for lines ahead: they are there already.
    const bool prefetch = detail::streams_from_memory(table.size() * Index{sizeof(Scalar)});
    detail::parallel_for(table.rows(), dim, [&](Index begin, Index end) {
        detail::dot_rows(rows + begin * dim, end - begin, dim, h, scores + begin, prefetch);
    });
}

// The batch's n x V scores split between the cores: by table rows (each
// thread a strip of columns of every output row), unless the table is small
// enough to stay in every core's cache, in which case by groups of
// kHiddenRowsPerGroup hidden rows (each thread whole output rows). A large
// table is split by its rows, so that each row is read from memory once.
// Groups of 4 hidden rows: pieces of 8 or more ran slower while both cores
// worked, on some shapes and not others; 4 was near the best on every shape.
//
// Only for double tables: the narrow AVX-512 GEMM widens the table's rows
// into a buffer of its own per call, so every group would widen the whole
// table again.
template <class Stored>
void all_pairs_between_cores(const double* h, Index n, const Stored* rows, Index vocab, Index dim, double* scores) {
    const detail::DefaultFloatMode float_mode;
    using detail::kHiddenRowsPerGroup;
    const bool table_stays_cached = vocab * dim * Index{sizeof(Stored)} <= detail::kCachedTableBytes;
    if (std::is_same_v<Stored, double> && table_stays_cached && n >= 2 * kHiddenRowsPerGroup) {
        detail::parallel_for_blocks(n, kHiddenRowsPerGroup, vocab * dim, [&](Index first, Index last) {
            detail::dot_all_pairs(h + first * dim, last - first, rows, vocab, dim, scores + first * vocab, vocab);
        });
        return;
    }
    detail::parallel_for(vocab, n * dim, [&](Index begin, Index end) {
        detail::dot_all_pairs(h, n, rows + begin * dim, end - begin, dim, scores + begin, vocab);
    });
}

// hidden_rows (n, d) against the (vocab, dim) stored rows: returns (n, vocab). A GEMM in dot-product
// form: both operands keep d contiguous and are read as whole cache lines wherever the rows sit, stored
// values are widened to double as they are read (no widened copy of the table is made), and every entry
// is dot_kernel's sum, so row i equals the single logits of hidden_rows.row(i), bit for bit.
template <class Stored>
Table batched_logits(const Stored* rows, Index vocab, Index dim, const Table& hidden_rows) {
    detail::require_same_length(hidden_rows.cols(), dim, "hidden rows (must equal the table's width d)");
    const Index n = hidden_rows.rows();
    Table out(n, vocab);
    // A result past malloc's heap limit (32 MB) is fresh pages: faulting them in
    // one write at a time can cost more than the products.
    detail::prefault_for_writing(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
    all_pairs_between_cores(hidden_rows.data(), n, rows, vocab, dim, out.data());
    return out;
}

}  // namespace

template <TableOrView T>
void logits_into(const T& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out) {
    scores_into(view_of(table), hidden, out);
}

template <TableOrView T>
Vector logits(const T& table, const Vector& hidden) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    Vector out(table.rows());
    scores_into(view_of(table), hidden, out);
    return out;
}

template <TableOrView T>
Table logits(const T& table, const Table& hidden_rows) {
    return batched_logits(table.data(), table.rows(), table.cols(), hidden_rows);
}

#define EMBED_INSTANTIATE(T)                                                              \
    template void logits_into<T>(const T&, Eigen::Ref<const Vector>, Eigen::Ref<Vector>); \
    template Vector logits<T>(const T&, const Vector&);                                   \
    template Table logits<T>(const T&, const Table&);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
