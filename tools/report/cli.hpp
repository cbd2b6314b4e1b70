#pragma once
// The command line: flags to ReportInputs, one usage text, refusals as invalid_argument.

#include <span>
#include <string>
#include <string_view>

#include "flags.hpp"
#include "report.hpp"

namespace embed::report {

/// What the command line asks for.
struct Command {
    enum class Action { run, help, version };
    Action action = Action::run;
    ReportInputs inputs;
    std::string out_dir = DEFAULT_OUT_DIR;
};

/// args excludes the program name; each flag is "--flag value" or "--flag=value". --help (-h) or --version
/// anywhere wins, the first of them, before anything else is read. Otherwise throws invalid_argument with one
/// line naming the flag, the value and what was allowed, for unknown or repeated flags, missing values,
/// malformed numbers, an --out-dir that is not an existing writable directory, and inputs validate() refuses.
Command parse_command_line(std::span<const std::string_view> args);

/// The one-line synopsis ("embed_report [--out-dir DIR] ..."), wrapped as the usage text and README show it.
std::string usage_synopsis();

/// The one usage text, built from the flag table with the defaults of ReportInputs.
std::string usage_text();

}  // namespace embed::report
