// embed_report: parse, validate (loading --table's file and token names), measure with the
// library, write four files. Exit 0 on success, 2 on bad arguments (a file
// --table cannot use included; nothing is written), 1 when the work fails.

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "atomic_write.hpp"
#include "cli.hpp"
#include "report.hpp"
#include "tokens.hpp"

namespace {

using namespace embed::report;

// data.table is the loaded table (V, d) in its file's precision, or empty to generate one from the
// inputs. It is moved into measure, so it is freed before the files are rendered.
int run(const Command& command, CommandData data) {
    const auto measure_loaded = [&](auto& loaded) { return measure(std::move(loaded), command.inputs); };
    ReportResult result = data.table ? std::visit(measure_loaded, *data.table) : measure(command.inputs);
    if (data.vocabulary) result.tokens = token_names(result, *data.vocabulary);
    const std::string json = render_json(result);
    const std::string svg = render_svg(result);
    const std::vector<embed::tools::OutputFile> files = {{JSON_FILE, json},
                                                         {MARKDOWN_FILE, render_markdown(result)},
                                                         {SVG_FILE, svg},
                                                         {HTML_FILE, render_html(result, json, svg)}};
    for (const auto& path : embed::tools::write_all_or_nothing(command.out_dir, files)) {
        std::printf("wrote %s\n", path.c_str());
    }
    return 0;
}

int fail(int status, const std::exception& error) {
    std::fprintf(stderr, "embed_report: %s\n", error.what());
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    Command command;
    CommandData data;
    try {
        command = parse_command_line(args);
        if (command.action == Command::Action::help) {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        }
        if (command.action == Command::Action::version) {
            std::printf("embed_report %s\n", EMBED_REPORT_VERSION);
            return 0;
        }
        data = load_command_data(command);
    } catch (const std::invalid_argument& error) {
        return fail(2, error);
    } catch (const std::exception& error) {
        return fail(1, error);  // out of memory for a table that is well-formed: the work failed, not the argument
    }
    try {
        return run(command, std::move(data));
    } catch (const std::exception& error) {
        return fail(1, error);
    }
}
