#include "embed/logits.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "checks.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace embed {
namespace {

// The GEMM's loads read whole cache lines when the hidden rows sit at the same
// offset from a 64-byte line as the table's rows; otherwise every load of a
// hidden row straddles two lines. Returns hidden_rows' data if it already sits
// right, else a copy in `staging` that does. The copy is n x d values against
// the n x V x d products.
const double* at_the_tables_line_offset(const Table& hidden_rows, const Table& table, std::vector<double>& staging) {
    constexpr std::uintptr_t kLineBytes = 64;
    constexpr auto kPerLine = static_cast<Index>(kLineBytes / sizeof(double));
    const auto wanted = reinterpret_cast<std::uintptr_t>(table.data()) % kLineBytes;
    const auto have = reinterpret_cast<std::uintptr_t>(hidden_rows.data()) % kLineBytes;
    if (have == wanted || wanted % sizeof(double) != 0 || table.cols() % kPerLine != 0) return hidden_rows.data();
    staging.resize(static_cast<std::size_t>(hidden_rows.size() + kPerLine));
    double* start = staging.data();
    while (reinterpret_cast<std::uintptr_t>(start) % kLineBytes != wanted) ++start;
    std::copy(hidden_rows.data(), hidden_rows.data() + hidden_rows.size(), start);
    return start;
}

}  // namespace

void logits_into(const Table& table, Eigen::Ref<const Vector> hidden, Eigen::Ref<Vector> out) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    detail::require_same_length(out.size(), table.rows(), "logits output (must equal the vocabulary V)");
    // One pass over the caller's table, row by row: this is weight tying.
    // The rows are split between the cores; each score is dot_kernel's wherever it is computed.
    const Index dim = table.cols();
    const double* rows = table.data();
    const double* h = hidden.data();
    double* scores = out.data();
    detail::parallel_for(table.rows(), dim, [&](Index begin, Index end) {
        detail::dot_rows(rows + begin * dim, end - begin, dim, h, scores + begin);
    });
}

Vector logits(const Table& table, const Vector& hidden) {
    detail::require_same_length(hidden.size(), table.cols(), "hidden vector (must equal the table's width d)");
    Vector out(table.rows());
    logits_into(table, hidden, out);
    return out;
}

Table logits(const Table& table, const Table& hidden_rows) {
    detail::require_same_length(hidden_rows.cols(), table.cols(), "hidden rows (must equal the table's width d)");
    // A GEMM in dot-product form: both operands keep d contiguous, and every
    // entry is dot_kernel's sum, so row i equals logits(table, hidden_rows.row(i)) exactly.
    const Index dim = table.cols();
    const Index vocab = table.rows();
    const Index n = hidden_rows.rows();
    Table out(n, vocab);
    // A result past malloc's heap limit (32 MB) is fresh pages: faulting them in
    // one write at a time cost more than the products (measured on this VM:
    // 195 ms for the 64 MB of n = 64, V = 131072; the batch took 311 ms).
    detail::prefault_for_writing(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
    const double* rows = table.data();
    std::vector<double> staging;
    const double* h = at_the_tables_line_offset(hidden_rows, table, staging);
    double* scores = out.data();
    detail::parallel_for(vocab, n * dim, [&](Index begin, Index end) {
        detail::dot_all_pairs(h, n, rows + begin * dim, end - begin, dim, scores + begin, vocab);
    });
    return out;
}

}  // namespace embed
