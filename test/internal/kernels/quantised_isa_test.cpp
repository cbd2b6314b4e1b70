// The quantised row loops and the block decoders, compiled for one instruction set only (this file is linked
// three times with lib/kernels/quantised_kernels.cpp and quantised_rows.cpp built for the baseline, AVX2 and
// AVX-512; see CMakeLists.txt): every value is the test's own ggml reference (test/support/ggml_reference.hpp)
// bit for bit, NaN where NaN, and every score is the documented order's sum over those values widened. The
// blocks hold random quant bits and fp16 scales of every kind (NaN, infinities, zeros, subnormals). This file
// calls only the kernels' out-of-line functions, so no inline copy built for the baseline stands in for the
// instruction set under test.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "documented_order.hpp"
#include "embed/element_type.hpp"
#include "ggml_reference.hpp"
#include "kernels/quantised_kernels.hpp"
#include "kernels/quantised_rows.hpp"

namespace {

using embed::ElementType;
using embed::Index;
using embed_test::GgmlQuantType;

// Skips the suite on a machine that cannot run the instruction set this binary was built for
// (EMBED_TEST_ISA; the baseline build has none to check).
class QuantisedKernelsOnOneInstructionSet : public testing::TestWithParam<GgmlQuantType> {
protected:
    void SetUp() override {
#if defined(EMBED_TEST_ISA)
        if (!__builtin_cpu_supports(EMBED_TEST_ISA)) GTEST_SKIP() << "this CPU lacks " << EMBED_TEST_ISA;
#endif
    }
};

std::string type_name(const testing::TestParamInfo<GgmlQuantType>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Gguf, QuantisedKernelsOnOneInstructionSet, testing::ValuesIn(embed_test::ggml_quant_types()),
                         type_name);

/// The library's element type of a ggml type ("Q4_K" is q4_k), by the ggml type ids of the format.
ElementType element_type_of(const GgmlQuantType& type) {
    switch (type.id) {
        case 2: return ElementType::q4_0;
        case 3: return ElementType::q4_1;
        case 6: return ElementType::q5_0;
        case 7: return ElementType::q5_1;
        case 8: return ElementType::q8_0;
        case 10: return ElementType::q2_k;
        case 11: return ElementType::q3_k;
        case 12: return ElementType::q4_k;
        case 13: return ElementType::q5_k;
        default: return ElementType::q6_k;
    }
}

/// fp16 scales of every kind: NaNs (quiet, signalling, negative), infinities, zeros of both signs, subnormals
/// of both signs, the largest finite halves.
const std::uint16_t kSpecialHalves[] = {0x7E00, 0x7C01, 0xFE00, 0x7C00, 0xFC00, 0x0000,
                                        0x8000, 0x0001, 0x83FF, 0x03FF, 0x7BFF, 0xFBFF};

/// blocks blocks of type: random bytes, each fp16 field a random finite half near 1, except that every 7th
/// block (from block 2) carries the next special half in one of its fields, in turn.
std::string random_blocks(const GgmlQuantType& type, Index blocks, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::string bytes;
    std::size_t next_special = 0;
    for (Index b = 0; b < blocks; ++b) {
        std::string block;
        for (int i = 0; i < type.block_bytes; ++i) block += static_cast<char>(random() & 0xFFu);
        for (std::size_t k = 0; k < type.half_fields.size(); ++k) {
            auto half = static_cast<std::uint16_t>((random() & 0x83FFu) | ((10u + random() % 8u) << 10));
            if (b % 7 == 2 && k == next_special % type.half_fields.size()) {
                half = kSpecialHalves[next_special++ % std::size(kSpecialHalves)];
            }
            block[static_cast<std::size_t>(type.half_fields[k])] = static_cast<char>(half & 0xFF);
            block[static_cast<std::size_t>(type.half_fields[k]) + 1] = static_cast<char>(half >> 8);
        }
        bytes += block;
    }
    return bytes;
}

const std::byte* bytes_of(const std::string& blocks) { return reinterpret_cast<const std::byte*>(blocks.data()); }

/// Same bits, or both NaN.
bool same_value(double got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    return std::memcmp(&got, &want, sizeof got) == 0;
}

TEST_P(QuantisedKernelsOnOneInstructionSet, DequantisedValuesAreGgmlsBitForBit) {
    const GgmlQuantType& type = GetParam();
    const Index blocks = 60;
    const std::string bytes = random_blocks(type, blocks, type.id * 31u);
    const std::vector<float> want = embed_test::reference_values(type, bytes);
    std::vector<float> got(want.size(), 7.0f);
    embed::detail::dequantise_values(element_type_of(type), bytes_of(bytes), static_cast<Index>(want.size()),
                                     got.data());
    Index nans = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        nans += std::isnan(want[i]) ? 1 : 0;
        ASSERT_TRUE(same_value(got[i], want[i])) << "value " << i << " is " << got[i] << ", expected " << want[i];
    }
    EXPECT_GT(nans, 0) << "the blocks must hold NaN scales";
}

// 1 to 9 rows (groups read side by side and rows left over), rows of 1, 2 and 3 blocks; every score and
// every square against the documented order over the reference values widened to double.
TEST_P(QuantisedKernelsOnOneInstructionSet, ScoresAreTheDocumentedSumOverGgmlsValues) {
    const GgmlQuantType& type = GetParam();
    std::mt19937_64 random(type.id);
    std::normal_distribution<double> normal;
    Index finite = 0;
    Index nan = 0;
    for (const Index blocks_per_row : {1, 2, 3}) {
        const Index dim = blocks_per_row * type.block_values;
        for (Index count = 1; count <= 9; ++count) {
            const std::string bytes = random_blocks(type, count * blocks_per_row,
                                                    static_cast<std::uint32_t>(dim * 131 + count));
            const std::vector<float> values = embed_test::reference_values(type, bytes);
            std::vector<double> widened(values.begin(), values.end());
            std::vector<double> x(static_cast<std::size_t>(dim));
            for (double& v : x) v = normal(random) * std::ldexp(1.0, static_cast<int>(random() % 9) - 4);
            std::vector<double> dots(static_cast<std::size_t>(count), -1.0);
            std::vector<double> dots_too(static_cast<std::size_t>(count), -1.0);
            std::vector<double> squares(static_cast<std::size_t>(count), -1.0);
            const ElementType element_type = element_type_of(type);
            embed::detail::dot_quantised_rows(element_type, bytes_of(bytes), count, dim, x.data(), dots.data());
            embed::detail::dot_and_square_quantised_rows(element_type, bytes_of(bytes), count, dim, x.data(),
                                                         dots_too.data(), squares.data());
            for (Index t = 0; t < count; ++t) {
                const double* row = widened.data() + t * dim;
                const double want = embed_test::dot_in_documented_order(row, x.data(), dim);
                const double want_square = embed_test::dot_in_documented_order(row, row, dim);
                const auto i = static_cast<std::size_t>(t);
                const std::string where = "row " + std::to_string(t) + " of " + std::to_string(count) + ", d " +
                                          std::to_string(dim);
                EXPECT_TRUE(same_value(dots[i], want)) << where << ": " << dots[i] << ", expected " << want;
                EXPECT_TRUE(same_value(dots_too[i], want)) << where << ": " << dots_too[i] << ", expected " << want;
                EXPECT_TRUE(same_value(squares[i], want_square))
                    << where << ": square " << squares[i] << ", expected " << want_square;
                (std::isnan(want) ? nan : finite) += 1;
            }
        }
    }
    // Both kinds of score must occur, or a NaN or a number the loops never meet would go unnoticed.
    EXPECT_GT(finite, 0);
    EXPECT_GT(nan, 0);
}

}  // namespace
