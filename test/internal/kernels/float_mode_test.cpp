// The library's results do not depend on the calling thread's floating-point
// mode. A program linked with -ffast-math or -Ofast starts with subnormals
// flushed to zero and read as zero (GCC's crtfastmath.o), as does a process
// after torch.set_flush_denormal(True); fesetround changes the rounding and
// feenableexcept turns an invalid operation (inf - inf) into a trap. Each
// operation runs once in the default mode and once in each of those, on tables
// holding subnormals, values whose products are subnormal, NaN and both
// infinities, and must give the same bits, and give the caller its mode back.
// The default mode's results are the explicit loops' (the other tests check
// that); here the point is that the mode changes nothing.
#include <cfenv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#if defined(__x86_64__)
#include <pmmintrin.h>  // _MM_SET_DENORMALS_ZERO_MODE
#include <xmmintrin.h>  // _mm_getcsr, _MM_SET_FLUSH_ZERO_MODE
#endif

#include <gtest/gtest.h>

#include <embed/io.hpp>
#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/one_hot.hpp>
#include <embed/precision.hpp>
#include <embed/scaling.hpp>
#include <embed/similarity.hpp>
#include <embed/table.hpp>

#include "threads/parallel.hpp"
#include "table_files.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::Vector;

#if defined(__x86_64__)

// ---------------------------------------------------------------- modes

/// A floating-point mode a process may put its threads in, and how to tell it is in effect.
struct Mode {
    const char* name;
    void (*enter)();
    bool (*in_effect)();
};

// volatile, so the compiler cannot fold these at compile time in the default mode.
volatile double tiny = 1e-310;  // subnormal
volatile double one = 1.0;
volatile double small = 1e-20;  // under half an ulp of 1.0

const Mode kModes[] = {
    {"flush_subnormals",
     [] {
         _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
         _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
     },
     [] { return tiny * one == 0.0; }},
    {"round_upward", [] { std::fesetround(FE_UPWARD); }, [] { return one + small > 1.0; }},
    {"round_toward_zero", [] { std::fesetround(FE_TOWARDZERO); }, [] { return one - small < 1.0; }},
    {"trap_invalid", [] { _MM_SET_EXCEPTION_MASK(_MM_GET_EXCEPTION_MASK() & ~_MM_MASK_INVALID); },
     [] { return (_MM_GET_EXCEPTION_MASK() & _MM_MASK_INVALID) == 0; }},
};

/// gtest names a mode by its name instead of its bytes.
void PrintTo(const Mode& mode, std::ostream* out) { *out << mode.name; }

/// The control part of the thread's mode (the exception flags, which any call may raise, left out).
unsigned control_bits() { return _mm_getcsr() & ~0x3FU; }

/// fn's result computed with the calling thread in `mode`; the thread is back in its own mode after.
/// Fails the test if the mode was not in effect or fn did not leave it as it found it.
template <class Fn>
auto in_mode(const Mode& mode, Fn fn) {
    const unsigned own = _mm_getcsr();
    mode.enter();
    const bool in_effect = mode.in_effect();
    const unsigned entered = control_bits();
    auto result = fn();
    const unsigned left = control_bits();
    _mm_setcsr(own);
    EXPECT_TRUE(in_effect) << mode.name << " was not in effect: the test would prove nothing";
    EXPECT_EQ(left, entered) << mode.name << ": the call did not give the caller's mode back";
    return result;
}

// ---------------------------------------------------------------- results as bytes

template <class T>
void append_bytes(std::string& bytes, const T* data, Index count) {
    bytes.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(count) * sizeof(T));
}

template <class Matrix>
std::string bytes_of(const Matrix& m) {
    std::string bytes = std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + ":";
    append_bytes(bytes, m.data(), m.size());
    return bytes;
}

std::string bytes_of(double x) {
    std::string bytes = "1x1:";
    append_bytes(bytes, &x, 1);
    return bytes;
}

std::string bytes_of(const std::vector<embed::Neighbour>& neighbours) {
    std::string bytes;
    for (const embed::Neighbour& n : neighbours) {
        append_bytes(bytes, &n.id, 1);
        append_bytes(bytes, &n.score, 1);
    }
    return bytes;
}

std::string bytes_of(const embed::StoredTable& table) {
    return std::to_string(table.index()) + std::visit([](const auto& t) { return bytes_of(t); }, table);
}

// ---------------------------------------------------------------- tables that the mode would change

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// (4096, 64): big enough that two threads split every call. In every 16 rows, wherever a thread's
/// piece falls, row 1 holds double subnormals, row 2 values whose squares and products with the hidden
/// vector are subnormal, row 6 values that are subnormal as float32 and bfloat16. Row 3 holds a NaN,
/// rows 4 and 5 infinities (inf - inf in their cosines).
Table special_table() {
    Table table = embed::make_table(4096, 64, 20260917);
    for (Index r = 0; r < table.rows(); r += 16) {
        table.row(r + 1) *= 1e-310;
        table.row(r + 2) *= 1e-160;
        table.row(r + 6) *= 1e-39;
    }
    table(3, 0) = kNaN;
    table(4, 1) = kInf;
    table(5, 1) = -kInf;
    return table;
}

/// (d): half normal values, half tiny enough that products with row 2 are subnormal.
Vector special_hidden(const Table& table) {
    Vector hidden = table.row(9).transpose();
    hidden.head(32) *= 1e-160;
    return hidden;
}

struct Tables {
    Table table = special_table();
    embed::TableF32 f32 = embed::to_f32(table);
    embed::TableBF16 bf16 = embed::to_bf16(table);
    Vector hidden = special_hidden(table);
    Table hidden_rows = table.topRows(8);
    std::vector<Index> ids{1, 2, 6, 3, 4, 5, 9, 1, 4095};
};

const Tables& tables() {
    static const Tables* const t = new Tables;
    return *t;
}

/// Every operation that computes in floating point, named, its result as bytes.
std::vector<std::pair<std::string, std::function<std::string()>>> operations() {
    const Tables* t = &tables();
    std::vector<std::pair<std::string, std::function<std::string()>>> ops = {
        {"logits", [t] { return bytes_of(embed::logits(t->table, t->hidden)); }},
        {"batched logits", [t] { return bytes_of(embed::logits(t->table, t->hidden_rows)); }},
        {"f32 logits", [t] { return bytes_of(embed::logits(t->f32, t->hidden)); }},
        {"bf16 logits", [t] { return bytes_of(embed::logits(t->bf16, t->hidden)); }},
        {"f32 batched logits", [t] { return bytes_of(embed::logits(t->f32, t->hidden_rows)); }},
        {"bf16 batched logits", [t] { return bytes_of(embed::logits(t->bf16, t->hidden_rows)); }},
        {"dot", [t] { return bytes_of(embed::dot(t->table.row(2).transpose(), t->hidden)); }},
        {"norm", [t] { return bytes_of(embed::norm(t->table.row(2).transpose())); }},
        {"cosine", [t] { return bytes_of(embed::cosine(t->table.row(2).transpose(), t->hidden)); }},
        {"rms", [t] { return bytes_of(embed::rms(t->table.row(1).transpose())); }},
        {"rank_neighbours cosine of a tiny row",
         [t] { return bytes_of(embed::rank_neighbours(t->table, 2, 20, embed::Score::cosine)); }},
        {"rank_neighbours dot of a tiny row",
         [t] { return bytes_of(embed::rank_neighbours(t->table, 2, 20, embed::Score::dot)); }},
        {"rank_neighbours cosine of an infinite row",
         [t] { return bytes_of(embed::rank_neighbours(t->table, 4, 20, embed::Score::cosine)); }},
        {"f32 rank_neighbours cosine",
         [t] { return bytes_of(embed::rank_neighbours(t->f32, 6, 20, embed::Score::cosine)); }},
        {"bf16 rank_neighbours dot",
         [t] { return bytes_of(embed::rank_neighbours(t->bf16, 6, 20, embed::Score::dot)); }},
        {"stretch", [t] { return bytes_of(embed::stretch(t->table, 9, 1e-300)); }},
        {"f32 stretch", [t] { return bytes_of(embed::stretch(t->f32, 9, 1e-40)); }},
        {"bf16 stretch", [t] { return bytes_of(embed::stretch(t->bf16, 9, 1e-40)); }},
        {"scaled_lookup", [t] { return bytes_of(embed::scaled_lookup(t->table, embed::Ids(t->ids), 3)); }},
        {"f32 scaled_lookup", [t] { return bytes_of(embed::scaled_lookup(t->f32, embed::Ids(t->ids), 3)); }},
        {"lookup_via_one_hot", [t] { return bytes_of(embed::lookup_via_one_hot(t->table, embed::Ids(t->ids))); }},
        {"bf16 lookup_via_one_hot", [t] { return bytes_of(embed::lookup_via_one_hot(t->bf16, embed::Ids(t->ids))); }},
        {"row_times_matrix", [t] { return bytes_of(embed::row_times_matrix(embed::one_hot(1, 4096), t->table)); }},
        {"lookup", [t] { return bytes_of(embed::lookup(t->f32, embed::Ids(t->ids))); }},
        {"to_f32", [t] { return bytes_of(embed::to_f32(t->table)); }},
        {"to_bf16", [t] { return bytes_of(embed::to_bf16(t->table)); }},
        {"f32 to_double", [t] { return bytes_of(embed::to_double(t->f32)); }},
        {"bf16 to_double", [t] { return bytes_of(embed::to_double(t->bf16)); }},
        {"round_to_bf16", [t] { return bytes_of(embed::round_to_bf16(t->table(6, 0))); }},
        {"round_to_fp16", [] { return bytes_of(embed::round_to_fp16(1e-6)); }},
        {"make_table", [] { return bytes_of(embed::make_table(512, 64, 20260917)); }},
    };
    return ops;
}

class InAnotherMode : public testing::TestWithParam<Mode> {};

TEST_P(InAnotherMode, EveryOperationGivesTheDefaultModesBits) {
    for (const auto& [name, operation] : operations()) {
        const std::string want = operation();
        const std::string got = in_mode(GetParam(), operation);
        EXPECT_TRUE(got == want) << name << " changed in mode " << GetParam().name;
    }
}

TEST_P(InAnotherMode, EveryGoodFileLoadsToTheSameBits) {
    const embed_test::TempDir dir;
    for (const embed_test::GoodFile& good : embed_test::good_files()) {
        const auto file = dir.write(good.name, good.bytes);
        const std::string want = bytes_of(embed::load_stored_table(file, good.tensor));
        const auto stored = [&] { return bytes_of(embed::load_stored_table(file, good.tensor)); };
        EXPECT_TRUE(in_mode(GetParam(), stored) == want) << good.name << " loaded differently in " << GetParam().name;
        const auto widened = [&] { return bytes_of(embed::load_table(file, good.tensor)); };
        EXPECT_TRUE(in_mode(GetParam(), widened) == bytes_of(good.expected))
            << good.name << " widened differently in " << GetParam().name;
    }
}

INSTANTIATE_TEST_SUITE_P(FloatMode, InAnotherMode, testing::ValuesIn(kModes),
                         [](const testing::TestParamInfo<Mode>& mode) { return std::string(mode.param.name); });

// The pool's helpers are started by whichever thread first splits a loop, and a new thread takes its
// creator's mode. Helpers started from a thread flushing subnormals must still compute in the default
// mode when a caller in the default mode hands them work.
TEST(FloatMode, HelpersStartedFromAThreadInAnotherModeComputeInTheDefaultOne) {
    const Tables& t = tables();
    const std::string want = bytes_of(embed::logits(t.table, t.hidden));
    const int workers = embed::detail::worker_count();
    embed::detail::set_worker_count(2);  // the next split starts a fresh pool of two
    ASSERT_GE(embed::detail::thread_count(t.table.rows(), t.table.cols()), 2) << "the table would not be split";
    in_mode(kModes[0], [] {
        embed::detail::parallel_for(Index{1} << 20, 1, [](Index, Index) {});  // starts the pool
        return 0;
    });
    const std::string got = bytes_of(embed::logits(t.table, t.hidden));
    embed::detail::set_worker_count(workers);
    EXPECT_TRUE(got == want) << "helpers started while flushing subnormals changed the scores";
}

#else

TEST(FloatMode, IsOnlyCheckedOnX86_64) { GTEST_SKIP() << "elsewhere the library leaves the caller's mode as it is"; }

#endif

}  // namespace
