// Parameter and byte counts: every expected number is worked out by hand in
// the comment beside it.
#include <limits>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/counting.hpp>

namespace {

using embed::Dtype;
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

TEST(DtypeBytes, AreTheFormatsWidths) {
    EXPECT_EQ(embed::dtype_bytes(Dtype::fp64), 8);
    EXPECT_EQ(embed::dtype_bytes(Dtype::fp32), 4);
    EXPECT_EQ(embed::dtype_bytes(Dtype::bf16), 2);
    EXPECT_EQ(embed::dtype_bytes(Dtype::fp16), 2);
}

TEST(DtypeName, IsTheUsualName) {
    EXPECT_EQ(std::string(embed::dtype_name(Dtype::fp64)), "fp64");
    EXPECT_EQ(std::string(embed::dtype_name(Dtype::fp32)), "fp32");
    EXPECT_EQ(std::string(embed::dtype_name(Dtype::bf16)), "bf16");
    EXPECT_EQ(std::string(embed::dtype_name(Dtype::fp16)), "fp16");
}

TEST(TableBytes, IsParamsTimesWidth) {
    EXPECT_EQ(embed::table_bytes(32768, Dtype::fp64), 262144);  // 32768 * 8
    EXPECT_EQ(embed::table_bytes(32768, Dtype::fp32), 131072);  // 32768 * 4
    EXPECT_EQ(embed::table_bytes(32768, Dtype::bf16), 65536);  // 32768 * 2
    EXPECT_EQ(embed::table_bytes(0, Dtype::fp16), 0);
}

TEST(TableBytes, RejectsNegativeParamsNamingThem) {
    EXPECT_THAT([] { embed::table_bytes(-10, Dtype::fp32); }, ThrowsMessage<std::invalid_argument>(HasSubstr("-10")));
}

TEST(TableBytes, RejectsCountsPastTheLargestIndex) {
    EXPECT_THROW(embed::table_bytes(kTwoTo61, Dtype::fp64), std::overflow_error);  // 2^64
    EXPECT_EQ(embed::table_bytes(kTwoTo61, Dtype::fp16), kTwoTo62);
}

}  // namespace
