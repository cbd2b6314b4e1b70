#include "embed/python_random.hpp"

#include "kernels/multiversion.hpp"

#include <algorithm>
#include <vector>

namespace embed {
namespace {

constexpr int kN = 624;
constexpr int kM = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;

constexpr std::size_t kWords = kN;  // the state size as an index

// CPython's init_genrand.
void init_genrand(std::array<std::uint32_t, kN>& mt, std::uint32_t s) {
    mt[0] = s;
    for (std::size_t i = 1; i < kWords; ++i) {
        mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
    }
}

// CPython's init_by_array, the seeding random.Random(int) uses.
void init_by_array(std::array<std::uint32_t, kN>& mt, std::span<const std::uint32_t> key) {
    init_genrand(mt, 19650218U);
    const std::size_t key_length = key.size();
    std::size_t i = 1;
    std::size_t j = 0;
    for (std::size_t k = std::max(kWords, key_length); k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] +
                static_cast<std::uint32_t>(j);
        ++i;
        ++j;
        if (i >= kWords) {
            mt[0] = mt[kWords - 1];
            i = 1;
        }
        if (j >= key_length) j = 0;
    }
    for (std::size_t k = kWords - 1; k > 0; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) -
                static_cast<std::uint32_t>(i);
        ++i;
        if (i >= kWords) {
            mt[0] = mt[kWords - 1];
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

// Words per step of the twist's loops and the tempering's: one AVX-512
// vector of 32-bit words. GCC and Clang alike turn a loop of this constant
// length into whole vectors; what is left over goes a word at a time. Left to
// choose, Clang took four words at a time where it could not prove the far
// words apart, eight where GCC takes sixteen, and left up to 41 words of a
// loop to scalar code, which made its make_table much slower than GCC's.
constexpr int kStepWords = 16;

// One word of the twist: word kk of `words` mixed with words[kk + 1] and the far word.
[[gnu::always_inline]] inline std::uint32_t mixed(std::uint32_t word, std::uint32_t next, std::uint32_t far) {
    const std::uint32_t y = (word & kUpperMask) | (next & kLowerMask);
    return far ^ (y >> 1) ^ ((0U - (y & 1U)) & kMatrixA);
}

// Words [0, count) of `words` mixed, as the twist mixes them, with the far
// words far[0, count), which no store here touches (`__restrict` says so).
[[gnu::always_inline]] inline void mix_words(std::uint32_t* __restrict words, const std::uint32_t* __restrict far,
                                             int count) {
    int kk = 0;
    for (; kk + kStepWords <= count; kk += kStepWords) {
        for (int l = 0; l < kStepWords; ++l) words[kk + l] = mixed(words[kk + l], words[kk + l + 1], far[kk + l]);
    }
    for (; kk < count; ++kk) words[kk] = mixed(words[kk], words[kk + 1], far[kk]);
}

// The twist, its condition as a mask so that it vectorises. Word kk mixes
// with the word 397 ahead (not yet rewritten) for the first 227 words, 227
// behind (already rewritten) for the rest, cut at 454 so that no part reads
// a far word it writes.
EMBED_MULTIVERSION
void twist_words(std::uint32_t* mt) {
    constexpr int kBack = kN - kM;  // 227
    mix_words(mt, mt + kM, kBack);
    mix_words(mt + kBack, mt, kBack);
    mix_words(mt + 2 * kBack, mt + kBack, kN - 1 - 2 * kBack);
    mt[kN - 1] = mixed(mt[kN - 1], mt[0], mt[kM - 1]);
}

// Tempers a whole state and pairs its words into kN / 2 random() values plus
// offset. a < 2^27 and b < 2^26 fit in int32, so the signed conversions the
// baseline instruction set has are exact, and the arithmetic is combine()'s.
// Each step tempers 48 words, then pairs them: steps of 16 words were much
// slower with Clang, of 208 words slower on large tables, and a whole state
// tempered first slowed GCC, its stores bunched together.
EMBED_MULTIVERSION
void emit_block(const std::uint32_t* mt, double* out, double offset) {
    constexpr int kWordsPerStep = 3 * kStepWords;
    static_assert(kN % kWordsPerStep == 0, "the state is whole steps");
    for (int first = 0; first < kN; first += kWordsPerStep) {
        alignas(64) std::uint32_t tempered[kWordsPerStep];
        for (int i = 0; i < kWordsPerStep; ++i) tempered[i] = temper(mt[first + i]);
        double* to = out + first / 2;
        for (int j = 0; j < kWordsPerStep / 2; ++j) {
            const auto a = static_cast<std::int32_t>(tempered[2 * j] >> 5);
            const auto b = static_cast<std::int32_t>(tempered[2 * j + 1] >> 6);
            to[j] = (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0) +
                    offset;
        }
    }
}

double combine(std::uint32_t first, std::uint32_t second) {
    const std::uint32_t a = first >> 5;
    const std::uint32_t b = second >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

}  // namespace

PythonRandom::PythonRandom(std::uint64_t seed) : PythonRandom(std::span<const std::uint32_t>(key_words(seed))) {}

PythonRandom::PythonRandom(std::span<const std::uint32_t> key) {
    // CPython seeds 0 with the one-word key [0]; an empty key would index nothing.
    constexpr std::uint32_t kZeroKey[] = {0};
    init_by_array(state_, key.empty() ? std::span<const std::uint32_t>(kZeroKey) : key);
}

// Regenerates all 624 words at once, as CPython's genrand_uint32 does when it runs out.
void PythonRandom::twist() {
    twist_words(state_.data());
    position_ = 0;
}

std::uint32_t PythonRandom::next_u32() {
    if (position_ >= kN) twist();
    return temper(state_[static_cast<std::size_t>(position_++)]);
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
