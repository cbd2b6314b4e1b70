#include "embed/python_random.hpp"

#include "multiversion.hpp"

#include <algorithm>
#include <vector>

namespace embed {
namespace {

constexpr int kN = 624;
constexpr int kM = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;

// CPython's init_genrand.
void init_genrand(std::array<std::uint32_t, kN>& mt, std::uint32_t s) {
    mt[0] = s;
    for (int i = 1; i < kN; ++i) {
        mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    }
}

// CPython's init_by_array, the seeding random.Random(int) uses.
void init_by_array(std::array<std::uint32_t, kN>& mt, const std::vector<std::uint32_t>& key) {
    init_genrand(mt, 19650218U);
    const auto key_length = static_cast<int>(key.size());
    int i = 1;
    int j = 0;
    for (int k = std::max(kN, key_length); k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] +
                static_cast<std::uint32_t>(j);
        ++i;
        ++j;
        if (i >= kN) {
            mt[0] = mt[kN - 1];
            i = 1;
        }
        if (j >= key_length) j = 0;
    }
    for (int k = kN - 1; k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) -
                static_cast<std::uint32_t>(i);
        ++i;
        if (i >= kN) {
            mt[0] = mt[kN - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;  // MSB is 1, assuring a non-zero initial array
}

// The seed's 32-bit words, least significant first; seed 0 is the key [0],
// exactly as CPython splits abs(seed).
std::vector<std::uint32_t> key_words(std::uint64_t seed) {
    std::vector<std::uint32_t> key{static_cast<std::uint32_t>(seed)};
    if (seed >> 32 != 0) key.push_back(static_cast<std::uint32_t>(seed >> 32));
    return key;
}

std::uint32_t temper(std::uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

// The twist with its condition as a mask, so the compiler can vectorise it:
// the first loop reads words 397 ahead (not yet rewritten), the second words
// 227 behind (already rewritten), so vectors of up to 227 words are exact.
EMBED_MULTIVERSION
void twist_words(std::uint32_t* mt) {
    auto mix = [](std::uint32_t upper, std::uint32_t lower, std::uint32_t far) {
        const std::uint32_t y = (upper & kUpperMask) | (lower & kLowerMask);
        return far ^ (y >> 1) ^ ((0U - (y & 1U)) & kMatrixA);
    };
    int kk = 0;
    for (; kk < kN - kM; ++kk) mt[kk] = mix(mt[kk], mt[kk + 1], mt[kk + kM]);
    for (; kk < kN - 1; ++kk) mt[kk] = mix(mt[kk], mt[kk + 1], mt[kk + (kM - kN)]);
    mt[kN - 1] = mix(mt[kN - 1], mt[0], mt[kM - 1]);
}

// Tempers a whole state and pairs its words into kN / 2 random() values plus
// offset. a < 2^27 and b < 2^26 fit in int32, so the signed conversions the
// baseline instruction set has are exact, and the arithmetic is combine()'s.
EMBED_MULTIVERSION
void emit_block(const std::uint32_t* mt, double* out, double offset) {
    for (int j = 0; j < kN / 2; ++j) {
        const auto a = static_cast<std::int32_t>(temper(mt[2 * j]) >> 5);
        const auto b = static_cast<std::int32_t>(temper(mt[2 * j + 1]) >> 6);
        out[j] = (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0) +
                 offset;
    }
}


double combine(std::uint32_t first, std::uint32_t second) {
    const std::uint32_t a = first >> 5;
    const std::uint32_t b = second >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

}  // namespace

PythonRandom::PythonRandom(std::uint64_t seed) { init_by_array(state_, key_words(seed)); }

// Regenerates all 624 words at once, as CPython's genrand_uint32 does when it runs out.
void PythonRandom::twist() {
    twist_words(state_.data());
    position_ = 0;
}

std::uint32_t PythonRandom::next_u32() {
    if (position_ >= kN) twist();
    return temper(state_[position_++]);
}

double PythonRandom::random() {
    const std::uint32_t first = next_u32();
    return combine(first, next_u32());
}

void PythonRandom::fill_random(std::span<double> out) {
    for (double& value : out) value = random();
}

void PythonRandom::fill_random(std::span<double> out, double offset) {
    std::size_t i = 0;
    const std::size_t n = out.size();
    // Whole states at a time once the stream sits on a state boundary; an odd
    // position (after a lone next_u32) never gets there and stays on this path.
    while (i < n && position_ != kN) out[i++] = random() + offset;
    constexpr std::size_t kPerState = kN / 2;
    if (position_ == kN) {
        for (; n - i >= kPerState; i += kPerState) {
            twist();
            emit_block(state_.data(), out.data() + i, offset);
            position_ = kN;
        }
    }
    for (; i < n; ++i) out[i] = random() + offset;
}

}  // namespace embed
