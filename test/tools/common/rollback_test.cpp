// The all-or-nothing promise where it is hardest to keep: the tools' writer has
// written every temporary file, kept a link to every previous output and
// renamed some new files into place when a rename fails. A shim preloaded into
// the built tool (fail_rename.cpp) makes the Nth rename fail, for every N; the
// earlier outputs must then be back, byte for byte, and nothing else left.

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/embed.hpp>

#include "file_bytes.hpp"
#include "tool_run.hpp"

namespace {

namespace fs = std::filesystem;
using embed_test::read_file;
using embed_test::TempDir;
using embed_test::ToolRun;
using embed_test::write_file;
using testing::HasSubstr;

// A tool, the arguments of a quick run, the input files that run needs and the files it writes, in the
// order it renames them into place.
struct Tool {
    std::string exe;
    std::vector<std::string> args;
    std::vector<std::string> outputs;
    void (*prepare)(const fs::path& dir);
};

void PrintTo(const Tool& tool, std::ostream* out) { *out << fs::path(tool.exe).filename().string(); }

void no_inputs(const fs::path&) {}

void small_table(const fs::path& dir) { embed::save_table(dir / "t.npy", embed::make_table(60, 8, 5)); }

const Tool kReport{EMBED_REPORT_EXE,
                   {"--vocab", "40", "--probe", "3"},
                   {"embed_report.json", "embed_report.md", "embed_report.svg", "embed_report.html"},
                   no_inputs};
const Tool kScan{EMBED_SCAN_EXE,
                 {"--table", "t.npy", "--reference-ids", "none"},
                 {"embed_scan.json", "embed_scan.md", "embed_scan.html"},
                 small_table};

// The run with the shim preloaded and the Nth rename failing (fail_at past the renames: none fails).
ToolRun run_failing_rename(const Tool& tool, const fs::path& dir, std::size_t fail_at) {
    return embed_test::run_tool(tool.exe, dir, tool.args,
                                {std::string("LD_PRELOAD=") + EMBED_FAIL_RENAME_SHIM,
                                 "EMBED_FAIL_RENAME_AT=" + std::to_string(fail_at),
                                 // A GCC-sanitized tool would refuse a preloaded library ahead of its runtime.
                                 "ASAN_OPTIONS=verify_asan_link_order=0"});
}

// Every entry of dir by name, sorted.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Bytes no run of the tool writes, different for each file, with a zero byte and a newline inside.
std::string previous_bytes(const std::string& name) { return "previous " + name + std::string("\0\n", 2) + name; }

class Rollback : public testing::TestWithParam<Tool> {};

// Every output has a previous version: whichever rename fails, all of them are back as they were.
TEST_P(Rollback, AFailedRenameLeavesEveryPreviousOutputByteForByte) {
    const Tool& tool = GetParam();
    for (std::size_t fail_at = 1; fail_at <= tool.outputs.size(); ++fail_at) {
        TempDir dir;
        tool.prepare(dir.path());
        for (const std::string& name : tool.outputs) write_file(dir.path() / name, previous_bytes(name));
        const std::vector<std::string> before = entries(dir.path());
        const ToolRun run = run_failing_rename(tool, dir.path(), fail_at);
        EXPECT_EQ(run.status, 1) << "rename " << fail_at << ": " << run.err;
        EXPECT_THAT(run.err, HasSubstr("cannot rename into ./" + tool.outputs[fail_at - 1] + ": Input/output error"))
            << "rename " << fail_at;
        EXPECT_EQ(run.out, "") << "rename " << fail_at;
        for (const std::string& name : tool.outputs) {
            EXPECT_EQ(read_file(dir.path() / name), previous_bytes(name)) << name << ", rename " << fail_at;
        }
        EXPECT_EQ(entries(dir.path()), before) << "rename " << fail_at << ": no temporary or new file is left";
    }
}

// Only some outputs existed: those come back, and the new ones already renamed into place go away.
TEST_P(Rollback, NewFilesWithoutAPreviousVersionAreRemovedAgain) {
    const Tool& tool = GetParam();
    for (std::size_t fail_at = 1; fail_at <= tool.outputs.size(); ++fail_at) {
        TempDir dir;
        tool.prepare(dir.path());
        for (std::size_t i = 0; i < tool.outputs.size(); i += 2) {
            write_file(dir.path() / tool.outputs[i], previous_bytes(tool.outputs[i]));
        }
        const std::vector<std::string> before = entries(dir.path());
        const ToolRun run = run_failing_rename(tool, dir.path(), fail_at);
        EXPECT_EQ(run.status, 1) << "rename " << fail_at << ": " << run.err;
        for (std::size_t i = 0; i < tool.outputs.size(); i += 2) {
            EXPECT_EQ(read_file(dir.path() / tool.outputs[i]), previous_bytes(tool.outputs[i])) << "rename " << fail_at;
        }
        EXPECT_EQ(entries(dir.path()), before) << "rename " << fail_at;
    }
}

// The shim fails only the rename it is told to: one past the last, the run writes every file.
TEST_P(Rollback, WithNoRenameFailingTheRunReplacesEveryOutput) {
    const Tool& tool = GetParam();
    TempDir dir;
    tool.prepare(dir.path());
    for (const std::string& name : tool.outputs) write_file(dir.path() / name, previous_bytes(name));
    const ToolRun run = run_failing_rename(tool, dir.path(), tool.outputs.size() + 1);
    ASSERT_EQ(run.status, 0) << run.err;
    for (const std::string& name : tool.outputs) {
        const std::string now = read_file(dir.path() / name);
        EXPECT_FALSE(now.empty()) << name;
        EXPECT_NE(now, previous_bytes(name)) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Tools, Rollback, testing::Values(kReport, kScan),
                         [](const testing::TestParamInfo<Tool>& tool) {
                             return fs::path(tool.param.exe).filename().string();
                         });

}  // namespace
