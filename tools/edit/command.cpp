#include "command.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

#include "arguments.hpp"

namespace embed::edit_tool {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

using Flag = tools::Argument<EditCommand>;

constexpr std::string_view kTable = "--table";
constexpr std::string_view kOut = "--out";
constexpr std::string_view kAddTokens = "--add-tokens";
constexpr std::string_view kAddTokensFile = "--add-tokens-file";
constexpr std::string_view kSpecial = "--special";
constexpr std::string_view kAllowDuplicates = "--allow-duplicates";
constexpr std::string_view kPad = "--pad-to-multiple-of";
constexpr std::string_view kReinitialise = "--reinitialise";
constexpr std::string_view kType = "--type";

std::string named(std::string_view flag_name, std::string_view value) {
    return std::string(flag_name) + " '" + std::string(value) + "'";
}

std::string allowed_note(const tools::ArgumentText& flag) { return " (allowed: " + std::string(flag.allowed) + ")"; }

const Flag& flag(std::string_view name) {
    const auto& arguments = edit_command_line().arguments;
    return *std::find_if(arguments.begin(), arguments.end(), [name](const Flag& f) { return f.name == name; });
}

std::string lower_extension(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    std::ranges::transform(extension, extension.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension;
}

/// The length of the UTF-8 sequence text starts with, 0 when it is not a valid one.
std::size_t utf8_sequence(std::string_view text) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    const std::size_t length = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
                             : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
    if (length == 0 || text.size() < length) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return 0;
    }
    // The second byte's range rules out overlong forms (E0, F0), surrogates (ED) and past U+10FFFF (F4).
    if (lead == 0xE0 && byte(1) < 0xA0) return 0;
    if (lead == 0xED && byte(1) > 0x9F) return 0;
    if (lead == 0xF0 && byte(1) < 0x90) return 0;
    if (lead == 0xF4 && byte(1) > 0x8F) return 0;
    return length;
}

void parse_table(EditCommand& command, const Flag&, std::string_view value) { command.table = std::string(value); }
void parse_out(EditCommand& command, const Flag&, std::string_view value) { command.out = std::string(value); }

void parse_add_tokens(EditCommand& command, const Flag& f, std::string_view value) {
    command.add_tokens = split_token_list(f, value);
}

void parse_add_tokens_file(EditCommand& command, const Flag& f, std::string_view value) {
    if (value.empty()) refuse(std::string(f.name) + " is empty" + allowed_note(f));
    command.add_tokens_file = std::string(value);
}

void parse_special(EditCommand& command, const Flag&, std::string_view) { command.special = true; }
void parse_allow_duplicates(EditCommand& command, const Flag&, std::string_view) { command.allow_duplicates = true; }

// 0 is edit_model's "no padding", so the flag refuses it: asking to pad must pad.
void parse_pad(EditCommand& command, const Flag& f, std::string_view value) {
    const std::int64_t k = tools::integer_argument(f, value);
    if (k < 1) refuse(std::string(f.name) + " " + std::string(value) + " must be " + std::string(f.allowed));
    command.pad_to_multiple_of = k;
}

void parse_reinitialise(EditCommand& command, const Flag& f, std::string_view value) {
    if (value == "under-trained") {
        command.reinitialise_under_trained = true;
    } else {
        command.reinitialise_ids = tools::parse_id_list(f, value);
    }
}

void parse_init(EditCommand& command, const Flag& f, std::string_view value) {
    if (value != "mean" && value != "sampled" && value != "zeros") {
        refuse(named(f.name, value) + " is not a rule" + allowed_note(f));
    }
    command.init = parse_row_init(value);
}

void parse_seed(EditCommand& command, const Flag& f, std::string_view value) {
    command.seed = tools::unsigned_argument(f, value);
}

void parse_type(EditCommand& command, const Flag& f, std::string_view value) {
    if (value == "same") {
        command.type.reset();
        return;
    }
    const std::optional<ElementType> type = find_element_type(value);
    if (!type) refuse(named(f.name, value) + " is not an element type" + allowed_note(f));
    command.type = type;
}

void parse_json(EditCommand& command, const Flag&, std::string_view) { command.json = true; }

/// --table names an existing .gguf file or folder; a plain table file is refused with what to use instead.
void require_model_source(const std::string& table) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(table, error);
    if (!std::filesystem::exists(status)) refuse(named(kTable, table) + " does not exist" + allowed_note(flag(kTable)));
    if (std::filesystem::is_directory(status)) return;
    const std::string extension = lower_extension(table);
    if (extension == ".npy" || extension == ".safetensors") {
        refuse(named(kTable, table) + " is a table file, not a model (allowed: " + std::string(flag(kTable).allowed) +
               "); a table is edited with resize_rows, pad_to_multiple_of, reinitialise_rows and save_table");
    }
    if (!std::filesystem::is_regular_file(status) || extension != ".gguf") {
        refuse(named(kTable, table) + " is neither a .gguf file nor a folder" + allowed_note(flag(kTable)));
    }
}

/// --out names nothing yet, in a directory the edit may write into.
void require_new_destination(const std::string& table, const std::string& out) {
    std::error_code error;
    if (std::filesystem::exists(std::filesystem::symlink_status(out, error))) {
        const bool is_source = std::filesystem::equivalent(out, table, error);
        refuse(named(kOut, out) + (is_source ? " is the source --table" : " exists") + allowed_note(flag(kOut)));
    }
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    tools::require_writable_directory(kOut, flag(kOut).allowed, parent.empty() ? "." : parent.string());
}

// Checked before the model is read: the edits asked for must be some edit, said once.
void finish(EditCommand& command, const std::set<std::string_view>& given) {
    if (given.contains(kAddTokens) && given.contains(kAddTokensFile)) {
        refuse(std::string(kAddTokens) + " and " + std::string(kAddTokensFile) + " are both given; give one of them");
    }
    const bool adds = given.contains(kAddTokens) || given.contains(kAddTokensFile);
    for (const std::string_view marker : {kSpecial, kAllowDuplicates}) {
        if (given.contains(marker) && !adds) {
            refuse(std::string(marker) + " is about tokens to add, and neither " + std::string(kAddTokens) + " nor " +
                   std::string(kAddTokensFile) + " is given");
        }
    }
    if (!adds && !given.contains(kPad) && !given.contains(kReinitialise) && !command.type) {
        refuse("nothing to edit: give at least one of --add-tokens, --add-tokens-file, --pad-to-multiple-of, "
               "--reinitialise, --type (other than same)");
    }
    require_model_source(command.table);
    require_new_destination(command.table, command.out);
}

}  // namespace

std::vector<std::string> split_token_list(const tools::ArgumentText& f, std::string_view list) {
    const auto wrong = [&](const std::string& what) { refuse(named(f.name, list) + " " + what + allowed_note(f)); };
    if (!valid_utf8(list)) wrong("is not UTF-8");
    std::vector<std::string> tokens(1);
    for (std::size_t i = 0; i < list.size(); ++i) {
        const char c = list[i];
        if (c == ',') {
            tokens.emplace_back();
        } else if (c != '\\') {
            tokens.back() += c;
        } else if (i + 1 < list.size() && (list[i + 1] == ',' || list[i + 1] == '\\')) {
            tokens.back() += list[++i];
        } else {
            wrong("has a backslash that is not followed by ',' or '\\'");
        }
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].empty()) wrong("has an empty token (token " + std::to_string(i + 1) + ")");
    }
    return tokens;
}

std::vector<std::string> read_token_file(const tools::ArgumentText& f, const std::filesystem::path& file) {
    const std::string shown = named(f.name, file.string());
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error)) refuse(shown + " is not a readable file" + allowed_note(f));
    std::ifstream in(file, std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.eof() && !in) refuse(shown + " cannot be read" + allowed_note(f));
    if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
    if (text.empty()) refuse(shown + " holds no tokens" + allowed_note(f));
    if (text.ends_with('\n')) text.pop_back();
    std::vector<std::string> tokens;
    std::size_t start = 0;
    for (std::size_t line = 1; start <= text.size(); ++line) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string token = text.substr(start, end - start);
        if (token.ends_with('\r')) token.pop_back();
        if (token.empty()) refuse(shown + " has an empty line " + std::to_string(line) + allowed_note(f));
        if (!valid_utf8(token)) refuse(shown + " has line " + std::to_string(line) + ", which is not UTF-8" + allowed_note(f));
        tokens.push_back(std::move(token));
        start = end + 1;
    }
    return tokens;
}

bool valid_utf8(std::string_view text) {
    while (!text.empty()) {
        const std::size_t length = utf8_sequence(text);
        if (length == 0) return false;
        text.remove_prefix(length);
    }
    return true;
}

const tools::CommandLine<EditCommand>& edit_command_line() {
    static const tools::CommandLine<EditCommand> line{
        "embed_edit",
        EMBED_EDIT_VERSION,
        "Edits a model's vocabulary into a new file or folder: adds tokens (their rows by --init),\n"
        "pads the rows to a multiple, re-initialises rows, or changes the table's element type.\n"
        "The token embedding and an untied output table are edited alike, every other tensor and\n"
        "key is copied. The source never changes; the destination appears whole or not at all.\n"
        "Prints a summary of the edit (or, with --json, the edit record and nothing else).\n",
        "A token list is split at commas: 'a,b' is two tokens; write '\\,' for a comma inside a\n"
        "token and '\\\\' for a backslash ('x\\,y' is the one token x,y). Tokens keep their spaces.\n"
        "--reinitialise under-trained takes embed_scan's candidates (the vocabulary's unused tokens\n"
        "as reference rows); IDS are comma-separated ids and inclusive ranges, as embed_scan's\n"
        "--reference-ids. Element types: f64, f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k,\n"
        "q3_k, q4_k, q5_k, q6_k (upper case too); the q types into a .gguf only, for rows whose\n"
        "width is a whole number of blocks. An edit the model refuses (a token already there, an\n"
        "id outside the rows, a type the rows do not fit, a source that changed while it was\n"
        "read) is a bad argument too: exit 2, nothing written.\n",
        {
            {{kTable, "SRC", "the model to edit", "a .gguf file or a Hugging Face checkpoint folder", "", true},
             parse_table},
            {{kOut, "DST", "where the edited model goes",
              "a path where nothing is yet, in an existing, writable directory", "", true},
             parse_out},
            {{kAddTokens, "LIST", "tokens to add, in the order they take ids",
              "comma-separated UTF-8 tokens, none empty or already there (below)", "none"},
             parse_add_tokens},
            {{kAddTokensFile, "F", "a file of tokens to add, one a line",
              "a UTF-8 text file, one token a line, no empty line", "none"},
             parse_add_tokens_file},
            {{kSpecial, "", "added tokens are control tokens (GGUF type 3; special in tokenizer.json)", "", ""},
             parse_special},
            {{kAllowDuplicates, "", "allow adding a token the vocabulary already has", "", ""}, parse_allow_duplicates},
            {{kPad, "K", "rows rounded up to a multiple of K, after the added tokens", "an integer >= 1", "no padding"},
             parse_pad},
            {{kReinitialise, "under-trained|IDS", "rows to set anew by --init",
              "under-trained, or ids and ranges in [0, V) (3,7,10-12)", "none"},
             parse_reinitialise},
            {{"--init", "RULE", "how new and re-initialised rows are filled", "mean, sampled or zeros", "mean"},
             parse_init},
            {{"--seed", "N", "the seed of --init sampled", "an integer in [0, 2^64)", "0"}, parse_seed},
            {{kType, "TYPE", "the element type the table is written in",
              "same, or an element type (below)", "same"},
             parse_type},
            {{"--json", "", "print the edit record as JSON instead of the summary", "", ""}, parse_json},
        },
        finish};
    return line;
}

}  // namespace embed::edit_tool
