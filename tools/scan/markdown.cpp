// embed_scan.md: what was scanned, what each indicator means, and the
// candidates by text, each number rounded to 6 significant digits.

#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scan_run.hpp"
#include "page.hpp"

namespace embed::scan_tool {
namespace {

// The Markdown lists this many candidates at most; the JSON and the page hold them all.
constexpr std::size_t kListed = 500;

// 6 significant digits, "NaN" and "+inf" / "-inf", as the page shows them (the JSON, which has no spelling
// for them, holds null).
std::string number(double value) { return pages::shown_number(value); }

// A token's text as a JSON string (quotes, \n for a newline), with '|' escaped for a table cell.
std::string cell_text(const ScanRun& run, Index id) {
    const auto found = run.tokens.find(id);
    if (found == run.tokens.end()) return "";
    std::string cell;
    for (const char c : nlohmann::json(found->second).dump()) {
        if (c == '|') cell += '\\';
        cell += c;
    }
    return cell;
}

void section_source(std::ostringstream& md, const ScanRun& run) {
    const ScanSource& s = run.source;
    md << "## What was scanned\n\n"
       << "- file: `" << s.file << "`, read as " << s.precision << " (every score computed in double)\n"
       << "- input table: `" << (s.input_tensor.empty() ? "(the .npy's array)" : s.input_tensor) << "`, " << run.vocab
       << " rows of " << run.dim << "\n";
    if (s.tied) {
        md << "- output table: the same table (tied: one table serves both ends)\n";
    } else {
        md << "- output table: `" << s.output_tensor << "`, " << run.vocab << " rows of " << run.output_dim << "\n";
    }
    md << "- reference rows (known to be unused): " << run.reference_ids.size() << ", from " << run.reference_from
       << "\n"
       << "- token names: " << (run.tokens.empty() ? "none at hand (ids only)" : "from the vocabulary") << "\n\n";
}

void section_indicators(std::ostringstream& md, const ScanRun& run) {
    const VocabularyScan& s = run.scan;
    md << "## What the indicators mean\n\n"
       << "- `input_norm`: the length of a token's input row. A token that was (almost) never in the training "
          "data keeps its row near where it started, which is usually short.\n"
       << "- `output_distance`: 1 minus the cosine between a token's output row and the mean of the reference "
          "rows, after the first principal component of the output rows (the direction all rows share) is "
          "projected out. Rows that never moved point where the unused rows point: a small distance.\n"
       << "- `input_output_cosine`: the cosine between a token's input and output rows (untied models only).\n\n";
    if (s.output_distance) {
        md << "The first principal component has eigenvalue " << number(s.principal_eigenvalue) << ", "
           << (s.principal_component_converged ? "found to within a bound of " + number(s.component_error_bound)
                                               : "NOT converged (bound " + number(s.component_error_bound) +
                                                     "): the gap to the next eigenvalue (" + number(s.eigenvalue_gap) +
                                                     ") is too small to trust the direction")
           << ".\n\n";
    } else {
        md << "With no reference rows there is nothing to measure `output_distance` against, so the scan ranks by "
              "`input_norm`.\n\n";
    }
}

void section_candidates(std::ostringstream& md, const ScanRun& run) {
    const VocabularyScan& s = run.scan;
    md << "## Candidates\n\n"
       << "Main indicator `" << s.main_indicator << "`; its percentile " << number(run.percentile) << " is "
       << number(s.threshold) << ", and " << s.candidates.size() << " of " << run.vocab
       << " rows lie at or below it (smallest first).";
    if (s.candidates.size() > kListed) md << " The first " << kListed << " are listed; the JSON and the page hold all.";
    // The main indicator's column first, then each other indicator the scan has, each once.
    std::vector<std::pair<std::string, const Vector*>> columns = {{s.main_indicator, &main_values(run)}};
    const auto add = [&](const char* name, const Vector* values) {
        if (values && name != s.main_indicator) columns.emplace_back(name, values);
    };
    add("input_norm", &s.input_norm);
    add("output_norm", &s.output_norm);
    add("output_distance", s.output_distance ? &*s.output_distance : nullptr);
    add("input_output_cosine", s.input_output_cosine ? &*s.input_output_cosine : nullptr);
    // Without token names the token column would be empty: it is left out.
    const bool named = !run.tokens.empty();
    md << "\n\n| rank | id |" << (named ? " token |" : "");
    for (const auto& column : columns) md << " " << column.first << " |";
    md << "\n| ---: | ---: |" << (named ? " --- |" : "");
    for (std::size_t c = 0; c < columns.size(); ++c) md << " ---: |";
    md << "\n";
    for (std::size_t rank = 0; rank < s.candidates.size() && rank < kListed; ++rank) {
        const Index id = s.candidates[rank];
        md << "| " << rank + 1 << " | " << id << " |";
        if (named) md << " " << cell_text(run, id) << " |";
        for (const auto& column : columns) md << " " << number((*column.second)[id]) << " |";
        md << "\n";
    }
    md << "\n";
}

}  // namespace

std::string render_scan_markdown(const ScanRun& run) {
    std::ostringstream md;
    md << "# Vocabulary scan: which tokens never learned anything\n\n";
    section_source(md, run);
    section_indicators(md, run);
    section_candidates(md, run);
    return md.str();
}

}  // namespace embed::scan_tool
