#pragma once
// embed_compare's work as a library: the options a run takes, the run itself
// (load, compare with the library, name the rows), and the three files it
// writes, each a view of one CompareRun. main.cpp only parses and writes.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <embed/compare.hpp>

namespace embed::compare_tool {

/// The file names the tool writes, in the order it writes them.
inline constexpr const char* JSON_FILE = "embed_compare.json";
inline constexpr const char* MARKDOWN_FILE = "embed_compare.md";
inline constexpr const char* HTML_FILE = "embed_compare.html";

/// Pairs in `moved`: the rows of lowest row_cosine.
inline constexpr Index kMovedRows = 100;

/// What a run is asked for; the defaults are the tool's.
struct CompareCommand {
    enum class Action { run, help, version };
    Action action = Action::run;
    std::string a;  // A: a file or checkpoint directory
    std::string b;  // B
    RowMatch match = RowMatch::id;
    Alignment align = Alignment::none;
    Index probes = 1000;
    Index k = 10;
    std::uint64_t seed = 0;
    std::string a_tensor;
    std::string b_tensor;
    std::optional<std::string> a_tokenizer;
    std::optional<std::string> b_tokenizer;
    std::string out_dir = ".";
};

/// args excludes the program name: A B and "--flag value" or "--flag=value", each flag at most once; --help
/// (-h) or --version anywhere wins. invalid_argument (one line naming the flag, the value and what was
/// allowed) for unknown, repeated or valueless flags, a missing A or B, a bad number, k < 1, and an --out-dir
/// that is not an existing writable directory.
CompareCommand parse_compare_command(std::span<const std::string_view> args);

/// The usage text --help prints.
std::string compare_usage_text();

/// One of the rows that moved most.
struct MovedRow {
    Index a = 0;
    Index b = 0;
    std::optional<std::string> text;  // a's text of the row, else b's; none without a vocabulary
    double row_cosine = 0.0;
    double relative_change = 0.0;
};

/// Everything one run reports.
struct CompareRun {
    CompareCommand command;
    Index a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
    bool a_named = false;  // whether a vocabulary named a's rows
    bool b_named = false;
    TableComparison comparison;
    std::vector<MovedRow> moved;  // (at most kMovedRows) lowest row_cosine first
};

/// Reads both tables and their vocabularies (--a-tokenizer, else the file's own when it has one; for --match
/// text one is required), compares them and names the rows that moved most. Errors: the readers' and
/// compare_tables'.
CompareRun run_compare(const CompareCommand& command);

/// The three files of a run, rendered from one CompareRun.
std::string render_compare_json(const CompareRun& run);
std::string render_compare_markdown(const CompareRun& run);
std::string render_compare_html(const CompareRun& run);

}  // namespace embed::compare_tool
