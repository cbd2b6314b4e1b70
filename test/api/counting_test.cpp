// Parameter and byte counts: every expected number is worked out by hand in
// the comment beside it.
#include <limits>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/counting.hpp>

namespace {

using embed::ElementType;
using embed::Index;
using embed::VocabGrowth;
using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr Index kTwoTo61 = Index{1} << 61;
constexpr Index kTwoTo62 = Index{1} << 62;

TEST(TiedParams, CountsOneTable) {
    EXPECT_EQ(embed::tied_params(512, 64), 32768);  // 512 * 64
    EXPECT_EQ(embed::tied_params(50257, 768), 38597376);  // GPT-2: 50257 * 768
    EXPECT_EQ(embed::tied_params(0, 64), 0);
}

TEST(UntiedParams, CountsTwoTables) {
    EXPECT_EQ(embed::untied_params(512, 64), 65536);  // 2 * 512 * 64
    EXPECT_EQ(embed::untied_params(50257, 768), 77194752);  // 2 * 38597376
    EXPECT_EQ(embed::untied_params(3, 0), 0);
}

TEST(VocabGrowth, FillsEveryFieldForTheSpecification) {
    const VocabGrowth growth = embed::vocab_growth(512, 64, 2);
    EXPECT_EQ(growth.vocab, 512);
    EXPECT_EQ(growth.bigger_vocab, 1024);  // 512 * 2
    EXPECT_EQ(growth.dim, 64);
    EXPECT_EQ(growth.tied, 32768);  // 512 * 64
    EXPECT_EQ(growth.bigger_tied, 65536);  // 1024 * 64
    EXPECT_EQ(growth.untied, 65536);  // 2 * 32768
    EXPECT_EQ(growth.bigger_untied, 131072);  // 2 * 65536
    EXPECT_EQ(growth.saved, 32768);  // 65536 - 32768
}

TEST(VocabGrowth, FillsEveryFieldForAnOddShape) {
    // vocab 1000, dim 3, factor 5: tied 3000, untied 6000, bigger vocab 5000,
    // bigger tied 15000, bigger untied 30000, saved 6000 - 3000.
    const VocabGrowth want{1000, 5000, 3, 3000, 15000, 6000, 30000, 3000};
    EXPECT_EQ(embed::vocab_growth(1000, 3, 5), want);
}

TEST(VocabGrowth, FactorZeroLeavesNoBiggerVocabulary) {
    const VocabGrowth want{7, 0, 2, 14, 0, 28, 0, 14};
    EXPECT_EQ(embed::vocab_growth(7, 2, 0), want);
}

TEST(VocabGrowth, RejectsANegativeFactorNamingIt) {
    EXPECT_THAT([] { embed::vocab_growth(512, 64, -1); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("growth factor must be >= 0, got -1")));
}

TEST(VocabGrowth, RejectsNegativeSizesNamingThem) {
    EXPECT_THAT([] { embed::vocab_growth(-512, 64, 2); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-512")));
    EXPECT_THAT([] { embed::vocab_growth(512, -64, 2); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-64")));
}

TEST(VocabGrowth, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::vocab_growth(kTwoTo62, 2, 1), std::overflow_error);  // tied is 2^63
    EXPECT_THROW(embed::vocab_growth(kTwoTo61, 1, 2), std::overflow_error);  // bigger_untied is 2^63
    EXPECT_THROW(embed::vocab_growth(kTwoTo62, 1, 4), std::overflow_error);  // bigger_vocab is 2^64
}

TEST(TiedParams, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::tied_params(kTwoTo62, 2), std::overflow_error);
}

TEST(UntiedParams, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::untied_params(kTwoTo62, 1), std::overflow_error);  // 2 * 2^62
    EXPECT_EQ(embed::untied_params(kTwoTo61, 1), kTwoTo62);
}

TEST(TableBytes, IsParamsTimesWidth) {
    EXPECT_EQ(embed::table_bytes(32768, ElementType::f64), 262144);  // 32768 * 8
    EXPECT_EQ(embed::table_bytes(32768, ElementType::f32), 131072);  // 32768 * 4
    EXPECT_EQ(embed::table_bytes(32768, ElementType::bf16), 65536);  // 32768 * 2
    EXPECT_EQ(embed::table_bytes(32768, ElementType::f16), 65536);   // 32768 * 2
    EXPECT_EQ(embed::table_bytes(0, ElementType::f16), 0);
    EXPECT_EQ(embed::table_bytes(7, ElementType::f32), 28);  // one value per element: any count
}

// ggml's blocks (ggml-common.h): q4_0 is an fp16 scale and 32 four-bit values (2 + 16 bytes), q8_0 a scale
// and 32 bytes (34), q4_k 256 values in 2 + 2 + 12 + 128 bytes (144), q6_k 128 + 64 + 16 + 2 (210).
TEST(TableBytes, IsWholeBlocksTimesTheBlockBytesForQuantisedTypes) {
    EXPECT_EQ(embed::table_bytes(32768, ElementType::q4_0), 18432);   // 1024 blocks * 18
    EXPECT_EQ(embed::table_bytes(32768, ElementType::q8_0), 34816);   // 1024 blocks * 34
    EXPECT_EQ(embed::table_bytes(32768, ElementType::q4_k), 18432);   // 128 blocks * 144
    EXPECT_EQ(embed::table_bytes(32768, ElementType::q6_k), 26880);   // 128 blocks * 210
    EXPECT_EQ(embed::table_bytes(0, ElementType::q2_k), 0);
}

TEST(TableBytes, RejectsPartBlocksNamingTheCountAndTheBlock) {
    EXPECT_THAT([] { embed::table_bytes(33, ElementType::q4_0); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("params = 33 is not a multiple of 32")));
    EXPECT_THAT([] { embed::table_bytes(32768 + 128, ElementType::q6_k); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("256, the values in one block of q6_k")));
}

TEST(TableBytes, RejectsNegativeParamsNamingThem) {
    EXPECT_THAT([] { embed::table_bytes(-10, ElementType::f32); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("-10")));
    EXPECT_THAT([] { embed::table_bytes(-32, ElementType::q4_0); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("-32")));
}

TEST(TableBytes, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::table_bytes(kTwoTo61, ElementType::f64), std::overflow_error);  // 2^64
    EXPECT_EQ(embed::table_bytes(kTwoTo61, ElementType::f16), kTwoTo62);
    // 2^61 / 32 = 2^56 blocks of 18 bytes: 18 * 2^56 = 1.125 * 2^60 fits; q8_0's 34 * 2^56 = 1.0625 * 2^61 too.
    EXPECT_EQ(embed::table_bytes(kTwoTo61, ElementType::q4_0), 18 * (Index{1} << 56));
    // q8_0 takes more bytes than values (34 per 32): 2^58 - 1 blocks of 34 bytes are about 1.06 * 2^63.
    EXPECT_THROW(embed::table_bytes(std::numeric_limits<Index>::max() / 32 * 32, ElementType::q8_0),
                 std::overflow_error);
}

}  // namespace
