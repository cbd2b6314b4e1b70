#pragma once
// The command line: flags to ReportInputs (the frame with the report's table), the files they name.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <embed/embed.hpp>
#include <embed/vocabulary.hpp>

#include "flags.hpp"
#include "report.hpp"

namespace embed::report {

/// What a run reads besides its flags: the table (V, d) in its file's precision, a quantised one in its
/// blocks (none: generate one), and the token names, if any.
struct CommandData {
    std::optional<OpenedTable> table;
    std::optional<Vocabulary> vocabulary;
};

/// args excludes the program name; read by the shared frame (tools/common/command_line.hpp) with the
/// report's table: "--flag value" or "--flag=value"; --help (-h) or --version anywhere wins, the first of
/// them, before anything else is read (action says which). Otherwise throws invalid_argument with one line
/// naming the flag, the value and what was allowed, for unknown or repeated flags, missing values, malformed
/// numbers, an --out-dir that is not an existing writable directory, --vocab, --dim or --seed beside --table,
/// and inputs validate() refuses (with --table, validation waits for load_command_table).
Command parse_command_line(std::span<const std::string_view> args);

/// Loads the table command.table names (FILE, or FILE:TENSOR unless FILE:TENSOR is itself a file), sets
/// the inputs' vocab and dim to its shape and their source to the file, the tensor read and its precision,
/// and validates them (unless --probe-token still has to set the probe). Returns the table (V, d) as
/// embed::open_table opens it, in the file's own precision: a bfloat16 or float32 table is never widened, a
/// GGUF quantised one stays in its blocks. A file that is missing or that the loader refuses throws
/// invalid_argument with the loader's message: a bad table is a bad argument.
OpenedTable load_command_table(Command& command);

/// Loads what command names (its table, as load_command_table, and its token names, see
/// load_command_vocabulary), sets the probe --probe-token names, then validates the inputs. Refusals as
/// load_command_table's (invalid_argument).
CommandData load_command_data(Command& command);

/// The synopsis ("embed_report [--out-dir DIR] ..."), wrapped as the usage text and README show it.
std::string usage_synopsis();

/// The one usage text, built from the flag table with the defaults of ReportInputs.
std::string usage_text();

/// The report a command asks for, measured on data (the loaded table is moved in, so it is freed before
/// the files are rendered): the four files and where they go.
tools::Output run_report(const Command& command, CommandData data);

}  // namespace embed::report
