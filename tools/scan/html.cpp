// embed_scan.html: one self-contained page (tools/pages) with the run's
// numbers, the histogram inline and the candidates (and reference rows) as
// tables sortable by any column.

#include <utility>

#include "histogram.hpp"
#include "page.hpp"
#include "scan_run.hpp"

namespace embed::scan_tool {
namespace {

std::string text_of(const ScanRun& run, Index id) {
    const auto found = run.tokens.find(id);
    return found == run.tokens.end() ? "" : found->second;
}

// A number of the run rounded for reading (pages::shown_number), the value in full on hover.
pages::Number number_of(std::string name, double value) {
    const std::string shown = pages::shown_number(value);
    const std::string full = pages::full_number(value);
    return {std::move(name), shown, shown == full ? "" : full};
}

pages::Numbers numbers_of(const ScanRun& run) {
    const VocabularyScan& s = run.scan;
    pages::Numbers numbers = {
        {"file", run.source.file},
        {"input_tensor", run.source.input_tensor},
        {"output_tensor", run.source.output_tensor},
        {"precision", run.source.precision},
        {"vocab", std::to_string(run.vocab)},
        {"dim", std::to_string(run.dim)},
        {"output_dim", std::to_string(run.output_dim)},
        {"tied", run.source.tied ? "true" : "false"},
        number_of("percentile", run.percentile),
        {"reference_from", run.reference_from},
        {"reference_ids", std::to_string(run.reference_ids.size()) + " rows"},
        {"main_indicator", s.main_indicator},
        number_of("threshold", s.threshold),
        {"candidates", std::to_string(s.candidates.size()) + " rows"},
    };
    if (s.output_distance) {
        numbers.push_back(number_of("principal_component.eigenvalue", s.principal_eigenvalue));
        numbers.push_back(number_of("principal_component.gap", s.eigenvalue_gap));
        numbers.push_back(number_of("principal_component.error_bound", s.component_error_bound));
        numbers.push_back({"principal_component.converged", s.principal_component_converged ? "true" : "false", ""});
    }
    return numbers;
}

// One row per id: id, text (with token names), then each indicator the scan has.
pages::SortableTable rows_table(const ScanRun& run, std::string id, std::string caption, const std::vector<Index>& ids) {
    const VocabularyScan& s = run.scan;
    pages::SortableTable table{std::move(id), std::move(caption), {}, {}};
    using Kind = pages::SortableTable::Kind;
    // Without token names there is no token column (the page would leave an empty one out, but not from a
    // table without rows).
    table.columns = {{"id", Kind::number}};
    if (!run.tokens.empty()) table.columns.push_back({"token", Kind::text});
    table.columns.push_back({"input_norm", Kind::number});
    table.columns.push_back({"output_norm", Kind::number});
    if (s.output_distance) table.columns.push_back({"output_distance", Kind::number});
    if (s.input_output_cosine) table.columns.push_back({"input_output_cosine", Kind::number});
    for (const Index row : ids) {
        std::vector<pages::Cell> cells = {{std::to_string(row), static_cast<double>(row)}};
        if (!run.tokens.empty()) cells.push_back({text_of(run, row), 0.0});
        cells.push_back(pages::number_cell(s.input_norm[row]));
        cells.push_back(pages::number_cell(s.output_norm[row]));
        if (s.output_distance) cells.push_back(pages::number_cell((*s.output_distance)[row]));
        if (s.input_output_cosine) cells.push_back(pages::number_cell((*s.input_output_cosine)[row]));
        table.rows.push_back(std::move(cells));
    }
    return table;
}

}  // namespace

std::string render_scan_html(const ScanRun& run) {
    const VocabularyScan& s = run.scan;
    pages::Page page("Vocabulary scan: which tokens never learned anything");
    page.paragraph("Each row's input norm, and its output row's cosine distance to the rows known to be unused once the "
                   "output table's first principal component is projected out (Land & Bartolo, 2024). Candidates: "
                   "the rows whose " + s.main_indicator + " is at or below its percentile " +
                   pages::full_number(run.percentile) +
                   " (numpy's linear rule). Numbers show 6 significant digits, in full when the pointer rests on "
                   "them (and in embed_scan.json). Click a column's header to sort by it.");
    page.heading("Numbers");
    page.numbers("numbers", numbers_of(run));
    page.heading("Distribution");
    page.figure(histogram_svg(run), "Histogram of " + s.main_indicator + " over every row: candidates in red, the "
                                    "threshold dashed.");
    page.heading("Candidates");
    page.table(rows_table(run, "candidates", std::to_string(s.candidates.size()) + " candidates, smallest " +
                                                 s.main_indicator + " first",
                          s.candidates));
    if (!run.reference_ids.empty()) {
        page.heading("Reference rows");
        page.table(rows_table(run, "references",
                              std::to_string(run.reference_ids.size()) + " rows known to be unused, from " +
                                  run.reference_from,
                              run.reference_ids));
    }
    return page.str();
}

}  // namespace embed::scan_tool
