#pragma once
// The reference for float32 and bfloat16 tables: stored values' bits taken
// apart and put together by hand, bit-for-bit comparisons, and tables with
// every awkward value, for the narrow-table tests.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <embed/similarity.hpp>
#include <embed/types.hpp>

namespace narrow_reference {

using embed::Index;
using embed::Neighbour;
using embed::Table;
using embed::Vector;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- The reference: values' bits taken apart and put together by hand ----

inline std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }

// The raw bits of a stored value: 32 for a float, 16 for a bfloat16.
inline std::uint32_t stored_bits(float v) { return std::bit_cast<std::uint32_t>(v); }
inline std::uint32_t stored_bits(Eigen::bfloat16 v) { return std::bit_cast<std::uint16_t>(v); }

// The significand bits (implicit bit included) of the narrow formats; both have 8 exponent bits, bias 127.
template <class Scalar>
constexpr int kPrecision = std::is_same_v<Scalar, float> ? 24 : 8;

// The value of a stored float32 or bfloat16 from its sign, exponent and fraction fields.
template <class Scalar>
inline double decoded(Scalar v) {
    constexpr int p = kPrecision<Scalar>;
    const std::uint32_t bits = stored_bits(v);
    const bool negative = (bits >> (p + 7)) & 1U;
    const auto exponent = static_cast<int>((bits >> (p - 1)) & 0xFFU);
    const std::uint32_t fraction = bits & ((1U << (p - 1)) - 1U);
    double magnitude = 0.0;
    if (exponent == 0xFF) {
        magnitude = fraction == 0 ? kInf : kNaN;
    } else if (exponent == 0) {
        magnitude = std::ldexp(static_cast<double>(fraction), -126 - (p - 1));
    } else {
        magnitude = std::ldexp(static_cast<double>(fraction | (1U << (p - 1))), exponent - 127 - (p - 1));
    }
    return negative ? -magnitude : magnitude;
}

// x rounded to a format with p significand bits and float32's exponent range, to nearest with ties
// to even, as that format's bits: NaN as a quiet NaN with x's sign.
inline std::uint32_t rounded_bits(double x, int p) {
    const std::uint64_t b = bits_of(x);
    const std::uint32_t sign = static_cast<std::uint32_t>(b >> 63) << (p + 7);
    const auto exponent = static_cast<int>((b >> 52) & 0x7FF);
    const std::uint64_t fraction = b & ((std::uint64_t{1} << 52) - 1);
    const std::uint32_t infinity = 0xFFU << (p - 1);
    if (exponent == 0x7FF) return sign | infinity | (fraction != 0 ? 1U << (p - 2) : 0U);
    // |x| = m * 2^e with m an integer.
    const std::uint64_t m = exponent == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    const int e = exponent == 0 ? -1074 : exponent - 1075;
    if (m == 0) return sign;
    const int top = e + (63 - std::countl_zero(m));  // floor(log2 |x|)
    const int k = std::max(top, -126) - (p - 1);     // the exponent of the result's last bit
    const int shift = k - e;
    std::uint64_t q = 0;
    if (shift <= 0) {
        q = m << -shift;
    } else if (shift < 64) {
        q = m >> shift;
        const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1);
        const std::uint64_t half = std::uint64_t{1} << (shift - 1);
        if (rest > half || (rest == half && (q & 1U) != 0)) ++q;
    }
    // q * 2^k; a carry to p + 1 bits moves up one exponent.
    int last = k;
    if (q == (std::uint64_t{1} << p)) {
        q >>= 1;
        ++last;
    }
    if (q < (std::uint64_t{1} << (p - 1))) return sign | static_cast<std::uint32_t>(q);  // subnormal or zero
    const int biased = last + (p - 1) + 127;
    if (biased >= 0xFF) return sign | infinity;
    return sign | (static_cast<std::uint32_t>(biased) << (p - 1)) |
           static_cast<std::uint32_t>(q - (std::uint64_t{1} << (p - 1)));
}

// table is (V, d) of Scalar, returns (V, d) in double by the plain loop the library must agree with.
template <class Scalar>
inline Table widened(const embed::BasicTable<Scalar>& table) {
    Table out(table.rows(), table.cols());
    for (Index r = 0; r < table.rows(); ++r) {
        for (Index c = 0; c < table.cols(); ++c) out(r, c) = decoded(table(r, c));
    }
    return out;
}

// The narrow value with these bits.
template <class Scalar>
Scalar from_bits(std::uint32_t bits) {
    if constexpr (std::is_same_v<Scalar, float>) {
        return std::bit_cast<float>(bits);
    } else {
        return std::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(bits));
    }
}

// The narrow value nearest x, by the reference rounding.
template <class Scalar>
Scalar narrow(double x) {
    return from_bits<Scalar>(rounded_bits(x, kPrecision<Scalar>));
}

// ---- Comparisons ----

// x and y are the same double bit for bit (the sign of zero included), or both NaN. Which NaN a sum of
// NaNs and infinities gives (its sign and payload) is up to the compiler: x86 returns an add's first
// operand's NaN, and a compiler may swap the operands of an add. Every NaN ranks the same, so the
// rankings do not depend on it.
inline bool same_double(double x, double y) { return bits_of(x) == bits_of(y) || (std::isnan(x) && std::isnan(y)); }

// a and b hold the same doubles, by same_double.
template <class A, class B>
inline testing::AssertionResult SameBits(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) {
        return testing::AssertionFailure() << "shapes " << a.rows() << "x" << a.cols() << " and " << b.rows() << "x"
                                           << b.cols();
    }
    for (Index r = 0; r < a.rows(); ++r) {
        for (Index c = 0; c < a.cols(); ++c) {
            if (!same_double(a(r, c), b(r, c))) {
                return testing::AssertionFailure() << "(" << r << ", " << c << "): " << a(r, c) << " against "
                                                   << b(r, c);
            }
        }
    }
    return testing::AssertionSuccess();
}

// a and b hold the same stored values, bit for bit.
template <class Scalar>
inline testing::AssertionResult SameStored(const embed::BasicTable<Scalar>& a, const embed::BasicTable<Scalar>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return testing::AssertionFailure() << "shapes differ";
    for (Index r = 0; r < a.rows(); ++r) {
        for (Index c = 0; c < a.cols(); ++c) {
            if (stored_bits(a(r, c)) != stored_bits(b(r, c))) {
                return testing::AssertionFailure() << "(" << r << ", " << c << "): bits " << stored_bits(a(r, c))
                                                   << " against " << stored_bits(b(r, c));
            }
        }
    }
    return testing::AssertionSuccess();
}

inline testing::AssertionResult SameNeighbours(const std::vector<Neighbour>& a, const std::vector<Neighbour>& b) {
    if (a.size() != b.size()) return testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].id != b[i].id || !same_double(a[i].score, b[i].score)) {
            return testing::AssertionFailure() << "position " << i << ": id " << a[i].id << " score " << a[i].score
                                               << " against id " << b[i].id << " score " << b[i].score;
        }
    }
    return testing::AssertionSuccess();
}

// ---- Tables ----

// (vocab, dim) values in [-1, 1) times a power of two per column, rounded to Scalar, with special rows: row 1 a copy of row 0 and the
// last row a copy of row 2 (ties), row 3 holding NaN, row 4 +inf and -inf, row 5 -0.0 and subnormals,
// row 6 all zeros; rows past the table's end are left out.
template <class Scalar>
embed::BasicTable<Scalar> awkward_table(Index vocab, Index dim, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    embed::BasicTable<Scalar> table(vocab, dim);
    for (Index r = 0; r < vocab; ++r) {
        // Columns of magnitudes 2^-32 to 2^32: bfloat16 products are exact, so only sums across such a
        // range round, and only then does a wrong summation order show.
        for (Index c = 0; c < dim; ++c) table(r, c) = narrow<Scalar>(std::ldexp(uniform(rng), static_cast<int>((c * 7) % 9) * 8 - 32));
    }
    const double subnormal = std::is_same_v<Scalar, float> ? 3e-42 : 5e-40;  // below 2^-126 in both
    if (vocab > 1) table.row(1) = table.row(0);
    if (vocab > 3) table(3, dim / 2) = narrow<Scalar>(kNaN);
    if (vocab > 4) {
        table(4, 0) = narrow<Scalar>(kInf);
        table(4, dim - 1) = narrow<Scalar>(-kInf);
    }
    if (vocab > 5) {
        table(5, 0) = narrow<Scalar>(-0.0);
        table(5, dim - 1) = narrow<Scalar>(subnormal);
        table(5, dim / 2) = narrow<Scalar>(-subnormal);
    }
    if (vocab > 6) table.row(6).setConstant(narrow<Scalar>(0.0));
    if (vocab > 8) table.row(vocab - 1) = table.row(2);
    return table;
}

inline Vector some_hidden(Index dim, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Vector hidden(dim);
    for (Index c = 0; c < dim; ++c) hidden[c] = uniform(rng);
    if (dim > 2) hidden[2] = -0.0;
    return hidden;
}

}  // namespace narrow_reference
