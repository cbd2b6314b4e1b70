// embed_report.html: the same run on one self-contained page, every JSON key
// and value, the four ranked lists as sortable tables and the figure inline.
// The page writer (tools/pages) does the escaping, the style and the sorting.

#include <nlohmann/json.hpp>

#include <page.hpp>

#include "report.hpp"

namespace embed::report {
namespace {

// The JSON's keys and values in its order, each value as the JSON's own text, but a fraction rounded
// for reading (pages::shown_number) with the JSON's text in full as its title.
pages::Numbers json_numbers(std::string_view json) {
    const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(json);
    pages::Numbers numbers;
    for (const auto& [key, value] : parsed.items()) {
        const std::string text = value.dump();
        const std::string shown = value.is_number_float() ? pages::shown_number(value.get<double>()) : text;
        numbers.push_back({key, shown, shown == text ? "" : text});
    }
    return numbers;
}

std::vector<pages::RankedId> ranked_ids(const std::vector<Neighbour>& ranked) {
    std::vector<pages::RankedId> ids;
    for (const Neighbour& n : ranked) ids.push_back({static_cast<long long>(n.id), n.score});
    return ids;
}

// The run's token texts indexed by id (ranked_table's names), "" for ids without one; empty without names.
std::vector<std::string> names_by_id(const ReportResult& r) {
    if (r.tokens.empty()) return {};
    std::vector<std::string> names(static_cast<std::size_t>(r.tokens.rbegin()->first) + 1);
    for (const auto& [id, text] : r.tokens) names[static_cast<std::size_t>(id)] = text;
    return names;
}

// One ranked list as a table, its text column filled when the run has token names.
pages::SortableTable list_table(const ReportResult& r, const char* key, const std::string& caption,
                                const char* score, const std::vector<Neighbour>& ranked) {
    return pages::ranked_table(key, std::string(key) + ": " + caption, score, ranked_ids(ranked), names_by_id(r));
}

}  // namespace

std::string render_html(const ReportResult& r, std::string_view json, std::string_view svg) {
    const std::string probe = std::to_string(r.inputs.probe);
    const std::string target = std::to_string(r.stretch_target);
    pages::Page page("embed_report: probe " + probe);
    page.paragraph("Table (" + std::to_string(r.table_shape.rows) + ", " + std::to_string(r.table_shape.cols) +
                   ") " + (r.inputs.source ? "loaded from " + r.inputs.source->file : "generated from seed " +
                   std::to_string(r.inputs.seed)) + ". Click a column's heading to sort by it, again to reverse.");
    page.heading("Numbers (" + std::string(JSON_FILE) + ")");
    page.numbers("numbers", json_numbers(json));
    page.heading("Neighbours of probe " + probe);
    page.table(list_table(r, "cos_neighbors", "best by cosine", "cosine", r.cos_neighbors));
    page.table(list_table(r, "dot_neighbors", "best by dot product", "dot", r.dot_neighbors));
    page.heading("After stretching token " + target);
    page.table(list_table(r, "cos_after_stretch", "best by cosine", "cosine", r.cos_after_stretch));
    page.table(list_table(r, "dot_after_stretch", "best by dot product", "dot", r.dot_after_stretch));
    page.heading("Figure (" + std::string(SVG_FILE) + ")");
    page.figure(svg, "Every token by cosine and dot product to probe " + probe + ", before and after token " +
                         target + " is stretched.");
    return page.str();
}

}  // namespace embed::report
