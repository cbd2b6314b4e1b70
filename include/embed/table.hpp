#pragma once
// Making, measuring and converting embedding tables (V, d).

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "embed/types.hpp"

namespace embed {

/// The (rows, cols) of a table; usable as `auto [r, c] = shape(t)`.
struct Shape {
    Index rows = 0;
    Index cols = 0;
    friend bool operator==(const Shape&, const Shape&) = default;
};

/// Returns (V, d): entry (r, c) is the (r*d + c)-th random.Random(seed).random() minus 0.5, row by row.
Table make_table(Index vocab, Index dim, std::uint64_t seed);

/// seed_words is (n) 32-bit words of abs(seed), least significant first (a seed of any size, as Python's
/// random.Random takes it; empty acts as [0]), returns (V, d) filled like make_table(vocab, dim, seed).
Table make_table(Index vocab, Index dim, std::span<const std::uint32_t> seed_words);

/// table is (V, d), returns {V, d}; a default-constructed Table is {0, 0}.
Shape shape(const Table& table);

/// rows is V lists of d numbers, returns {V, d}; {0, 0} for no rows; ragged rows throw invalid_argument.
Shape shape(const std::vector<std::vector<double>>& rows);

/// rows is V braced lists of d numbers, returns {V, d}: `shape({{1, 2}, {3, 4}})` would otherwise also match Table.
inline Shape shape(std::initializer_list<std::vector<double>> rows) {
    return shape(std::vector<std::vector<double>>(rows));
}

/// rows is V lists of d numbers, returns them as a (V, d) Table; ragged rows throw invalid_argument.
Table from_rows(const std::vector<std::vector<double>>& rows);

/// Number of entries of a (V, d) table: V * d, overflow_error past 2^63 - 1.
Index param_count(Index vocab, Index dim);

}  // namespace embed
