#pragma once
// Running a built command-line tool as a user would: in a directory, with
// arguments, its exit status and both output streams captured.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace embed_test {

/// The whole of a file's bytes ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

/// Writes text as the whole of a file.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// How a run ended: the exit status (-1 when the tool did not exit normally) and what it printed.
struct ToolRun {
    int status = -1;
    std::string out;
    std::string err;
};

/// Runs tool in dir with args, each single-quoted for the shell, and environment ("NAME=VALUE" each) added to
/// the tool's environment; stdout and stderr go through files in dir, removed afterwards.
inline ToolRun run_tool(const std::string& tool, const std::filesystem::path& dir,
                        const std::vector<std::string>& args, const std::vector<std::string>& environment = {}) {
    std::string command = "cd '" + dir.string() + "' && env";
    for (const auto& setting : environment) command += " '" + setting + "'";
    command += " '" + tool + "'";
    for (const auto& arg : args) command += " '" + arg + "'";
    const std::filesystem::path out = dir / ".stdout";
    const std::filesystem::path err = dir / ".stderr";
    command += " > '" + out.string() + "' 2> '" + err.string() + "'";
    const int raw = std::system(command.c_str());
    ToolRun run{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(out), read_file(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return run;
}

/// The one line of the invalid_argument that call() throws (a refused command line), or "(accepted)".
template <class Call>
std::string refusal_of(Call&& call) {
    try {
        call();
    } catch (const std::invalid_argument& error) {
        return error.what();
    }
    return "(accepted)";
}

}  // namespace embed_test
