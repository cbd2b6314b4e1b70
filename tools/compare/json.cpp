// embed_compare.json: the inputs, every measure of TableComparison but the per-pair arrays, which `moved`
// (the rows of lowest row_cosine) replaces, and each side's scan for under-trained rows with its candidates. NaN
// and infinities are null, JSON having no other spelling.

#include <cmath>

#include <nlohmann/json.hpp>

#include "compare_run.hpp"

namespace embed::compare_tool {
namespace {

using Json = nlohmann::ordered_json;

Json optional_number(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }

Json percentiles_json(const std::optional<Percentiles>& percentiles) {
    if (!percentiles) return nullptr;
    Json out = Json::object();
    for (std::size_t i = 0; i < Percentiles::levels.size(); ++i) {
        out[std::to_string(static_cast<int>(Percentiles::levels[i]))] = percentiles->values[i];
    }
    return out;
}

Json rotation_json(const std::optional<Table>& rotation) {
    if (!rotation) return nullptr;
    Json rows = Json::array();
    for (Index r = 0; r < rotation->rows(); ++r) {
        Json row = Json::array();
        for (Index c = 0; c < rotation->cols(); ++c) row.push_back((*rotation)(r, c));
        rows.push_back(std::move(row));
    }
    return rows;
}

Json scan_json(const CandidateScan& side, bool has_cosines) {
    const SideScan& scan = side.scan;
    return {{"reference_from", scan.reference_from},
            {"reference_count", scan.reference_count},
            {"main_indicator", scan.main_indicator},
            {"percentile", kScanPercentile},
            {"threshold", std::isfinite(scan.threshold) ? Json(scan.threshold) : Json(nullptr)},
            {"candidates", scan.candidates},
            {"paired", side.paired},
            {"moved", has_cosines ? Json(side.moved) : Json(nullptr)}};
}

const char* match_name(RowMatch match) { return match == RowMatch::text ? "text" : "id"; }
const char* align_name(Alignment align) { return align == Alignment::orthogonal ? "orthogonal" : "none"; }

}  // namespace

std::string render_compare_json(const CompareRun& run) {
    const TableComparison& c = run.comparison;
    const CompareCommand& command = run.command;
    Json j;
    j["a"] = {{"file", command.a}, {"tensor", command.a_tensor}, {"shape", {run.a_rows, run.a_cols}}};
    j["b"] = {{"file", command.b}, {"tensor", command.b_tensor}, {"shape", {run.b_rows, run.b_cols}}};
    j["match"] = match_name(command.match);
    j["align"] = align_name(command.align);
    j["probes"] = command.probes;
    j["k"] = command.k;
    j["seed"] = command.seed;
    j["verdict"] = {{"summary", run.verdict.summary},
                    {"identical", run.verdict.identical},
                    {"close", run.verdict.close},
                    {"moved", run.verdict.moved},
                    {"identical_relative_change", kIdenticalRelativeChange},
                    {"moved_cosine", kMovedCosine}};
    j["matched"] = c.matched;
    j["unmatched_a"] = c.unmatched_a;
    j["unmatched_b"] = c.unmatched_b;
    j["unmatched_a_examples"] = c.unmatched_a_examples;
    j["unmatched_b_examples"] = c.unmatched_b_examples;
    j["rotation"] = rotation_json(c.rotation);
    j["probe_ids"] = c.probe_ids;
    Json overlap = Json::array();
    for (const double x : c.neighbour_overlap) overlap.push_back(x);
    j["neighbour_overlap"] = std::move(overlap);
    j["hidden_count"] = c.hidden_count;
    j["top1_agreement"] = optional_number(c.top1_agreement);
    j["topk_overlap"] = optional_number(c.topk_overlap);
    j["kl_divergence"] = optional_number(c.kl_divergence);
    j["max_abs_logit_diff"] = optional_number(c.max_abs_logit_diff);
    j["percentiles"] = {{"row_cosine", percentiles_json(c.row_cosine_percentiles)},
                        {"norm_a", percentiles_json(c.norm_a_percentiles)},
                        {"norm_b", percentiles_json(c.norm_b_percentiles)},
                        {"relative_change", percentiles_json(c.relative_change_percentiles)}};
    Json moved = Json::array();
    for (const MovedRow& row : run.moved) {
        moved.push_back({{"a", row.a},
                         {"b", row.b},
                         {"text", row.text ? Json(*row.text) : Json(nullptr)},
                         {"row_cosine", row.row_cosine},
                         {"relative_change", row.relative_change}});
    }
    j["moved"] = std::move(moved);
    const bool has_cosines = c.row_cosine.has_value();
    j["scan"] = {{"a", scan_json(run.scan_a, has_cosines)}, {"b", scan_json(run.scan_b, has_cosines)}};
    return j.dump(2) + "\n";
}

}  // namespace embed::compare_tool
