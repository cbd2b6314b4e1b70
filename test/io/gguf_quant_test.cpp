// ggml's block-quantised GGUF types (Q4_0 ... Q6_K) read through load_table_f32, load_stored_table and
// load_table. Fixtures are built byte by byte with random quant bits and fp16 scales of every kind
// (negative, subnormal, zero, infinite, NaN); the expected values come from the test's own per-value
// reference (test/support/ggml_reference.hpp), itself checked against numpy float32
// (test/support/ggml_dequantise.py). Every ggml type id is listed by its ggml name.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/io.hpp>
#include <embed/table.hpp>

#include "ggml_reference.hpp"
#include "table_files.hpp"
#include "threads/parallel.hpp"

namespace {

using embed::FileFormatError;
using embed::Index;
using embed_test::GgmlQuantType;
using embed_test::TempDir;
using testing::HasSubstr;

/// fp16 scales the first blocks of every fixture carry, so each type meets them all: NaNs (quiet,
/// signalling, negative), infinities, zeros of both signs, the smallest subnormals of both signs.
const std::vector<std::uint16_t> special_halves{0x7E00, 0x7C01, 0xFE00, 0x7C00, 0xFC00, 0x0000,
                                                0x8000, 0x0001, 0x83FF, 0x03FF, 0x7BFF, 0xFBFF};

/// A random finite fp16: any sign, any exponent but all-ones (subnormals included), any fraction.
std::uint16_t random_finite_half(std::mt19937& random) {
    const auto sign = static_cast<std::uint16_t>(random() & 1u);
    const auto exponent = static_cast<std::uint16_t>(random() % 31u);
    const auto fraction = static_cast<std::uint16_t>(random() & 0x3FFu);
    return static_cast<std::uint16_t>(sign << 15 | exponent << 10 | fraction);
}

/// blocks blocks of type: random bytes, then each fp16 field set. In the first special_halves.size() blocks
/// field k of block b is special_halves' entry (b + 5k) modulo its size, so every field (a second one, m or
/// dmin, too) meets every special, beside a different special or finite half in the other field; later
/// blocks take random finite halves.
std::string random_blocks(const GgmlQuantType& type, int blocks, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::string bytes;
    for (int b = 0; b < blocks; ++b) {
        std::string block;
        for (int i = 0; i < type.block_bytes; ++i) block += static_cast<char>(random() & 0xFFu);
        for (std::size_t k = 0; k < type.half_fields.size(); ++k) {
            const auto block_index = static_cast<std::size_t>(b);
            const std::uint16_t half = block_index < special_halves.size()
                                           ? special_halves[(block_index + 5 * k) % special_halves.size()]
                                           : random_finite_half(random);
            block[static_cast<std::size_t>(type.half_fields[k])] = static_cast<char>(half & 0xFF);
            block[static_cast<std::size_t>(type.half_fields[k]) + 1] = static_cast<char>(half >> 8);
        }
        bytes += block;
    }
    return bytes;
}

/// A .gguf holding one (rows, cols) tensor "token_embd.weight" of the given ggml type id, data as given.
std::string quant_gguf(std::uint32_t type_id, std::uint64_t rows, std::uint64_t cols, const std::string& data) {
    return embed_test::gguf_file({{"token_embd.weight", {cols, rows}, type_id, 0}}, data);
}

/// Same float32 bits, or both NaN: which NaN a sum of two NaNs gives depends on operand order, which the
/// compiler may swap (ggml's own builds included), so NaN payloads are not compared.
bool same_value(float got, float want) {
    if (std::isnan(want)) return std::isnan(got);
    return std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want);
}

/// A float's bits in hex, for messages.
std::string hex_bits(float value) {
    std::ostringstream out;
    out << "0x" << std::hex << std::bit_cast<std::uint32_t>(value);
    return out.str();
}

testing::AssertionResult SameValues(const float* got, const std::vector<float>& want, const std::string& what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (!same_value(got[i], want[i])) {
            return testing::AssertionFailure() << what << ": value " << i << " is " << got[i] << " (bits "
                                               << hex_bits(got[i]) << "), expected " << want[i] << " (bits "
                                               << hex_bits(want[i]) << ")";
        }
    }
    return testing::AssertionSuccess();
}

/// Rows and columns of a fixture: several rows of several blocks each.
std::pair<int, int> fixture_shape(const GgmlQuantType& type) {
    return type.block_values == 32 ? std::pair{6, 128} : std::pair{4, 1024};
}

class QuantTypes : public testing::TestWithParam<GgmlQuantType> {};

std::string type_name(const testing::TestParamInfo<GgmlQuantType>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Gguf, QuantTypes, testing::ValuesIn(embed_test::ggml_quant_types()), type_name);

/// A fixture's blocks: several rows of several blocks, seeded by the type's id.
std::string fixture_blocks(const GgmlQuantType& type) {
    const auto [rows, cols] = fixture_shape(type);
    return random_blocks(type, rows * cols / type.block_values, type.id);
}

// The reference against numpy float32, a second hand from the same format description: every type's
// fixture in one run of the script.
TEST(GgufQuantReference, AgreesWithNumpyFloat32) {
#ifndef EMBED_TEST_NUMPY_PYTHON
    GTEST_SKIP() << "no python3 with numpy";
#else
    const TempDir dir;
    std::string command = std::string("'") + EMBED_TEST_NUMPY_PYTHON + "' '" + EMBED_GGML_NUMPY_SCRIPT + "'";
    for (const GgmlQuantType& type : embed_test::ggml_quant_types()) {
        command += " " + type.name + " '" + dir.write(type.name + ".bin", fixture_blocks(type)).string() + "'";
    }
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
    ASSERT_EQ(pclose(pipe), 0) << command;
    std::istringstream lines(output);
    for (const GgmlQuantType& type : embed_test::ggml_quant_types()) {
        std::string line;
        ASSERT_TRUE(std::getline(lines, line)) << "no line for " << type.name;
        std::istringstream in(line);
        std::vector<float> numpy_values;
        std::uint32_t bits = 0;
        while (in >> bits) numpy_values.push_back(std::bit_cast<float>(bits));
        const std::vector<float> reference = embed_test::reference_values(type, fixture_blocks(type));
        ASSERT_EQ(numpy_values.size(), reference.size()) << type.name;
        EXPECT_TRUE(SameValues(numpy_values.data(), reference, type.name + " numpy against the reference"));
    }
#endif
}

TEST_P(QuantTypes, LoadsAsGgmlComputesInFloat32AndWidenedToDouble) {
    const GgmlQuantType& type = GetParam();
    const auto [rows, cols] = fixture_shape(type);
    const std::string blocks = fixture_blocks(type);
    const std::vector<float> expected = embed_test::reference_values(type, blocks);
    // The special scales reach the values: NaNs (NaN * q, inf * 0) and infinities among them.
    EXPECT_TRUE(std::ranges::any_of(expected, [](float v) { return std::isnan(v); })) << type.name;
    EXPECT_TRUE(std::ranges::any_of(expected, [](float v) { return std::isinf(v); })) << type.name;
    const TempDir dir;
    const auto file = dir.write("q.gguf", quant_gguf(type.id, static_cast<std::uint64_t>(rows),
                                                     static_cast<std::uint64_t>(cols), blocks));

    const embed::TableF32 f32 = embed::load_table_f32(file);
    ASSERT_EQ(f32.rows(), rows);
    ASSERT_EQ(f32.cols(), cols);
    EXPECT_TRUE(SameValues(f32.data(), expected, type.name + " load_table_f32"));

    const embed::StoredTable stored = embed::load_stored_table(file);
    ASSERT_TRUE(std::holds_alternative<embed::TableF32>(stored)) << "index " << stored.index();
    EXPECT_EQ(std::memcmp(std::get<embed::TableF32>(stored).data(), f32.data(), expected.size() * sizeof(float)), 0);

    // The double path is the float32 values widened, NaNs included (same bits as the language's widening).
    const embed::Table doubles = embed::load_table(file);
    ASSERT_EQ(doubles.rows(), rows);
    for (Index i = 0; i < doubles.size(); ++i) {
        const double want = static_cast<double>(f32.data()[i]);
        ASSERT_EQ(std::bit_cast<std::uint64_t>(doubles.data()[i]), std::bit_cast<std::uint64_t>(want))
            << type.name << " load_table value " << i;
    }
    EXPECT_THAT([&] { (void)embed::load_table_bf16(file); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr("has dtype " + type.name + ", which a bfloat16")));
}

// The second fp16 field (m of Q4_1 and Q5_1, dmin of Q2_K, Q4_K and Q5_K) is added to or subtracted from
// every value of its block (Q2_K, Q4_K, Q5_K: times a 4- or 6-bit min, inf * 0 being NaN): where it is NaN or
// infinite and the first field finite, no loaded value of the block is finite, whatever the quants. Each of
// the five such fields in the fixtures (quiet, signalling and negative NaN, +inf, -inf) is checked.
TEST_P(QuantTypes, ANanOrInfiniteSecondScaleLeavesNoValueOfItsBlockFinite) {
    const GgmlQuantType& type = GetParam();
    if (type.half_fields.size() < 2) GTEST_SKIP() << type.name << " has one fp16 field";
    const auto [rows, cols] = fixture_shape(type);
    const std::string blocks = fixture_blocks(type);
    const TempDir dir;
    const auto file = dir.write("q.gguf", quant_gguf(type.id, static_cast<std::uint64_t>(rows),
                                                     static_cast<std::uint64_t>(cols), blocks));
    const embed::TableF32 f32 = embed::load_table_f32(file);
    const std::vector<float> expected = embed_test::reference_values(type, blocks);
    const auto half_at = [&](std::size_t block, int field) {
        const std::size_t at = block * static_cast<std::size_t>(type.block_bytes) + static_cast<std::size_t>(field);
        return static_cast<std::uint16_t>(static_cast<unsigned char>(blocks[at]) |
                                          static_cast<unsigned char>(blocks[at + 1]) << 8);
    };
    std::vector<std::uint16_t> seen;
    for (std::size_t b = 0; b < blocks.size() / static_cast<std::size_t>(type.block_bytes); ++b) {
        const std::uint16_t first = half_at(b, type.half_fields[0]);
        const std::uint16_t second = half_at(b, type.half_fields[1]);
        const bool first_finite = (first & 0x7C00) != 0x7C00;
        if ((second & 0x7C00) != 0x7C00 || !first_finite) continue;
        seen.push_back(second);
        for (int v = 0; v < type.block_values; ++v) {
            const std::size_t i = b * static_cast<std::size_t>(type.block_values) + static_cast<std::size_t>(v);
            EXPECT_FALSE(std::isfinite(f32.data()[i])) << type.name << " block " << b << " value " << v;
            EXPECT_TRUE(same_value(f32.data()[i], expected[i])) << type.name << " block " << b << " value " << v;
        }
    }
    EXPECT_THAT(seen, testing::UnorderedElementsAre(0x7E00, 0x7C01, 0xFE00, 0x7C00, 0xFC00)) << type.name;
}

TEST_P(QuantTypes, RowWidthNotAWholeNumberOfBlocksIsRefused) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    const auto width = static_cast<std::uint64_t>(type.block_values + type.block_values / 2);
    const auto file = dir.write("ragged.gguf", quant_gguf(type.id, 2, width, std::string(4096, '\0')));
    EXPECT_THAT([&] { (void)embed::load_table_f32(file); },
                testing::ThrowsMessage<FileFormatError>(AllOf(
                    HasSubstr(file.string()),
                    HasSubstr("tensor 'token_embd.weight' of type " + type.name + " has ne[0] = " +
                              std::to_string(width) + ", not a multiple of its block of " +
                              std::to_string(type.block_values)))));
}

TEST_P(QuantTypes, BlocksPastTheFileAreRefusedBeforeReading) {
    const GgmlQuantType& type = GetParam();
    const TempDir dir;
    // Ten rows of one block declared, nine blocks present.
    const std::string nine = random_blocks(type, 9, 7);
    const auto width = static_cast<std::uint64_t>(type.block_values);
    const auto file = dir.write("short.gguf", quant_gguf(type.id, 10, width, nine));
    EXPECT_THAT([&] { (void)embed::list_tensors(file); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr(
                    "with " + std::to_string(10 * type.block_bytes) + " bytes runs past the data section of " +
                    std::to_string(9 * type.block_bytes) + " bytes")));
}

// A row can hold more values than the file has bytes (Q2_K stores 256 in 84): such a table loads.
TEST_P(QuantTypes, RowsWiderThanTheFileLoad) {
    const GgmlQuantType& type = GetParam();
    const int width = 16 * 256;
    const std::string blocks = random_blocks(type, width / type.block_values, 3);
    const TempDir dir;
    const std::string bytes = quant_gguf(type.id, 1, static_cast<std::uint64_t>(width), blocks);
    const auto file = dir.write("wide.gguf", bytes);
    const embed::TableF32 table = embed::load_table_f32(file);
    EXPECT_TRUE(SameValues(table.data(), embed_test::reference_values(type, blocks), type.name + " wide row"));
}

// Past one decode chunk (2^16 values) and split between threads: the values do not depend on how.
TEST_P(QuantTypes, ThreadCountDoesNotChangeTheValues) {
    const GgmlQuantType& type = GetParam();
    constexpr Index rows = 1531;
    constexpr Index cols = 512;
    const std::string blocks = random_blocks(type, static_cast<int>(rows * cols / type.block_values), 11 + type.id);
    const std::vector<float> expected = embed_test::reference_values(type, blocks);
    const TempDir dir;
    const auto file = dir.write("big.gguf", quant_gguf(type.id, rows, cols, blocks));
    for (const int threads : {1, 2, 7}) {
        embed::detail::set_worker_count(threads);
        ASSERT_EQ(embed::detail::thread_count(rows, cols), threads) << "the rows must split " << threads << " ways";
        const embed::TableF32 table = embed::load_table_f32(file);
        EXPECT_TRUE(SameValues(table.data(), expected, type.name + " at " + std::to_string(threads) + " threads"));
    }
    embed::detail::set_worker_count(0);
}

/// Every ggml type id the format defines, by ggml's enum (ggml.h), and whether the reader decodes it.
struct GgmlTypeName {
    std::uint32_t id;
    const char* name;
    int block_values;  // 0: no layout (removed from ggml)
    int block_bytes;
    bool loadable;
};

const std::vector<GgmlTypeName> every_ggml_type{
    {0, "F32", 1, 4, true},          {1, "F16", 1, 2, true},          {2, "Q4_0", 32, 18, true},
    {3, "Q4_1", 32, 20, true},       {4, "Q4_2", 0, 0, false},        {5, "Q4_3", 0, 0, false},
    {6, "Q5_0", 32, 22, true},       {7, "Q5_1", 32, 24, true},       {8, "Q8_0", 32, 34, true},
    {9, "Q8_1", 32, 36, false},      {10, "Q2_K", 256, 84, true},     {11, "Q3_K", 256, 110, true},
    {12, "Q4_K", 256, 144, true},    {13, "Q5_K", 256, 176, true},    {14, "Q6_K", 256, 210, true},
    {15, "Q8_K", 256, 292, false},   {16, "IQ2_XXS", 256, 66, false}, {17, "IQ2_XS", 256, 74, false},
    {18, "IQ3_XXS", 256, 98, false}, {19, "IQ1_S", 256, 50, false},   {20, "IQ4_NL", 32, 18, false},
    {21, "IQ3_S", 256, 110, false},  {22, "IQ2_S", 256, 82, false},   {23, "IQ4_XS", 256, 136, false},
    {24, "I8", 1, 1, false},         {25, "I16", 1, 2, false},        {26, "I32", 1, 4, false},
    {27, "I64", 1, 8, false},        {28, "F64", 1, 8, true},         {29, "IQ1_M", 256, 56, false},
    {30, "BF16", 1, 2, true},        {31, "Q4_0_4_4", 0, 0, false},   {32, "Q4_0_4_8", 0, 0, false},
    {33, "Q4_0_8_8", 0, 0, false},   {34, "TQ1_0", 256, 54, false},   {35, "TQ2_0", 256, 66, false},
    {36, "IQ4_NL_4_4", 0, 0, false}, {37, "IQ4_NL_4_8", 0, 0, false}, {38, "IQ4_NL_8_8", 0, 0, false},
    {39, "MXFP4", 32, 17, false},
};

// One (1, 256) tensor of each type id, each in a slot of 2048 bytes (room for 256 float64s).
TEST(GgufTypes, ListTensorsNamesEveryGgmlTypeAndMarksWhatLoads) {
    std::vector<embed_test::GgufTensor> tensors;
    std::uint64_t offset = 0;
    for (const GgmlTypeName& type : every_ggml_type) {
        tensors.push_back({std::string("t") + type.name, {256, 1}, type.id, offset});
        offset += 2048;
    }
    tensors.push_back({"t40", {256, 1}, 40, offset});
    const TempDir dir;
    const auto file = dir.write("types.gguf", embed_test::gguf_file(tensors, std::string(offset + 2048, '\0')));
    const std::vector<embed::TensorInfo> infos = embed::list_tensors(file);
    ASSERT_EQ(infos.size(), every_ggml_type.size() + 1);
    for (std::size_t i = 0; i < every_ggml_type.size(); ++i) {
        const GgmlTypeName& type = every_ggml_type[i];
        EXPECT_EQ(infos[i].dtype, type.name) << "id " << type.id;
        EXPECT_EQ(infos[i].loadable, type.loadable) << type.name;
        const std::string tensor = std::string("t") + type.name;
        if (type.loadable) {
            EXPECT_EQ(embed::load_table(file, tensor).cols(), 256) << type.name;
        } else {
            EXPECT_THAT([&] { (void)embed::load_table(file, tensor); },
                        testing::ThrowsMessage<FileFormatError>(HasSubstr(
                            "tensor '" + tensor + "' has dtype " + type.name + "; supported: float64, float32, "
                            "float16, bfloat16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K")));
        }
    }
    EXPECT_EQ(infos.back().dtype, "ggml type 40");
    EXPECT_FALSE(infos.back().loadable);
}

// Each sized type's blocks are checked against the file: a (1, 256) tensor one byte short of its size fails.
TEST(GgufTypes, EverySizedTypesBytesAreCheckedAgainstTheFile) {
    for (const GgmlTypeName& type : every_ggml_type) {
        if (type.block_values == 0) continue;
        const auto bytes = static_cast<std::uint64_t>(256 / type.block_values * type.block_bytes);
        const TempDir dir;
        const auto file = dir.write("short.gguf", embed_test::gguf_file({{"token_embd.weight", {256, 1}, type.id, 0}},
                                                                       std::string(bytes - 1, '\0')));
        EXPECT_THAT([&] { (void)embed::list_tensors(file); },
                    testing::ThrowsMessage<FileFormatError>(HasSubstr(
                        "with " + std::to_string(bytes) + " bytes runs past the data section of " +
                        std::to_string(bytes - 1) + " bytes")))
            << type.name;
    }
}

}  // namespace
