#pragma once
// The report's inputs and everything it measures, kept in one struct so the
// JSON, the Markdown, the figure and the page are four views of the same run.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <embed/embed.hpp>

namespace embed::report {

/// The exercise's probe token, neighbour count, neighbour to stretch, factor and growth (SPECIFICATION.md,
/// The report).
inline constexpr Index PROBE = 137;
inline constexpr Index K = 5;
inline constexpr Index PICK = 4;
inline constexpr double STRETCH_FACTOR = 4.0;
inline constexpr Index GROWTH = 2;

/// Where a loaded table came from: the file as the user named it, the tensor the loader read ("" for a .npy)
/// and the precision it was read and analysed in, as element_type_name spells it ("f64", "f32" or "bf16": the
/// file's own, never wider than it needs; see embed::load_stored_table and embed::element_type), or a GGUF
/// quantised type's ("q4_k", ...) for a table analysed in its blocks (embed::open_table).
struct TableSource {
    std::string file;
    std::string tensor;
    std::string precision = "f64";
};

/// Every input of a run; the defaults are the exercise's constants and live only here.
struct ReportInputs {
    Index vocab = VOCAB;
    Index dim = DIM;
    std::uint64_t seed = SEED;
    Index probe = PROBE;
    Index k = K;
    Index pick = PICK;  // which cosine neighbour (0-based) gets stretched
    double stretch_factor = STRETCH_FACTOR;
    Index growth = GROWTH;
    std::optional<TableSource> source = std::nullopt;  // set for a loaded table: V and d are its shape, seed is unused
};

/// One token's scores against the probe, before and after the stretch (for the figure).
struct TokenPoint {
    Index id = 0;
    double cosine_before = 0.0;
    double dot_before = 0.0;
    double cosine_after = 0.0;
    double dot_after = 0.0;
};

/// Bytes a parameter count takes in one storage format.
struct MemoryRow {
    ElementType type = ElementType::f32;
    Index tied = 0;
    Index untied = 0;
    Index saved = 0;
    Index bigger_tied = 0;
    Index bigger_untied = 0;
    Index bigger_saved = 0;
};

/// sqrt(d) and what it becomes when stored in a narrower format.
struct StoredScale {
    double exact = 0.0;  // std::sqrt(d) in double
    double bf16 = 0.0;
    double fp16 = 0.0;
};

/// Everything one run measures; the JSON keys (SPECIFICATION.md, Report keys) and what the prose and figure need.
struct ReportResult {
    ReportInputs inputs;

    Shape table_shape;
    Index params = 0;
    VocabGrowth growth;
    Index bigger_saved = 0;  // bigger_untied - bigger_tied
    std::vector<MemoryRow> memory;

    Index lookup_mults = 0;
    Index one_hot_mults = 0;
    double max_abs_diff = 0.0;
    bool repeat_same = false;

    Index logit_len = 0;
    Index logit_argmax = 0;
    bool logit_argmax_is_self = false;

    std::vector<Neighbour> cos_neighbors;  // (k) with scores, best first
    std::vector<Neighbour> dot_neighbors;
    bool neighbors_differ = false;
    Index stretch_target = 0;
    std::vector<Neighbour> cos_after_stretch;
    std::vector<Neighbour> dot_after_stretch;
    std::vector<TokenPoint> points;  // (V - 1): every token but the probe, by id

    bool cos_unchanged_by_scale = false;
    double cos_plain_scaled = 0.0;        // cosine(probe row, its scaled row)
    double cos_first_neighbour = 0.0;     // cosine(probe, cos_neighbors[0]) unscaled
    double cos_first_neighbour_scaled = 0.0;  // the same after scaling both rows
    double rms_plain = 0.0;
    double rms_scaled = 0.0;
    double rms_ratio = 0.0;
    StoredScale sqrt_d;

    std::map<Index, std::string> tokens;  // id -> text of every id the report names; empty without token names
};

/// Runs the library on the table the inputs describe, generated from their seed (validated first).
ReportResult measure(const ReportInputs& inputs);

/// Runs the library on table (V, d) of double, float32 or bfloat16, generated or loaded, whose shape the
/// inputs' vocab and dim must match (validated first), never widening it: scores are summed in double, bit for
/// bit those of the widened table. Takes the table by value: one row is stretched in place and put back.
template <class Scalar>
ReportResult measure(BasicTable<Scalar> table, const ReportInputs& inputs);

/// Runs the library on a quantised table (V, d) as embed::open_table gives it, never widened (its blocks and
/// O(V + d) besides): every value is, bit for bit, the one measure() gives on its widened float32 table. The
/// stretch is measured without a copy of the table (see report.cpp). Shape checked as above.
ReportResult measure(const QuantisedTable& table, const ReportInputs& inputs);

/// The ids of a ranked list, in order.
std::vector<Index> ids_of(const std::vector<Neighbour>& ranked);

/// Position (0-based) of id in a ranked list, or -1 when it is not there.
Index position_of(const std::vector<Neighbour>& ranked, Index id);

/// The files of a report, rendered from one result.
std::string render_json(const ReportResult& result);
std::string render_markdown(const ReportResult& result);
std::string render_svg(const ReportResult& result);
/// The self-contained page: json and svg are render_json(result) and render_svg(result), shown on it.
std::string render_html(const ReportResult& result, std::string_view json, std::string_view svg);

/// The file names the tool writes, in the order it writes them.
inline constexpr const char* JSON_FILE = "embed_report.json";
inline constexpr const char* MARKDOWN_FILE = "embed_report.md";
inline constexpr const char* SVG_FILE = "embed_report.svg";
inline constexpr const char* HTML_FILE = "embed_report.html";

}  // namespace embed::report
