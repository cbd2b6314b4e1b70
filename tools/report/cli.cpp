#include "cli.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <variant>

#include "arguments.hpp"
#include "table_source.hpp"
#include "tokens.hpp"

namespace embed::report {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string in_quotes(std::string_view text) { return std::string("'").append(text).append("'"); }

std::string allowed_note(const Flag& flag) { return " (allowed: " + std::string(flag.allowed) + ")"; }

// "--seed 12abc": how a refusal starts, the flag and the value as given.
std::string named(const Flag& flag, std::string_view shown) { return std::string(flag.name) + " " + std::string(shown); }

// Numbers are whole-string decimals, read one way by every tool (tools/common/arguments.hpp).
using tools::Decimal;
using tools::read_decimal;
using tools::without_plus;

Index parse_index(const Flag& flag, std::string_view text) {
    const Decimal<Index> read = read_decimal<Index>(text);
    if (read.out_of_range) {
        refuse(named(flag, text) + " is outside the 64-bit integer range" + allowed_note(flag));
    }
    if (!read.value) refuse(named(flag, in_quotes(text)) + " is not a decimal integer" + allowed_note(flag));
    return *read.value;
}

// The seed is unsigned: a negative seed is a well-formed integer outside the
// range, refused as such rather than wrapped around as strtoull would.
std::uint64_t parse_seed(const Flag& flag, std::string_view text) {
    const Decimal<std::uint64_t> read = read_decimal<std::uint64_t>(text);
    const Decimal<Index> as_signed = read_decimal<Index>(text);
    if (read.out_of_range || (!read.value && (as_signed.value || as_signed.out_of_range))) {
        refuse(named(flag, text) + " must be " + std::string(flag.allowed));
    }
    if (!read.value) refuse(named(flag, in_quotes(text)) + " is not a decimal integer" + allowed_note(flag));
    return *read.value;
}

// A decimal too small for a double rounds to 0 or a subnormal, as strtod rounds it:
// it is still the finite number asked for, and the JSON records the value used.
// One too large for a double has no finite value and is refused.
double parse_factor(const Flag& flag, std::string_view text) {
    const Decimal<double> read = read_decimal<double>(text);
    if (read.out_of_range) {
        const double rounded = std::strtod(std::string(without_plus(text)).c_str(), nullptr);
        if (std::fabs(rounded) < 1.0) return rounded;
        refuse(named(flag, text) + " is past the largest double, about 1.8e308" + allowed_note(flag));
    }
    if (!read.value || !std::isfinite(*read.value)) {
        refuse(named(flag, in_quotes(text)) + " is not a finite decimal number" + allowed_note(flag));
    }
    return *read.value;
}

// Checked before anything is computed, so a directory that cannot take the files
// is a bad argument (exit 2); a failure while writing is still a failed run.
void require_writable_directory(const Flag& flag, const std::string& dir) {
    tools::require_writable_directory(flag.name, flag.allowed, dir);
}

void apply(Command& command, const Flag& flag, std::string_view value) {
    switch (flag.kind) {
        case FlagKind::index: command.inputs.*flag.field = parse_index(flag, value); return;
        case FlagKind::seed: command.inputs.seed = parse_seed(flag, value); return;
        case FlagKind::factor: command.inputs.stretch_factor = parse_factor(flag, value); return;
        case FlagKind::out_dir: command.out_dir = std::string(value); return;
        case FlagKind::table: command.table = std::string(value); return;
        case FlagKind::tokenizer: command.tokenizer = std::string(value); return;
        case FlagKind::probe_token: command.probe_token = std::string(value); return;
        case FlagKind::help:
        case FlagKind::version: refuse(std::string(flag.name) + " takes no value");
    }
}

// --help and --version win wherever they stand, even after a bad flag, as in GNU
// tools; only the exact word counts, so a value can still be "--flag=--help".
std::optional<Command::Action> requested_action(std::span<const std::string_view> args) {
    for (const std::string_view arg : args) {
        const Flag* flag = find_flag(arg);
        if (flag != nullptr && flag->kind == FlagKind::help) return Command::Action::help;
        if (flag != nullptr && flag->kind == FlagKind::version) return Command::Action::version;
    }
    return std::nullopt;
}

// --vocab, --dim and --seed describe a generated table: beside --table they
// contradict the file, and are refused rather than silently ignored.
void refuse_generated_only(const std::set<std::string_view>& seen) {
    for (const Flag& flag : flag_table()) {
        if (flag.generated_only && seen.contains(flag.name)) {
            refuse(std::string(flag.name) + " cannot be used with " + std::string(flag_of_kind(FlagKind::table).name) +
                   ": the file gives V and d, and a loaded table has no seed");
        }
    }
}

bool takes_value(const Flag& flag) { return !flag.metavar.empty(); }

// "--probe ID", or "--help" for a flag without a value.
std::string spelled(const Flag& flag) {
    std::string text(flag.name);
    if (takes_value(flag)) text.append(" ").append(flag.metavar);
    return text;
}

}  // namespace

Command parse_command_line(std::span<const std::string_view> args) {
    Command command;
    if (const auto action = requested_action(args)) {
        command.action = *action;
        return command;
    }
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        const tools::SplitArgument split = tools::split_argument(arg);
        const Flag* flag = find_flag(split.name);
        if (flag == nullptr) refuse("unknown argument " + in_quotes(arg) + " (see --help)");
        if (!takes_value(*flag) && split.value) refuse(std::string(flag->name) + " takes no value");
        if (!split.value && i + 1 == args.size()) {
            refuse(std::string(flag->name) + " is missing its value");
        }
        // A repeated flag is more likely a typo than an intent, so it is refused rather than overwritten.
        if (!seen.insert(flag->name).second) refuse(std::string(flag->name) + " is given more than once");
        apply(command, *flag, split.value ? *split.value : args[++i]);
    }
    require_writable_directory(flag_of_kind(FlagKind::out_dir), command.out_dir);
    if (command.probe_token && seen.contains(flag_for(&ReportInputs::probe).name)) {
        refuse(std::string(flag_of_kind(FlagKind::probe_token).name) + " and " +
               std::string(flag_for(&ReportInputs::probe).name) + " both name the probe: give one");
    }
    if (command.table) refuse_generated_only(seen);
    // A loaded table's shape, and a probe named by its token, are known only once the files are read.
    if (!command.table && !command.probe_token) validate(command.inputs);
    return command;
}

StoredTable load_command_table(Command& command) {
    const Flag& flag = flag_of_kind(FlagKind::table);
    const tools::TableSpec spec = tools::split_table_spec(flag.name, flag.allowed, *command.table);
    const auto refuse_file = [&](const std::exception& error) {
        refuse(named(flag, in_quotes(*command.table)) + " cannot be used: " + error.what());
    };
    StoredTable table;
    std::string tensor;
    try {
        table = embed::load_stored_table(spec.file, spec.tensor);
        tensor = embed::chosen_tensor(spec.file, spec.tensor);
    } catch (const embed::FileFormatError& error) {
        refuse_file(error);
    } catch (const std::system_error& error) {  // cannot open or map it
        refuse_file(error);
    } catch (const std::invalid_argument& error) {  // a tensor name for a .npy, an unknown extension
        refuse_file(error);
    }
    constexpr const char* precisions[] = {"float64", "float32", "bfloat16"};  // StoredTable's types, in order
    command.inputs.vocab = std::visit([](const auto& t) { return t.rows(); }, table);
    command.inputs.dim = std::visit([](const auto& t) { return t.cols(); }, table);
    command.inputs.source = TableSource{spec.file, tensor, precisions[table.index()]};
    if (!command.probe_token) validate(command.inputs);
    return table;
}

CommandData load_command_data(Command& command) {
    CommandData data;
    if (command.table) data.table = load_command_table(command);
    data.vocabulary = load_command_vocabulary(command);
    if (command.probe_token) {
        if (!data.vocabulary) {
            refuse(std::string(flag_of_kind(FlagKind::probe_token).name) + " needs token names: give " +
                   std::string(flag_of_kind(FlagKind::tokenizer).name) +
                   " (a .gguf, a tokenizer.json or a checkpoint folder), or a table that has its own");
        }
        command.inputs.probe = probe_for_token(*data.vocabulary, *command.probe_token, command.inputs.vocab);
        validate(command.inputs);
    }
    return data;
}

std::string usage_synopsis() {
    const std::string start = "embed_report";
    std::string text = start;
    std::size_t line_length = text.size();
    for (const Flag& flag : flag_table()) {
        const std::string item = " [" + spelled(flag) + "]";
        if (line_length + item.size() > 90) {
            text += '\n';
            text.append(start.size(), ' ');
            line_length = start.size();
        }
        text += item;
        line_length += item.size();
    }
    return text + "\n";
}

std::string usage_text() {
    std::string text = "usage: " + usage_synopsis() +
                       "\n"
                       "Builds an embedding table (or loads one with --table), measures it with the\n"
                       "embed library and writes embed_report.json, embed_report.md,\n"
                       "embed_report.svg and embed_report.html into the output directory (all four\n"
                       "or none; an existing report is replaced only whole).\n"
                       "\n"
                       "options (--flag VALUE or --flag=VALUE):\n";
    for (const Flag& flag : flag_table()) {
        std::string left = "  ";
        if (!flag.alias.empty()) left.append(flag.alias).append(", ");
        left += spelled(flag);
        left.resize(std::max<std::size_t>(left.size() + 1, 25), ' ');
        text += left + std::string(flag.meaning);
        if (takes_value(flag)) {
            text.append(", ").append(flag.allowed).append(" (default: ").append(default_text(flag)).append(")");
        }
        text += "\n";
    }
    return text +
           "\n"
           "A generated table has at most 2^25 entries (V x D). With --table, V and D are\n"
           "the file's shape, and --vocab, --dim and --seed are refused. With token names\n"
           "(--tokenizer, or the table's own), ids are shown with their text and the JSON\n"
           "gains a key tokens.\n"
           "exit status: 0 written, 1 could not write, 2 bad arguments (nothing written)\n";
}

}  // namespace embed::report
