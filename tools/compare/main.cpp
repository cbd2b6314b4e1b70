// embed_compare: parse, compare two tables with the library, write three files. Exit 0 on success, 2 on bad
// arguments (nothing is written), 1 when the work fails (earlier output files stay as they were).

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "atomic_write.hpp"
#include "compare_run.hpp"

namespace {

using namespace embed::compare_tool;

int fail(int status, const std::exception& error) {
    std::fprintf(stderr, "embed_compare: %s\n", error.what());
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    CompareCommand command;
    try {
        command = parse_compare_command(args);
    } catch (const std::invalid_argument& error) {
        return fail(2, error);
    }
    if (command.action == CompareCommand::Action::help) {
        std::fputs(compare_usage_text().c_str(), stdout);
        return 0;
    }
    if (command.action == CompareCommand::Action::version) {
        std::printf("embed_compare %s\n", EMBED_COMPARE_VERSION);
        return 0;
    }
    try {
        const CompareRun run = run_compare(command);
        const std::vector<embed::tools::OutputFile> files = {{JSON_FILE, render_compare_json(run)},
                                                             {MARKDOWN_FILE, render_compare_markdown(run)},
                                                             {HTML_FILE, render_compare_html(run)}};
        for (const auto& path : embed::tools::write_all_or_nothing(command.out_dir, files)) {
            std::printf("wrote %s\n", path.c_str());
        }
        return 0;
    } catch (const std::exception& error) {
        return fail(1, error);
    }
}
