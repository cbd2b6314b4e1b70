#pragma once
// The command line: flags to ReportInputs, one usage text, refusals as invalid_argument.

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <embed/embed.hpp>
#include <embed/vocabulary.hpp>

#include "flags.hpp"
#include "report.hpp"

namespace embed::report {

/// What the command line asks for.
struct Command {
    enum class Action { run, help, version };
    Action action = Action::run;
    ReportInputs inputs;
    std::string out_dir = DEFAULT_OUT_DIR;
    std::optional<std::string> table;  // --table's FILE[:TENSOR] as given; inputs are validated once it is loaded
    std::optional<std::string> tokenizer;    // --tokenizer's PATH as given
    std::optional<std::string> probe_token;  // --probe-token's TEXT; inputs are validated once it is resolved
};

/// What a run reads besides its flags: the table (V, d) in its file's precision (none: generate one) and
/// the token names, if any.
struct CommandData {
    std::optional<StoredTable> table;
    std::optional<Vocabulary> vocabulary;
};

/// args excludes the program name; each flag is "--flag value" or "--flag=value". --help (-h) or --version
/// anywhere wins, the first of them, before anything else is read. Otherwise throws invalid_argument with one
/// line naming the flag, the value and what was allowed, for unknown or repeated flags, missing values,
/// malformed numbers, an --out-dir that is not an existing writable directory, --vocab, --dim or --seed beside
/// --table, and inputs validate() refuses (with --table, validation waits for load_command_table).
Command parse_command_line(std::span<const std::string_view> args);

/// Loads the table command.table names (FILE, or FILE:TENSOR unless FILE:TENSOR is itself a file), sets
/// the inputs' vocab and dim to its shape and their source to the file, the tensor read and its precision,
/// and validates them (unless --probe-token still has to set the probe). Returns the table (V, d) in the file's own precision (embed::load_stored_table: a
/// bfloat16 or float32 table is never widened). A file that is missing or that the loader refuses throws
/// invalid_argument with the loader's message: a bad table is a bad argument.
StoredTable load_command_table(Command& command);

/// Loads what command names (its table, as load_command_table, and its token names, see
/// load_command_vocabulary), sets the probe --probe-token names, then validates the inputs. Refusals as
/// load_command_table's (invalid_argument).
CommandData load_command_data(Command& command);

/// The one-line synopsis ("embed_report [--out-dir DIR] ..."), wrapped as the usage text and README show it.
std::string usage_synopsis();

/// The one usage text, built from the flag table with the defaults of ReportInputs.
std::string usage_text();

}  // namespace embed::report
