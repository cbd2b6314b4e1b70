#include "scan_run.hpp"

#include <utility>
#include <variant>

namespace embed::scan_tool {

ScanRun run_scan(ScanInputs inputs, double percentile) {
    ScanRun run;
    run.source = inputs.source;
    run.percentile = percentile;
    run.reference_ids = inputs.reference_ids;
    run.reference_from = inputs.reference_from;
    const ScanOptions options{inputs.reference_ids, percentile};
    std::visit(
        [&](auto& pair) {
            run.vocab = pair.input.rows();
            run.dim = pair.input.cols();
            // Tied: the one table as both arguments, so the library sees one object and skips the cosine.
            const auto& output = pair.output ? *pair.output : pair.input;
            run.output_dim = output.cols();
            run.scan = scan_vocabulary(pair.input, output, options);
        },
        inputs.tables);
    if (inputs.vocabulary) {
        for (const Index id : run.scan.candidates) run.tokens.emplace(id, row_name(*inputs.vocabulary, id));
        for (const Index id : run.reference_ids) run.tokens.emplace(id, row_name(*inputs.vocabulary, id));
    }
    return run;
}

tools::Output run_scan_command(const ScanCommand& command, ScanInputs inputs) {
    const ScanRun run = run_scan(std::move(inputs), command.percentile);
    return {command.out_dir,
            {{JSON_FILE, render_scan_json(run)}, {MARKDOWN_FILE, render_scan_markdown(run)},
             {HTML_FILE, render_scan_html(run)}}};
}

const Vector& main_values(const ScanRun& run) {
    return run.scan.main_indicator == "output_distance" ? *run.scan.output_distance : run.scan.input_norm;
}

}  // namespace embed::scan_tool
