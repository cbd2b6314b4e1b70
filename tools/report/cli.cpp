#include "cli.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

#include "table_source.hpp"
#include "tokens.hpp"

namespace embed::report {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

}  // namespace

Command parse_command_line(std::span<const std::string_view> args) {
    Command command;
    command.action = tools::parse_command_line(report_command_line(), args, command);
    return command;
}

OpenedTable load_command_table(Command& command) {
    const Flag& flag = flag_named(TABLE_FLAG);
    const tools::TableSpec spec = tools::split_table_spec(flag.name, flag.allowed, *command.table);
    OpenedTable table =
        tools::loaded_as_argument(flag.name, *command.table, [&] { return embed::open_table(spec.file, spec.tensor); });
    const std::string tensor = tools::loaded_as_argument(flag.name, *command.table,
                                                         [&] { return embed::chosen_tensor(spec.file, spec.tensor); });
    command.inputs.vocab = std::visit([](const auto& t) { return t.rows(); }, table.table);
    command.inputs.dim = std::visit([](const auto& t) { return t.cols(); }, table.table);
    command.inputs.source = TableSource{spec.file, tensor, tools::analysed_precision(table)};
    if (!command.probe_token) validate(command.inputs);
    return table;
}

CommandData load_command_data(Command& command) {
    CommandData data;
    if (command.table) data.table = load_command_table(command);
    data.vocabulary = load_command_vocabulary(command);
    if (command.probe_token) {
        if (!data.vocabulary) {
            refuse(std::string(PROBE_TOKEN_FLAG) + " needs token names: give " + std::string(TOKENIZER_FLAG) +
                   " (a .gguf, a tokenizer.json or a checkpoint folder), or a table that has its own");
        }
        command.inputs.probe = probe_for_token(*data.vocabulary, *command.probe_token, command.inputs.vocab);
        validate(command.inputs);
    }
    return data;
}

std::string usage_synopsis() {
    const auto& line = report_command_line();
    return tools::usage_synopsis(line.program, tools::argument_texts(line));
}

std::string usage_text() { return tools::usage_text(report_command_line()); }

tools::Output run_report(const Command& command, CommandData data) {
    const auto measure_loaded = [&](auto& loaded) { return measure(std::move(loaded), command.inputs); };
    ReportResult result = data.table ? std::visit(measure_loaded, data.table->table) : measure(command.inputs);
    if (data.vocabulary) result.tokens = token_names(result, *data.vocabulary);
    const std::string json = render_json(result);
    const std::string svg = render_svg(result);
    return {command.out_dir,
            {{JSON_FILE, json}, {MARKDOWN_FILE, render_markdown(result)}, {SVG_FILE, svg},
             {HTML_FILE, render_html(result, json, svg)}}};
}

}  // namespace embed::report
