// The element types' names and block sizes. The expected sizes are computed here from ggml's block
// structs (ggml-common.h), field by field, not read from the library's table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "embed/element_type.hpp"

namespace {

using embed::ElementType;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(ElementTypeName, IsLowerCaseAndRoundTripsThroughParse) {
    const char* expected[] = {"f64",  "f32",  "f16",  "bf16", "q4_0", "q4_1", "q5_0",
                              "q5_1", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"};
    int at = 0;
    for (ElementType type : embed::all_element_types) {
        EXPECT_EQ(embed::element_type_name(type), expected[at]);
        EXPECT_EQ(embed::parse_element_type(expected[at]), type);
        ++at;
    }
    EXPECT_EQ(at, 14);
}

TEST(ParseElementType, AcceptsUpperCase) {
    EXPECT_EQ(embed::parse_element_type("F32"), ElementType::f32);
    EXPECT_EQ(embed::parse_element_type("BF16"), ElementType::bf16);
    EXPECT_EQ(embed::parse_element_type("Q4_K"), ElementType::q4_k);
}

TEST(ParseElementType, RefusesOtherSpellingsNamingTheTextAndTheNames) {
    for (const char* bad : {"float32", "fp32", "<f4", "", "q4k", "f32 "}) {
        EXPECT_FALSE(embed::find_element_type(bad).has_value()) << bad;
        EXPECT_THAT([&] { (void)embed::parse_element_type(bad); },
                    ThrowsMessage<std::invalid_argument>(
                        AllOf(HasSubstr("\"" + std::string(bad) + "\""), HasSubstr("f64, f32, f16, bf16, q4_0"))));
    }
}

TEST(BlockSizes, AreGgmlsStructs) {
    const embed::Index fp16 = 2;
    // Plain types: one value, its width.
    EXPECT_EQ(embed::block_bytes(ElementType::f64), 8);
    EXPECT_EQ(embed::block_bytes(ElementType::f32), 4);
    EXPECT_EQ(embed::block_bytes(ElementType::f16), 2);
    EXPECT_EQ(embed::block_bytes(ElementType::bf16), 2);
    // 32-value blocks: d (and m) as fp16, then the quants, 5-bit types with 4 bytes of high bits.
    EXPECT_EQ(embed::block_bytes(ElementType::q4_0), fp16 + 32 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q4_1), 2 * fp16 + 32 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q5_0), fp16 + 4 + 32 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q5_1), 2 * fp16 + 4 + 32 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q8_0), fp16 + 32);
    // 256-value super-blocks.
    EXPECT_EQ(embed::block_bytes(ElementType::q2_k), 256 / 16 + 256 / 4 + 2 * fp16);
    EXPECT_EQ(embed::block_bytes(ElementType::q3_k), 256 / 8 + 256 / 4 + 12 + fp16);
    EXPECT_EQ(embed::block_bytes(ElementType::q4_k), 2 * fp16 + 12 + 256 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q5_k), 2 * fp16 + 12 + 256 / 8 + 256 / 2);
    EXPECT_EQ(embed::block_bytes(ElementType::q6_k), 256 / 2 + 256 / 4 + 256 / 16 + fp16);
    for (ElementType type : embed::all_element_types) {
        const embed::Index values = embed::block_values(type);
        EXPECT_EQ(embed::is_quantised(type), values > 1);
        const std::string name(embed::element_type_name(type));
        EXPECT_EQ(values, name[0] != 'q' ? 1 : (name.back() == 'k' ? 256 : 32)) << name;
    }
}

TEST(RowBytes, IsWholeBlocksAndRefusesAPartialOne) {
    EXPECT_EQ(embed::row_bytes(ElementType::f32, 768), 3072);
    EXPECT_EQ(embed::row_bytes(ElementType::q4_k, 4096), 16 * 144);
    EXPECT_EQ(embed::row_bytes(ElementType::q8_0, 0), 0);
    EXPECT_THAT([] { (void)embed::row_bytes(ElementType::q4_k, 100); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("100"), HasSubstr("256"), HasSubstr("q4_k"))));
    EXPECT_THROW((void)embed::row_bytes(ElementType::f64, -1), std::invalid_argument);
    EXPECT_THROW((void)embed::row_bytes(ElementType::f64, embed::Index{1} << 61), std::overflow_error);
}

}  // namespace
