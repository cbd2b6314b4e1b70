// Reading tables from .npy, .safetensors and .gguf files built byte by byte from
// the published formats (test/support/table_files.hpp), and from numpy itself.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/io.hpp>
#include <embed/table.hpp>

#include "cpython.hpp"
#include "table_files.hpp"

namespace {

using embed::FileFormatError;
using embed::Table;
using embed_test::TempDir;
using testing::HasSubstr;

/// Whether two tables have the same shape and the same bits in every entry (so -0.0 and NaN count).
testing::AssertionResult SameBits(const Table& got, const Table& expected) {
    if (got.rows() != expected.rows() || got.cols() != expected.cols()) {
        return testing::AssertionFailure() << "shape (" << got.rows() << ", " << got.cols() << "), expected ("
                                           << expected.rows() << ", " << expected.cols() << ")";
    }
    for (embed::Index i = 0; i < got.size(); ++i) {
        if (std::memcmp(got.data() + i, expected.data() + i, sizeof(double)) != 0) {
            return testing::AssertionFailure() << "entry " << i << " is " << got.data()[i] << ", expected "
                                               << expected.data()[i];
        }
    }
    return testing::AssertionSuccess();
}

class GoodFiles : public testing::TestWithParam<embed_test::GoodFile> {};

TEST_P(GoodFiles, LoadWithExactValues) {
    const TempDir dir;
    const auto file = dir.write(GetParam().name, GetParam().bytes);
    EXPECT_TRUE(SameBits(embed::load_table(file, GetParam().tensor), GetParam().expected));
}

std::string file_label(const testing::TestParamInfo<embed_test::GoodFile>& info) {
    std::string label = info.param.name + (info.param.tensor.empty() ? "" : "_" + info.param.tensor);
    for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return label;
}

INSTANTIATE_TEST_SUITE_P(Io, GoodFiles, testing::ValuesIn(embed_test::good_files()), file_label);

// ---- Narrow tables: read in the file's own precision, never through double ----

/// Which of StoredTable's types holds a dtype exactly: 0 double (float64), 1 float32, 2 bfloat16.
std::size_t narrowest_exact_type(const std::string& dtype) {
    if (dtype == "BF16") return 2;
    if (dtype.ends_with("f8") || dtype == "F64") return 0;
    return 1;
}

/// The dtype of the tensor load_table reads from file.
std::string loaded_dtype(const std::filesystem::path& file, const std::string& tensor) {
    const std::string name = embed::chosen_tensor(file, tensor);
    for (const embed::TensorInfo& info : embed::list_tensors(file)) {
        if (info.name == name) return info.dtype;
    }
    return "";
}

/// A stored value as the equal double, by the language's own conversions (exact), not the loader's.
double widened(double value) { return value; }
double widened(float value) { return static_cast<double>(value); }
double widened(Eigen::bfloat16 value) {
    return static_cast<double>(std::bit_cast<float>(std::uint32_t{std::bit_cast<std::uint16_t>(value)} << 16));
}

template <class Scalar>
Table widened(const embed::BasicTable<Scalar>& table) {
    Table wide(table.rows(), table.cols());
    for (embed::Index i = 0; i < table.size(); ++i) wide.data()[i] = widened(table.data()[i]);
    return wide;
}

TEST_P(GoodFiles, LoadAsStoredKeepsTheValuesInTheNarrowestExactType) {
    const TempDir dir;
    const auto file = dir.write(GetParam().name, GetParam().bytes);
    const std::string dtype = loaded_dtype(file, GetParam().tensor);
    const embed::StoredTable stored = embed::load_stored_table(file, GetParam().tensor);
    EXPECT_EQ(stored.index(), narrowest_exact_type(dtype)) << "dtype " << dtype;
    std::visit([&](const auto& table) { EXPECT_TRUE(SameBits(widened(table), GetParam().expected)); }, stored);
}

TEST_P(GoodFiles, LoadAsFloat32ReadsEveryDtypeButFloat64Exactly) {
    const TempDir dir;
    const auto file = dir.write(GetParam().name, GetParam().bytes);
    const std::string dtype = loaded_dtype(file, GetParam().tensor);
    if (narrowest_exact_type(dtype) == 0) {
        EXPECT_THAT([&] { (void)embed::load_table_f32(file, GetParam().tensor); },
                    testing::ThrowsMessage<FileFormatError>(
                        HasSubstr("has dtype " + dtype + ", which a float32 table cannot hold exactly; float32 reads "
                                  "float32, float16, bfloat16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K")));
    } else {
        EXPECT_TRUE(SameBits(widened(embed::load_table_f32(file, GetParam().tensor)), GetParam().expected));
    }
}

TEST_P(GoodFiles, LoadAsBfloat16ReadsOnlyBfloat16) {
    const TempDir dir;
    const auto file = dir.write(GetParam().name, GetParam().bytes);
    const std::string dtype = loaded_dtype(file, GetParam().tensor);
    if (narrowest_exact_type(dtype) == 2) {
        EXPECT_TRUE(SameBits(widened(embed::load_table_bf16(file, GetParam().tensor)), GetParam().expected));
    } else {
        EXPECT_THAT([&] { (void)embed::load_table_bf16(file, GetParam().tensor); },
                    testing::ThrowsMessage<FileFormatError>(
                        HasSubstr("has dtype " + dtype + ", which a bfloat16 table cannot hold exactly")));
    }
}

class HostileFiles : public testing::TestWithParam<embed_test::HostileFile> {};

TEST_P(HostileFiles, AreRefusedWithAMessageNamingTheValue) {
    const TempDir dir;
    const auto file = dir.write(GetParam().name, GetParam().bytes);
    EXPECT_THAT([&] { embed::load_table(file, GetParam().tensor); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr(GetParam().message)));
    // The message starts with the file, so a user with many files knows which one is bad.
    try {
        embed::load_table(file, GetParam().tensor);
    } catch (const FileFormatError& error) {
        EXPECT_EQ(std::string(error.what()).rfind(file.string() + ": ", 0), 0u) << error.what();
        EXPECT_EQ(error.file(), file);
    }
}

std::string hostile_label(const testing::TestParamInfo<embed_test::HostileFile>& info) {
    std::string label = info.param.name;
    for (char& c : label) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return label;
}

INSTANTIATE_TEST_SUITE_P(Io, HostileFiles, testing::ValuesIn(embed_test::hostile_files()), hostile_label);

TEST(Io, HalfNaNAndBfloat16NaNLoadAsNaN) {
    const TempDir dir;
    embed_test::ByteWriter halves;
    for (const std::uint64_t bits : {0x7E00u, 0xFE01u, 0x7C01u, 0x3C00u}) halves.u16(bits);
    const auto npy = dir.write("nan.npy", embed_test::npy_file("<f2", false, "(2, 2)", halves.bytes));
    const Table from_half = embed::load_table(npy);
    EXPECT_TRUE(std::isnan(from_half(0, 0)) && std::isnan(from_half(0, 1)) && std::isnan(from_half(1, 0)));
    EXPECT_TRUE(std::signbit(from_half(0, 1)));
    EXPECT_EQ(from_half(1, 1), 1.0);
    // bfloat16 NaN has the all-ones 8-bit exponent: 0x7FC0, 0xFF81. 0x7C01 is (1 + 1/128) * 2^121, 0x3C00 is 2^-7.
    embed_test::ByteWriter bfloats;
    for (const std::uint64_t bits : {0x7FC0u, 0xFF81u, 0x7C01u, 0x3C00u}) bfloats.u16(bits);
    const auto st = dir.write("nan.safetensors",
                              embed_test::one_tensor(R"("dtype":"BF16","shape":[2,2],"data_offsets":[0,8])", bfloats.bytes));
    const Table from_bf16 = embed::load_table(st);
    EXPECT_TRUE(std::isnan(from_bf16(0, 0)) && std::isnan(from_bf16(0, 1)));
    EXPECT_TRUE(std::signbit(from_bf16(0, 1)));
    EXPECT_EQ(from_bf16(1, 0), 0x1.02p121);
    EXPECT_EQ(from_bf16(1, 1), 0x1p-7);
}

// Widening to float32 keeps a NaN's sign and payload, a signalling NaN's too (a cast through double would
// quiet it), and a bfloat16 table keeps its stored bits.
TEST(Io, NarrowLoadsKeepNaNBits) {
    const TempDir dir;
    embed_test::ByteWriter halves;
    for (const std::uint64_t bits : {0x7E00u, 0xFE01u, 0x7C01u, 0x3C00u}) halves.u16(bits);
    const embed::TableF32 from_half =
        embed::load_table_f32(dir.write("nan.npy", embed_test::npy_file("<f2", false, "(2, 2)", halves.bytes)));
    // binary16 to binary32: the 10 fraction bits move up by 13.
    const std::uint32_t half_want[] = {0x7FC00000u, 0xFFC02000u, 0x7F802000u, 0x3F800000u};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>(from_half.data()[i]), half_want[i]) << i;

    embed_test::ByteWriter bfloats;
    for (const std::uint64_t bits : {0x7FC0u, 0xFF81u, 0x7F81u, 0x3C00u}) bfloats.u16(bits);
    const auto st = dir.write("nan.safetensors",
                              embed_test::one_tensor(R"("dtype":"BF16","shape":[2,2],"data_offsets":[0,8])", bfloats.bytes));
    const embed::TableBF16 as_bf16 = embed::load_table_bf16(st);
    const embed::TableF32 as_f32 = embed::load_table_f32(st);
    const std::uint16_t bf16_want[] = {0x7FC0u, 0xFF81u, 0x7F81u, 0x3C00u};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(std::bit_cast<std::uint16_t>(as_bf16.data()[i]), bf16_want[i]) << i;
        EXPECT_EQ(std::bit_cast<std::uint32_t>(as_f32.data()[i]), std::uint32_t{bf16_want[i]} << 16) << i;
    }

    embed_test::ByteWriter floats;
    for (const std::uint64_t bits : {0x7F800001u, 0xFFC00123u}) floats.u32(bits);
    const embed::TableF32 from_f32 =
        embed::load_table_f32(dir.write("nan32.npy", embed_test::npy_file("<f4", false, "(1, 2)", floats.bytes)));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(from_f32(0, 0)), 0x7F800001u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(from_f32(0, 1)), 0xFFC00123u);
}

// A narrow load's errors are load_table's: a hostile file is refused the same way, whatever precision is asked.
TEST(Io, NarrowLoadsRefuseHostileFilesAsLoadTableDoes) {
    const TempDir dir;
    for (const embed_test::HostileFile& hostile : embed_test::hostile_files()) {
        const auto file = dir.write(hostile.name, hostile.bytes);
        EXPECT_THAT([&] { (void)embed::load_table_f32(file, hostile.tensor); },
                    testing::ThrowsMessage<FileFormatError>(HasSubstr(hostile.message))) << hostile.name;
        EXPECT_THAT([&] { (void)embed::load_stored_table(file, hostile.tensor); },
                    testing::ThrowsMessage<FileFormatError>(HasSubstr(hostile.message))) << hostile.name;
    }
}

TEST(Io, EmptyTablesLoadWithTheirShape) {
    const TempDir dir;
    const Table none = embed::load_table(dir.write("zero_rows.npy", embed_test::npy_file("<f8", false, "(0, 4)", "")));
    EXPECT_EQ(none.rows(), 0);
    EXPECT_EQ(none.cols(), 4);
    const Table narrow = embed::load_table(dir.write("zero_cols.npy", embed_test::npy_file("<f4", true, "(3, 0)", "")));
    EXPECT_EQ(narrow.rows(), 3);
    EXPECT_EQ(narrow.cols(), 0);
}

}  // namespace

namespace {

TEST(Io, SaveThenLoadGivesTheSameBitsInBothFormats) {
    const TempDir dir;
    Table table = embed::make_table(7, 5, 11);
    table(0, 0) = -0.0;
    table(1, 1) = std::nan("");
    table(2, 2) = -INFINITY;
    table(3, 3) = 5e-324;
    for (const char* name : {"t.npy", "t.safetensors", "T.NPY"}) {
        embed::save_table(dir.path() / name, table);
        EXPECT_TRUE(SameBits(embed::load_table(dir.path() / name), table)) << name;
    }
    embed::save_table(dir.path() / "named.safetensors", table, "model.embed_tokens.weight");
    EXPECT_EQ(embed::chosen_tensor(dir.path() / "named.safetensors"), "model.embed_tokens.weight");
    EXPECT_TRUE(SameBits(embed::load_table(dir.path() / "named.safetensors", "model.embed_tokens.weight"), table));
}

TEST(Io, SavedFilesFollowThePublishedLayout) {
    const TempDir dir;
    const Table table = embed::from_rows({{1.0, -2.0}, {0.5, 3.0}});
    embed::save_table(dir.path() / "t.npy", table);
    embed::save_table(dir.path() / "t.safetensors", table);
    embed_test::ByteWriter data;
    for (double v : {1.0, -2.0, 0.5, 3.0}) data.f64(v);
    const auto read = [](const std::filesystem::path& file) {
        std::ifstream in(file, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    // numpy's own 1.0 header for this array, padded to 64 bytes; safetensors' JSON padded to 8.
    EXPECT_EQ(read(dir.path() / "t.npy"), embed_test::npy_file("<f8", false, "(2, 2)", data.bytes));
    const std::string json = R"({"weight":{"data_offsets":[0,32],"dtype":"F64","shape":[2,2]}})";
    EXPECT_EQ(read(dir.path() / "t.safetensors"),
              embed_test::safetensors_file(json + std::string((8 - json.size() % 8) % 8, ' '), data.bytes));
}

TEST(Io, EmptyTablesRoundTrip) {
    const TempDir dir;
    for (const auto& [rows, cols] : {std::pair{0, 3}, std::pair{4, 0}, std::pair{0, 0}}) {
        const Table empty(rows, cols);
        embed::save_table(dir.path() / "e.npy", empty);
        embed::save_table(dir.path() / "e.safetensors", empty);
        EXPECT_TRUE(SameBits(embed::load_table(dir.path() / "e.npy"), empty));
        EXPECT_TRUE(SameBits(embed::load_table(dir.path() / "e.safetensors"), empty));
    }
}

TEST(Io, SaveRefusesOtherExtensionsAndNamesForNpyAndLeavesNothing) {
    const TempDir dir;
    const Table table = embed::make_table(2, 2, 1);
    EXPECT_THAT([&] { embed::save_table(dir.path() / "t.bin", table); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("extension '.bin' is not supported")));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "t.npy", table, "wte"); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("got tensor name 'wte'")));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "t.safetensors", table, "__metadata__"); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("'__metadata__' is reserved")));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Io, SaveIntoAMissingDirectoryReportsItsErrno) {
    // The failing call's own errno, so a caller (and Python's OSError) can tell "no such directory" from
    // a full disk or a forbidden one.
    const TempDir dir;
    const Table table = embed::make_table(2, 2, 1);
    for (const char* name : {"t.npy", "t.safetensors", "t.gguf"}) {
        try {
            embed::save_table(dir.path() / "no" / "such" / name, table);
            ADD_FAILURE() << name << " was saved into a missing directory";
        } catch (const std::filesystem::filesystem_error& error) {
            EXPECT_EQ(error.code(), std::make_error_code(std::errc::no_such_file_or_directory)) << error.what();
            EXPECT_EQ(error.path1(), dir.path() / "no" / "such" / (std::string(name) + ".tmp-embed"));
        }
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Io, AFailedSaveLeavesTheEarlierFile) {
    const TempDir dir;
    const Table table = embed::make_table(2, 2, 1);
    embed::save_table(dir.path() / "t.safetensors", table);
    EXPECT_THROW(embed::save_table(dir.path() / "t.safetensors", table, "\xff\xfe"), std::invalid_argument);
    EXPECT_TRUE(SameBits(embed::load_table(dir.path() / "t.safetensors"), table));
}

TEST(Io, MissingFilesAndUnknownExtensionsAreNotFormatErrors) {
    const TempDir dir;
    EXPECT_THROW(embed::load_table(dir.path() / "absent.npy"), std::filesystem::filesystem_error);
    // A directory is read as a checkpoint folder (checkpoint_test), whatever its name.
    EXPECT_THAT([&] { embed::load_table(dir.write("t.pt", "PK")); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("has extension '.pt'")));
}

TEST(Io, ListTensorsGivesNamesDtypesAndOutermostFirstShapes) {
    const TempDir dir;
    const auto goods = embed_test::good_files();
    const auto find = [&](const std::string& name) {
        return *std::find_if(goods.begin(), goods.end(), [&](const auto& g) { return g.name == name; });
    };
    const auto npy = embed::list_tensors(dir.write("a.npy", find("npy_be_f2_fortran_v2.npy").bytes));
    ASSERT_EQ(npy.size(), 1u);
    EXPECT_EQ(npy[0].name, "");
    EXPECT_EQ(npy[0].dtype, ">f2");
    EXPECT_EQ(npy[0].shape, (std::vector<std::int64_t>{3, 4}));
    EXPECT_TRUE(npy[0].loadable);
    EXPECT_EQ(npy[0].type, embed::ElementType::f16);

    const auto st = embed::list_tensors(dir.write("a.safetensors", find("checkpoint.safetensors").bytes));
    ASSERT_EQ(st.size(), 3u);
    std::map<std::string, embed::TensorInfo> by_name;
    for (const auto& info : st) by_name[info.name] = info;
    EXPECT_EQ(by_name["model.norm.weight"].dtype, "F32");
    EXPECT_EQ(by_name["model.norm.weight"].shape, (std::vector<std::int64_t>{4}));
    EXPECT_FALSE(by_name["model.norm.weight"].loadable);
    EXPECT_EQ(by_name["model.norm.weight"].type, embed::ElementType::f32);  // a type, though not a table
    EXPECT_EQ(by_name["lm_head.weight"].dtype, "BF16");
    EXPECT_TRUE(by_name["lm_head.weight"].loadable);
    EXPECT_EQ(by_name["lm_head.weight"].type, embed::ElementType::bf16);

    // GGUF stores ne = [64, 2] for a (2, 64) table; listed outermost first. A GGUF's order is its tensor infos'.
    const auto gguf = embed::list_tensors(dir.write("a.gguf", find("gguf_v3_q8_0.gguf").bytes));
    ASSERT_EQ(gguf.size(), 2u);
    EXPECT_EQ(gguf[0].name, "output_norm.weight");
    EXPECT_EQ(gguf[1].name, "token_embd.weight");
    EXPECT_EQ(gguf[1].dtype, "Q8_0");
    EXPECT_EQ(gguf[1].shape, (std::vector<std::int64_t>{2, 64}));
    EXPECT_EQ(gguf[1].type, embed::ElementType::q8_0);
    EXPECT_EQ(gguf[0].type, embed::ElementType::f32);

    // A dtype no loader reads has no element type.
    const std::string ints = R"({"ids":{"dtype":"I32","shape":[2,1],"data_offsets":[0,8]}})";
    const auto listed = embed::list_tensors(dir.write("i.safetensors", embed_test::safetensors_file(ints, std::string(8, '\0'))));
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_FALSE(listed[0].loadable);
    EXPECT_EQ(listed[0].type, std::nullopt);
}

TEST(Io, ListTensorsKeepsTheSafetensorsHeaderOrder) {
    // Header order c, a, b; data order a, b, c; name order a, b, c: only the header's order gives c, a, b.
    // (A key the header repeats is refused: table_files.hpp's repeated_key.safetensors.)
    const TempDir dir;
    const std::string json =
        R"({"c":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]},"__metadata__":{"format":"pt"},)"
        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    const auto listed =
        embed::list_tensors(dir.write("o.safetensors", embed_test::safetensors_file(json, std::string(12, '\0'))));
    std::vector<std::string> names;
    for (const embed::TensorInfo& info : listed) names.push_back(info.name);
    EXPECT_EQ(names, (std::vector<std::string>{"c", "a", "b"}));
}

TEST(Io, ChosenTensorFollowsTheNameRules) {
    const TempDir dir;
    embed_test::ByteWriter two;
    for (double v : {1.0, 2.0}) two.f64(v);
    const auto file = [&](const std::string& name, const std::vector<std::string>& tensors) {
        std::string json = "{";
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            if (i > 0) json += ",";
            json += "\"" + tensors[i] + R"(":{"dtype":"F64","shape":[1,2],"data_offsets":[)";
            json += std::to_string(16 * i) + "," + std::to_string(16 * i + 16) + "]}";
        }
        std::string data;
        for (std::size_t i = 0; i < tensors.size(); ++i) data += two.bytes;
        return dir.write(name, embed_test::safetensors_file(json + "}", data));
    };
    EXPECT_EQ(embed::chosen_tensor(file("one.safetensors", {"anything"})), "anything");
    EXPECT_EQ(embed::chosen_tensor(file("gpt2.safetensors", {"h.0.attn.weight", "transformer.wte.weight", "wpe.weight"})),
              "transformer.wte.weight");
    EXPECT_EQ(embed::chosen_tensor(file("bert.safetensors", {"bert.embeddings.word_embeddings.weight", "pooler.weight"})),
              "bert.embeddings.word_embeddings.weight");
    EXPECT_EQ(embed::chosen_tensor(file("llama.safetensors", {"tok_embeddings.weight", "output.weight"})),
              "tok_embeddings.weight");
    // A component must match whole: "swte" is not "wte".
    EXPECT_THAT([&] { embed::chosen_tensor(file("near.safetensors", {"swte.weight", "x.weight"})); },
                testing::ThrowsMessage<FileFormatError>(HasSubstr("has 2 2-D tensors ('swte.weight', 'x.weight')")));
    EXPECT_EQ(embed::chosen_tensor(file("named.safetensors", {"a", "b"}), "b"), "b");
    EXPECT_EQ(embed::chosen_tensor(dir.write("t.npy", embed_test::npy_file("<f8", false, "(1, 2)", two.bytes))), "");
}

TEST(Io, TyingIsTrueWithoutAnOutputTensorOrWithAnEqualOne) {
    const TempDir dir;
    embed_test::ByteWriter a, b;
    for (double v : {1.0, 2.0}) a.f64(v);
    for (double v : {1.0, 2.5}) b.f64(v);
    const auto file = [&](const std::string& name, const std::string& output_data, const std::string& output_shape) {
        const std::string json = R"({"model.embed_tokens.weight":{"dtype":"F64","shape":[1,2],"data_offsets":[0,16]},)"
                                 R"("lm_head.weight":{"dtype":"F64","shape":)" + output_shape +
                                 R"(,"data_offsets":[16,)" + std::to_string(16 + output_data.size()) + "]}}";
        return dir.write(name, embed_test::safetensors_file(json, a.bytes + output_data));
    };
    const auto same = embed::check_tying(file("same.safetensors", a.bytes, "[1,2]"));
    ASSERT_TRUE(same.has_value());
    EXPECT_EQ(same->embedding, "model.embed_tokens.weight");
    EXPECT_EQ(same->output, "lm_head.weight");
    EXPECT_TRUE(same->tied);
    EXPECT_FALSE(embed::check_tying(file("differ.safetensors", b.bytes, "[1,2]"))->tied);
    EXPECT_FALSE(embed::check_tying(file("shape.safetensors", a.bytes, "[2,1]"))->tied);

    const auto alone = embed::check_tying(
        dir.write("alone.safetensors", embed_test::one_tensor(R"("dtype":"F64","shape":[1,2],"data_offsets":[0,16])", a.bytes)));
    ASSERT_TRUE(alone.has_value());
    EXPECT_EQ(alone->output, "");
    EXPECT_TRUE(alone->tied);
    EXPECT_FALSE(embed::check_tying(dir.write("t.npy", embed_test::npy_file("<f8", false, "(1, 2)", a.bytes))).has_value());
}

TEST(Io, TyingComparesAcrossDtypesInGguf) {
    // token_embd as F32 and output as F16 holding the same values (1.0 and -2.0 in every entry): tied.
    const TempDir dir;
    embed_test::ByteWriter data;
    for (int i = 0; i < 6; ++i) data.f32(i % 2 ? -2.0f : 1.0f);
    data.pad_to(32);
    for (int i = 0; i < 6; ++i) data.u16(i % 2 ? 0xC000 : 0x3C00);
    const auto tied = embed::check_tying(dir.write(
        "tied.gguf",
        embed_test::gguf_file({{"token_embd.weight", {2, 3}, 0, 0}, {"output.weight", {2, 3}, 1, 32}}, data.bytes)));
    ASSERT_TRUE(tied.has_value());
    EXPECT_EQ(tied->output, "output.weight");
    EXPECT_TRUE(tied->tied);
}

/// A Python with numpy: /usr/bin/python3 (Debian's python3-numpy), or the configured one if it has numpy.
bool have_numpy() {
#ifdef EMBED_TEST_NUMPY_PYTHON
    return true;
#else
    return false;
#endif
}

/// Runs code under the Python that has numpy and returns its stdout.
std::string run_numpy(const std::string& code) {
#ifdef EMBED_TEST_NUMPY_PYTHON
    const std::string command = std::string("'") + EMBED_TEST_NUMPY_PYTHON + "' -c '" + code + "'";
    FILE* pipe = popen(command.c_str(), "r");
    std::string output;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, got);
    if (pclose(pipe) != 0) throw std::runtime_error("python failed: " + command);
    return output;
#else
    (void)code;
    throw std::logic_error("no python3 with numpy was found at configure time");
#endif
}

#define EMBED_REQUIRE_NUMPY()                                                                         \
    do {                                                                                              \
        if (!have_numpy()) GTEST_SKIP() << "no python3 with numpy was found when configuring; install " \
                                           "python3-numpy to compare against files numpy writes";     \
    } while (false)

TEST(Io, NpyFilesWrittenByNumpyLoadExactly) {
    EMBED_REQUIRE_NUMPY();
    const TempDir dir;
    // numpy writes every dtype, byte order and memory order; it prints each file's values in C order as
    // float.hex, which the test parses back exactly.
    const std::string code =
        "import numpy as np, sys\n"
        "d = sys.argv[1] if len(sys.argv) > 1 else \"" + dir.path().string() + "\"\n"
        "base = np.random.default_rng(7).standard_normal((5, 7)) * 1000\n"
        "base[0, :4] = [0.0, -0.0, np.inf, 1e-40]\n"
        "for kind in (\"f8\", \"f4\", \"f2\"):\n"
        "    for order in (\"<\", \">\"):\n"
        "        for fortran in (False, True):\n"
        "            a = base.astype(order + kind)\n"
        "            a = np.asfortranarray(a) if fortran else np.ascontiguousarray(a)\n"
        "            name = \"%s/%s%s%s.npy\" % (d, kind, \"be\" if order == \">\" else \"le\", \"F\" if fortran else \"C\")\n"
        "            np.save(name, a)\n"
        "            print(name, \" \".join(float(x).hex() for x in a.astype(np.float64).ravel(order=\"C\")))\n"
        "np.lib.format.write_array(open(d + \"/v2.npy\", \"wb\"), base, version=(2, 0))\n"
        "print(d + \"/v2.npy\", \" \".join(float(x).hex() for x in base.ravel()))\n"
        "np.lib.format.write_array(open(d + \"/v3.npy\", \"wb\"), base.astype(\">f4\"), version=(3, 0))\n"
        "print(d + \"/v3.npy\", \" \".join(float(x).hex() for x in base.astype(\">f4\").astype(float).ravel()))\n";
    std::istringstream lines(run_numpy(code));
    std::string line;
    int files = 0;
    while (std::getline(lines, line)) {
        const std::size_t space = line.find(' ');
        const std::string name = line.substr(0, space);
        const Table expected = embed_test::table_of(embed_test::parse_hex_doubles(line.substr(space + 1)), 5, 7);
        EXPECT_TRUE(SameBits(embed::load_table(name), expected)) << name;
        ++files;
    }
    EXPECT_EQ(files, 14);
}

TEST(Io, NumpyReadsSavedNpyBackBitForBit) {
    EMBED_REQUIRE_NUMPY();
    const TempDir dir;
    Table table = embed::make_table(4, 3, 5);
    table(0, 0) = -0.0;
    table(1, 2) = 1e-310;
    embed::save_table(dir.path() / "t.npy", table);
    const std::string out = run_numpy("import numpy as np\n"
                                      "a = np.load(\"" + (dir.path() / "t.npy").string() + "\", allow_pickle=False)\n"
                                      "print(a.dtype, a.shape, a.flags.c_contiguous)\n"
                                      "print(\" \".join(float(x).hex() for x in a.ravel()))\n");
    const std::size_t newline = out.find('\n');
    EXPECT_EQ(out.substr(0, newline), "float64 (4, 3) True");
    const std::vector<double> values = embed_test::parse_hex_doubles(out.substr(newline + 1));
    ASSERT_EQ(values.size(), 12u);
    EXPECT_TRUE(SameBits(embed_test::table_of(values, 4, 3), table));
}

}  // namespace

namespace {

TEST(Io, EveryInputTheFuzzersCrashedOnIsNowRefused) {
    // test/fuzz/regressions holds each input a fuzzer ever crashed on, named for what it held.
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(EMBED_FUZZ_REGRESSIONS)) {
        EXPECT_THROW(embed::load_table(entry.path()), FileFormatError) << entry.path();
        EXPECT_NO_THROW(embed::list_tensors(entry.path())) << entry.path();
        ++files;
    }
    EXPECT_GE(files, 1);
}

}  // namespace
