#include "embed/table.hpp"

#include <string>

#include "checks.hpp"
#include "threads/parallel.hpp"
#include "embed/python_random.hpp"

namespace embed {

Index param_count(Index vocab, Index dim) {
    detail::require_non_negative(vocab, "vocab");
    detail::require_non_negative(dim, "dim");
    return detail::checked_mul(vocab, dim, "param_count");
}

namespace {

// rng seeded by the caller, returns (V, d): its random() values minus 0.5, row by row.
Table fill_table(Index vocab, Index dim, PythonRandom rng) {
    const Index entries = param_count(vocab, dim);
    detail::checked_mul(entries, static_cast<Index>(sizeof(double)), "table bytes");
    Table table = detail::mapped_table<double>(vocab, dim);
    // Row-major storage is exactly the order make_table fills in (SPECIFICATION.md, The twenty functions):
    // token 0 column 0 first, then along the row.
    // random() + -0.5 rounds exactly as random() - 0.5 does, in one pass instead of two.
    rng.fill_random(std::span<double>(table.data(), static_cast<std::size_t>(entries)), -0.5);
    return table;
}

}  // namespace

Table make_table(Index vocab, Index dim, std::uint64_t seed) { return fill_table(vocab, dim, PythonRandom(seed)); }

Table make_table(Index vocab, Index dim, std::span<const std::uint32_t> seed_words) {
    return fill_table(vocab, dim, PythonRandom(seed_words));
}

Shape shape(const Table& table) { return {table.rows(), table.cols()}; }

Shape shape(const std::vector<std::vector<double>>& rows) {
    if (rows.empty()) return {0, 0};
    const std::size_t width = rows.front().size();
    for (std::size_t r = 1; r < rows.size(); ++r) {
        if (rows[r].size() != width) {
            throw std::invalid_argument("ragged rows: row " + std::to_string(r) + " has " +
                                        std::to_string(rows[r].size()) +
                                        " values, but row 0 has " + std::to_string(width));
        }
    }
    return {static_cast<Index>(rows.size()), static_cast<Index>(width)};
}

Table from_rows(const std::vector<std::vector<double>>& rows) {
    const auto [vocab, dim] = shape(rows);
    Table table(vocab, dim);
    for (Index r = 0; r < vocab; ++r) {
        const auto& row = rows[static_cast<std::size_t>(r)];
        for (Index c = 0; c < dim; ++c) table(r, c) = row[static_cast<std::size_t>(c)];
    }
    return table;
}

}  // namespace embed
