// The built embed_report, run as a user would in a fresh directory: the
// golden files, refusals (exit 2, one line, old report untouched), write
// failures (exit 1) and the all-or-nothing promise.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/embed.hpp>

#include "fresh_dir.hpp"

namespace {

namespace fs = std::filesystem;
using embed::report::FreshDir;
using testing::HasSubstr;

const std::vector<std::string> kFiles = {"embed_report.html", "embed_report.json", "embed_report.md", "embed_report.svg"};  // sorted, as entries() lists them

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

struct ToolRun {
    int status = -1;
    std::string out;
    std::string err;
};

// Runs the tool in dir with the given arguments (each single-quoted for the shell).
ToolRun run_tool(const fs::path& dir, const std::vector<std::string>& args) {
    std::string command = "cd '" + dir.string() + "' && '" EMBED_REPORT_EXE "'";
    for (const auto& arg : args) command += " '" + arg + "'";
    const fs::path out = dir / ".stdout";
    const fs::path err = dir / ".stderr";
    command += " > '" + out.string() + "' 2> '" + err.string() + "'";
    const int raw = std::system(command.c_str());
    ToolRun run{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(out), read_file(err)};
    fs::remove(out);
    fs::remove(err);
    return run;
}

std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(ReportCli, DefaultRunReproducesTheGoldenFilesByteForByte) {
    FreshDir dir;
    const ToolRun run = run_tool(dir.path(), {});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const std::string& name : kFiles) {
        EXPECT_EQ(read_file(dir.path() / name), read_file(fs::path(EMBED_GOLDEN_DIR) / name))
            << name << " differs from test/golden; if the library's arithmetic changed on purpose, say so and regenerate";
    }
    EXPECT_EQ(run.out,
              "wrote ./embed_report.json\nwrote ./embed_report.md\nwrote ./embed_report.svg\nwrote ./embed_report.html\n");
    EXPECT_EQ(run.err, "");
    EXPECT_EQ(entries(dir.path()), kFiles) << "no temporary files are left";
}

TEST(ReportCli, OutDirChoosesWhereTheFilesGo) {
    FreshDir dir;
    fs::create_directory(dir.path() / "out");
    const ToolRun run = run_tool(dir.path(), {"--out-dir", "out", "--vocab", "40", "--probe", "3"});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const std::string& name : kFiles) EXPECT_TRUE(fs::is_regular_file(dir.path() / "out" / name)) << name;
    EXPECT_THAT(run.out, HasSubstr("out/embed_report.json"));
    EXPECT_THAT(read_file(dir.path() / "out" / "embed_report.json"), HasSubstr("\"vocab\": 40,"));
}

TEST(ReportCli, ASecondRunReplacesTheReportWhole) {
    FreshDir dir;
    ASSERT_EQ(run_tool(dir.path(), {"--seed", "1"}).status, 0);
    ASSERT_EQ(run_tool(dir.path(), {}).status, 0);
    for (const std::string& name : kFiles) {
        EXPECT_EQ(read_file(dir.path() / name), read_file(fs::path(EMBED_GOLDEN_DIR) / name)) << name;
    }
}

TEST(ReportCli, HelpAndVersionExitZeroAndWriteNothing) {
    FreshDir dir;
    const ToolRun help = run_tool(dir.path(), {"--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_THAT(help.out, HasSubstr("usage: embed_report"));
    for (const char* flag : {"--out-dir", "--vocab", "--dim", "--seed", "--probe", "--k", "--pick",
                             "--stretch-factor", "--growth", "--version"}) {
        EXPECT_THAT(help.out, HasSubstr(flag));
    }
    const ToolRun version = run_tool(dir.path(), {"--version"});
    EXPECT_EQ(version.status, 0);
    EXPECT_THAT(version.out, testing::StartsWith("embed_report "));
    EXPECT_TRUE(entries(dir.path()).empty());
}

struct BadInput {
    std::vector<std::string> args;
    std::string message;  // a substring of the one stderr line
};

void PrintTo(const BadInput& bad, std::ostream* os) {
    for (const auto& arg : bad.args) *os << arg << ' ';
}

class ReportCliRefuses : public testing::TestWithParam<BadInput> {};

TEST_P(ReportCliRefuses, WithExitTwoOneLineAndThePreviousReportUntouched) {
    FreshDir dir;
    for (const std::string& name : kFiles) write_file(dir.path() / name, "previous " + name);
    const ToolRun run = run_tool(dir.path(), GetParam().args);
    EXPECT_EQ(run.status, 2);
    EXPECT_THAT(run.err, testing::StartsWith("embed_report: "));
    EXPECT_THAT(run.err, HasSubstr(GetParam().message));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "");
    for (const std::string& name : kFiles) EXPECT_EQ(read_file(dir.path() / name), "previous " + name);
    EXPECT_EQ(entries(dir.path()), kFiles) << "no temporary files are left";
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, ReportCliRefuses,
    testing::Values(BadInput{{"--probe", "512"}, "--probe 512 must be in [0, V) = [0, 512)"},
                    BadInput{{"--probe=-1"}, "--probe -1 must be in [0, V) = [0, 512)"},
                    BadInput{{"--vocab", "100"}, "--probe 137 must be in [0, V) = [0, 100)"},
                    BadInput{{"--k", "0"}, "--k 0 must be in [1, V) = [1, 512)"},
                    BadInput{{"--vocab=40", "--probe", "3", "--k", "40"}, "--k 40 must be in [1, V) = [1, 40)"},
                    BadInput{{"--pick", "5"}, "--pick 5 must be in [0, K) = [0, 5)"},
                    BadInput{{"--k", "3"}, "--pick 4 must be in [0, K) = [0, 3)"},
                    BadInput{{"--vocab", "-3"}, "--vocab -3 must be at least 2"},
                    BadInput{{"--dim", "0"}, "--dim 0 must be at least 1"},
                    BadInput{{"--growth=0"}, "--growth 0 must be at least 1"},
                    BadInput{{"--vocab", "100000", "--dim", "100000"},
                             "--vocab 100000 times --dim 100000 is more than the 2^25 = 33554432 entries"},
                    BadInput{{"--growth", "9223372036854775807"}, "past 2^63 - 1"},
                    BadInput{{"--stretch-factor", "inf"}, "--stretch-factor 'inf' is not a finite decimal number"},
                    BadInput{{"--stretch-factor=1e999"}, "--stretch-factor 1e999 is past the largest double"},
                    BadInput{{"--seed", "-1"}, "--seed -1 must be in [0, 2^64), decimal"},
                    BadInput{{"--seed", "0x10"}, "--seed '0x10' is not a decimal integer"},
                    BadInput{{"--frobnicate"}, "unknown argument '--frobnicate'"},
                    BadInput{{"--vocab", "40", "stray"}, "unknown argument 'stray'"},
                    BadInput{{"--probe"}, "--probe is missing its value"},
                    BadInput{{"--out-dir"}, "--out-dir is missing its value"},
                    BadInput{{"--out-dir", "does/not/exist"}, "--out-dir 'does/not/exist' does not exist"},
                    BadInput{{"--out-dir=embed_report.json"}, "--out-dir 'embed_report.json' is not a directory"},
                    BadInput{{"--k", "3", "--k=4"}, "--k is given more than once"},
                    BadInput{{"--table", "missing.npy"}, "--table 'missing.npy' is not an existing file"},
                    BadInput{{"--table=embed_report.json", "--probe", "0"},
                             "--table 'embed_report.json' cannot be used: "},
                    BadInput{{"--table", "embed_report.json", "--seed", "3"},
                             "--seed cannot be used with --table"}));

TEST(ReportCli, BothSpellingsOnOneLineRunAndWriteTheRequestedReport) {
    FreshDir dir;
    fs::create_directory(dir.path() / "out");
    const ToolRun run = run_tool(dir.path(), {"--out-dir=out", "--vocab", "40", "--probe=+3", "--stretch-factor=1e-400"});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string json = read_file(dir.path() / "out" / "embed_report.json");
    EXPECT_THAT(json, HasSubstr("\"vocab\": 40,"));
    EXPECT_THAT(json, HasSubstr("\"probe\": 3,"));
    EXPECT_THAT(json, HasSubstr("\"stretch_factor\": 0.0,"));
}

TEST(ReportCli, ATableFileIsReportedWithItsSourceAndNoSeed) {
    FreshDir dir;
    embed::Table table(30, 4);
    for (embed::Index i = 0; i < table.size(); ++i) table.data()[i] = static_cast<double>((i * 7) % 11) - 5.0;
    embed::save_table(dir / "t.npy", table);
    const ToolRun run = run_tool(dir.path(), {"--table=t.npy", "--probe", "3", "--k", "4", "--pick=1"});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string json = read_file(dir.path() / "embed_report.json");
    EXPECT_THAT(json, HasSubstr("\"seed\": null,\n  \"source\": {\n    \"file\": \"t.npy\",\n    \"tensor\": \"\",\n    \"precision\": \"float64\"\n  },"));
    EXPECT_THAT(json, HasSubstr("\"vocab\": 30,"));
    EXPECT_THAT(read_file(dir.path() / "embed_report.md"), HasSubstr("파일 `t.npy`에서"));
}

// A hostile file is a bad argument like any other: exit 2, the loader's reason, the previous report kept.
TEST(ReportCli, AHostileTableFileExitsTwoWithTheLoadersReasonAndWritesNothing) {
    FreshDir dir;
    for (const std::string& name : kFiles) write_file(dir.path() / name, "previous " + name);
    // A valid npy header that promises 10^9 x 10^9 float64 values, with none behind it.
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }";
    header.append(128 - 10 - header.size() - 1, ' ').push_back('\n');  // the data starts 128 bytes in
    std::string bytes = "\x93NUMPY\x01\x00";
    bytes.push_back(static_cast<char>(header.size()));
    bytes.push_back('\0');
    write_file(dir.path() / "huge.npy", bytes + header);
    const ToolRun run = run_tool(dir.path(), {"--table", "huge.npy", "--probe", "0"});
    EXPECT_EQ(run.status, 2);
    EXPECT_THAT(run.err, testing::StartsWith("embed_report: --table 'huge.npy' cannot be used: huge.npy: "));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    for (const std::string& name : kFiles) EXPECT_EQ(read_file(dir.path() / name), "previous " + name);
}

TEST(ReportCli, HelpAfterABadFlagStillPrintsHelpAndWritesNothing) {
    FreshDir dir;
    const ToolRun run = run_tool(dir.path(), {"--vocab", "abc", "--frobnicate", "--help"});
    EXPECT_EQ(run.status, 0);
    EXPECT_THAT(run.out, testing::StartsWith("usage: embed_report"));
    EXPECT_EQ(run.err, "");
    EXPECT_TRUE(entries(dir.path()).empty());
}

// When one file cannot be put in place, the others must not be either. A directory
// squatting on one file's name (each in turn) makes that file fail after all temporaries
// are complete. (Permission bits do not stop root, so this is the portable way to fail.)
TEST(ReportCli, WhenOneFileCannotBeReplacedThePreviousReportStaysWhole) {
    for (const std::string& squatted : kFiles) {
        FreshDir dir;
        for (const std::string& name : kFiles) {
            if (name != squatted) write_file(dir.path() / name, "previous " + name);
        }
        fs::create_directory(dir.path() / squatted);
        write_file(dir.path() / squatted / "keep", "x");
        const ToolRun run = run_tool(dir.path(), {});
        EXPECT_EQ(run.status, 1) << squatted;
        EXPECT_THAT(run.err, HasSubstr(squatted));
        for (const std::string& name : kFiles) {
            if (name != squatted) {
                EXPECT_EQ(read_file(dir.path() / name), "previous " + name) << squatted;
            }
        }
        EXPECT_EQ(entries(dir.path()), kFiles) << squatted << ": no temporary files are left";
    }
}

// The same failure with no previous report: the other new files must not appear without it.
TEST(ReportCli, WhenOneFileCannotBeWrittenNoneAppear) {
    for (const std::string& squatted : kFiles) {
        FreshDir dir;
        fs::create_directory(dir.path() / squatted);
        write_file(dir.path() / squatted / "keep", "x");
        const ToolRun run = run_tool(dir.path(), {});
        EXPECT_EQ(run.status, 1) << squatted;
        EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{squatted}));
    }
}

}  // namespace
