// embed_compare.md: what was compared, the per-row measures' percentiles, the neighbourhoods, the output
// layers, and the rows that moved most by text; each number as the JSON holds it, printed with %.6g.

#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compare_run.hpp"
#include "numbers.hpp"

namespace embed::compare_tool {
namespace {

// The Markdown lists this many moved rows; the JSON and the page hold kMovedRows.
constexpr std::size_t kListed = 20;

// A token's text as a JSON string (quotes, \n for a newline), with '|' escaped for a table cell.
std::string cell_text(const std::optional<std::string>& text) {
    if (!text) return "";
    std::string cell;
    for (const char c : nlohmann::json(*text).dump()) {
        if (c == '|') cell += '\\';
        cell += c;
    }
    return cell;
}

void percentile_row(std::ostringstream& md, const char* name, const std::optional<Percentiles>& p) {
    md << "| " << name;
    for (std::size_t i = 0; i < Percentiles::levels.size(); ++i) md << " | " << (p ? number(p->values[i]) : "-");
    md << " |\n";
}

// At most this many ids of the candidates that moved are listed; the JSON holds them all.
constexpr std::size_t kListedIds = 20;

void scan_lines(std::ostringstream& md, const char* side, const CandidateScan& side_scan, bool has_cosines) {
    const SideScan& scan = side_scan.scan;
    md << "- " << side << ": " << scan.candidates.size() << " candidates (" << scan.main_indicator << " at most "
       << number(scan.threshold) << ", its " << number(kScanPercentile) << "th percentile; reference rows: "
       << (scan.reference_count > 0 ? std::to_string(scan.reference_count) + " unused tokens" : "none")
       << "); " << side_scan.paired << " paired";
    if (has_cosines) {
        md << ", " << side_scan.moved.size() << " of them moved";
        if (!side_scan.moved.empty()) {
            md << ":";
            for (std::size_t i = 0; i < std::min(kListedIds, side_scan.moved.size()); ++i) {
                md << " " << side_scan.moved[i];
            }
            if (side_scan.moved.size() > kListedIds) md << " ...";
        }
    }
    md << "\n";
}

}  // namespace

std::string render_compare_markdown(const CompareRun& run) {
    const TableComparison& c = run.comparison;
    const CompareCommand& command = run.command;
    std::ostringstream md;
    md << "# embed_compare\n\n## What was compared\n\n"
       << "- A: `" << command.a << "`, " << run.a_rows << " x " << run.a_cols << "\n"
       << "- B: `" << command.b << "`, " << run.b_rows << " x " << run.b_cols << "\n"
       << "- rows paired by " << (command.match == RowMatch::text ? "text" : "id") << ": " << c.matched
       << " pairs; unmatched: " << c.unmatched_a << " in A, " << c.unmatched_b << " in B\n"
       << "- alignment: " << (c.rotation ? "orthogonal (A's rows rotated onto B's)" : "none") << "\n\n";
    md << "## Verdict\n\n**" << run.verdict.summary << "**: " << run.verdict.identical << " pairs identical "
       << "(relative change at most " << number(kIdenticalRelativeChange) << "), " << run.verdict.close
       << " close, " << run.verdict.moved << " moved (row cosine below " << number(kMovedCosine) << ").\n\n";
    md << "## Under-trained rows\n\nThe vocabulary scan (as embed_scan runs it) of each table; a candidate is a "
       << "row that may never have been trained. A candidate of A that moved was trained between A and B.\n\n";
    scan_lines(md, "A", run.scan_a, c.row_cosine.has_value());
    scan_lines(md, "B", run.scan_b, c.row_cosine.has_value());
    md << "\n## Per row\n\nPercentiles over the pairs (NaN left out):\n\n| measure | 1 | 5 | 50 | 95 | 99 |\n"
       << "| --- | --- | --- | --- | --- | --- |\n";
    percentile_row(md, "row_cosine", c.row_cosine_percentiles);
    percentile_row(md, "norm_a", c.norm_a_percentiles);
    percentile_row(md, "norm_b", c.norm_b_percentiles);
    percentile_row(md, "relative_change", c.relative_change_percentiles);
    md << "\n## Neighbourhoods\n\n"
       << "Over " << c.probe_ids.size() << " probe rows, the share of each row's " << command.k
       << " nearest rows by cosine in A that are also its nearest in B: mean " << number(mean_of(c.neighbour_overlap))
       << ", lowest " << number(lowest_of(c.neighbour_overlap)) << ".\n\n";
    md << "## As output layers\n\n";
    if (c.top1_agreement) {
        md << "Over " << c.hidden_count << " hidden vectors: top-1 agreement " << number(*c.top1_agreement)
           << ", top-" << command.k << " overlap " << number(*c.topk_overlap) << ", mean KL divergence "
           << number(*c.kl_divergence) << ", largest logit difference " << number(*c.max_abs_logit_diff) << ".\n\n";
    } else {
        md << "The tables differ in width, so they cannot score the same hidden vectors.\n\n";
    }
    md << "## The rows that moved most\n\n";
    if (run.moved.empty()) {
        md << "No row cosine without tables of one width.\n";
        return md.str();
    }
    md << "| rank | a | b | text | row_cosine | relative_change |\n| --- | --- | --- | --- | --- | --- |\n";
    for (std::size_t i = 0; i < std::min(kListed, run.moved.size()); ++i) {
        const MovedRow& row = run.moved[i];
        md << "| " << i + 1 << " | " << row.a << " | " << row.b << " | " << cell_text(row.text) << " | "
           << number(row.row_cosine) << " | " << number(row.relative_change) << " |\n";
    }
    return md.str();
}

}  // namespace embed::compare_tool
