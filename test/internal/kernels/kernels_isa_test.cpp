// The row kernels, compiled for one instruction set only (this file is linked
// three times with lib/kernels/row_kernels.cpp, narrow_kernels.cpp and block_products.cpp built for the
// baseline, AVX2 and AVX-512; see CMakeLists.txt), give the documented
// order's bits. So every instruction set gives the same scores, wherever the
// rows start in memory. This file
// calls only the kernels' out-of-line functions, so no inline copy built for
// the baseline stands in for the instruction set under test.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "documented_order.hpp"
#include "kernels/block_products.hpp"
#include "kernels/row_kernels.hpp"
#include "kernels/narrow_kernels.hpp"
#include "kernels/streaming.hpp"

namespace {

using embed::Index;
using embed::detail::PrefetchHint;
using embed::detail::StreamSettings;
using embed_test::dot_in_documented_order;

// Skips the suite on a machine that cannot run the instruction set this binary was built for
// (EMBED_TEST_ISA; the baseline build has none to check).
class KernelsOnOneInstructionSet : public testing::Test {
protected:
    void SetUp() override {
#if defined(EMBED_TEST_ISA)
        if (!__builtin_cpu_supports(EMBED_TEST_ISA)) GTEST_SKIP() << "this CPU lacks " << EMBED_TEST_ISA;
#endif
    }
};

// count values in [-1, 1) from a fixed seed, with exact zeros and a -0.0 mixed in.
std::vector<double> some_values(std::size_t count, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> values(count);
    for (double& v : values) v = uniform(rng);
    for (std::size_t i = 0; i < count; i += 13) values[i] = 0.0;
    if (count > 5) values[5] = -0.0;
    return values;
}

// The widths cross whole blocks of 8, whole cache lines, the AVX-512 GEMM's tiles of 512 values and the
// 2048 doubles past which a row loop reads the wide rows per step.
const Index kWidths[] = {1, 3, 7, 8, 9, 15, 16, 17, 23, 64, 67, 513, 771, 1030, 2051};

// The first value of buffer that starts a 64-byte cache line; buffer needs 7 spare values.
template <class T>
T* first_line_start(std::vector<T>& buffer) {
    T* p = buffer.data();
    while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
    return p;
}

// Every streaming setting the sweep can choose (lib/kernels/streaming.hpp): each
// prefetch hint at no, short and the default distance, one, two and four rows
// per step (for wide vectors the next of them, and the distance 4096 bytes
// less, so each meets the others),
// and the float32 and bfloat16 loops' three hints, one per row-loop hint in
// turn, so each meets every distance and rows per step. None may change a bit.
std::vector<StreamSettings> every_row_setting() {
    constexpr PrefetchHint kNarrowHints[] = {PrefetchHint::none, PrefetchHint::nta, PrefetchHint::t0};
    std::vector<StreamSettings> settings;
    for (const int hint : {-1, 0, 1, 2, 3}) {
        for (const Index distance : {0, 64, 4096}) {
            for (const Index rows : {1, 2, 4}) {
                StreamSettings s = embed::detail::default_stream_settings();
                s.row_hint = static_cast<PrefetchHint>(hint);
                s.row_distance_bytes = distance;
                s.rows_per_step = rows;
                s.wide_rows_per_step = rows == 4 ? 1 : 2 * rows;
                s.wide_row_distance_bytes = 4096 - distance;
                s.float32_hint = kNarrowHints[(hint + 1) % 3];
                s.bfloat16_hint = kNarrowHints[(hint + 2) % 3];
                settings.push_back(s);
            }
        }
    }
    return settings;
}

// A setting as a failure message names it: every member and its value.
std::string setting_label(const StreamSettings& setting) {
    std::string label;
    for (const embed::detail::StreamSettingRow& row : embed::detail::kStreamSettings) {
        label += std::string(label.empty() ? "" : " ") + row.member + " " + std::to_string(row.get(setting));
    }
    return label;
}

// Puts the library's default settings back when a test ends, whatever it set.
struct DefaultSettingsAfter {
    ~DefaultSettingsAfter() { embed::detail::set_stream_settings(embed::detail::default_stream_settings()); }
};

// Every start from 0 to 7 doubles past the allocation, so each row starts at
// every offset from a 64-byte line even when the width is a multiple of 8,
// under every streaming setting. 11 rows: groups of 2 and 4 with some left over.
TEST_F(KernelsOnOneInstructionSet, DotRowsIsTheDocumentedSumAtEveryStartAndSetting) {
    const DefaultSettingsAfter restore;
    for (const StreamSettings& setting : every_row_setting()) {
        embed::detail::set_stream_settings(setting);
        const std::string where = setting_label(setting);
        for (const Index dim : kWidths) {
            for (Index start = 0; start < 8; ++start) {
                const Index count = 11;
                std::vector<double> buffer = some_values(static_cast<std::size_t>(start + count * dim + 8), 3);
                const double* rows = first_line_start(buffer) + start;
                const std::vector<double> x = some_values(static_cast<std::size_t>(dim), 4);
                std::vector<double> dots(static_cast<std::size_t>(count));
                std::vector<double> dots_too(static_cast<std::size_t>(count));
                std::vector<double> squares(static_cast<std::size_t>(count));
                std::vector<double> unasked(static_cast<std::size_t>(count));  // prefetch false: a cached table
                std::vector<double> unasked_too(static_cast<std::size_t>(count));
                std::vector<double> unasked_squares(static_cast<std::size_t>(count));
                embed::detail::dot_rows(rows, count, dim, x.data(), dots.data());
                embed::detail::dot_and_square_rows(rows, count, dim, x.data(), dots_too.data(), squares.data());
                embed::detail::dot_rows(rows, count, dim, x.data(), unasked.data(), false);
                embed::detail::dot_and_square_rows(rows, count, dim, x.data(), unasked_too.data(),
                                                   unasked_squares.data(), false);
                for (Index t = 0; t < count; ++t) {
                    const double* row = rows + t * dim;
                    const auto k = static_cast<std::size_t>(t);
                    ASSERT_EQ(dots[k], dot_in_documented_order(row, x.data(), dim))
                        << where << " d " << dim << " start " << start << " row " << t;
                    ASSERT_EQ(dots_too[k], dots[k]) << where << " d " << dim << " start " << start;
                    ASSERT_EQ(squares[k], dot_in_documented_order(row, row, dim))
                        << where << " d " << dim << " start " << start << " row " << t;
                    ASSERT_EQ(unasked[k], dots[k]) << where << " no prefetch d " << dim << " start " << start;
                    ASSERT_EQ(unasked_too[k], dots[k]) << where << " no prefetch d " << dim << " start " << start;
                    ASSERT_EQ(unasked_squares[k], squares[k]) << where << " no prefetch d " << dim << " start " << start;
                }
            }
        }
    }
}

// x at every place in a line against rows at every place: dot_rows copies x
// to the rows' place when they differ (d a multiple of 8, up to 1024 values)
// and reads it as it is otherwise (1032 values); either way the documented sum.
TEST_F(KernelsOnOneInstructionSet, DotRowsIsTheDocumentedSumWhereverXSits) {
    for (const Index dim : {8, 64, 768, 1024, 1032}) {
        for (Index row_start = 0; row_start < 8; ++row_start) {
            for (Index x_start = 0; x_start < 8; ++x_start) {
                const Index count = 5;
                std::vector<double> buffer = some_values(static_cast<std::size_t>(row_start + count * dim + 8), 5);
                std::vector<double> x_buffer = some_values(static_cast<std::size_t>(x_start + dim + 8), 6);
                const double* rows = first_line_start(buffer) + row_start;
                const double* x = first_line_start(x_buffer) + x_start;
                std::vector<double> dots(static_cast<std::size_t>(count));
                std::vector<double> dots_too(static_cast<std::size_t>(count));
                std::vector<double> squares(static_cast<std::size_t>(count));
                embed::detail::dot_rows(rows, count, dim, x, dots.data(), false);
                embed::detail::dot_and_square_rows(rows, count, dim, x, dots_too.data(), squares.data());
                for (Index t = 0; t < count; ++t) {
                    const double* row = rows + t * dim;
                    const auto k = static_cast<std::size_t>(t);
                    const std::string where = "d " + std::to_string(dim) + " rows at " + std::to_string(row_start) +
                                              " x at " + std::to_string(x_start) + " row " + std::to_string(t);
                    ASSERT_EQ(dots[k], dot_in_documented_order(row, x, dim)) << where;
                    ASSERT_EQ(dots_too[k], dots[k]) << where;
                    ASSERT_EQ(squares[k], dot_in_documented_order(row, row, dim)) << where;
                }
            }
        }
    }
}

// a rows and b rows compared pair by pair with the documented order.
void expect_all_pairs_documented(const double* a, Index n, const double* b, Index m, Index dim,
                                 const std::string& where) {
    const Index stride = m + 2;
    std::vector<double> out(static_cast<std::size_t>(n * stride), -7.0);
    embed::detail::dot_all_pairs(a, n, b, m, dim, out.data(), stride);
    for (Index i = 0; i < n; ++i) {
        for (Index t = 0; t < m; ++t) {
            const double expected = dot_in_documented_order(a + i * dim, b + t * dim, dim);
            ASSERT_EQ(out[static_cast<std::size_t>(i * stride + t)], expected) << where << " pair " << i << ", " << t;
        }
        // The columns past m are the caller's and stay as they were.
        ASSERT_EQ(out[static_cast<std::size_t>(i * stride + m)], -7.0) << where;
    }
}

// Counts of a rows and b rows around every block edge of both GEMM kernels
// (4 x 6 on AVX-512; blocks of 5 a rows and panels of 8 b rows elsewhere),
// written into a wider output.
TEST_F(KernelsOnOneInstructionSet, AllPairsAreTheDocumentedSums) {
    for (const Index dim : kWidths) {
        for (const Index n : {1, 4, 5, 6, 9, 11}) {
            for (const Index m : {1, 6, 7, 8, 9, 13, 17}) {
                const std::vector<double> a = some_values(static_cast<std::size_t>(n * dim), 7);
                const std::vector<double> b = some_values(static_cast<std::size_t>(m * dim), 8);
                expect_all_pairs_documented(a.data(), n, b.data(), m, dim,
                                            "d " + std::to_string(dim) + " n " + std::to_string(n) + " m " +
                                                std::to_string(m));
            }
        }
    }
}

// The AVX-512 GEMM starts its tiles at the b rows' first line boundary when d
// is a multiple of 8: every start of b from 0 to 7 doubles past a line, with a
// at the same offset and at others, widths around whole lines and tiles, and
// more than one group of 64 a rows.
TEST_F(KernelsOnOneInstructionSet, AllPairsAreTheDocumentedSumsWhereverTheRowsStart) {
    const Index widths[] = {8, 16, 24, 64, 512, 520, 1024, 1032};
    for (const Index dim : widths) {
        for (Index b_start = 0; b_start < 8; ++b_start) {
            for (const Index a_shift : {0, 3}) {
                const Index a_start = (b_start + a_shift) % 8;
                for (const auto& [n, m] : {std::pair<Index, Index>{5, 13}, {67, 7}}) {
                    std::vector<double> a_buffer = some_values(static_cast<std::size_t>(n * dim + 16), 7);
                    std::vector<double> b_buffer = some_values(static_cast<std::size_t>(m * dim + 16), 8);
                    const double* a = first_line_start(a_buffer);
                    const double* b = first_line_start(b_buffer);
                    expect_all_pairs_documented(a + a_start, n, b + b_start, m, dim,
                                                "d " + std::to_string(dim) + " a at " + std::to_string(a_start) +
                                                    " b at " + std::to_string(b_start) + " n " + std::to_string(n));
                }
            }
        }
    }
}

// The same for double b rows (see AllPairsCrossThePackedBlocksOfARows below for the narrow ones).
TEST_F(KernelsOnOneInstructionSet, AllPairsCrossThePackedBlocksOfARows) {
    for (const Index dim : {67, 6000}) {
        const std::vector<double> a = some_values(static_cast<std::size_t>(70 * dim), 7);
        const std::vector<double> b = some_values(static_cast<std::size_t>(13 * dim), 8);
        expect_all_pairs_documented(a.data(), 70, b.data(), 13, dim, "d " + std::to_string(dim) + " n 70 m 13");
    }
}

// Rows longer than 1024 whole values are read by the AVX-512 GEMM 512 values at a time, eight groups of 6
// b rows per k block, each pair's lane sums carried in memory from block to block: d = 1032 ends in a block of
// 8 values, 2059 in one of 8 and a tail of 3; 53 b rows fill a chunk of 48 and end in a part group of the
// next, and b on a cache line with d a multiple of 8 is read in place.
TEST_F(KernelsOnOneInstructionSet, AllPairsCarryLongRowsAcrossKBlocksAndChunksOfBRows) {
    for (const Index dim : {1024, 1025, 1032, 2056, 2059}) {
        std::vector<double> a_buffer = some_values(static_cast<std::size_t>(9 * dim + 8), 7);
        std::vector<double> b_buffer = some_values(static_cast<std::size_t>(53 * dim + 8), 8);
        expect_all_pairs_documented(first_line_start(a_buffer), 9, first_line_start(b_buffer), 53, dim,
                                    "d " + std::to_string(dim) + " n 9 m 53");
    }
}

// ---- The float32 and bfloat16 row kernels ----

// A stored value widened by hand: a float32 converts exactly, a bfloat16 is the top half of a float32.
double widened(double v) { return v; }
double widened(float v) { return static_cast<double>(v); }
double widened(Eigen::bfloat16 v) {
    return static_cast<double>(std::bit_cast<float>(std::uint32_t{std::bit_cast<std::uint16_t>(v)} << 16));
}

// count values of Narrow: some_values times powers of two from 2^-32 to 2^32 (so that sums round and a
// wrong order shows, even for bfloat16, whose products are exact), every 37th one a float32 subnormal.
template <class Narrow>
std::vector<Narrow> some_narrow_values(std::size_t count, unsigned seed) {
    const std::vector<double> values = some_values(count, seed);
    std::vector<Narrow> narrow(count);
    for (std::size_t i = 0; i < count; ++i) {
        const double scaled = std::ldexp(values[i], static_cast<int>((i * 7) % 9) * 8 - 32);
        narrow[i] = static_cast<Narrow>(static_cast<float>(i % 37 == 36 ? values[i] * 1e-39 : scaled));
    }
    return narrow;
}

template <class Narrow>
class NarrowKernelsOnOneInstructionSet : public KernelsOnOneInstructionSet {};
using NarrowTypes = testing::Types<float, Eigen::bfloat16>;
TYPED_TEST_SUITE(NarrowKernelsOnOneInstructionSet, NarrowTypes);

// Rows start at every offset from a 64-byte line a value of their type can have (16 for float32, 32 for
// bfloat16), under every streaming setting (the narrow loops take its distance, both rows per step and their
// type's hint); each score must be the documented order's on the row widened by hand. 11 rows: groups of 2
// and 4 with some left over.
TYPED_TEST(NarrowKernelsOnOneInstructionSet, DotRowsIsTheDocumentedSumOfTheWidenedRowAtEveryStartAndSetting) {
    using Narrow = TypeParam;
    constexpr Index kStarts = 64 / static_cast<Index>(sizeof(Narrow));
    const DefaultSettingsAfter restore;
    for (const StreamSettings& setting : every_row_setting()) {
        embed::detail::set_stream_settings(setting);
        const std::string where = setting_label(setting);
        for (const Index dim : kWidths) {
            for (Index start = 0; start < kStarts; ++start) {
                const Index count = 11;
                std::vector<Narrow> buffer =
                    some_narrow_values<Narrow>(static_cast<std::size_t>(kStarts * 2 + count * dim), 3);
                const Narrow* rows = first_line_start(buffer) + start;
                const std::vector<double> x = some_values(static_cast<std::size_t>(dim), 4);
                std::vector<double> dots(static_cast<std::size_t>(count));
                std::vector<double> dots_too(static_cast<std::size_t>(count));
                std::vector<double> squares(static_cast<std::size_t>(count));
                std::vector<double> wide(static_cast<std::size_t>(count * dim));
                std::vector<double> unasked(static_cast<std::size_t>(count));  // prefetch false: a cached table
                std::vector<double> unasked_too(static_cast<std::size_t>(count));
                std::vector<double> unasked_squares(static_cast<std::size_t>(count));
                embed::detail::dot_rows(rows, count, dim, x.data(), dots.data());
                embed::detail::dot_and_square_rows(rows, count, dim, x.data(), dots_too.data(), squares.data());
                embed::detail::dot_rows(rows, count, dim, x.data(), unasked.data(), false);
                embed::detail::dot_and_square_rows(rows, count, dim, x.data(), unasked_too.data(),
                                                   unasked_squares.data(), false);
                embed::detail::widen_values(rows, count * dim, wide.data());
                for (Index t = 0; t < count; ++t) {
                    std::vector<double> row(static_cast<std::size_t>(dim));
                    for (Index c = 0; c < dim; ++c) {
                        row[static_cast<std::size_t>(c)] = widened(rows[t * dim + c]);
                        ASSERT_EQ(std::bit_cast<std::uint64_t>(wide[static_cast<std::size_t>(t * dim + c)]),
                                  std::bit_cast<std::uint64_t>(row[static_cast<std::size_t>(c)]));
                    }
                    const auto k = static_cast<std::size_t>(t);
                    ASSERT_EQ(dots[k], dot_in_documented_order(row.data(), x.data(), dim))
                        << where << " d " << dim << " start " << start << " row " << t;
                    ASSERT_EQ(dots_too[k], dots[k]) << where << " d " << dim << " start " << start;
                    ASSERT_EQ(squares[k], dot_in_documented_order(row.data(), row.data(), dim))
                        << where << " d " << dim << " start " << start << " row " << t;
                    ASSERT_EQ(unasked[k], dots[k]) << where << " no prefetch d " << dim << " start " << start;
                    ASSERT_EQ(unasked_too[k], dots[k]) << where << " no prefetch d " << dim << " start " << start;
                    ASSERT_EQ(unasked_squares[k], squares[k]) << where << " no prefetch d " << dim << " start " << start;
                }
            }
        }
    }
}

// The narrow GEMM: a rows (double) against b rows stored narrow, b starting at a few offsets from a line,
// with counts around the block edges (5 a rows, 8 b rows per panel) and a wider output; every entry must
// be the documented order's on b's row widened by hand, and the columns past m stay the caller's.
// Every entry of dot_all_pairs on n a rows and m narrow b rows of `dim` values, the b rows `b_start` values
// past a cache line, must be the documented order's sum over the b row widened by hand.
template <class Narrow>
void expect_narrow_all_pairs_in_order(Index dim, Index b_start, Index n, Index m) {
    const std::vector<double> a = some_values(static_cast<std::size_t>(n * dim), 7);
    std::vector<Narrow> buffer = some_narrow_values<Narrow>(static_cast<std::size_t>(m * dim + 64), 8);
    const Narrow* b = first_line_start(buffer) + b_start;
    const Index stride = m + 2;
    std::vector<double> out(static_cast<std::size_t>(n * stride), -7.0);
    embed::detail::dot_all_pairs(a.data(), n, b, m, dim, out.data(), stride);
    const std::string where = "d " + std::to_string(dim) + " b at " + std::to_string(b_start) + " n " +
                              std::to_string(n) + " m " + std::to_string(m);
    for (Index t = 0; t < m; ++t) {
        std::vector<double> row(static_cast<std::size_t>(dim));
        for (Index c = 0; c < dim; ++c) row[static_cast<std::size_t>(c)] = widened(b[t * dim + c]);
        for (Index i = 0; i < n; ++i) {
            ASSERT_EQ(out[static_cast<std::size_t>(i * stride + t)],
                      dot_in_documented_order(a.data() + i * dim, row.data(), dim))
                << where << " pair " << i << ", " << t;
        }
    }
    for (Index i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i * stride + m)], -7.0) << where;
}

TYPED_TEST(NarrowKernelsOnOneInstructionSet, AllPairsAreTheDocumentedSumsOfTheWidenedRows) {
    for (const Index dim : kWidths) {
        for (const Index b_start : {0, 3}) {
            for (const auto& [n, m] : {std::pair<Index, Index>{1, 1}, {4, 7}, {5, 8}, {6, 9}, {11, 17}}) {
                expect_narrow_all_pairs_in_order<TypeParam>(dim, b_start, n, m);
            }
        }
    }
}

// More a rows than the AVX-512 GEMM packs at once (64, and 40 at d = 6000, where 64 would take more than
// 2 MiB), so every group of b rows is packed again for the next a rows; 17 b rows end in a part group.
TYPED_TEST(NarrowKernelsOnOneInstructionSet, AllPairsCrossThePackedBlocksOfARows) {
    for (const Index dim : {67, 4099, 6000}) expect_narrow_all_pairs_in_order<TypeParam>(dim, 3, 70, 17);
}

// Long rows in k blocks of 512 values across two chunks of b rows, as for double rows above.
TYPED_TEST(NarrowKernelsOnOneInstructionSet, AllPairsCarryLongRowsAcrossKBlocksAndChunksOfBRows) {
    for (const Index dim : {1032, 2059}) expect_narrow_all_pairs_in_order<TypeParam>(dim, 0, 9, 53);
}

// The one-hot product: for ids around the blocks (5 ids for AVX2 and below, 8 for AVX-512) and their groups
// (10 or 16), vocabularies across the chunks of 256 rows and widths around the blocks of columns (two vectors
// of 4 or 8, then one, then single columns), every entry must be the explicit loop's sum over the rows in order
// from 0.0 of (1.0 or 0.0) times the value widened by hand.
template <class Narrow>
void expect_one_hot_times_table_in_order() {
    for (const auto& [vocab, dim] : {std::pair<Index, Index>{1, 1}, {9, 7}, {300, 8}, {513, 17}, {260, 29}}) {
        const std::vector<Narrow> table = some_narrow_values<Narrow>(static_cast<std::size_t>(vocab * dim), 9);
        for (const Index n : {1, 6, 9, 17, 70}) {
            std::vector<Index> ids(static_cast<std::size_t>(n));
            for (Index k = 0; k < n; ++k) ids[static_cast<std::size_t>(k)] = (k * 37 + 5) % vocab;
            std::vector<double> out(static_cast<std::size_t>(n * dim), -7.0);
            embed::detail::one_hot_times_table(table.data(), vocab, dim, ids.data(), n, out.data());
            for (Index k = 0; k < n; ++k) {
                for (Index c = 0; c < dim; ++c) {
                    double sum = 0.0;
                    for (Index v = 0; v < vocab; ++v) {
                        const double one_hot = v == ids[static_cast<std::size_t>(k)] ? 1.0 : 0.0;
                        sum += one_hot * widened(table[static_cast<std::size_t>(v * dim + c)]);
                    }
                    ASSERT_EQ(std::bit_cast<std::uint64_t>(out[static_cast<std::size_t>(k * dim + c)]),
                              std::bit_cast<std::uint64_t>(sum))
                        << vocab << "x" << dim << " n " << n << " id " << k << " column " << c;
                }
            }
        }
    }
}

TYPED_TEST(NarrowKernelsOnOneInstructionSet, OneHotTimesTableSumsEveryRowInOrder) {
    expect_one_hot_times_table_in_order<TypeParam>();
}

TEST_F(KernelsOnOneInstructionSet, OneHotTimesTableSumsEveryRowInOrder) {
    expect_one_hot_times_table_in_order<double>();
}

// Narrow values with every bfloat16 bit pattern as their top 16 bits (for float32, low bits set in every
// other one): zeros, subnormals, infinities and NaNs of both signs among them.
template <class Narrow>
std::vector<Narrow> every_top_half() {
    std::vector<Narrow> values(std::size_t{1} << 16);
    for (std::uint32_t bits = 0; bits < values.size(); ++bits) {
        if constexpr (std::is_same_v<Narrow, float>) {
            values[bits] = std::bit_cast<float>(bits << 16 | (bits % 2 == 0 ? 0 : 0x5a5a));
        } else {
            values[bits] = std::bit_cast<Eigen::bfloat16>(static_cast<std::uint16_t>(bits));
        }
    }
    return values;
}

// widen_values on all of them, from every start a value can have in a 64-byte line and with counts that end
// mid-vector: each double has the bits of the conversion by hand (a NaN quieted the same way).
TYPED_TEST(NarrowKernelsOnOneInstructionSet, WidenValuesConvertsEveryTopHalfExactlyFromEveryStart) {
    using Narrow = TypeParam;
    constexpr Index kStarts = 64 / static_cast<Index>(sizeof(Narrow));
    const std::vector<Narrow> values = every_top_half<Narrow>();
    std::vector<Narrow> buffer(values.size() + 2 * kStarts);
    for (Index start = 0; start < kStarts; ++start) {
        Narrow* first = first_line_start(buffer) + start;
        std::copy(values.begin(), values.end(), first);
        const auto count = static_cast<Index>(values.size()) - start;  // start + count: a tail of every length
        std::vector<double> wide(values.size());
        embed::detail::widen_values(first, count, wide.data());
        for (Index i = 0; i < count; ++i) {
            const auto k = static_cast<std::size_t>(i);
            ASSERT_EQ(std::bit_cast<std::uint64_t>(wide[k]), std::bit_cast<std::uint64_t>(widened(values[k])))
                << "start " << start << " value " << i;
        }
    }
}

// The scan's block products (lib/kernels/block_products.cpp): each entry of zt, starting from a value
// already there, adds yt(j, r) * block(r, c) for r = 0, 1, ... in turn, one rounded multiply and one rounded
// add each, in every column (whole 8-wide vectors and the tail), whatever the block's rows.
TEST_F(KernelsOnOneInstructionSet, BlockProductsAddEachRowInTurn) {
    constexpr Index kVectors = embed::detail::kProductVectors;
    for (const Index dim : kWidths) {
        for (const Index count : {1, 5, 8, 64}) {
            const std::vector<double> block = some_values(static_cast<std::size_t>(count * dim), 21);
            const std::vector<double> yt = some_values(static_cast<std::size_t>(kVectors * count), 22);
            std::vector<double> zt = some_values(static_cast<std::size_t>(kVectors * dim), 23);
            std::vector<double> expected = zt;
            for (Index j = 0; j < kVectors; ++j) {
                for (Index c = 0; c < dim; ++c) {
                    double sum = expected[static_cast<std::size_t>(j * dim + c)];
                    for (Index r = 0; r < count; ++r) {
                        const double product = yt[static_cast<std::size_t>(j * count + r)] *
                                               block[static_cast<std::size_t>(r * dim + c)];
                        sum += product;
                    }
                    expected[static_cast<std::size_t>(j * dim + c)] = sum;
                }
            }
            embed::detail::add_block_products(yt.data(), count, block.data(), dim, zt.data());
            for (std::size_t e = 0; e < zt.size(); ++e) {
                ASSERT_EQ(std::bit_cast<std::uint64_t>(zt[e]), std::bit_cast<std::uint64_t>(expected[e]))
                    << "d " << dim << " count " << count << " entry " << e;
            }
        }
    }
}

}  // namespace
