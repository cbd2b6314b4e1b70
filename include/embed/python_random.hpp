#pragma once
// CPython's random.Random, bit for bit: MT19937 seeded by init_by_array from
// the 32-bit words of the seed, and random() built from two 32-bit outputs.
// std::mt19937 with std::seed_seq seeds differently, so it cannot be used.

#include <array>
#include <cstdint>
#include <span>

namespace embed {

/// The generator behind CPython's random.Random(seed), for integer seeds.
class PythonRandom {
public:
    /// Seeds like random.Random(seed): init_by_array over the seed's 32-bit words, least significant first.
    explicit PythonRandom(std::uint64_t seed);

    /// key is (n) 32-bit words, least significant first: seeds like random.Random(seed) for a seed of any size
    /// (CPython's init_by_array over the words of abs(seed)); an empty key acts as [0], as seed 0 does.
    explicit PythonRandom(std::span<const std::uint32_t> key);

    /// The next raw 32-bit MT19937 output (CPython's genrand_uint32).
    std::uint32_t next_u32();

    /// The next random.random() value in [0, 1): (a * 2^26 + b) / 2^53 with a = u32 >> 5, b = u32 >> 6.
    double random();

    /// Fills out (n) with successive random() values; the same sequence as n calls to random().
    void fill_random(std::span<double> out);

    /// Fills out (n) with successive random() + offset values: fill_random, then each value plus offset,
    /// rounded once exactly as that addition (make_table passes -0.5), in one pass.
    void fill_random(std::span<double> out, double offset);

private:
    static constexpr int kStateSize = 624;
    void twist();
    std::array<std::uint32_t, kStateSize> state_{};
    int position_ = kStateSize;
};

}  // namespace embed
