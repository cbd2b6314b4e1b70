#pragma once
// The report's flags in one table, read by the shared command-line frame
// (tools/common/command_line.hpp): the parser, the usage text, the refusals
// and a test of the README's flag table all read it, so a flag's name, what
// it allows and its default are written exactly once.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "command_line.hpp"
#include "report.hpp"

namespace embed::report {

/// Where the files go when --out-dir is not given.
inline constexpr const char* DEFAULT_OUT_DIR = ".";

/// The flags other code names in its messages; the table is where each is described.
inline constexpr std::string_view OUT_DIR_FLAG = "--out-dir";
inline constexpr std::string_view TABLE_FLAG = "--table";
inline constexpr std::string_view TOKENIZER_FLAG = "--tokenizer";
inline constexpr std::string_view PROBE_TOKEN_FLAG = "--probe-token";

/// What the command line asks for.
struct Command {
    using Action = tools::Request;
    Action action = Action::run;
    ReportInputs inputs;
    std::string out_dir = DEFAULT_OUT_DIR;
    std::optional<std::string> table;  // --table's FILE[:TENSOR] as given; inputs are validated once it is loaded
    std::optional<std::string> tokenizer;    // --tokenizer's PATH as given
    std::optional<std::string> probe_token;  // --probe-token's TEXT; inputs are validated once it is resolved
};

/// The values an index flag allows: [low, end), or low and up when end is empty.
struct IndexRange {
    Index low = 0;
    std::optional<Index> end;
};

/// What the report checks of a flag once every flag is read.
struct FlagRule {
    Index ReportInputs::*field = nullptr;                // index flags: the input the flag sets
    IndexRange (*range)(const ReportInputs&) = nullptr;  // index flags: allowed given the other inputs
    bool generated_only = false;  // describes a generated table, so it contradicts --table
};

/// One flag as users see it in the usage text and the README, and how it is read.
using Flag = tools::Argument<Command, FlagRule>;

/// The report's whole command line: name, version, prose and flags.
const tools::CommandLine<Command, FlagRule>& report_command_line();

/// Every flag, in the order the usage text and the README list them (--help and --version are the frame's).
std::span<const Flag> flag_table();

/// The flag called name (one of the table's).
const Flag& flag_named(std::string_view name);

/// The index flag that sets field (for messages that name it).
const Flag& flag_for(Index ReportInputs::*field);

/// The default as the usage text and the README show it ("512", "4.0", ".").
std::string default_text(const Flag& flag);

/// Throws invalid_argument naming the flag, the value and what was allowed unless the inputs make a valid run.
void validate(const ReportInputs& inputs);

}  // namespace embed::report
