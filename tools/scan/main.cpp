// embed_scan: the shared command-line frame with the scan's table; loading the table(s) and token names is
// part of reading the arguments (a file the loaders refuse is a bad argument, exit 2), scanning and rendering
// is the run (exit 1 when it or the writing fails). Exit statuses: tools/common/command_line.hpp.

#include "command.hpp"
#include "scan_run.hpp"

int main(int argc, char** argv) {
    using namespace embed::scan_tool;
    return embed::tools::run_command_line(scan_command_line(), argc, argv, load_scan_inputs, run_scan_command);
}
