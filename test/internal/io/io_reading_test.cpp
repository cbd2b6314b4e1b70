// How a table file is read, beyond what it holds: a path that is not a regular
// file (or a directory, read as a checkpoint folder) is refused before it is opened (a FIFO must not block the caller), a file
// that shrinks while it is read is an error rather than a crash, and a table
// larger than one decode chunk, read by several threads, has every value an
// independent widening of its 16-bit patterns gives.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/io.hpp>

#include "io/byte_source.hpp"
#include "io/formats.hpp"
#include "threads/parallel.hpp"
#include "table_files.hpp"

namespace {

using embed::FileFormatError;
using embed::Index;
using embed_test::TempDir;
using testing::HasSubstr;

/// Every public function that reads a file, called on file.
const std::vector<std::pair<const char*, std::function<void(const std::filesystem::path&)>>>& file_readers() {
    static const std::vector<std::pair<const char*, std::function<void(const std::filesystem::path&)>>> readers = {
        {"load_table", [](const std::filesystem::path& f) { (void)embed::load_table(f); }},
        {"load_table_f32", [](const std::filesystem::path& f) { (void)embed::load_table_f32(f); }},
        {"load_table_bf16", [](const std::filesystem::path& f) { (void)embed::load_table_bf16(f); }},
        {"load_stored_table", [](const std::filesystem::path& f) { (void)embed::load_stored_table(f); }},
        {"list_tensors", [](const std::filesystem::path& f) { (void)embed::list_tensors(f); }},
        {"chosen_tensor", [](const std::filesystem::path& f) { (void)embed::chosen_tensor(f); }},
        {"check_tying", [](const std::filesystem::path& f) { (void)embed::check_tying(f); }},
    };
    return readers;
}

/// What read(file) throws: the filesystem_error's message and code, or a note that it threw something else.
struct Refusal {
    std::string message;
    std::error_code code;
};

Refusal refusal_of(const std::function<void(const std::filesystem::path&)>& read, const std::filesystem::path& file) {
    try {
        read(file);
    } catch (const std::filesystem::filesystem_error& error) {
        EXPECT_EQ(error.path1(), file);
        return {error.what(), error.code()};
    } catch (const std::exception& error) {
        return {std::string("(threw another exception: ") + error.what() + ")", {}};
    }
    return {"(read it)", {}};
}

// A directory is a checkpoint folder whatever its name (checkpoint_test reads real ones); an empty one,
// named like a table file, is refused as a checkpoint without weights rather than opened as a file.
TEST(IoReading, ADirectoryNamedLikeATableFileIsReadAsACheckpointFolder) {
    const TempDir dir;
    for (const char* name : {"x.npy", "x.safetensors", "x.gguf"}) {
        const std::filesystem::path directory = dir.path() / name;
        std::filesystem::create_directory(directory);
        for (const auto& [function, read] : file_readers()) {
            try {
                read(directory);
                ADD_FAILURE() << function << " read the empty directory " << name;
            } catch (const FileFormatError& error) {
                EXPECT_EQ(error.file(), directory) << function << " " << name;
                EXPECT_THAT(error.what(), HasSubstr("has neither model.safetensors nor model.safetensors.index.json"))
                    << function << " " << name;
            }
        }
    }
}

// Opening a FIFO for reading waits until something opens it for writing: a loader that opened first would
// hang here. Should it, the test opens the FIFO's other end itself after a while, so it fails instead.
TEST(IoReading, AFifoNamedLikeATableFileIsRefusedWithoutBlocking) {
    const TempDir dir;
    for (const char* name : {"t.npy", "t.safetensors", "t.gguf"}) {
        const std::filesystem::path fifo = dir.path() / name;
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
        for (const auto& [function, read] : file_readers()) {
            auto refused = std::async(std::launch::async, [&, read = read] { return refusal_of(read, fifo); });
            if (refused.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
                ADD_FAILURE() << function << " blocked on the FIFO " << name;
                const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the reader return
                refused.wait();
                if (writer >= 0) ::close(writer);
                continue;
            }
            const Refusal refusal = refused.get();
            EXPECT_THAT(refusal.message, HasSubstr("cannot read a table from a FIFO, which is not a regular file"))
                << function << " " << name;
            EXPECT_THAT(refusal.message, HasSubstr(fifo.string())) << function << " " << name;
            EXPECT_EQ(refusal.code, std::errc::invalid_argument) << function << " " << name;
        }
    }
}

// ---- Files that shrink while they are read ----

/// "(rows, cols)", as a .npy header writes a shape.
std::string npy_shape(Index rows, Index cols) {
    std::string text = "(";
    text.append(std::to_string(rows)).append(", ").append(std::to_string(cols)).append(")");
    return text;
}

/// A (rows, cols) float32 .npy whose entry i is i + 0.5f (exact below 2^23).
std::string counting_float32_npy(Index rows, Index cols) {
    embed_test::ByteWriter data;
    for (Index i = 0; i < rows * cols; ++i) data.f32(static_cast<float>(i) + 0.5f);
    return embed_test::npy_file("<f4", false, npy_shape(rows, cols), data.bytes);
}

// The file is opened and its header parsed, then cut to half its size before the data is read: the read
// must throw FileFormatError naming the file and saying what happened, on one thread and when the rows are
// split between threads (the error of a helper thread reaches the caller). A reader that mapped the file
// would be killed by SIGBUS here instead.
TEST(IoReading, AFileCutShortAfterItWasOpenedIsAFormatErrorNotACrash) {
    const TempDir dir;
    constexpr Index rows = 1531;
    constexpr Index cols = 300;
    for (const int threads : {1, 2, 7}) {
        embed::detail::set_worker_count(threads);
        const auto file = dir.write("shrinks.npy", counting_float32_npy(rows, cols));
        const embed::io::FileSource source(file);
        const embed::io::TensorEntry entry = embed::io::parse_npy(source).tensors.at(0);
        const auto size = std::filesystem::file_size(file);
        std::filesystem::resize_file(file, size / 2);
        EXPECT_THAT([&] { (void)embed::io::decode_table<float>(entry, source); },
                    testing::ThrowsMessage<FileFormatError>(testing::AllOf(
                        testing::StartsWith(file.string() + ": has no byte "),
                        HasSubstr("it had " + std::to_string(size) + " bytes when opened and has shrunk since"))))
            << threads << " threads";
    }
}

// The same race as it happens: one thread cuts the file to its first page and writes the rest back, over
// and over, while this one loads it. No load may crash (a reader that mapped the file dies of SIGBUS here):
// each returns a table of the file's shape or throws FileFormatError naming the file. The values are not
// checked: a file rewritten while it is read can give any mix of old, new and not yet written bytes (the
// page cache shows a page being written as zeros for a moment), which API.md says no reader can avoid.
TEST(IoReading, LoadingAFileThatIsCutAndRewrittenMeanwhileNeverCrashes) {
    const TempDir dir;
    constexpr Index rows = 1531;
    constexpr Index cols = 300;
    const std::string bytes = counting_float32_npy(rows, cols);
    const auto file = dir.write("rewritten.npy", bytes);
    std::atomic<bool> stop = false;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    ASSERT_GT(bytes.size(), 2 * page);
    std::thread rewriter([&] {
        const int fd = ::open(file.c_str(), O_WRONLY);
        const auto rest = static_cast<ssize_t>(bytes.size() - page);
        while (fd >= 0 && !stop) {
            if (::ftruncate(fd, static_cast<off_t>(page)) != 0) break;
            if (::pwrite(fd, bytes.data() + page, bytes.size() - page, static_cast<off_t>(page)) != rest) break;
        }
        if (fd >= 0) ::close(fd);
    });
    int loaded = 0;
    int refused = 0;
    std::vector<std::string> wrong;  // checked after the rewriter has stopped, so a failure cannot leave it running
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (std::chrono::steady_clock::now() < until && wrong.empty()) {
        try {
            const embed::TableF32 table = embed::load_table_f32(file);
            ++loaded;
            if (table.rows() != rows || table.cols() != cols) {
                wrong.push_back("a load returned " + std::to_string(table.rows()) + " x " +
                                std::to_string(table.cols()));
            }
        } catch (const FileFormatError& error) {
            ++refused;
            if (error.file() != file) wrong.push_back("an error named " + error.file().string());
        }
    }
    stop = true;
    rewriter.join();
    std::printf("%d loads returned a table, %d were refused\n", loaded, refused);
    EXPECT_THAT(wrong, testing::IsEmpty());
    EXPECT_GT(loaded + refused, 0);
}

// ---- Tables past one decode chunk, read by several threads ----

/// bfloat16 bits as the float32 they stand for: the same sign, exponent and fraction, 16 zero bits below.
float bfloat16_as_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

/// IEEE binary16 bits as the float32 they stand for, field by field: exponent rebiased from 15 to 127 and
/// fraction moved up 13 bits; a subnormal is its fraction times 2^-24; infinity and NaN keep their fraction.
float half_as_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 15) << 31;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t fraction = bits & 0x3FFu;
    if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (fraction << 13));
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(fraction), -24);  // exact: 10 bits
        return sign != 0 ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

/// The same float, or both NaN with the same sign (a float32 NaN widened to double keeps no signalling bit).
bool same_as_double(double got, float want) {
    if (std::isnan(want)) return std::isnan(got) && std::signbit(got) == std::signbit(want);
    return std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(static_cast<double>(want));
}

/// Over every 16-bit pattern: entry i of a table is pattern (i * 40503) mod 2^16, a permutation of all 65536
/// for every run of 65536 entries, so zeros, subnormals, infinities and NaNs of both signs are all there.
std::uint16_t pattern(Index i) { return static_cast<std::uint16_t>((static_cast<std::uint64_t>(i) * 40503u) & 0xFFFFu); }

// 1531 x 300 = 459300 entries: seven decode chunks of 2^16 entries, and seven pieces of rows at seven threads.
constexpr Index kRows = 1531;
constexpr Index kCols = 300;

/// A 16-bit table file of every pattern: name, bytes, and the float32 each entry must load as.
struct SixteenBitFile {
    std::string name;
    std::string bytes;
    bool bfloat16;  // else IEEE binary16
};

std::vector<SixteenBitFile> sixteen_bit_files() {
    embed_test::ByteWriter little;
    embed_test::ByteWriter big;
    embed_test::ByteWriter column_major;
    for (Index i = 0; i < kRows * kCols; ++i) {
        little.u16(pattern(i));
        big.uint(pattern(i), 2, true);
        // Fortran order stores column by column: stream position c * V + r holds entry (r, c).
        const Index r = i % kRows;
        const Index c = i / kRows;
        column_major.u16(pattern(r * kCols + c));
    }
    const std::string shape = npy_shape(kRows, kCols);
    const auto safetensors = [&](const char* dtype) {
        return embed_test::one_tensor(std::string(R"("dtype":")") + dtype + R"(","shape":[)" + std::to_string(kRows) +
                                          "," + std::to_string(kCols) + R"(],"data_offsets":[0,)" +
                                          std::to_string(little.bytes.size()) + "]",
                                      little.bytes);
    };
    return {{"bf16.safetensors", safetensors("BF16"), true},
            {"f16.safetensors", safetensors("F16"), false},
            {"le_f16.npy", embed_test::npy_file("<f2", false, shape, little.bytes), false},
            {"be_f16.npy", embed_test::npy_file(">f2", false, shape, big.bytes), false},
            {"fortran_f16.npy", embed_test::npy_file("<f2", true, shape, column_major.bytes), false}};
}

TEST(IoReading, SixteenBitTablesPastOneChunkLoadAsTheirPatternsWidenedAtEveryThreadCount) {
    const TempDir dir;
    for (const SixteenBitFile& sixteen : sixteen_bit_files()) {
        const auto file = dir.write(sixteen.name, sixteen.bytes);
        std::vector<float> want(static_cast<std::size_t>(kRows * kCols));
        for (Index i = 0; i < kRows * kCols; ++i) {
            want[static_cast<std::size_t>(i)] = sixteen.bfloat16 ? bfloat16_as_float(pattern(i)) : half_as_float(pattern(i));
        }
        for (const int threads : {1, 2, 7}) {
            embed::detail::set_worker_count(threads);
            ASSERT_EQ(embed::detail::thread_count(kRows, kCols), threads) << "the rows must split " << threads << " ways";
            const std::string where = sixteen.name + " at " + std::to_string(threads) + " threads";
            const embed::TableF32 as_float = embed::load_table_f32(file);
            const embed::Table as_double = embed::load_table(file);
            ASSERT_EQ(as_float.rows(), kRows) << where;
            ASSERT_EQ(as_float.cols(), kCols) << where;
            ASSERT_EQ(as_double.rows(), kRows) << where;
            ASSERT_EQ(as_double.cols(), kCols) << where;
            for (Index i = 0; i < kRows * kCols; ++i) {
                const float expected = want[static_cast<std::size_t>(i)];
                ASSERT_EQ(std::bit_cast<std::uint32_t>(as_float.data()[i]), std::bit_cast<std::uint32_t>(expected))
                    << where << ", entry " << i << " (pattern " << pattern(i) << ")";
                ASSERT_TRUE(same_as_double(as_double.data()[i], expected))
                    << where << ", entry " << i << " (pattern " << pattern(i) << "): " << as_double.data()[i];
            }
            if (sixteen.bfloat16) {
                const embed::TableBF16 as_stored = embed::load_table_bf16(file);
                for (Index i = 0; i < kRows * kCols; ++i) {
                    ASSERT_EQ(std::bit_cast<std::uint16_t>(as_stored.data()[i]), pattern(i)) << where << ", entry " << i;
                }
            }
        }
    }
}

}  // namespace
