// embed_scan: parse, load the table(s) and token names, scan with the library,
// write three files. Exit 0 on success, 2 on bad arguments (a file the loaders
// refuse included; nothing is written), 1 when the work fails.

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "atomic_write.hpp"
#include "command.hpp"
#include "scan_run.hpp"

namespace {

using namespace embed::scan_tool;

int fail(int status, const std::exception& error) {
    std::fprintf(stderr, "embed_scan: %s\n", error.what());
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    ScanCommand command;
    ScanInputs inputs;
    try {
        command = parse_scan_command(args);
        if (command.action == ScanCommand::Action::help) {
            std::fputs(scan_usage_text().c_str(), stdout);
            return 0;
        }
        if (command.action == ScanCommand::Action::version) {
            std::printf("embed_scan %s\n", EMBED_SCAN_VERSION);
            return 0;
        }
        inputs = load_scan_inputs(command);
    } catch (const std::invalid_argument& error) {
        return fail(2, error);
    } catch (const std::exception& error) {
        return fail(1, error);  // out of memory for a well-formed table: the work failed, not the argument
    }
    try {
        const ScanRun run = run_scan(std::move(inputs), command.percentile);
        const std::vector<embed::tools::OutputFile> files = {{JSON_FILE, render_scan_json(run)},
                                                             {MARKDOWN_FILE, render_scan_markdown(run)},
                                                             {HTML_FILE, render_scan_html(run)}};
        for (const auto& path : embed::tools::write_all_or_nothing(command.out_dir, files)) {
            std::printf("wrote %s\n", path.c_str());
        }
        return 0;
    } catch (const std::exception& error) {
        return fail(1, error);
    }
}
