#pragma once
// One command-line frame for every tool: a tool declares its flags as a table
// of rows (name, value placeholder, meaning, what is allowed, default, how the
// value is read into its options), and the frame does the rest the same way
// for all of them: "--flag VALUE" and "--flag=VALUE", positional arguments,
// --help (usage generated from the table) and --version, one-line refusals
// (exit 2, nothing written), the all-or-nothing output (exit 1 when it cannot
// be written) and the exit status. tools/common/README.md shows how a tool
// declares its table.

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "arguments.hpp"
#include "atomic_write.hpp"

namespace embed::tools {

/// A row's rule beyond parsing, for tools that need none.
struct NoRule {};

/// One row of a tool's table: its text, how its value is read into Options (throwing invalid_argument that
/// names the flag, the value and what was allowed; flag is this row, for its name and allowed text) and any
/// data of the tool's own about the row (Rule: a range the tool checks once every flag is read, say).
template <class Options, class Rule = NoRule>
struct Argument : ArgumentText {
    using Parse = void (*)(Options& options, const Argument& flag, std::string_view value);
    Parse parse = nullptr;
    Rule rule{};
};

/// What a command line asks for: a run, or the usage text, or the version.
enum class Request { run, help, version };

/// A tool's whole command line: its name and version, its prose and its table.
template <class Options, class Rule = NoRule>
struct CommandLine {
    std::string_view program;  // "embed_scan": the usage text's, the refusals' and --version's name
    std::string_view version;  // "0.4.0"
    std::string_view about;    // what the tool does, printed between the synopsis and the options
    std::string_view notes;    // printed after the options (may be empty)
    std::vector<Argument<Options, Rule>> arguments;  // in the order --help lists them
    /// Checks between flags, run once every argument is read (given: the names of the flags given, and
    /// "A" for positional arguments); throws invalid_argument like a row's parse. May be nullptr.
    void (*finish)(Options& options, const std::set<std::string_view>& given) = nullptr;
};

/// The syntax of one command line, before any value is read: each value with the row (index into the
/// table) it belongs to, in the order given.
struct SplitLine {
    Request request = Request::run;
    std::vector<std::pair<std::size_t, std::string_view>> values;
    std::set<std::string_view> given;  // each named argument given (flags by name, positional ones by metavar)
};

/// Splits args (without the program name) against rows. --help (-h) or --version anywhere wins, the first of
/// them, before anything else is looked at (as in GNU tools; only the exact word counts, so "--out-dir=--help"
/// is a value). Otherwise throws invalid_argument with one line for an unknown flag, a value given to a flag
/// that takes none, a missing value, a flag given twice, a positional argument too many or too few, and a
/// required flag left out.
SplitLine split_command_line(std::span<const ArgumentText* const> rows, std::span<const std::string_view> args);

/// The synopsis: "PROGRAM --table FILE[:TENSOR] [--out-dir DIR] ... [--help] [--version]", optional flags in
/// brackets, wrapped before 90 columns under the program's name.
std::string usage_synopsis(std::string_view program, std::span<const ArgumentText* const> rows);

/// The usage text --help prints: "usage: " and the synopsis, about, every row (meaning, then what is
/// allowed and the default), notes, and the exit statuses every tool shares.
std::string usage_text(std::string_view program, std::string_view about, std::string_view notes,
                       std::span<const ArgumentText* const> rows);

/// text with every line break turned into a space: a refusal is one line however its reason was worded.
std::string one_line(std::string_view text);

/// What a run produces: its files, written into dir all or none.
struct Output {
    std::filesystem::path dir;
    std::vector<OutputFile> files;
};

/// Writes output with write_all_or_nothing and prints "wrote PATH" for each file, in order.
void write_output(const Output& output);

/// Prints "PROGRAM: REASON" (on one line) to stderr and returns status.
int report_failure(std::string_view program, int status, const std::exception& error);

/// The rows of line as the untyped text the functions above read.
template <class Options, class Rule>
std::vector<const ArgumentText*> argument_texts(const CommandLine<Options, Rule>& line) {
    std::vector<const ArgumentText*> texts;
    for (const auto& row : line.arguments) texts.push_back(&row);
    return texts;
}

/// Reads args (without the program name) into options as line's table says: split_command_line, then
/// each value through its row's parse in the order given, then line.finish. Refusals as invalid_argument.
template <class Options, class Rule>
Request parse_command_line(const CommandLine<Options, Rule>& line, std::span<const std::string_view> args,
                           Options& options) {
    const std::vector<const ArgumentText*> texts = argument_texts(line);
    const SplitLine split = split_command_line(texts, args);
    if (split.request != Request::run) return split.request;
    for (const auto& [row, value] : split.values) {
        const Argument<Options, Rule>& argument = line.arguments[row];
        argument.parse(options, argument, value);
    }
    if (line.finish != nullptr) line.finish(options, split.given);
    return Request::run;
}

/// The usage text of line (see the untyped usage_text).
template <class Options, class Rule>
std::string usage_text(const CommandLine<Options, Rule>& line) {
    return usage_text(line.program, line.about, line.notes, argument_texts(line));
}

/// A tool's whole main: parse argv with line, then load(options) (reads the files the arguments name),
/// then run(options, loaded) (computes and returns the Output), then write the output. Exit status 0 when
/// written or for --help and --version, 2 when the arguments (or a file they name) are refused with
/// invalid_argument by parsing or load (one line on stderr, nothing written), 1 when anything else fails.
template <class Options, class Rule, class Load, class Run>
int run_command_line(const CommandLine<Options, Rule>& line, int argc, char** argv, Load&& load, Run&& run) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    Options options;
    std::optional<std::invoke_result_t<Load&, Options&>> loaded;
    try {
        const Request request = parse_command_line(line, std::span<const std::string_view>(args), options);
        if (request == Request::help) {
            std::fputs(usage_text(line).c_str(), stdout);
            return 0;
        }
        if (request == Request::version) {
            std::printf("%.*s %.*s\n", static_cast<int>(line.program.size()), line.program.data(),
                        static_cast<int>(line.version.size()), line.version.data());
            return 0;
        }
        loaded.emplace(load(options));
    } catch (const std::invalid_argument& error) {
        return report_failure(line.program, 2, error);
    } catch (const std::exception& error) {
        return report_failure(line.program, 1, error);  // out of memory for a well-formed file: the work failed
    }
    try {
        write_output(run(std::as_const(options), std::move(*loaded)));
        return 0;
    } catch (const std::exception& error) {
        return report_failure(line.program, 1, error);
    }
}

}  // namespace embed::tools
