#pragma once
// embed_edit's command line: the flags, what each allows, and the tokens a run adds (from the list or the
// file), checked before the model is read.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <embed/edit.hpp>
#include <embed/element_type.hpp>
#include <embed/types.hpp>

#include "command_line.hpp"
#include "id_list.hpp"

namespace embed::edit_tool {

/// What the command line asks for, as given (the files are read by edit_as_asked).
struct EditCommand {
    std::string table;                                  // --table SRC
    std::string out;                                    // --out DST
    std::optional<std::vector<std::string>> add_tokens;  // --add-tokens LIST, split
    std::optional<std::string> add_tokens_file;         // --add-tokens-file F
    bool special = false;                               // --special
    bool allow_duplicates = false;                      // --allow-duplicates
    Index pad_to_multiple_of = 0;                       // --pad-to-multiple-of K (0: not given)
    std::optional<std::vector<tools::IdRange>> reinitialise_ids;  // --reinitialise IDS
    bool reinitialise_under_trained = false;            // --reinitialise under-trained
    RowInit init = RowInit::mean;                       // --init
    std::uint64_t seed = 0;                             // --seed
    std::optional<ElementType> type;                    // --type (nullopt: same)
    bool json = false;                                  // --json
};

/// embed_edit's whole command line for the shared frame (tools/common/command_line.hpp).
const tools::CommandLine<EditCommand>& edit_command_line();

/// --add-tokens's value as tokens: split at each ',' not escaped; "\," is a comma inside a token and "\\" a
/// backslash. An empty token, a backslash before anything else or at the end, and text that is not UTF-8
/// throw invalid_argument naming flag, the list and what was wrong.
std::vector<std::string> split_token_list(const tools::ArgumentText& flag, std::string_view list);

/// The tokens of file: one a line, UTF-8 (a leading byte-order mark skipped), a line ending "\n" or "\r\n",
/// the last line's ending optional. A file that cannot be read, holds no token, has an empty line or a line
/// that is not UTF-8 throws invalid_argument naming flag, the file and the line.
std::vector<std::string> read_token_file(const tools::ArgumentText& flag, const std::filesystem::path& file);

/// Whether text is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view text);

}  // namespace embed::edit_tool
