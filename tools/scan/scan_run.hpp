#pragma once
// One run of embed_scan: what was scanned and what the library found, kept in
// one struct so the JSON, the Markdown and the page are three views of it.

#include <map>
#include <string>
#include <vector>

#include <embed/scan.hpp>

#include "command.hpp"

namespace embed::scan_tool {

/// Everything one run reports.
struct ScanRun {
    ScanSource source;
    Index vocab = 0;       // V: rows of both tables
    Index dim = 0;         // d: the input's row width
    Index output_dim = 0;  // d': the output's row width (d when tied)
    double percentile = 2.0;
    std::vector<Index> reference_ids;  // ascending, each once
    std::string reference_from;        // "--reference-ids", "unused tokens" or "none"
    VocabularyScan scan;
    std::map<Index, std::string> tokens;  // candidate and reference ids -> text; empty without token names
};

/// Scans inputs' tables with percentile (the input passed as both tables when tied) and names the candidate
/// and reference rows when a vocabulary is at hand. Consumes the tables.
ScanRun run_scan(ScanInputs inputs, double percentile);

/// The main indicator's values (V), the vector main_indicator names.
const Vector& main_values(const ScanRun& run);

/// The scan a command asks for, run on inputs (consumed): the three files and where they go.
tools::Output run_scan_command(const ScanCommand& command, ScanInputs inputs);

/// The three files of a scan, rendered from one run.
std::string render_scan_json(const ScanRun& run);
std::string render_scan_markdown(const ScanRun& run);
std::string render_scan_html(const ScanRun& run);

}  // namespace embed::scan_tool
