#pragma once
// Argument checks shared by the library. Every message names the offending
// value and what was allowed, and every check runs before any output is made.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "embed/types.hpp"

namespace embed::detail {

/// Throws invalid_argument unless value >= 0: "<what> must be >= 0, got <value>".
inline void require_non_negative(Index value, const char* what) {
    if (value < 0) {
        throw std::invalid_argument(std::string(what) + " must be >= 0, got " +
                                    std::to_string(value));
    }
}

/// Throws out_of_range unless 0 <= id < vocab.
inline void require_token(Index id, Index vocab) {
    if (id < 0 || id >= vocab) {
        throw std::out_of_range("token id " + std::to_string(id) +
                                " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
}

/// Throws invalid_argument unless two lengths agree.
inline void require_same_length(Index got, Index expected, const char* what) {
    if (got != expected) {
        throw std::invalid_argument(std::string(what) + " has length " + std::to_string(got) +
                                    ", expected " + std::to_string(expected));
    }
}

/// out is (rows, cols) row-major with rows outerStride() apart and not empty: the values from its first
/// entry to just past its last, the gaps between rows included.
template <class Scalar>
Index strided_extent(const Eigen::Ref<BasicTable<Scalar>>& out) {
    return (out.rows() - 1) * out.outerStride() + out.cols();
}

/// Throws invalid_argument if out's entries and the table's share memory: a gather into its own table
/// would read rows it has already overwritten. out may be strided (a block of a larger matrix).
template <class Scalar>
void require_apart(const Eigen::Ref<BasicTable<Scalar>>& out, BasicTableView<Scalar> table, const char* what) {
    if (out.size() == 0 || table.size() == 0) return;
    const auto out_first = reinterpret_cast<std::uintptr_t>(out.data());
    const auto out_end = reinterpret_cast<std::uintptr_t>(out.data() + strided_extent(out));
    const auto table_first = reinterpret_cast<std::uintptr_t>(table.data());
    const auto table_end = reinterpret_cast<std::uintptr_t>(table.data() + table.size());
    if (out_first < table_end && table_first < out_end) {
        throw std::invalid_argument(std::string(what) + " overlaps the table it reads; pass a separate matrix");
    }
}

/// a * b for non-negative a and b, or overflow_error naming both when it exceeds 2^63 - 1.
inline Index checked_mul(Index a, Index b, const char* what) {
    Index product = 0;
    if (__builtin_mul_overflow(a, b, &product)) {
        throw std::overflow_error(std::string(what) + " " + std::to_string(a) + " * " +
                                  std::to_string(b) + " does not fit in a 64-bit Index");
    }
    return product;
}

}  // namespace embed::detail
