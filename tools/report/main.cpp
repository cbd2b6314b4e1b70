// embed_report: parse, validate, measure with the library, write three files.
// Exit 0 on success, 1 when the files cannot be written, 2 on bad arguments.

#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "atomic_write.hpp"
#include "cli.hpp"
#include "report.hpp"

namespace {

int run(const embed::report::Command& command) {
    using namespace embed::report;
    const ReportResult result = measure(command.inputs);
    const std::vector<OutputFile> files = {{JSON_FILE, render_json(result)},
                                           {MARKDOWN_FILE, render_markdown(result)},
                                           {SVG_FILE, render_svg(result)}};
    for (const auto& path : write_all_or_nothing(command.out_dir, files)) std::printf("wrote %s\n", path.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace embed::report;
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    Command command;
    try {
        command = parse_command_line(args);
    } catch (const std::invalid_argument& error) {
        std::fprintf(stderr, "embed_report: %s\n", error.what());
        return 2;
    }
    if (command.action == Command::Action::help) {
        std::fputs(usage_text().c_str(), stdout);
        return 0;
    }
    if (command.action == Command::Action::version) {
        std::printf("embed_report %s\n", EMBED_REPORT_VERSION);
        return 0;
    }
    try {
        return run(command);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "embed_report: %s\n", error.what());
        return 1;
    }
}
