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
#include <embed/io.hpp>
#include <embed/vocabulary.hpp>

#include "command_line.hpp"
#include "side_scan.hpp"
#include "verdict.hpp"

namespace embed::compare_tool {

/// The file names the tool writes, in the order it writes them.
inline constexpr const char* JSON_FILE = "embed_compare.json";
inline constexpr const char* MARKDOWN_FILE = "embed_compare.md";
inline constexpr const char* HTML_FILE = "embed_compare.html";

/// Pairs in `moved`: the rows of lowest row_cosine.
inline constexpr Index kMovedRows = 100;

/// What a run is asked for; the defaults are the tool's.
struct CompareCommand {
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

/// The tool's command line on the shared frame (tools/common/command_line.hpp): A B and the flags of
/// tools/compare/README.md, each refused (exit 2) with one line naming the flag, the value and what was allowed.
const tools::CommandLine<CompareCommand>& compare_command_line();

/// The two tables and the token names a run compares: read before any work, so that a file the readers refuse
/// is a bad argument (exit 2) like any other. Opened with open_table: a quantised table stays in its blocks.
struct CompareInputs {
    OpenedTable a;
    OpenedTable b;
    std::optional<Vocabulary> a_vocabulary;  // --a-tokenizer's, else a's own file's when it has one
    std::optional<Vocabulary> b_vocabulary;
};

/// Reads what command names: both tables (A with --a-tensor, B with --b-tensor) and their vocabularies
/// (--X-tokenizer, else the file's own when it holds one; for --match text both are required). Refusals as
/// invalid_argument "A 'PATH' cannot be used: REASON".
CompareInputs load_compare_inputs(const CompareCommand& command);

/// One of the rows that moved most.
struct MovedRow {
    Index a = 0;
    Index b = 0;
    std::optional<std::string> text;  // a's text of the row, else b's; none without a vocabulary
    double row_cosine = 0.0;
    double relative_change = 0.0;
};

/// One side's scan and what became of its candidates' pairs.
struct CandidateScan {
    SideScan scan;
    Index paired = 0;  // candidates that are in a pair (with --match text, a row whose text the other side lacks is not)
    /// The candidates whose pair moved (verdict.hpp), ascending; none for tables of different widths.
    std::vector<Index> moved;
};

/// Everything one run reports.
struct CompareRun {
    CompareCommand command;
    Index a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
    bool a_named = false;  // whether a vocabulary named a's rows
    bool b_named = false;
    TableComparison comparison;
    std::vector<MovedRow> moved;  // (at most kMovedRows) lowest row_cosine first
    Verdict verdict;              // verdict_of(comparison)
    CandidateScan scan_a;         // the scan of A (side_scan.hpp), its ids A's rows
    CandidateScan scan_b;         // the scan of B, its ids B's rows
};

/// Compares the inputs with the library, names the rows that moved most and scans each table for under-trained
/// rows (scan_side). Errors: compare_tables'.
CompareRun compare_inputs(const CompareCommand& command, const CompareInputs& inputs);

/// load_compare_inputs then compare_inputs: one whole run, for the tests.
CompareRun run_compare(const CompareCommand& command);

/// A run as the frame writes it: the three files into --out-dir.
tools::Output run_compare_command(const CompareCommand& command, CompareInputs inputs);

/// The three files of a run, rendered from one CompareRun.
std::string render_compare_json(const CompareRun& run);
std::string render_compare_markdown(const CompareRun& run);
std::string render_compare_html(const CompareRun& run);

}  // namespace embed::compare_tool
