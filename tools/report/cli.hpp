#pragma once
// The command line: flags to ReportInputs, one usage text, refusals as invalid_argument.

#include <span>
#include <string>
#include <string_view>

#include "report.hpp"

namespace embed::report {

/// What the command line asks for.
struct Command {
    enum class Action { run, help, version };
    Action action = Action::run;
    ReportInputs inputs;
    std::string out_dir = ".";
};

/// args excludes the program name. Throws invalid_argument with one line naming the flag, the value and what was
/// allowed, for unknown flags, missing values, malformed numbers and inputs validate() refuses.
Command parse_command_line(std::span<const std::string_view> args);

/// The one usage text, defaults filled in from ReportInputs.
std::string usage_text();

}  // namespace embed::report
