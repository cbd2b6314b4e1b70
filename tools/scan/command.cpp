#include "command.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>
#include <system_error>

#include <embed/scan.hpp>

#include "arguments.hpp"
#include "table_source.hpp"

namespace embed::scan_tool {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

/// One flag as the usage text shows it.
struct Flag {
    std::string_view name;
    std::string_view metavar;  // empty for flags without a value
    std::string_view meaning;
    std::string_view allowed;
    std::string_view default_text;
};

constexpr std::string_view kTable = "--table";
constexpr std::string_view kOutputTensor = "--output-tensor";
constexpr std::string_view kReferenceIds = "--reference-ids";
constexpr std::string_view kPercentile = "--percentile";
constexpr std::string_view kTokenizer = "--tokenizer";
constexpr std::string_view kOutDir = "--out-dir";

constexpr std::array<Flag, 8> FLAGS = {{
    {kTable, "FILE[:TENSOR]", "the input embedding table to scan",
     "a .npy, .safetensors or .gguf file or a checkpoint folder", "required"},
    {kOutputTensor, "NAME", "the output (unembedding) tensor, in the same file",
     "a tensor of the file with the input's row count", "the one check_tying names; the input when tied"},
    {kReferenceIds, "LIST", "rows known to be unused",
     "comma-separated ids and inclusive ranges in [0, V) (177,178,180-187), or none", "the vocabulary's unused tokens"},
    {kPercentile, "P", "candidates: main indicator at or below its percentile P", "a number in [0, 100]", "2.0"},
    {kTokenizer, "PATH", "where token names come from", "a .gguf, a tokenizer.json or a checkpoint folder",
     "the table's own"},
    {kOutDir, "DIR", "where the three files go", "an existing, writable directory", "."},
    {"--help", "", "print this text and exit", "", ""},
    {"--version", "", "print the version and exit", "", ""},
}};

const Flag* find_flag(std::string_view name) {
    if (name == "-h") name = "--help";
    const auto found = std::find_if(FLAGS.begin(), FLAGS.end(), [name](const Flag& f) { return f.name == name; });
    return found == FLAGS.end() ? nullptr : &*found;
}

const Flag& flag(std::string_view name) { return *find_flag(name); }

std::string named(std::string_view flag_name, std::string_view value) {
    return std::string(flag_name) + " '" + std::string(value) + "'";
}

std::string allowed_note(std::string_view flag_name) { return " (allowed: " + std::string(flag(flag_name).allowed) + ")"; }

// One id of a list: a whole-string decimal, not negative.
Index parse_id(std::string_view list, std::string_view text) {
    const tools::Decimal<Index> read = tools::read_decimal<Index>(text);
    if (!read.value || *read.value < 0 || text.front() == '+') {
        refuse(named(kReferenceIds, list) + " has '" + std::string(text) + "', which is not an id" +
               allowed_note(kReferenceIds));
    }
    return *read.value;
}

// "177,178,180-187": ids and inclusive ranges, each range low to high; "none" is the empty list.
std::vector<IdRange> parse_id_list(std::string_view list) {
    if (list == "none") return {};
    if (list.empty()) refuse(named(kReferenceIds, list) + " is empty" + allowed_note(kReferenceIds));
    std::vector<IdRange> ranges;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string_view item = list.substr(start, comma - start);
        if (item.empty()) refuse(named(kReferenceIds, list) + " has an empty item" + allowed_note(kReferenceIds));
        const std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            const Index id = parse_id(list, item);
            ranges.push_back({id, id});
        } else {
            const IdRange range{parse_id(list, item.substr(0, dash)), parse_id(list, item.substr(dash + 1))};
            if (range.first > range.last) {
                refuse(named(kReferenceIds, list) + " has the range '" + std::string(item) +
                       "', which runs backwards" + allowed_note(kReferenceIds));
            }
            ranges.push_back(range);
        }
        start = comma + 1;
    }
    return ranges;
}

double parse_percentile(std::string_view text) {
    const tools::Decimal<double> read = tools::read_decimal<double>(text);
    if (!read.value || std::isnan(*read.value) || *read.value < 0.0 || *read.value > 100.0) {
        refuse(named(kPercentile, text) + " is not a number in [0, 100]");
    }
    return *read.value;
}

void apply(ScanCommand& command, const Flag& f, std::string_view value) {
    if (f.name == kTable) command.table = std::string(value);
    if (f.name == kOutputTensor) {
        if (value.empty()) refuse(std::string(kOutputTensor) + " is empty" + allowed_note(kOutputTensor));
        command.output_tensor = std::string(value);
    }
    if (f.name == kReferenceIds) command.reference_ids = parse_id_list(value);
    if (f.name == kPercentile) command.percentile = parse_percentile(value);
    if (f.name == kTokenizer) command.tokenizer = std::string(value);
    if (f.name == kOutDir) command.out_dir = std::string(value);
}

// --help and --version win wherever they stand, the first of them, as in embed_report.
std::optional<ScanCommand::Action> requested_action(std::span<const std::string_view> args) {
    for (const std::string_view arg : args) {
        if (arg == "--help" || arg == "-h") return ScanCommand::Action::help;
        if (arg == "--version") return ScanCommand::Action::version;
    }
    return std::nullopt;
}

const char* precision_of(std::size_t stored_index) {
    constexpr const char* names[] = {"float64", "float32", "bfloat16"};  // StoredTable's types, in order
    return names[stored_index];
}

// A refusal of the loaders is a bad argument: the flag, the value and the loader's reason.
template <class Load>
auto loaded(std::string_view flag_name, std::string_view value, Load&& load) {
    try {
        return load();
    } catch (const FileFormatError& error) {
        refuse(named(flag_name, value) + " cannot be used: " + error.what());
    } catch (const std::system_error& error) {
        refuse(named(flag_name, value) + " cannot be used: " + error.what());
    } catch (const std::invalid_argument& error) {
        refuse(named(flag_name, value) + " cannot be used: " + error.what());
    }
}

// The name of the output tensor to scan beside the input, or "" when the input serves as both.
std::string output_tensor_of(const ScanCommand& command, const tools::TableSpec& spec, const std::string& input) {
    if (command.output_tensor) return *command.output_tensor == input ? "" : *command.output_tensor;
    const std::optional<Tying> tying =
        loaded(kTable, command.table, [&] { return check_tying(spec.file, spec.tensor); });
    return tying && !tying->tied ? tying->output : "";
}

// Both tables in one stored type: their own when they agree, else both widened (exactly) to the
// narrowest type that holds both, float32 unless either is float64.
ScanInputs load_tables(const ScanCommand& command, const tools::TableSpec& spec) {
    ScanInputs inputs;
    const std::string input_name = loaded(kTable, command.table, [&] { return chosen_tensor(spec.file, spec.tensor); });
    const std::string output_name = output_tensor_of(command, spec, input_name);
    StoredTable input = loaded(kTable, command.table, [&] { return load_stored_table(spec.file, input_name); });
    inputs.source = {spec.file, input_name, output_name.empty() ? input_name : output_name,
                     precision_of(input.index()), output_name.empty()};
    if (output_name.empty()) {
        std::visit([&](auto& table) { inputs.tables = TablePair<typename std::decay_t<decltype(table)>::Scalar>{
                                          std::move(table), std::nullopt}; },
                   input);
        return inputs;
    }
    const std::string shown = command.output_tensor ? *command.output_tensor : output_name;
    StoredTable output = loaded(kOutputTensor, shown, [&] { return load_stored_table(spec.file, output_name); });
    if (input.index() != output.index()) {
        const bool wide = input.index() == 0 || output.index() == 0;
        if (wide) {
            input = loaded(kTable, command.table, [&] { return load_table(spec.file, input_name); });
            output = loaded(kOutputTensor, shown, [&] { return load_table(spec.file, output_name); });
        } else {
            input = loaded(kTable, command.table, [&] { return load_table_f32(spec.file, input_name); });
            output = loaded(kOutputTensor, shown, [&] { return load_table_f32(spec.file, output_name); });
        }
    }
    inputs.source.precision = precision_of(input.index());
    std::visit(
        [&](auto& in) {
            using Table = std::decay_t<decltype(in)>;
            auto& out = std::get<Table>(output);
            if (out.rows() != in.rows()) {
                refuse(named(kOutputTensor, shown) + " has " + std::to_string(out.rows()) + " rows and the input '" +
                       input_name + "' " + std::to_string(in.rows()) + ": a scan compares row by row");
            }
            inputs.tables = TablePair<typename Table::Scalar>{std::move(in), std::move(out)};
        },
        input);
    return inputs;
}

Index row_count(const ScanInputs& inputs) {
    return std::visit([](const auto& pair) { return static_cast<Index>(pair.input.rows()); }, inputs.tables);
}

// The listed ids, ascending and each once, every one inside [0, V) (checked before a range is expanded).
std::vector<Index> expand_ids(const std::vector<IdRange>& ranges, Index vocab) {
    std::set<Index> ids;
    for (const IdRange& range : ranges) {
        if (range.last >= vocab) {
            refuse(std::string(kReferenceIds) + " has id " + std::to_string(range.last) +
                   ", outside the table's rows [0, " + std::to_string(vocab) + ")");
        }
        for (Index id = range.first; id <= range.last; ++id) ids.insert(id);
    }
    return {ids.begin(), ids.end()};
}

}  // namespace

ScanCommand parse_scan_command(std::span<const std::string_view> args) {
    ScanCommand command;
    if (const auto action = requested_action(args)) {
        command.action = *action;
        return command;
    }
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const tools::SplitArgument split = tools::split_argument(args[i]);
        const Flag* f = find_flag(split.name);
        if (f == nullptr) refuse("unknown argument '" + std::string(args[i]) + "' (see --help)");
        if (!split.value && i + 1 == args.size()) refuse(std::string(f->name) + " is missing its value");
        if (!seen.insert(f->name).second) refuse(std::string(f->name) + " is given more than once");
        apply(command, *f, split.value ? *split.value : args[++i]);
    }
    if (!seen.contains(kTable)) refuse(std::string(kTable) + " is required: the table to scan (see --help)");
    tools::require_writable_directory(kOutDir, flag(kOutDir).allowed, command.out_dir);
    return command;
}

ScanInputs load_scan_inputs(const ScanCommand& command) {
    const tools::TableSpec spec = tools::split_table_spec(kTable, flag(kTable).allowed, command.table);
    ScanInputs inputs = load_tables(command, spec);
    inputs.vocabulary = command.tokenizer ? std::optional(tools::named_vocabulary(kTokenizer, *command.tokenizer))
                                          : tools::own_vocabulary("embed_scan", spec);
    const Index vocab = row_count(inputs);
    if (command.reference_ids) {
        inputs.reference_ids = expand_ids(*command.reference_ids, vocab);
        inputs.reference_from = inputs.reference_ids.empty() ? "none" : std::string(kReferenceIds);
    } else if (inputs.vocabulary) {
        for (const Index id : unused_ids(*inputs.vocabulary)) {
            if (id < vocab) inputs.reference_ids.push_back(id);  // a vocabulary longer than the table: rows it lacks
        }
        inputs.reference_from = "unused tokens";
    } else {
        inputs.reference_from = "none";
    }
    return inputs;
}

std::string scan_usage_text() {
    std::string text =
        "usage: embed_scan --table FILE[:TENSOR] [--output-tensor NAME] [--reference-ids LIST]\n"
        "                  [--percentile P] [--tokenizer PATH] [--out-dir DIR] [--help] [--version]\n"
        "\n"
        "Finds the tokens of a model that (almost) never learned anything: each row's input norm,\n"
        "and its output row's cosine distance to the rows known to be unused once the output\n"
        "table's first principal component is projected out (Land & Bartolo, 2024). Writes\n"
        "embed_scan.json, embed_scan.md and embed_scan.html into the output directory (all three\n"
        "or none; an existing scan is replaced only whole).\n"
        "\n"
        "options (--flag VALUE or --flag=VALUE):\n";
    for (const Flag& f : FLAGS) {
        std::string left = "  " + std::string(f.name == "--help" ? "-h, --help" : f.name);
        if (!f.metavar.empty()) left.append(" ").append(f.metavar);
        left.resize(std::max<std::size_t>(left.size() + 1, 28), ' ');
        text += left + std::string(f.meaning);
        if (!f.metavar.empty()) {
            text.append(",\n").append(28, ' ').append(f.allowed).append(" (default: ").append(f.default_text).append(")");
        }
        text += "\n";
    }
    return text + "\nexit status: 0 written, 1 could not scan or write, 2 bad arguments (nothing written)\n";
}

}  // namespace embed::scan_tool
