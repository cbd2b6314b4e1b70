#include "compare/draws.hpp"

#include <bit>
#include <cmath>
#include <numbers>
#include <unordered_set>

namespace embed::detail {
namespace {

// CPython's getrandbits(bits) for 0 < bits <= 32: the top bits of one 32-bit output.
std::uint64_t random_bits(PythonRandom& generator, int bits) {
    return generator.next_u32() >> (32 - bits);
}

// CPython's getrandbits for any width: 32-bit words, least significant first, the last one cut to its top bits.
std::uint64_t random_bits_wide(PythonRandom& generator, int bits) {
    if (bits <= 32) return random_bits(generator, bits);
    const std::uint64_t low = generator.next_u32();
    const std::uint64_t high = random_bits(generator, bits - 32);
    return low | (high << 32);
}

// CPython's _randbelow_with_getrandbits(n), n > 0: draws of n.bit_length() bits until one is below n.
Index random_below(PythonRandom& generator, Index n) {
    const auto bits = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n)));
    std::uint64_t r = random_bits_wide(generator, bits);
    while (r >= static_cast<std::uint64_t>(n)) r = random_bits_wide(generator, bits);
    return static_cast<Index>(r);
}

}  // namespace

// CPython's Random.sample on a range: a partial Fisher-Yates shuffle of a pool when the population is small
// next to the sample, else rejection of repeats from a set; the switch point is CPython's own.
std::vector<Index> python_sample(std::uint64_t seed, Index n, Index count) {
    PythonRandom generator(seed);
    std::vector<Index> result(static_cast<std::size_t>(count));
    Index set_size = 21;
    if (count > 5) {
        set_size += static_cast<Index>(
            std::pow(4.0, std::ceil(std::log(static_cast<double>(count * 3)) / std::log(4.0))));
    }
    if (n <= set_size) {
        std::vector<Index> pool(static_cast<std::size_t>(n));
        for (Index i = 0; i < n; ++i) pool[static_cast<std::size_t>(i)] = i;
        for (Index i = 0; i < count; ++i) {
            const auto j = static_cast<std::size_t>(random_below(generator, n - i));
            result[static_cast<std::size_t>(i)] = pool[j];
            pool[j] = pool[static_cast<std::size_t>(n - i - 1)];
        }
    } else {
        std::unordered_set<Index> selected;
        for (Index i = 0; i < count; ++i) {
            Index j = random_below(generator, n);
            while (selected.contains(j)) j = random_below(generator, n);
            selected.insert(j);
            result[static_cast<std::size_t>(i)] = j;
        }
    }
    return result;
}

// CPython's Random.gauss: Box-Muller from two random() values, the second normal kept for the next call.
Table python_gauss_rows(std::uint64_t seed, Index rows, Index cols) {
    PythonRandom generator(seed);
    Table out(rows, cols);
    bool have_next = false;
    double next = 0.0;
    for (Index i = 0; i < out.size(); ++i) {
        double z = next;
        if (!have_next) {
            const double angle = generator.random() * (2.0 * std::numbers::pi);
            const double radius = std::sqrt(-2.0 * std::log(1.0 - generator.random()));
            z = std::cos(angle) * radius;
            next = std::sin(angle) * radius;
        }
        have_next = !have_next;
        out.data()[i] = 0.0 + z * 1.0;
    }
    return out;
}

}  // namespace embed::detail
