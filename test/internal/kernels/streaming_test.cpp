// The streaming settings (lib/kernels/streaming.hpp) that embed_bench --sweep tries:
// a bad setting is refused and changes nothing, and under every setting the
// public functions give the explicit loops' values, on tables large enough to
// be split between threads. Also where the row loops ask for memory ahead
// (row_loops::StreamAhead), which no result can show.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/precision.hpp>
#include <embed/python_random.hpp>
#include <embed/scaling.hpp>
#include <embed/table.hpp>

#include "defaults_after.hpp"
#include "documented_order.hpp"
#include "kernels/gather.hpp"
#include "threads/parallel.hpp"
#include "kernels/row_loops.hpp"
#include "kernels/streaming.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::detail::PrefetchHint;
using embed::detail::StreamSettings;
using embed_test::DefaultsAfter;

// Expects set_stream_settings(bad) to throw invalid_argument whose message holds `names`, and to change nothing.
void expect_refused(const StreamSettings& bad, const std::string& names) {
    const StreamSettings before = embed::detail::stream_settings();
    try {
        embed::detail::set_stream_settings(bad);
        FAIL() << "accepted a setting that names " << names;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
    EXPECT_EQ(embed::detail::stream_settings(), before);
}

TEST(StreamSettings, RefusesValuesOutsideTheirRangesAndKeepsTheOldOnes) {
    const DefaultsAfter restore;
    StreamSettings other = embed::detail::default_stream_settings();
    other.row_hint = PrefetchHint::t2;
    other.gather_rows_ahead = 5;
    embed::detail::set_stream_settings(other);
    ASSERT_EQ(embed::detail::stream_settings(), other);

    StreamSettings bad = other;
    bad.row_distance_bytes = -64;
    expect_refused(bad, "row_distance_bytes -64 is outside [0, 65536]");
    bad = other;
    bad.row_distance_bytes = 65537;
    expect_refused(bad, "65537");
    bad = other;
    bad.wide_row_distance_bytes = 70000;
    expect_refused(bad, "wide_row_distance_bytes 70000 is outside [0, 65536]");
    bad = other;
    bad.rows_per_step = 3;
    expect_refused(bad, "rows_per_step 3 is not one of 1, 2, 4");
    bad = other;
    bad.wide_rows_per_step = 0;
    expect_refused(bad, "wide_rows_per_step 0 is not one of 1, 2, 4");
    bad = other;
    bad.gather_rows_ahead = 65;
    expect_refused(bad, "gather_rows_ahead 65 is outside [0, 64]");
    bad = other;
    bad.stream_results_above_bytes = -1;
    expect_refused(bad, "stream_results_above_bytes -1 is outside [0, 1099511627776]");
    bad = other;
    bad.row_hint = static_cast<PrefetchHint>(4);
    expect_refused(bad, "row_hint 4 is outside [-1, 3]");
    bad = other;
    bad.gather_hint = static_cast<PrefetchHint>(-2);
    expect_refused(bad, "gather_hint -2 is outside [-1, 3]");
    for (const PrefetchHint hint : {PrefetchHint::t2, PrefetchHint::t1}) {
        const std::string why = std::to_string(static_cast<int>(hint)) + " is not one of none (-1), nta (0), t0 (3)";
        bad = other;
        bad.float32_hint = hint;
        expect_refused(bad, "float32_hint " + why);
        bad = other;
        bad.bfloat16_hint = hint;
        expect_refused(bad, "bfloat16_hint " + why);
    }
}

TEST(StreamSettings, TheGatherAsksNothingForATableThatStaysInTheCaches) {
    StreamSettings setting = embed::detail::default_stream_settings();
    setting.gather_hint = PrefetchHint::t1;
    EXPECT_EQ(embed::detail::gather_hint_for(512 * 64 * 8, setting), PrefetchHint::none);
    EXPECT_EQ(embed::detail::gather_hint_for(Index{8} << 20, setting), PrefetchHint::none);
    EXPECT_EQ(embed::detail::gather_hint_for((Index{8} << 20) + 1, setting), PrefetchHint::t1);
}

// The row loops' callers (logits, the neighbour searches) ask the same question of the whole table.
TEST(StreamSettings, TablesUpTo8MiBStayInTheCachesAndLargerOnesStreamFromMemory) {
    EXPECT_FALSE(embed::detail::streams_from_memory(512 * 64 * 8));
    EXPECT_FALSE(embed::detail::streams_from_memory(Index{8} << 20));
    EXPECT_TRUE(embed::detail::streams_from_memory((Index{8} << 20) + 1));
    EXPECT_TRUE(embed::detail::streams_from_memory(Index{50257} * 768 * 8));
}

// A hidden vector of up to 2048 doubles (16 KiB) takes the rows per step, a wider one the wide rows per step.
TEST(StreamSettings, VectorsPast16KiBReadTheWideRowsPerStep) {
    StreamSettings setting = embed::detail::default_stream_settings();
    setting.rows_per_step = 2;
    setting.wide_rows_per_step = 4;
    EXPECT_EQ(embed::detail::rows_per_step_for(setting, 1), 2);
    EXPECT_EQ(embed::detail::rows_per_step_for(setting, 768), 2);
    EXPECT_EQ(embed::detail::rows_per_step_for(setting, 2048), 2);
    EXPECT_EQ(embed::detail::rows_per_step_for(setting, 2049), 4);
    EXPECT_EQ(embed::detail::rows_per_step_for(setting, 4096), 4);
}

// The same split for the distance each row's stream asks ahead.
TEST(StreamSettings, VectorsPast16KiBAskTheWideDistanceAhead) {
    StreamSettings setting = embed::detail::default_stream_settings();
    setting.row_distance_bytes = 4096;
    setting.wide_row_distance_bytes = 1024;
    EXPECT_EQ(embed::detail::row_distance_for(setting, 768), 4096);
    EXPECT_EQ(embed::detail::row_distance_for(setting, 2048), 4096);
    EXPECT_EQ(embed::detail::row_distance_for(setting, 2049), 1024);
    EXPECT_EQ(embed::detail::row_distance_for(setting, 4096), 1024);
}

// With halve_distance_near_row, the double loops' rows that start on lines ask half as far when the distance
// lands within an eighth of itself of the next row: at 8192 B, rows of more than 7168 and less than 9216 bytes.
// Rows off their lines, wide vectors (the wide distance), settings without the flag and the float32 and
// bfloat16 loops (row_distance_for) keep it. The band's edges (897 and 1151 doubles) are rows no table
// starts on lines (not whole lines of 8 doubles): they pin the band itself, which the caller's on-lines
// test then narrows to 904 ... 1144.
TEST(StreamSettings, ADistanceNearOneRowIsHalvedForDoubleRowsOnLinesWhenAsked) {
    using embed::detail::double_row_distance_for;
    StreamSettings setting = embed::detail::default_stream_settings();
    setting.row_distance_bytes = 8192;
    setting.wide_row_distance_bytes = 2048;
    setting.halve_distance_near_row = true;
    const std::pair<Index, Index> rows[] = {{768, 8192},  {896, 8192},  {897, 4096},  {1016, 4096}, {1024, 4096},
                                            {1032, 4096}, {1151, 4096}, {1152, 8192}, {2048, 8192}, {2049, 2048}};
    for (const auto& [dim, distance] : rows) {
        EXPECT_EQ(double_row_distance_for(setting, dim, true), distance) << "rows of " << dim;
        EXPECT_EQ(double_row_distance_for(setting, dim, false), dim > 2048 ? 2048 : 8192) << dim;
        EXPECT_EQ(embed::detail::row_distance_for(setting, dim), dim > 2048 ? 2048 : 8192) << dim;
    }
    setting.row_distance_bytes = 4096;  // 4096 B lands near rows of 3585 to 4607 bytes
    EXPECT_EQ(double_row_distance_for(setting, 512, true), 2048);
    EXPECT_EQ(double_row_distance_for(setting, 1024, true), 4096);
    setting.row_distance_bytes = 8192;
    setting.halve_distance_near_row = false;
    for (const auto& [dim, distance] : rows) {
        EXPECT_EQ(double_row_distance_for(setting, dim, true), dim > 2048 ? 2048 : 8192) << dim;
    }
}

// Rows start on lines when the table does and a row is whole lines long.
TEST(StreamSettings, RowsStartOnLinesWhenTheTableAndTheRowLengthDo) {
    alignas(64) static const double values[16] = {};
    EXPECT_TRUE(embed::detail::rows_start_on_lines(values, 64));
    EXPECT_TRUE(embed::detail::rows_start_on_lines(values, 8192));
    EXPECT_FALSE(embed::detail::rows_start_on_lines(values, 8200));
    EXPECT_FALSE(embed::detail::rows_start_on_lines(values + 2, 8192));  // a numpy array's 16 bytes past a line
    EXPECT_FALSE(embed::detail::rows_start_on_lines(values + 1, 64));
}

TEST(StreamSettings, NamesEveryHint) {
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::none), "none");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::nta), "nta");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t2), "t2");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t1), "t1");
    EXPECT_STREQ(embed::detail::hint_name(PrefetchHint::t0), "t0");
}

// CPUs with AVX-512 read one row per step 4 KiB ahead (8 KiB on Zen 5, whose double loops halve it about one
// row ahead: the test above), AMD's with the non-temporal hint and
// the others' with prefetcht0; CPUs without AVX-512 read four rows per step with no software prefetch, and
// every kind reads four rows of a wide vector per step, each row's stream asking 2 KiB ahead on Zen 5 and as
// far as a narrow row elsewhere (lib/kernels/streaming.cpp says why). The gather asks with prefetcht2 four rows ahead
// on Zen 4, with prefetchnta one row ahead on Zen 5 and with prefetcht0 two rows ahead on the others. The
// float32 loops ask for nothing ahead on Zen 4 and with the non-temporal hint on Zen 5, the bfloat16 loops
// with the non-temporal hint on both; both use prefetcht0 on the others. Every kind's settings are ones
// set_stream_settings accepts, and each gives the documented order's bits: see the test below, which runs
// every setting, and kernels_isa_test.
TEST(StreamSettings, DefaultsDifferInHowTheRowLoopsStreamBetweenKindsOfCpu) {
    DefaultsAfter restore;
    using embed::detail::CpuKind;
    const StreamSettings zen5 = embed::detail::default_stream_settings_for(CpuKind::amd_zen5_or_later);
    const StreamSettings zen4 = embed::detail::default_stream_settings_for(CpuKind::amd_zen4);
    const StreamSettings intel = embed::detail::default_stream_settings_for(CpuKind::other_with_avx512);
    const StreamSettings older = embed::detail::default_stream_settings_for(CpuKind::without_avx512);
    for (const StreamSettings& s : {zen5, zen4}) EXPECT_EQ(s.row_hint, PrefetchHint::nta);
    EXPECT_EQ(intel.row_hint, PrefetchHint::t0);
    EXPECT_EQ(zen5.float32_hint, PrefetchHint::nta);
    EXPECT_EQ(zen4.float32_hint, PrefetchHint::none);
    for (const StreamSettings& s : {zen5, zen4}) EXPECT_EQ(s.bfloat16_hint, PrefetchHint::nta);
    for (const StreamSettings& s : {intel, older}) {
        EXPECT_EQ(s.float32_hint, PrefetchHint::t0);
        EXPECT_EQ(s.bfloat16_hint, PrefetchHint::t0);
    }
    for (const StreamSettings& s : {zen5, zen4, intel}) EXPECT_EQ(s.rows_per_step, 1);
    EXPECT_EQ(zen5.row_distance_bytes, 8192);
    EXPECT_TRUE(zen5.halve_distance_near_row);
    for (const StreamSettings& s : {zen4, intel, older}) EXPECT_FALSE(s.halve_distance_near_row);
    for (const StreamSettings& s : {zen4, intel}) EXPECT_EQ(s.row_distance_bytes, 4096);
    EXPECT_EQ(zen5.wide_row_distance_bytes, 2048);
    for (const StreamSettings& s : {zen4, intel, older}) EXPECT_EQ(s.wide_row_distance_bytes, s.row_distance_bytes);
    EXPECT_EQ(older.row_hint, PrefetchHint::none);
    EXPECT_EQ(older.rows_per_step, 4);
    EXPECT_EQ(older.row_distance_bytes, 8192);
    for (const StreamSettings& s : {zen5, zen4, intel, older}) EXPECT_EQ(s.wide_rows_per_step, 4);
    EXPECT_EQ(zen4.gather_hint, PrefetchHint::t2);
    EXPECT_EQ(zen4.gather_rows_ahead, 4);
    EXPECT_EQ(zen5.gather_hint, PrefetchHint::nta);
    EXPECT_EQ(zen5.gather_rows_ahead, 1);
    for (const StreamSettings& s : {intel, older}) {
        EXPECT_EQ(s.gather_hint, PrefetchHint::t0);
        EXPECT_EQ(s.gather_rows_ahead, 2);
    }
    EXPECT_EQ(zen5.stream_results_above_bytes, Index{32} << 20);
    for (const StreamSettings& s : {zen4, intel, older}) EXPECT_EQ(s.stream_results_above_bytes, Index{16} << 20);
    for (const StreamSettings& s : {zen5, zen4, intel, older}) {
        embed::detail::set_stream_settings(s);
        EXPECT_EQ(embed::detail::stream_settings(), s);
    }
}

// AVX-512 first, then the vendor, then (AMD only) the family: 25 is Zen 4's (Zen 3's too, without AVX-512).
TEST(StreamSettings, TheKindFollowsAvx512TheVendorAndAmdsFamily) {
    using embed::detail::CpuKind;
    using embed::detail::cpu_kind_of;
    EXPECT_EQ(cpu_kind_of(false, true, 25), CpuKind::without_avx512);
    EXPECT_EQ(cpu_kind_of(false, false, 6), CpuKind::without_avx512);
    EXPECT_EQ(cpu_kind_of(true, false, 6), CpuKind::other_with_avx512);
    EXPECT_EQ(cpu_kind_of(true, false, 26), CpuKind::other_with_avx512);
    EXPECT_EQ(cpu_kind_of(true, true, 25), CpuKind::amd_zen4);
    EXPECT_EQ(cpu_kind_of(true, true, 26), CpuKind::amd_zen5_or_later);
    EXPECT_EQ(cpu_kind_of(true, true, 27), CpuKind::amd_zen5_or_later);
}

// This CPU's "cpu family" as Linux reports it in /proc/cpuinfo; 0 where there is none.
int family_from_proc_cpuinfo() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("cpu family", 0) == 0) return std::stoi(line.substr(line.find(':') + 1));
    }
    return 0;
}

// The kind of this CPU is read off it with the compiler's own CPU checks and CPUID; asked here independently,
// the family from the kernel's /proc/cpuinfo.
TEST(StreamSettings, TheKindOfThisCpuIsTheKindOfWhatItReports) {
#if defined(__x86_64__)
    const bool has_avx512 = __builtin_cpu_supports("avx512f");
    const bool is_amd = __builtin_cpu_is("amd");
#else
    const bool has_avx512 = false;
    const bool is_amd = false;
#endif
    EXPECT_EQ(embed::detail::this_cpu_kind(),
              embed::detail::cpu_kind_of(has_avx512, is_amd, family_from_proc_cpuinfo()));
}

// Sets the environment variable `variable` to each case's text and expects default_stream_settings() to
// hold the case's value in `field` and this CPU's defaults everywhere else; unset, the defaults throughout.
template <class Value>
void expect_variable_forces(const char* variable, Value StreamSettings::*field,
                            std::initializer_list<std::pair<const char*, Value>> cases) {
    const StreamSettings own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind());
    for (const auto& [text, expected] : cases) {
        ASSERT_EQ(setenv(variable, text, 1), 0);
        StreamSettings forced = embed::detail::default_stream_settings();
        EXPECT_EQ(forced.*field, expected) << variable << "=" << text;
        forced.*field = own.*field;
        EXPECT_EQ(forced, own) << variable << "=" << text << " changed another setting";
    }
    ASSERT_EQ(unsetenv(variable), 0);
    EXPECT_EQ(embed::detail::default_stream_settings(), own);
}

TEST(StreamSettings, EmbedRowsPerStepForcesTheRowsAndUnknownValuesAreIgnored) {
    const Index own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).rows_per_step;
    expect_variable_forces<Index>("EMBED_ROWS_PER_STEP", &StreamSettings::rows_per_step,
                                  {{"1", 1}, {"2", 2}, {"4", 4}, {"3", own}, {"", own}, {"04", own}, {"4 ", own}});
}

TEST(StreamSettings, EmbedWideRowsPerStepForcesTheWideRowsAndUnknownValuesAreIgnored) {
    const Index own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).wide_rows_per_step;
    expect_variable_forces<Index>("EMBED_WIDE_ROWS_PER_STEP", &StreamSettings::wide_rows_per_step,
                                  {{"1", 1}, {"2", 2}, {"4", 4}, {"8", own}, {"", own}, {"01", own}});
}

// A forced distance leaves halve_distance_near_row as it was (EMBED_HALVE_DISTANCE_NEAR_ROW=0 turns it off).
TEST(StreamSettings, EmbedPrefetchDistanceForcesTheDistanceAndUnknownValuesAreIgnored) {
    const StreamSettings own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind());
    expect_variable_forces<Index>("EMBED_PREFETCH_DISTANCE", &StreamSettings::row_distance_bytes,
                                  {{"1024", 1024}, {"2048", 2048}, {"4096", 4096}, {"8192", 8192},
                                   {"512", own.row_distance_bytes}, {"", own.row_distance_bytes},
                                   {"4096 ", own.row_distance_bytes}, {"04096", own.row_distance_bytes}});
    expect_variable_forces<Index>("EMBED_WIDE_PREFETCH_DISTANCE", &StreamSettings::wide_row_distance_bytes,
                                  {{"1024", 1024}, {"2048", 2048}, {"4096", 4096}, {"8192", 8192},
                                   {"16384", own.wide_row_distance_bytes}, {"", own.wide_row_distance_bytes},
                                   {"1k", own.wide_row_distance_bytes}});
}

TEST(StreamSettings, EmbedHalveDistanceNearRowTakesZeroOrOne) {
    const bool own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).halve_distance_near_row;
    expect_variable_forces<bool>("EMBED_HALVE_DISTANCE_NEAR_ROW", &StreamSettings::halve_distance_near_row,
                                 {{"0", false}, {"1", true}, {"true", own}, {"", own}, {"2", own}, {"01", own}});
}

TEST(StreamSettings, EmbedPrefetchForcesTheRowHintAndUnknownNamesAreIgnored) {
    const PrefetchHint own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).row_hint;
    expect_variable_forces<PrefetchHint>("EMBED_PREFETCH", &StreamSettings::row_hint,
                                         {{"none", PrefetchHint::none},
                                          {"nta", PrefetchHint::nta},
                                          {"t2", PrefetchHint::t2},
                                          {"t1", PrefetchHint::t1},
                                          {"t0", PrefetchHint::t0},
                                          {"T0", own},
                                          {"", own},
                                          {"t3", own}});
}

// The float32 and bfloat16 loops are built for three hints only, so the other hints' names are ignored too.
TEST(StreamSettings, EmbedFloat32AndBfloat16PrefetchForceTheirHintToNoneNtaOrT0Only) {
    const StreamSettings own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind());
    expect_variable_forces<PrefetchHint>("EMBED_FLOAT32_PREFETCH", &StreamSettings::float32_hint,
                                         {{"none", PrefetchHint::none},
                                          {"nta", PrefetchHint::nta},
                                          {"t0", PrefetchHint::t0},
                                          {"t1", own.float32_hint},
                                          {"t2", own.float32_hint},
                                          {"NTA", own.float32_hint},
                                          {"", own.float32_hint}});
    expect_variable_forces<PrefetchHint>("EMBED_BFLOAT16_PREFETCH", &StreamSettings::bfloat16_hint,
                                         {{"none", PrefetchHint::none},
                                          {"nta", PrefetchHint::nta},
                                          {"t0", PrefetchHint::t0},
                                          {"t1", own.bfloat16_hint},
                                          {"t2", own.bfloat16_hint},
                                          {"", own.bfloat16_hint}});
}

// Every row of EMBED_STREAM_SETTINGS: its variable, set to each value it takes, forces its member alone (to
// the value times the variable's unit), and set_stream_settings accepts the result.
TEST(StreamSettings, EveryVariableForcesItsOwnMemberAlone) {
    const DefaultsAfter restore;
    const StreamSettings own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind());
    for (const embed::detail::StreamSettingRow& row : embed::detail::kStreamSettings) {
        for (const Index value : row.values) {
            const std::string text = embed::detail::value_text(row, value);
            ASSERT_EQ(setenv(row.variable, text.c_str(), 1), 0);
            StreamSettings forced = embed::detail::default_stream_settings();
            EXPECT_EQ(row.get(forced), value * row.unit) << row.variable << "=" << text;
            embed::detail::set_stream_settings(forced);
            EXPECT_EQ(embed::detail::stream_settings(), forced) << row.variable << "=" << text;
            row.set(forced, row.get(own));
            EXPECT_EQ(forced, own) << row.variable << "=" << text << " changed another member than " << row.member;
        }
        ASSERT_EQ(unsetenv(row.variable), 0);
    }
    EXPECT_EQ(embed::detail::default_stream_settings(), own);
}

// API.md's table of variables lists exactly the rows of EMBED_STREAM_SETTINGS, in order, each as
// "| `VARIABLE` | meaning | `value`, `value` |" (the values as the variable takes them).
TEST(StreamSettings, TheApiDocumentListsExactlyTheSettingsTable) {
    std::ifstream api(EMBED_API_MD);
    ASSERT_TRUE(api) << EMBED_API_MD;
    std::vector<std::string> documented;
    std::string line;
    while (std::getline(api, line)) {
        if (line.rfind("| `EMBED_", 0) == 0 && line.rfind("| `EMBED_NUM_THREADS`", 0) != 0) documented.push_back(line);
    }
    std::vector<std::string> expected;
    for (const embed::detail::StreamSettingRow& row : embed::detail::kStreamSettings) {
        std::string values;
        for (const Index value : row.values) {
            values += (values.empty() ? "`" : ", `") + embed::detail::value_text(row, value) + "`";
        }
        expected.push_back(std::string("| `") + row.variable + "` | " + row.meaning + " | " + values + " |");
    }
    EXPECT_EQ(documented, expected);
}

TEST(StreamSettings, EmbedGatherPrefetchForcesTheGatherHintAndUnknownNamesAreIgnored) {
    const PrefetchHint own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).gather_hint;
    expect_variable_forces<PrefetchHint>("EMBED_GATHER_PREFETCH", &StreamSettings::gather_hint,
                                         {{"none", PrefetchHint::none},
                                          {"nta", PrefetchHint::nta},
                                          {"t2", PrefetchHint::t2},
                                          {"t1", PrefetchHint::t1},
                                          {"t0", PrefetchHint::t0},
                                          {"T2", own},
                                          {"", own},
                                          {"t3", own}});
}

TEST(StreamSettings, EmbedGatherRowsAheadForcesTheRowsAheadAndUnknownValuesAreIgnored) {
    const Index own = embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).gather_rows_ahead;
    expect_variable_forces<Index>("EMBED_GATHER_ROWS_AHEAD", &StreamSettings::gather_rows_ahead,
                                  {{"1", 1}, {"2", 2}, {"4", 4}, {"8", 8}, {"3", own}, {"16", own}, {"0", own},
                                   {"", own}, {"08", own}});
}

// Given in MiB, kept in bytes; 0 streams every result.
TEST(StreamSettings, EmbedStreamResultsAboveMibForcesTheBoundAndUnknownValuesAreIgnored) {
    const Index own =
        embed::detail::default_stream_settings_for(embed::detail::this_cpu_kind()).stream_results_above_bytes;
    expect_variable_forces<Index>("EMBED_STREAM_RESULTS_ABOVE_MIB", &StreamSettings::stream_results_above_bytes,
                                  {{"0", 0}, {"8", Index{8} << 20}, {"16", Index{16} << 20}, {"32", Index{32} << 20},
                                   {"64", Index{64} << 20}, {"12", own}, {"", own}, {"32MiB", own}, {"016", own}});
}

// A result streams past the bound, whatever the bound; between 8 MiB and a larger bound only the rows that do
// not line up with the table's stream; up to 8 MiB (and the bound) nothing does.
TEST(StreamSettings, TheGatherStreamsResultsPastTheBoundAndMisplacedRowsPast8MiB) {
    const DefaultsAfter restore;
    using embed::detail::ResultStores;
    using embed::detail::result_stores_for;
    constexpr Index kMiB = Index{1} << 20;
    StreamSettings setting = embed::detail::default_stream_settings();
    for (const Index bound : {Index{0}, 8 * kMiB, 16 * kMiB, 32 * kMiB}) {
        setting.stream_results_above_bytes = bound;
        embed::detail::set_stream_settings(setting);
        EXPECT_EQ(result_stores_for(bound + 1), ResultStores::streamed) << bound;
        if (bound > 8 * kMiB) {
            EXPECT_EQ(result_stores_for(bound), ResultStores::streamed_where_lines_differ) << bound;
            EXPECT_EQ(result_stores_for(8 * kMiB + 1), ResultStores::streamed_where_lines_differ) << bound;
        }
        if (bound >= 8 * kMiB) {
            EXPECT_EQ(result_stores_for(8 * kMiB), ResultStores::ordinary) << bound;
        }
    }
}

// A table past the size up to which the gather asks for nothing (8 MiB), at
// d = 72 (9 lines a row), at 2 threads: every setting's loops run in several
// pieces, and the gather uses the setting's hint.
TEST(StreamSettings, EverySettingGivesTheExplicitLoopsValues) {
    const DefaultsAfter restore;
    embed::detail::set_worker_count(2);
    const Index dim = 72;
    const Index vocab = (Index{1} << 20) / dim + 5;
    const Table table = embed::make_table(vocab, dim, 11);
    ASSERT_GT(embed::detail::piece_count(vocab, dim), 1);
    embed::Vector hidden(dim);
    for (Index c = 0; c < dim; ++c) hidden[c] = 0.25 * static_cast<double>(c % 5) - 0.5;
    std::vector<Index> ids;
    for (Index i = 0; i < 4 * embed::detail::kMinWorkPerPiece / dim; ++i) ids.push_back((i * 7919) % vocab);
    ASSERT_GT(embed::detail::piece_count(static_cast<Index>(ids.size()), dim), 1);

    for (const int hint : {-1, 0, 1, 2, 3}) {
        for (const Index step : {1, 2, 4}) {
            StreamSettings setting = embed::detail::default_stream_settings();
            setting.row_hint = setting.gather_hint = static_cast<PrefetchHint>(hint);
            setting.rows_per_step = step;
            setting.row_distance_bytes = step == 1 ? dim * 8 : 512 * step;
            setting.halve_distance_near_row = step == 1;  // one row ahead, so halved: 288 B
            setting.gather_rows_ahead = step - 1;
            embed::detail::set_stream_settings(setting);
            ASSERT_EQ(embed::detail::gather_hint_for(table.size() * Index{sizeof(double)}, setting),
                      setting.gather_hint);
            const std::string where = std::string("hint ") + embed::detail::hint_name(setting.row_hint) + " step " +
                                      std::to_string(step);

            const embed::Vector scores = embed::logits(table, hidden);
            for (Index t = 0; t < vocab; ++t) {
                const embed::Vector row = table.row(t).transpose();
                ASSERT_EQ(scores[t], embed_test::dot_in_documented_order(row.data(), hidden.data(), dim))
                    << where << " token " << t;
            }
            const Table rows = embed::lookup(table, ids);
            const Table scaled = embed::scaled_lookup(table, ids, dim);
            const double factor = std::sqrt(static_cast<double>(dim));
            for (std::size_t i = 0; i < ids.size(); ++i) {
                for (Index c = 0; c < dim; ++c) {
                    const double value = table(ids[i], c);
                    ASSERT_EQ(rows(static_cast<Index>(i), c), value) << where << " id " << ids[i];
                    ASSERT_EQ(scaled(static_cast<Index>(i), c), value * factor) << where << " id " << ids[i];
                }
            }
        }
    }
}

// The float32 and bfloat16 gathers follow the same settings: tables past 8 MiB
// of their own bytes, at 2 threads, under every hint and rows ahead, copy
// the stored values as they are and widen them for scaled_lookup.
template <class Narrowed>
void expect_every_setting_gathers(const Narrowed& table, const std::vector<Index>& ids, const char* type) {
    using Scalar = typename Narrowed::Scalar;
    const Index dim = table.cols();
    const double factor = std::sqrt(static_cast<double>(dim));
    for (const int hint : {-1, 0, 1, 2, 3}) {
        for (const Index ahead : {0, 1, 2, 5}) {
            StreamSettings setting = embed::detail::default_stream_settings();
            setting.gather_hint = static_cast<PrefetchHint>(hint);
            setting.gather_rows_ahead = ahead;
            embed::detail::set_stream_settings(setting);
            ASSERT_EQ(embed::detail::gather_hint_for(table.size() * Index{sizeof(Scalar)}, setting),
                      setting.gather_hint);
            const std::string where = std::string(type) + " hint " + embed::detail::hint_name(setting.gather_hint) +
                                      " ahead " + std::to_string(ahead);
            const Narrowed rows = embed::lookup(table, ids);
            const Table scaled = embed::scaled_lookup(table, ids, dim);
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const auto r = static_cast<Index>(i);
                ASSERT_EQ(std::memcmp(rows.row(r).data(), table.row(ids[i]).data(),
                                      static_cast<std::size_t>(dim) * sizeof(Scalar)),
                          0)
                    << where << " id " << ids[i];
                for (Index c = 0; c < dim; ++c) {
                    ASSERT_EQ(scaled(r, c), static_cast<double>(table(ids[i], c)) * factor)
                        << where << " id " << ids[i] << " column " << c;
                }
            }
        }
    }
}

TEST(StreamSettings, EverySettingGathersNarrowTablesAsStored) {
    const DefaultsAfter restore;
    embed::detail::set_worker_count(2);
    const Index dim = 72;
    constexpr Index kCachedBytes = Index{8} << 20;
    const Table for_f32 = embed::make_table(kCachedBytes / (dim * 4) + 5, dim, 12);
    const Table for_bf16 = embed::make_table(kCachedBytes / (dim * 2) + 5, dim, 13);
    std::vector<Index> ids;
    for (Index i = 0; i < 4 * embed::detail::kMinWorkPerPiece / dim; ++i) ids.push_back((i * 7919) % for_f32.rows());
    ASSERT_GT(embed::detail::piece_count(static_cast<Index>(ids.size()), dim), 1);
    expect_every_setting_gathers(embed::to_f32(for_f32), ids, "float32");
    expect_every_setting_gathers(embed::to_bf16(for_bf16), ids, "bfloat16");
}

// The byte offset, from a group's first row, of the value `ahead` values past
// (stream, column) along the stream: stream q reads rows q, q + R, q + 2R, ...
// Walked one value at a time.
Index walked_offset(Index stream, Index column, Index ahead, Index rows_per_step, Index dim, Index value_bytes) {
    Index row = stream;
    for (Index n = 0; n < ahead; ++n) {
        if (++column == dim) {
            column = 0;
            row += rows_per_step;
        }
    }
    return (row * dim + column) * value_bytes;
}

// Checks StreamAhead<R> over a row group of `dim` values read `step` columns at a time from `start`.
template <Index R>
void expect_stream_ahead_walks(Index dim, Index start, Index step, Index distance, Index value_bytes) {
    embed::detail::row_loops::StreamAhead<R> ahead(start, dim, static_cast<std::uintptr_t>(distance), value_bytes);
    for (Index column = start; column + step <= dim; column += step) {
        for (Index q = 0; q < R; ++q) {
            ASSERT_EQ(static_cast<Index>(ahead.bytes(q)),
                      walked_offset(q, column, distance / value_bytes, R, dim, value_bytes))
                << "R " << R << " dim " << dim << " column " << column << " distance " << distance << " bytes "
                << value_bytes << " stream " << q;
        }
        ahead.advance(step);
    }
}

TEST(StreamAhead, AsksForTheValueTheDistanceAheadAlongEachStream) {
    for (const Index dim : {8, 32, 40, 768}) {
        for (const Index distance : {0, 64, 1000, 8192}) {
            for (const Index value_bytes : {2, 4, 8}) {
                const Index line_values = 64 / value_bytes;  // the narrow loops' step
                for (const Index step : {Index{8}, line_values}) {
                    if (step > dim) continue;
                    for (const Index start : {Index{0}, Index{3}}) {
                        expect_stream_ahead_walks<1>(dim, start, step, distance, value_bytes);
                        expect_stream_ahead_walks<2>(dim, start, step, distance, value_bytes);
                        expect_stream_ahead_walks<4>(dim, start, step, distance, value_bytes);
                    }
                }
            }
        }
    }
}

}  // namespace
