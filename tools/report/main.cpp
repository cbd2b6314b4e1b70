// embed_report: the shared command-line frame with the report's table; loading --table's file and token
// names is part of reading the arguments (a file it cannot use is a bad argument, exit 2), measuring and
// rendering is the run (exit 1 when it or the writing fails). Exit statuses: tools/common/command_line.hpp.

#include "cli.hpp"

int main(int argc, char** argv) {
    using namespace embed::report;
    return embed::tools::run_command_line(report_command_line(), argc, argv, load_command_data, run_report);
}
