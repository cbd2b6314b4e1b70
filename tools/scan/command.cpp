#include "command.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include <embed/scan.hpp>

#include "arguments.hpp"
#include "table_source.hpp"

namespace embed::scan_tool {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

using Flag = tools::Argument<ScanCommand>;

constexpr std::string_view kTable = "--table";
constexpr std::string_view kOutputTensor = "--output-tensor";
constexpr std::string_view kReferenceIds = "--reference-ids";
constexpr std::string_view kTokenizer = "--tokenizer";
constexpr std::string_view kOutDir = "--out-dir";

const Flag& flag(std::string_view name);

std::string named(std::string_view flag_name, std::string_view value) {
    return std::string(flag_name) + " '" + std::string(value) + "'";
}

std::string allowed_note(std::string_view flag_name) { return " (allowed: " + std::string(flag(flag_name).allowed) + ")"; }

void parse_table(ScanCommand& command, const Flag&, std::string_view value) { command.table = std::string(value); }

void parse_output_tensor(ScanCommand& command, const Flag& f, std::string_view value) {
    if (value.empty()) refuse(std::string(f.name) + " is empty" + allowed_note(f.name));
    command.output_tensor = std::string(value);
}

// "none" is the empty list; anything else a list of ids and ranges.
void parse_reference_ids(ScanCommand& command, const Flag& f, std::string_view value) {
    command.reference_ids = value == "none" ? std::vector<IdRange>{} : tools::parse_id_list(f, value);
}

void parse_percentile(ScanCommand& command, const Flag& f, std::string_view value) {
    const double percentile = tools::number_argument(f, value);
    if (percentile < 0.0 || percentile > 100.0) refuse(std::string(f.name) + " " + std::string(value) + " must be " +
                                                       std::string(f.allowed));
    command.percentile = percentile;
}

void parse_tokenizer(ScanCommand& command, const Flag&, std::string_view value) { command.tokenizer = std::string(value); }
void parse_out_dir(ScanCommand& command, const Flag&, std::string_view value) { command.out_dir = std::string(value); }

// Checked before any file is read, so a directory that cannot take the files is a bad argument.
void finish(ScanCommand& command, const std::set<std::string_view>&) {
    tools::require_writable_directory(kOutDir, flag(kOutDir).allowed, command.out_dir);
}

const Flag& flag(std::string_view name) {
    const auto& arguments = scan_command_line().arguments;
    return *std::find_if(arguments.begin(), arguments.end(), [name](const Flag& f) { return f.name == name; });
}

Index rows_of(const OpenedTable& table) {
    return std::visit([](const auto& t) { return static_cast<Index>(t.rows()); }, table.table);
}

bool quantised(const OpenedTable& table) { return std::holds_alternative<QuantisedTable>(table.table); }

// An opened table that is not quantised, as load_stored_table holds it (moved, not copied).
StoredTable stored(OpenedTable&& table) {
    return std::visit(
        [](auto&& values) -> StoredTable {
            if constexpr (std::is_same_v<std::decay_t<decltype(values)>, QuantisedTable>) {
                throw std::logic_error("embed_scan: a quantised table has no stored form");
            } else {
                return std::move(values);
            }
        },
        std::move(table.table));
}

// The name of the output tensor to scan beside the input, or "" when the input serves as both.
std::string output_tensor_of(const ScanCommand& command, const tools::TableSpec& spec, const std::string& input) {
    if (command.output_tensor) return *command.output_tensor == input ? "" : *command.output_tensor;
    const std::optional<Tying> tying =
        tools::loaded_as_argument(kTable, command.table, [&] { return check_tying(spec.file, spec.tensor); });
    return tying && !tying->tied ? tying->output : "";
}

// The tables of a stored pair in one stored type: their own when they agree, else both widened (exactly) to
// the narrowest type that holds both, float32 unless either is float64.
void store_pair(ScanInputs& inputs, StoredTable input, StoredTable output, const std::function<StoredTable(bool, ElementType)>& reload) {
    const ElementType input_type = element_type(input);
    const ElementType output_type = element_type(output);
    if (input_type != output_type) {
        const ElementType common =
            input_type == ElementType::f64 || output_type == ElementType::f64 ? ElementType::f64 : ElementType::f32;
        input = reload(true, common);
        output = reload(false, common);
    }
    inputs.source.precision = std::string(element_type_name(element_type(input)));
    std::visit(
        [&](auto& in) {
            using Table = std::decay_t<decltype(in)>;
            inputs.tables = TablePair<typename Table::Scalar>{std::move(in), std::move(std::get<Table>(output))};
        },
        input);
}

// Both tables opened with open_table: quantised ones (of one type or two) stay in their blocks and are scanned
// there; stored ones in one stored type, as store_pair says; a quantised table beside a stored one is widened
// with it to float32 (float64 when the stored one is), the one case a scan reads a quantised table widened.
ScanInputs load_tables(const ScanCommand& command, const tools::TableSpec& spec) {
    ScanInputs inputs;
    const std::string input_name = tools::loaded_as_argument(kTable, command.table, [&] { return chosen_tensor(spec.file, spec.tensor); });
    const std::string output_name = output_tensor_of(command, spec, input_name);
    OpenedTable input = tools::loaded_as_argument(kTable, command.table, [&] { return open_table(spec.file, input_name); });
    inputs.source = {spec.file, input_name, output_name.empty() ? input_name : output_name,
                     tools::analysed_precision(input), output_name.empty()};
    if (output_name.empty()) {
        if (quantised(input)) {
            inputs.tables = QuantisedPair{std::get<QuantisedTable>(std::move(input.table)), std::nullopt};
            return inputs;
        }
        StoredTable table = stored(std::move(input));
        std::visit([&](auto& values) { inputs.tables = TablePair<typename std::decay_t<decltype(values)>::Scalar>{
                                           std::move(values), std::nullopt}; },
                   table);
        return inputs;
    }
    const std::string shown = command.output_tensor ? *command.output_tensor : output_name;
    OpenedTable output =
        tools::loaded_as_argument(kOutputTensor, shown, [&] { return open_table(spec.file, output_name); });
    if (rows_of(output) != rows_of(input)) {
        refuse(named(kOutputTensor, shown) + " has " + std::to_string(rows_of(output)) + " rows and the input '" +
               input_name + "' " + std::to_string(rows_of(input)) + ": a scan compares row by row" +
               allowed_note(kOutputTensor));
    }
    if (quantised(input) && quantised(output)) {
        const std::string output_precision = tools::analysed_precision(output);
        if (output_precision != inputs.source.precision) inputs.source.precision += "/" + output_precision;
        inputs.tables = QuantisedPair{std::get<QuantisedTable>(std::move(input.table)),
                                      std::get<QuantisedTable>(std::move(output.table))};
        return inputs;
    }
    const auto reload = [&](bool is_input, ElementType type) -> StoredTable {
        const std::string& name = is_input ? input_name : output_name;
        const auto read = [&]() -> StoredTable {
            if (type == ElementType::f64) return load_table(spec.file, name);
            return load_table_f32(spec.file, name);
        };
        return is_input ? tools::loaded_as_argument(kTable, command.table, read)
                        : tools::loaded_as_argument(kOutputTensor, shown, read);
    };
    if (quantised(input) || quantised(output)) {
        // The stored one's type decides: float64 stays float64, anything else meets the quantised one in float32.
        const ElementType stored_type = quantised(input) ? output.type : input.type;
        const ElementType common = stored_type == ElementType::f64 ? ElementType::f64 : ElementType::f32;
        input = OpenedTable{};
        output = OpenedTable{};
        store_pair(inputs, reload(true, common), reload(false, common), reload);
        return inputs;
    }
    store_pair(inputs, stored(std::move(input)), stored(std::move(output)), reload);
    return inputs;
}

Index row_count(const ScanInputs& inputs) {
    return std::visit([](const auto& pair) { return static_cast<Index>(pair.input.rows()); }, inputs.tables);
}

}  // namespace

const tools::CommandLine<ScanCommand>& scan_command_line() {
    static const tools::CommandLine<ScanCommand> line{
        "embed_scan",
        EMBED_SCAN_VERSION,
        "Finds the tokens of a model that (almost) never learned anything: each row's input norm,\n"
        "and its output row's cosine distance to the rows known to be unused once the output\n"
        "table's first principal component is projected out (Land & Bartolo, 2024). Writes\n"
        "embed_scan.json, embed_scan.md and embed_scan.html into the output directory (all three\n"
        "or none; an existing scan is replaced only whole).\n",
        "",
        {
            {{kTable, "FILE[:TENSOR]", "the input embedding table to scan",
              "a .npy, .safetensors or .gguf file or a checkpoint folder", "", true},
             parse_table},
            {{kOutputTensor, "NAME", "the output (unembedding) tensor, in the same file",
              "a tensor of the file with the input's row count", "the one check_tying names; the input when tied"},
             parse_output_tensor},
            {{kReferenceIds, "LIST", "rows known to be unused",
              "comma-separated ids and inclusive ranges in [0, V) (177,178,180-187), or none",
              "the vocabulary's unused tokens"},
             parse_reference_ids},
            {{"--percentile", "P", "candidates: main indicator at or below its percentile P", "a number in [0, 100]",
              "2.0"},
             parse_percentile},
            {{kTokenizer, "PATH", "where token names come from", "a .gguf, a tokenizer.json or a checkpoint folder",
              "the table's own"},
             parse_tokenizer},
            {{kOutDir, "DIR", "where the three files go", "an existing, writable directory", "."}, parse_out_dir},
        },
        finish};
    return line;
}

ScanCommand parse_scan_command(std::span<const std::string_view> args) {
    ScanCommand command;
    command.action = tools::parse_command_line(scan_command_line(), args, command);
    return command;
}

ScanInputs load_scan_inputs(const ScanCommand& command) {
    const tools::TableSpec spec = tools::split_table_spec(kTable, flag(kTable).allowed, command.table);
    ScanInputs inputs = load_tables(command, spec);
    inputs.vocabulary = command.tokenizer ? std::optional(tools::named_vocabulary(kTokenizer, *command.tokenizer))
                                          : tools::own_vocabulary("embed_scan", spec);
    const Index vocab = row_count(inputs);
    if (command.reference_ids) {
        inputs.reference_ids = tools::expand_id_list(kReferenceIds, *command.reference_ids, vocab);
        inputs.reference_from = inputs.reference_ids.empty() ? "none" : std::string(kReferenceIds);
    } else if (inputs.vocabulary) {
        inputs.reference_ids = tools::default_reference_ids(*inputs.vocabulary, vocab);
        inputs.reference_from = "unused tokens";
    } else {
        inputs.reference_from = "none";
    }
    return inputs;
}

std::string scan_usage_text() { return tools::usage_text(scan_command_line()); }

}  // namespace embed::scan_tool
