// GCC 12 with -march=native (AVX-512) warns, wrongly, that Eigen's own horizontal sum (predux, inlined from
// a row's norm) may read an uninitialised register. The warning is reported at the intrinsic's header line,
// so it is turned off before anything is included.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // the same false report, as -O1 words it
#endif

// save_table in a table's own precision: float16 against numpy's astype(np.float16), bfloat16 against a
// bit-level computation of torch's rounding in CPython, ggml's simple block types against the test's own
// reference quantisers (test/support/ggml_quantise_reference.hpp), the K types by their round-trip error,
// every file read back by the library's loader; the GGUF writer's alignment; and every refusal.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/embed.hpp>

#include "cpython.hpp"
#include "defaults_after.hpp"
#include "file_bytes.hpp"
#include "ggml_quantise_reference.hpp"
#include "io/gguf_writer.hpp"

namespace {

using embed::ElementType;
using embed::Index;
using embed::Table;
using embed::TableBF16;
using embed::TableF32;
using embed_test::TempDir;
using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string file_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

/// The last `bytes` of data before the final padding of a one-tensor GGUF file (alignment 32).
std::string gguf_tensor_data(const std::filesystem::path& file, std::size_t bytes) {
    const std::string all = file_bytes(file);
    const std::size_t padded = (bytes + 31) / 32 * 32;
    return all.substr(all.size() - padded, bytes);
}

std::uint16_t u16_at(const std::string& bytes, std::size_t at) {
    return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) | (static_cast<unsigned char>(bytes[at + 1]) << 8));
}

/// Rows of Gaussian values (mean 0, standard deviation scale) by Box-Muller on CPython's generator.
Table gaussian_table(Index rows, Index cols, std::uint64_t seed, double scale = 1.0) {
    embed::PythonRandom random(seed);
    Table table(rows, cols);
    for (Index i = 0; i < table.size(); ++i) {
        const double u1 = 1.0 - random.random();
        const double u2 = random.random();
        table.data()[i] = scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }
    return table;
}

std::string hex_list(const std::vector<double>& values) {
    std::ostringstream out;
    for (const double v : values) out << "float.fromhex(\"" << std::hexfloat << v << "\"),";
    return out.str();
}

/// Runs code under the Python that has numpy; empty when there is none.
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
    return {};
#endif
}

/// Values where float16's rounding is delicate: ties both ways, subnormals, the overflow edge.
std::vector<double> half_edge_values() {
    return {0.0,           -0.0,           1.0,          0.1,           1.0 / 3.0,        -2.5,
            65504.0,       65519.99,       -65519.99,    65505.0,       std::ldexp(1.0, -24), std::ldexp(1.0, -25),
            std::ldexp(3.0, -25),          std::ldexp(1.0, -26) * 3.0, 1.0 + std::ldexp(1.0, -11),
            1.0 + std::ldexp(3.0, -11),    1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 6.1e-5,
            std::ldexp(1023.5, -24),       1e-9,           kInf,         -kInf,         2049.0,           2051.0,
            -std::ldexp(1.0, -14) * 0.75,  std::ldexp(1.0, -14) - std::ldexp(1.0, -25), 0.5 + std::ldexp(1.0, -12)};
}

TEST(SaveTyped, Float16EqualsNumpysAstypeAndNumpyReadsTheFile) {
#ifndef EMBED_TEST_NUMPY_PYTHON
    GTEST_SKIP() << "no python3 with numpy was found when configuring; install python3-numpy";
#endif
    const TempDir dir;
    const std::vector<double> values = half_edge_values();
    const Table table = Eigen::Map<const Table>(values.data(), 1, static_cast<Index>(values.size()));
    const auto file = dir.path() / "half.npy";
    embed::save_table(file, table, {}, ElementType::f16);
    const std::string code = "import numpy as np\nv = np.array([" + hex_list(values) +
                             "], dtype=np.float64)\nprint(\" \".join(str(int(b)) for b in v.astype(np.float16).view(np.uint16)))\n"
                             "a = np.load(\"" + file.string() + "\")\nassert a.dtype == np.float16 and a.shape == (1, " +
                             std::to_string(values.size()) + ")\nprint(\" \".join(str(int(b)) for b in a.view(np.uint16).ravel()))";
    std::istringstream lines(run_numpy(code));
    std::string expected_line;
    std::string read_line;
    std::getline(lines, expected_line);
    std::getline(lines, read_line);
    const std::vector<unsigned long long> expected = embed_test::parse_integers(expected_line);
    const std::vector<unsigned long long> read = embed_test::parse_integers(read_line);
    ASSERT_EQ(expected.size(), values.size());
    EXPECT_EQ(read, expected) << "numpy's np.load of our file";
    const std::string whole = file_bytes(file);
    const std::string data = whole.substr(10 + u16_at(whole, 8));
    for (std::size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(u16_at(data, 2 * i), expected[i]) << "value " << std::hexfloat << values[i];
    }
    // The file holds float16, so loading widens each exactly.
    const Table loaded = embed::load_table(file);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double back = loaded(0, static_cast<Index>(i));
        if (std::isfinite(values[i])) {
            EXPECT_LE(std::fabs(back - values[i]), std::fabs(values[i]) * 0x1p-11 + 0x1p-25);
        }
    }
}

TEST(SaveTyped, Float16OverflowIsRefusedNamingRowAndColumnUnlessAllowed) {
    const TempDir dir;
    Table table = Table::Zero(3, 4);
    table(2, 1) = 65520.0;  // halfway between 65504 and 65536 (infinity): ties to even, infinity
    const auto file = dir.path() / "over.safetensors";
    const std::string before = "earlier contents";
    dir.write("over.safetensors", before);
    EXPECT_THAT([&] { embed::save_table(file, table, {}, ElementType::f16); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("row 2, column 1"), HasSubstr("65520"), HasSubstr("f16"))));
    EXPECT_EQ(file_bytes(file), before) << "a refused save leaves the file as it was";
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "over.safetensors.tmp-embed"));
    embed::save_table(file, table, {}, ElementType::f16, {.allow_overflow = true});
    EXPECT_EQ(embed::load_table(file)(2, 1), kInf);
    table(2, 1) = 65519.99;  // rounds to 65504
    embed::save_table(file, table, {}, ElementType::f16);
    EXPECT_EQ(embed::load_table(file)(2, 1), 65504.0);
    // Infinity and NaN are values float16 holds: written as they are.
    table(0, 0) = -kInf;
    table(0, 1) = std::numeric_limits<double>::quiet_NaN();
    embed::save_table(file, table, {}, ElementType::f16);
    EXPECT_EQ(embed::load_table(file)(0, 0), -kInf);
    EXPECT_TRUE(std::isnan(embed::load_table(file)(0, 1)));
    table(1, 3) = 1e39;
    EXPECT_THAT([&] { embed::save_table(file, table, {}, ElementType::f32); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("row 1, column 3")));
    EXPECT_THAT([&] { embed::save_table(file, table, {}, ElementType::bf16); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("row 1, column 3")));
}

TEST(SaveTyped, BFloat16FromFloat32EqualsTorchsRoundingComputedInCPython) {
    // torch is not a dependency: its rounding (round to nearest even on the float32 bits) is computed here by
    // CPython's integer arithmetic, independent of the library.
    EMBED_REQUIRE_PYTHON();
    const TempDir dir;
    const std::vector<std::uint32_t> bits{0x3F800000, 0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF, 0x00000001,
                                          0x00008000, 0x00018000, 0x807F8000, 0xBF808001, 0x7F7F7FFF, 0x7F7F0000,
                                          0x3DCCCCCD, 0xC2F6E979, 0x80000000, 0x7F800000};
    TableF32 table(2, 8);
    for (std::size_t i = 0; i < bits.size(); ++i) table.data()[i] = std::bit_cast<float>(bits[i]);
    const auto file = dir.path() / "b.safetensors";
    embed::save_table(file, table, "w", ElementType::bf16);
    std::string list;
    for (const std::uint32_t b : bits) list += std::to_string(b) + ",";
    const std::string code = "bits = [" + list + "]\nprint(\" \".join(str(((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF) for b in bits))";
    const std::vector<unsigned long long> expected = embed_test::parse_integers(embed_test::run_python(code));
    const TableBF16 loaded = embed::load_table_bf16(file, "w");
    ASSERT_EQ(expected.size(), bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
        EXPECT_EQ(loaded.data()[i].value, expected[i]) << std::hex << "float32 bits 0x" << bits[i];
    }
    // 0x7F7FFFFF (float32's largest) rounds to infinity: an overflow.
    table(1, 7) = std::numeric_limits<float>::max();
    EXPECT_THAT([&] { embed::save_table(file, table, "w", ElementType::bf16); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("row 1, column 7")));
}

TEST(SaveTyped, EachPlainTypeReadsBackExactlyFromEveryFormatThatHoldsIt) {
    const TempDir dir;
    const Table table = gaussian_table(5, 64, 3);
    struct Case {
        ElementType type;
        std::vector<std::string> extensions;
    };
    const std::vector<Case> cases{{ElementType::f64, {".npy", ".safetensors", ".gguf"}},
                                  {ElementType::f32, {".npy", ".safetensors", ".gguf"}},
                                  {ElementType::f16, {".npy", ".safetensors", ".gguf"}},
                                  {ElementType::bf16, {".safetensors", ".gguf"}}};
    for (const Case& c : cases) {
        for (const std::string& extension : c.extensions) {
            const auto file = dir.path() / ("t" + extension);
            embed::save_table(file, table, {}, c.type);
            const Table loaded = embed::load_table(file);
            for (Index i = 0; i < table.size(); ++i) {
                const double x = table.data()[i];
                double expected = x;
                if (c.type == ElementType::f32) expected = static_cast<float>(x);
                if (c.type == ElementType::f16) expected = embed::round_to_fp16(x);
                if (c.type == ElementType::bf16) expected = embed::round_to_bf16(x);
                ASSERT_EQ(loaded.data()[i], expected) << extension << " " << embed::element_type_name(c.type) << " at " << i;
            }
            const std::vector<embed::TensorInfo> infos = embed::list_tensors(file);
            ASSERT_EQ(infos.size(), 1u);
            EXPECT_EQ(infos[0].shape, (std::vector<std::int64_t>{5, 64}));
            if (extension == ".gguf") {
                EXPECT_EQ(infos[0].name, "token_embd.weight");
            }
        }
    }
    // The narrow tables in their own precision, by default.
    const TableF32 narrow = table.cast<float>();
    embed::save_table(dir.path() / "own.npy", narrow);
    EXPECT_EQ(embed::list_tensors(dir.path() / "own.npy")[0].dtype, "<f4");
    EXPECT_TRUE(embed::load_table_f32(dir.path() / "own.npy").cwiseEqual(narrow).all());
    const TableBF16 brain = narrow.cast<Eigen::bfloat16>();
    embed::save_table(dir.path() / "own.gguf", brain, "emb");
    EXPECT_EQ(embed::list_tensors(dir.path() / "own.gguf")[0].dtype, "BF16");
    EXPECT_EQ(embed::list_tensors(dir.path() / "own.gguf")[0].name, "emb");
    const TableBF16 back = embed::load_table_bf16(dir.path() / "own.gguf");
    EXPECT_EQ(std::memcmp(back.data(), brain.data(), sizeof(Eigen::bfloat16) * 320), 0);
}

/// The simple block types' rows: Gaussian rows, then rows of every awkward kind.
Table simple_block_rows() {
    Table table = gaussian_table(8, 64, 17, 0.05);
    table.row(1).setZero();               // d = 0
    table.row(2).setConstant(0.25);       // max == min
    table.row(3).head(32).setConstant(-1.0);  // a tie in magnitude: the first of equal magnitudes
    table(3, 5) = 1.0;
    table(4, 7) = 300.0;                  // one large value among small ones
    table.row(5) *= 1e-6;                 // scales in float16's subnormals
    table(6, 0) = -table(6, 0) * 20;      // a negative extreme
    return table;
}

TEST(SaveTyped, SimpleBlockTypesEqualTheReferenceQuantisersBitForBit) {
    const TempDir dir;
    const Table table = simple_block_rows();
    for (const std::string name : {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"}) {
        const ElementType type = embed::parse_element_type(name);
        const auto file = dir.path() / "q.gguf";
        embed::save_table(file, table, {}, type);
        std::string expected;
        std::vector<float> row(64);
        for (Index r = 0; r < table.rows(); ++r) {
            for (Index c = 0; c < 64; ++c) row[static_cast<std::size_t>(c)] = static_cast<float>(table(r, c));
            expected += embed_test::reference_quantised_block(name, row.data());
            expected += embed_test::reference_quantised_block(name, row.data() + 32);
        }
        const std::string written = gguf_tensor_data(file, expected.size());
        ASSERT_EQ(written.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) {
            ASSERT_EQ(static_cast<int>(static_cast<unsigned char>(written[i])), static_cast<int>(static_cast<unsigned char>(expected[i])))
                << name << ": byte " << i << " (block " << i / static_cast<std::size_t>(embed::block_bytes(type)) << ")";
        }
        EXPECT_EQ(embed::list_tensors(file)[0].dtype, name);
        // Round trip: each value within one quantisation step of the block (a value that maps past the top
        // quant is capped to it), plus the fp16 scale's and min's rounding.
        const TableF32 back = embed::load_table_f32(file);
        for (Index r = 0; r < table.rows(); ++r) {
            for (Index b = 0; b < 2; ++b) {
                const auto block = table.row(r).segment(32 * b, 32);
                const double largest = block.cwiseAbs().maxCoeff();
                const double step = name == "Q8_0"   ? largest / 127
                                    : name == "Q4_0" ? largest / 8
                                    : name == "Q5_0" ? largest / 16
                                                     : (block.maxCoeff() - block.minCoeff()) / (name == "Q4_1" ? 15 : 31);
                // A scale in float16's subnormals is off by up to 2^-25, times the largest quant.
                const double top_quant = name == "Q8_0" ? 127 : name == "Q4_0" ? 8 : name == "Q5_0" ? 16 : name == "Q4_1" ? 15 : 31;
                for (Index c = 32 * b; c < 32 * b + 32; ++c) {
                    EXPECT_LE(std::fabs(back(r, c) - table(r, c)), 1.02 * step + 2e-3 * largest + (top_quant + 1) * 0x1p-25)
                        << name << " row " << r << " column " << c;
                }
            }
        }
    }
}

TEST(SaveTyped, KTypesRoundTripWithinTheirErrorBounds) {
    const embed_test::DefaultsAfter restore;
    const TempDir dir;
    const Table table = gaussian_table(24, 512, 29, 0.02);
    const std::vector<std::pair<std::string, double>> bounds{{"q2_k", 0.45}, {"q3_k", 0.20}, {"q4_k", 0.10},
                                                             {"q5_k", 0.05}, {"q6_k", 0.025}, {"q8_0", 0.0075}};
    for (const auto& [name, bound] : bounds) {
        const auto file = dir.path() / (name + ".gguf");
        embed::save_table(file, table, {}, embed::parse_element_type(name));
        const TableF32 back = embed::load_table_f32(file);
        for (Index r = 0; r < table.rows(); ++r) {
            const double error = (back.row(r).cast<double>() - table.row(r)).norm();
            EXPECT_LE(error / table.row(r).norm(), bound) << name << " row " << r;
        }
        // The same bytes whatever the thread count.
        const std::string first = file_bytes(file);
        for (const int threads : {2, 7}) {
            embed::detail::set_worker_count(threads);
            embed::save_table(file, table, {}, embed::parse_element_type(name));
            EXPECT_EQ(file_bytes(file), first) << name << " at " << threads << " threads";
        }
        embed::detail::set_worker_count(1);
    }
}

TEST(SaveTyped, QuantisedTypesRefuseNonFiniteValuesAndOverflowingScales) {
    const TempDir dir;
    Table table = gaussian_table(2, 256, 5);
    const auto file = dir.path() / "q.gguf";
    table(1, 200) = std::numeric_limits<double>::quiet_NaN();
    for (const ElementType type : {ElementType::q8_0, ElementType::q4_k}) {
        EXPECT_THAT([&] { embed::save_table(file, table, {}, type); },
                    ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("row 1, column 200"), HasSubstr("finite"))));
    }
    table(1, 200) = 1e7;  // Q8_0's scale 1e7 / 127 passes float16's 65504
    EXPECT_THAT([&] { embed::save_table(file, table, {}, ElementType::q8_0); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("row 1, column 200"), HasSubstr("scale"))));
    EXPECT_FALSE(std::filesystem::exists(file));
    embed::save_table(file, table, {}, ElementType::q8_0, {.allow_overflow = true});
    EXPECT_TRUE(std::isinf(embed::load_table_f32(file)(1, 200)));
    table(1, 200) = 1e300;
    EXPECT_THAT([&] { embed::save_table(file, table, {}, ElementType::q6_k); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("row 1, column 200"), HasSubstr("f32"))));
}

TEST(SaveTyped, RefusesTypesAFormatCannotHold) {
    const TempDir dir;
    const Table table = gaussian_table(2, 64, 5);
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.npy", table, {}, ElementType::bf16); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("bf16"), HasSubstr("f64, f32 and f16"))));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.npy", table.cast<Eigen::bfloat16>().eval()); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("numpy has no bfloat16")));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.safetensors", table, {}, ElementType::q8_0); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("q8_0"), HasSubstr(".gguf"))));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.npy", table, {}, ElementType::q4_k); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("q4_k")));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.gguf", table, {}, ElementType::q4_k); },
                ThrowsMessage<std::invalid_argument>(AllOf(HasSubstr("64"), HasSubstr("256"))));
    EXPECT_THAT([&] { embed::save_table(dir.path() / "a.txt", table, {}, ElementType::f32); },
                ThrowsMessage<std::invalid_argument>(HasSubstr(".gguf")));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SaveTyped, GgufWriterHonoursItsAlignmentAndTensorOrder) {
    const TempDir dir;
    const Table a = gaussian_table(3, 32, 1);
    const TableF32 b = gaussian_table(5, 32, 2).cast<float>();
    embed::io::GgufWriter writer;
    writer.add(embed::io::GgufMetadata::string("general.architecture", "test"));
    writer.add(embed::io::GgufMetadata::u32("general.alignment", 64));
    writer.add(embed::io::GgufMetadata::strings("tokenizer.ggml.tokens", {"a", "b", "c"}));
    writer.add(embed::io::GgufMetadata::i32s("tokenizer.ggml.token_type", {1, 3, 4}));
    const std::string raw_a(reinterpret_cast<const char*>(a.data()), 3 * 32 * 8);
    const std::string raw_b(reinterpret_cast<const char*>(b.data()), 5 * 32 * 4);
    writer.add(embed::io::GgufTensor{"first", {32, 3}, 28, raw_a.size(), [&](std::ostream& out) { out << raw_a; }});
    writer.add(embed::io::GgufTensor{"second", {32, 5}, 0, raw_b.size(), [&](std::ostream& out) { out << raw_b; }});
    EXPECT_THROW(writer.add(embed::io::GgufMetadata::u32("general.alignment", 64)), std::invalid_argument);
    const auto file = dir.path() / "two.gguf";
    writer.write(file);
    const std::string bytes = file_bytes(file);
    // The data section starts at a multiple of 64 and the first tensor's 768 bytes are padded to 768; the
    // second follows at the next multiple of 64 and ends the file, padded.
    EXPECT_EQ(bytes.size() % 64, 0u);
    const std::size_t second = bytes.size() - 640;
    EXPECT_EQ(bytes.substr(second, raw_b.size()), raw_b);
    EXPECT_EQ(bytes.substr(second - 768, raw_a.size()), raw_a);
    EXPECT_EQ((second - 768) % 64, 0u);
    EXPECT_TRUE(embed::load_table(file, "first").cwiseEqual(a).all());
    EXPECT_TRUE(embed::load_table_f32(file, "second").cwiseEqual(b).all());
    EXPECT_EQ(embed::load_vocabulary(file).size(), 3);
    embed::io::GgufWriter short_writer;
    short_writer.add(embed::io::GgufTensor{"x", {32, 1}, 0, 128, [](std::ostream& out) { out << "short"; }});
    EXPECT_THROW(short_writer.write(dir.path() / "short.gguf"), std::logic_error);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "short.gguf"));
}

}  // namespace
