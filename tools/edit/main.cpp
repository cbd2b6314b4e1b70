// embed_edit: the shared command-line frame with the edit's table. edit_model refuses an edit before it
// writes anything, so the edit itself is the frame's loading step: its refusals, like the arguments', exit 2
// with nothing written; a write that fails exits 1 with no destination. The run prints what was done.
// Exit statuses: tools/common/command_line.hpp.

#include "edit_run.hpp"

int main(int argc, char** argv) {
    using namespace embed::edit_tool;
    return embed::tools::run_command_line(edit_command_line(), argc, argv, edit_as_asked, print_edit);
}
