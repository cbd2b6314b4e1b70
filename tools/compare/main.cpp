// embed_compare: the shared command-line frame with the comparison's table; reading both tables and their
// token names is part of reading the arguments (a file the readers refuse is a bad argument, exit 2),
// comparing and rendering is the run (exit 1 when it or the writing fails). Exit statuses:
// tools/common/command_line.hpp.

#include "compare_run.hpp"

int main(int argc, char** argv) {
    using namespace embed::compare_tool;
    return embed::tools::run_command_line(compare_command_line(), argc, argv, load_compare_inputs,
                                          run_compare_command);
}
