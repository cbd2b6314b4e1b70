// embed_scan.json: the run's inputs, the scalar results, then one array per
// indicator (V values each, in id order; NaN and infinities as null, which
// JSON has no other spelling for) and the names of the ids it lists.

#include <nlohmann/json.hpp>

#include "scan_run.hpp"
#include "tokens_json.hpp"

namespace embed::scan_tool {
namespace {

nlohmann::ordered_json values(const Vector& v) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const double x : v) array.push_back(x);  // nlohmann writes NaN and infinities as null
    return array;
}

nlohmann::ordered_json optional_values(const std::optional<Vector>& v) {
    return v ? values(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string render_scan_json(const ScanRun& run) {
    const VocabularyScan& s = run.scan;
    nlohmann::ordered_json j;
    j["source"] = {{"file", run.source.file},
                   {"input_tensor", run.source.input_tensor},
                   {"output_tensor", run.source.output_tensor},
                   {"precision", run.source.precision}};
    j["vocab"] = run.vocab;
    j["dim"] = run.dim;
    j["output_dim"] = run.output_dim;
    j["tied"] = run.source.tied;
    j["percentile"] = run.percentile;
    j["reference_from"] = run.reference_from;
    j["reference_ids"] = run.reference_ids;
    j["main_indicator"] = s.main_indicator;
    j["threshold"] = s.threshold;
    j["candidates"] = s.candidates;
    // The component is found only for output_distance, so without reference rows there is none to describe.
    if (s.output_distance) {
        j["principal_component"] = {{"eigenvalue", s.principal_eigenvalue},
                                    {"gap", s.eigenvalue_gap},
                                    {"error_bound", s.component_error_bound},
                                    {"converged", s.principal_component_converged}};
    } else {
        j["principal_component"] = nullptr;
    }
    j["input_norm"] = values(s.input_norm);
    j["output_norm"] = values(s.output_norm);
    j["output_distance"] = optional_values(s.output_distance);
    j["input_output_cosine"] = optional_values(s.input_output_cosine);
    if (!run.tokens.empty()) j["tokens"] = tools::tokens_json(run.tokens);
    return j.dump(1) + "\n";
}

}  // namespace embed::scan_tool
