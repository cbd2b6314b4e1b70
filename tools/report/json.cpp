// embed_report.json: the thirty keys of SPECIFICATION.md, Report keys, in its order. For a
// loaded table seed is null and a thirty-first key, source, follows it; with
// token names a last key, tokens, maps each id shown to its text.

#include <nlohmann/json.hpp>

#include "format.hpp"
#include "report.hpp"
#include "tokens_json.hpp"

namespace embed::report {

std::string render_json(const ReportResult& r) {
    // ordered_json keeps SPECIFICATION.md's key order, so the file reads like its table.
    nlohmann::ordered_json j;
    j["vocab"] = r.inputs.vocab;
    j["dim"] = r.inputs.dim;
    if (r.inputs.source) {
        j["seed"] = nullptr;  // a loaded table was not generated from a seed
        j["source"] = source_json(*r.inputs.source);
    } else {
        j["seed"] = r.inputs.seed;  // uint64: nlohmann writes values past 2^63 as unsigned integers
    }
    j["probe"] = r.inputs.probe;
    j["table_shape"] = {r.table_shape.rows, r.table_shape.cols};
    j["params"] = r.params;
    j["tied_params"] = r.growth.tied;
    j["untied_params"] = r.growth.untied;
    j["saved"] = r.growth.saved;
    j["bigger_vocab"] = r.growth.bigger_vocab;
    j["bigger_tied"] = r.growth.bigger_tied;
    j["bigger_untied"] = r.growth.bigger_untied;
    j["lookup_mults"] = r.lookup_mults;
    j["one_hot_mults"] = r.one_hot_mults;
    j["max_abs_diff"] = r.max_abs_diff;
    j["repeat_same"] = r.repeat_same;
    j["logit_len"] = r.logit_len;
    j["logit_argmax"] = r.logit_argmax;
    j["logit_argmax_is_self"] = r.logit_argmax_is_self;
    j["cos_neighbors"] = ids_of(r.cos_neighbors);
    j["dot_neighbors"] = ids_of(r.dot_neighbors);
    j["neighbors_differ"] = r.neighbors_differ;
    j["stretch_target"] = r.stretch_target;
    j["stretch_factor"] = r.inputs.stretch_factor;
    j["cos_after_stretch"] = ids_of(r.cos_after_stretch);
    j["dot_after_stretch"] = ids_of(r.dot_after_stretch);
    j["cos_unchanged_by_scale"] = r.cos_unchanged_by_scale;
    j["rms_plain"] = r.rms_plain;
    j["rms_scaled"] = r.rms_scaled;
    j["rms_ratio"] = r.rms_ratio;
    // With token names: each id the report shows (a decimal string, as JSON keys are strings) to its text.
    if (!r.tokens.empty()) j["tokens"] = tools::tokens_json(r.tokens);
    return j.dump(2) + "\n";
}

}  // namespace embed::report
