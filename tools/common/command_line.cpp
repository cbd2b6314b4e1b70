#include "command_line.hpp"

#include <algorithm>
#include <cstdio>

#include "arguments.hpp"

namespace embed::tools {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string quoted(std::string_view text) { return std::string("'").append(text).append("'"); }

std::string allowed_note(const ArgumentText& row) {
    return row.allowed.empty() ? std::string() : " (allowed: " + std::string(row.allowed) + ")";
}

// The frame's own flags, after every tool's: the same words, the same meaning everywhere.
const ArgumentText& help_row() {
    static const ArgumentText row{"--help", "", "print this text and exit", "", "", false};
    return row;
}

const ArgumentText& version_row() {
    static const ArgumentText row{"--version", "", "print the version and exit", "", "", false};
    return row;
}

bool is_help(std::string_view arg) { return arg == "-h" || arg == "--help"; }

// --help and --version win wherever they stand, even after a bad flag; the first of them is taken.
Request requested(std::span<const std::string_view> args) {
    for (const std::string_view arg : args) {
        if (is_help(arg)) return Request::help;
        if (arg == "--version") return Request::version;
    }
    return Request::run;
}

// A word that starts with '-' (and is more than "-", which names standard input by habit) is a flag.
bool looks_like_flag(std::string_view arg) { return arg.size() > 1 && arg.front() == '-'; }

const ArgumentText* find_flag(std::span<const ArgumentText* const> rows, std::string_view name) {
    const auto found = std::find_if(rows.begin(), rows.end(),
                                    [name](const ArgumentText* row) { return !row->positional() && row->name == name; });
    return found == rows.end() ? nullptr : *found;
}

std::size_t index_of(std::span<const ArgumentText* const> rows, const ArgumentText* row) {
    return static_cast<std::size_t>(std::find(rows.begin(), rows.end(), row) - rows.begin());
}

std::vector<const ArgumentText*> positionals(std::span<const ArgumentText* const> rows) {
    std::vector<const ArgumentText*> found;
    for (const ArgumentText* row : rows) {
        if (row->positional()) found.push_back(row);
    }
    return found;
}

// "A B": the positional arguments as the synopsis names them.
std::string positional_names(const std::vector<const ArgumentText*>& rows) {
    std::string names;
    for (const ArgumentText* row : rows) names.append(names.empty() ? "" : " ").append(row->metavar);
    return names;
}

void refuse_unexpected(std::string_view arg, const std::vector<const ArgumentText*>& taken) {
    if (taken.empty()) refuse("unknown argument " + quoted(arg) + " (see --help)");
    refuse("unexpected argument " + quoted(arg) + ": only " + positional_names(taken) + " are taken (see --help)");
}

void require_given(std::span<const ArgumentText* const> rows, const std::set<std::string_view>& given) {
    for (const ArgumentText* row : rows) {
        if (!(row->required || row->positional()) || given.contains(row->shown())) continue;
        std::string spelled(row->shown());
        if (!row->positional() && row->takes_value()) spelled.append(" ").append(row->metavar);
        refuse(spelled + " is required: " + std::string(row->meaning) + allowed_note(*row));
    }
}

// "--probe ID", "--help", or "A" for a positional argument.
std::string spelled(const ArgumentText& row) {
    if (row.positional()) return std::string(row.metavar);
    std::string text(row.name);
    if (row.takes_value()) text.append(" ").append(row.metavar);
    return text;
}

std::vector<const ArgumentText*> with_frame_rows(std::span<const ArgumentText* const> rows) {
    std::vector<const ArgumentText*> all(rows.begin(), rows.end());
    all.push_back(&help_row());
    all.push_back(&version_row());
    return all;
}

}  // namespace

SplitLine split_command_line(std::span<const ArgumentText* const> rows, std::span<const std::string_view> args) {
    SplitLine line;
    line.request = requested(args);
    if (line.request != Request::run) return line;
    const std::vector<const ArgumentText*> taken = positionals(rows);
    std::size_t next_positional = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (!looks_like_flag(arg)) {
            if (next_positional == taken.size()) refuse_unexpected(arg, taken);
            const ArgumentText* row = taken[next_positional++];
            line.given.insert(row->shown());
            line.values.emplace_back(index_of(rows, row), arg);
            continue;
        }
        const SplitArgument split = split_argument(arg);
        if (split.name == "--help" || split.name == "--version") refuse(std::string(split.name) + " takes no value");
        const ArgumentText* row = find_flag(rows, split.name);
        if (row == nullptr) refuse("unknown argument " + quoted(arg) + " (see --help)");
        if (!row->takes_value() && split.value) refuse(std::string(row->name) + " takes no value");
        if (row->takes_value() && !split.value && i + 1 == args.size()) {
            refuse(std::string(row->name) + " is missing its value " + std::string(row->metavar) + allowed_note(*row));
        }
        // A repeated flag is more likely a typo than an intent, so it is refused rather than overwritten.
        if (!line.given.insert(row->name).second) refuse(std::string(row->name) + " is given more than once");
        const std::string_view value = !row->takes_value() ? std::string_view() : split.value ? *split.value : args[++i];
        line.values.emplace_back(index_of(rows, row), value);
    }
    require_given(rows, line.given);
    return line;
}

std::string usage_synopsis(std::string_view program, std::span<const ArgumentText* const> rows) {
    std::string text(program);
    std::size_t line_length = text.size();
    for (const ArgumentText* row : with_frame_rows(rows)) {
        const bool bare = row->required || row->positional();
        // Built by appending: GCC 12 warns wrongly (-Wrestrict) about "[" + std::string.
        std::string item = bare ? " " : " [";
        item.append(spelled(*row)).append(bare ? "" : "]");
        if (line_length + item.size() > 90) {
            text += '\n';
            text.append(program.size(), ' ');
            line_length = program.size();
        }
        text += item;
        line_length += item.size();
    }
    return text + "\n";
}

std::string usage_text(std::string_view program, std::string_view about, std::string_view notes,
                       std::span<const ArgumentText* const> rows) {
    const std::vector<const ArgumentText*> all = with_frame_rows(rows);
    const auto left_of = [](const ArgumentText& row) {
        return "  " + std::string(&row == &help_row() ? "-h, " : "") + spelled(row);
    };
    std::size_t column = 0;
    for (const ArgumentText* row : all) column = std::max(column, left_of(*row).size() + 2);
    std::string text = "usage: " + usage_synopsis(program, rows) + "\n" + std::string(about) +
                       "\narguments (--flag VALUE or --flag=VALUE, in any order, each flag at most once):\n";
    for (const ArgumentText* row : all) {
        std::string left = left_of(*row);
        left.resize(column, ' ');
        text += left + std::string(row->meaning);
        if (row->takes_value()) {
            const bool required = row->required || row->positional();
            std::string tail = required ? "(required)" : "(default: ";
            if (!required) tail.append(row->default_text).append(")");
            text.append(",\n").append(column, ' ').append(row->allowed);
            // A long rule and its default go on two lines, so the text reads in an 90-column terminal.
            const bool fits = column + row->allowed.size() + 1 + tail.size() <= 90;
            if (fits) text.append(" ");
            else text.append("\n").append(column, ' ');
            text.append(tail);
        }
        text += "\n";
    }
    if (!notes.empty()) text.append("\n").append(notes);
    return text +
           "\nexit status: 0 written (or this text or the version printed), 1 could not compute or write\n"
           "(an earlier output left whole), 2 bad arguments (one line on stderr, nothing written)\n";
}

std::string one_line(std::string_view text) {
    std::string line(text);
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::replace(line.begin(), line.end(), '\r', ' ');
    return line;
}

void write_output(const Output& output) {
    for (const auto& path : write_all_or_nothing(output.dir, output.files)) std::printf("wrote %s\n", path.c_str());
}

int report_failure(std::string_view program, int status, const std::exception& error) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(), one_line(error.what()).c_str());
    return status;
}

}  // namespace embed::tools
