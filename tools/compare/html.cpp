// embed_compare.html: the numbers, a sortable table of the rows that moved most (by text), a histogram of the
// per-row cosine and a scatter of norm a against norm b, through the shared page writer.

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "compare_run.hpp"
#include "numbers.hpp"
#include "page.hpp"

namespace embed::compare_tool {
namespace {

constexpr int kBins = 40;
// The histogram's range is at least this wide (widened downward from the highest cosine): a copy whose rows all
// kept their direction shows one bar at the right, not its rounding spread over the whole width.
constexpr double kNarrowestCosineRange = 0.01;
constexpr double kWidth = 560.0;
constexpr double kHeight = 260.0;
constexpr double kMargin = 40.0;
// The scatter draws every row up to this many, else every n-th row (a fixed stride), and the moved rows the same
// way over them: the page stays small.
constexpr Index kMostPoints = 4000;

// An svg element of the figures' size; attributes (each ` name="value"`) carry the figure's numbers.
std::string svg_open(const std::string& attributes) {
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
        << "\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\"" << attributes << ">";
    return svg.str();
}

std::string data_attribute(const char* name, double value) {
    return std::string(" data-") + name + "=\"" + pages::full_number(value) + "\"";
}

std::string axis_label(double x, double y, const std::string& text, const char* anchor = "middle") {
    std::ostringstream out;
    out << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"11\" text-anchor=\"" << anchor << "\">"
        << pages::escape_text(text) << "</text>";
    return out.str();
}

// Finite values' range [low, high]; {0, 1} when there are none, widened when all are equal.
std::pair<double, double> range_of(const Vector& values) {
    double low = INFINITY;
    double high = -INFINITY;
    for (const double x : values) {
        if (!std::isfinite(x)) continue;
        low = std::min(low, x);
        high = std::max(high, x);
    }
    if (low > high) return {0.0, 1.0};
    if (low == high) return {low - 0.5, high + 0.5};
    return {low, high};
}

// Bins of equal width over [low, high] of the finite cosines (at least kNarrowestCosineRange wide), bin
// floor((x - low) / (high - low) * kBins) clamped to the last; each bar carries its count as data-count.
std::string cosine_histogram(const Vector& cosine) {
    auto [low, high] = range_of(cosine);
    if (high - low < kNarrowestCosineRange) low = high - kNarrowestCosineRange;
    std::vector<Index> counts(kBins, 0);
    for (const double x : cosine) {
        if (!std::isfinite(x)) continue;
        const auto bin = std::clamp(static_cast<int>((x - low) / (high - low) * kBins), 0, kBins - 1);
        ++counts[static_cast<std::size_t>(bin)];
    }
    const Index tallest = std::max<Index>(1, *std::max_element(counts.begin(), counts.end()));
    const double plot_w = kWidth - 2 * kMargin;
    const double plot_h = kHeight - 2 * kMargin;
    std::ostringstream svg;
    svg << svg_open(" id=\"cosine-histogram\"" + data_attribute("low", low) + data_attribute("high", high) +
                    " data-bins=\"" + std::to_string(kBins) + "\"");
    for (int i = 0; i < kBins; ++i) {
        const Index count = counts[static_cast<std::size_t>(i)];
        const double h = plot_h * static_cast<double>(count) / static_cast<double>(tallest);
        svg << "<rect x=\"" << kMargin + plot_w * i / kBins << "\" y=\"" << kMargin + plot_h - h << "\" width=\""
            << plot_w / kBins * 0.9 << "\" height=\"" << h << "\" fill=\"#4a7ab5\" data-count=\"" << count << "\"/>";
    }
    svg << axis_label(kMargin, kHeight - 12, number(low), "start")
        << axis_label(kWidth - kMargin, kHeight - 12, number(high), "end")
        << axis_label(kWidth / 2, kHeight - 12, "row cosine")
        << axis_label(kMargin, kMargin - 8, std::to_string(tallest) + " rows", "start") << "</svg>";
    return svg.str();
}

// The scatter's marks. A pair that moved (verdict.hpp) is filled red; a pair whose a-row is one of the scan's
// candidates in A, or whose b-row is one in B, is ringed: orange for A's, green for B's, purple for both. Each
// marked circle's class lists what it is ("moved", "candidate-a", "candidate-b") and data-a, data-b its rows.
constexpr const char* kPointFill = "#4a7ab5";
constexpr const char* kMovedFill = "#c0392b";
constexpr const char* kCandidateARing = "#e67e22";
constexpr const char* kCandidateBRing = "#27ae60";
constexpr const char* kCandidateBothRing = "#8e44ad";

struct PointMarks {
    bool moved = false;
    bool candidate_a = false;
    bool candidate_b = false;
    bool any() const { return moved || candidate_a || candidate_b; }
};

// The attributes of a marked point's circle (all but its position).
std::string marked_attributes(const PointMarks& marks, const RowPair& pair) {
    std::vector<const char*> classes;
    if (marks.moved) classes.push_back("moved");
    if (marks.candidate_a) classes.push_back("candidate-a");
    if (marks.candidate_b) classes.push_back("candidate-b");
    std::ostringstream out;
    out << "class=\"";
    for (std::size_t i = 0; i < classes.size(); ++i) out << (i > 0 ? " " : "") << classes[i];
    out << "\" data-a=\"" << pair.a << "\" data-b=\"" << pair.b << "\"";
    const bool ringed = marks.candidate_a || marks.candidate_b;
    // A ring is drawn a little wider than a moved point, so that a ringed red point shows both.
    out << " r=\"" << (ringed ? 4 : 3) << "\" fill=\"" << (marks.moved ? kMovedFill : "none") << "\"";
    if (ringed) {
        const char* ring = marks.candidate_a && marks.candidate_b ? kCandidateBothRing
                           : marks.candidate_a                   ? kCandidateARing
                                                                 : kCandidateBRing;
        out << " stroke=\"" << ring << "\" stroke-width=\"2\"";
    }
    return out.str();
}

// Each drawn pair a circle at (norm a, norm b) on axes over the finite norms' ranges (data-x-low ... data-y-high);
// the marked pairs (PointMarks) are drawn last, over the others.
std::string norm_scatter(const CompareRun& run) {
    const TableComparison& c = run.comparison;
    // Plain variables, not structured bindings: the point lambda below captures them (Clang before 16 refuses).
    const std::pair<double, double> range_a = range_of(c.norm_a);
    const std::pair<double, double> range_b = range_of(c.norm_b);
    const double low_a = range_a.first, high_a = range_a.second;
    const double low_b = range_b.first, high_b = range_b.second;
    const double plot_w = kWidth - 2 * kMargin;
    const double plot_h = kHeight - 2 * kMargin;
    const Index stride = std::max<Index>(1, (c.norm_a.size() + kMostPoints - 1) / kMostPoints);
    const std::set<Index> candidates_a(run.scan_a.scan.candidates.begin(), run.scan_a.scan.candidates.end());
    const std::set<Index> candidates_b(run.scan_b.scan.candidates.begin(), run.scan_b.scan.candidates.end());
    const auto marks_of = [&](Index p) {
        const RowPair& pair = c.pairs[static_cast<std::size_t>(p)];
        return PointMarks{c.row_cosine && change_of(c, p) == PairChange::moved, candidates_a.contains(pair.a),
                          candidates_b.contains(pair.b)};
    };
    std::ostringstream svg;
    svg << svg_open(" id=\"norm-scatter\"" + data_attribute("x-low", low_a) + data_attribute("x-high", high_a) +
                    data_attribute("y-low", low_b) + data_attribute("y-high", high_b));
    const auto point = [&](Index p, const std::string& attributes) {
        if (!std::isfinite(c.norm_a[p]) || !std::isfinite(c.norm_b[p])) return;
        const double x = kMargin + plot_w * (c.norm_a[p] - low_a) / (high_a - low_a);
        const double y = kMargin + plot_h - plot_h * (c.norm_b[p] - low_b) / (high_b - low_b);
        svg << "<circle cx=\"" << x << "\" cy=\"" << y << "\" " << attributes << "/>";
    };
    std::vector<Index> marked;
    for (Index p = 0; p < c.norm_a.size(); ++p) {
        if (marks_of(p).any()) marked.push_back(p);
    }
    const std::string plain = std::string("r=\"1.5\" fill=\"") + kPointFill + "\" fill-opacity=\"0.5\"";
    for (Index p = 0; p < c.norm_a.size(); p += stride) {
        if (!marks_of(p).any()) point(p, plain);
    }
    const auto most = static_cast<std::size_t>(kMostPoints);
    const std::size_t marked_stride = std::max<std::size_t>(1, (marked.size() + most - 1) / most);
    for (std::size_t i = 0; i < marked.size(); i += marked_stride) {
        point(marked[i], marked_attributes(marks_of(marked[i]), c.pairs[static_cast<std::size_t>(marked[i])]));
    }
    svg << axis_label(kWidth / 2, kHeight - 12, "norm a (" + number(low_a) + " to " + number(high_a) + ")")
        << axis_label(kMargin, kMargin - 8, "norm b (" + number(low_b) + " to " + number(high_b) + ")", "start")
        << "</svg>";
    return svg.str();
}

pages::Numbers run_numbers(const CompareRun& run) {
    const TableComparison& c = run.comparison;
    const auto optional = [](const std::optional<double>& v) { return v ? number(*v) : std::string("-"); };
    return {{"verdict", run.verdict.summary},
            {"pairs identical", std::to_string(run.verdict.identical)},
            {"pairs close", std::to_string(run.verdict.close)},
            {"pairs moved", std::to_string(run.verdict.moved)},
            {"scan candidates in A", std::to_string(run.scan_a.scan.candidates.size())},
            {"scan candidates in B", std::to_string(run.scan_b.scan.candidates.size())},
            {"A's candidates that moved", c.row_cosine ? std::to_string(run.scan_a.moved.size()) : "-"},
            {"A", run.command.a + " (" + std::to_string(run.a_rows) + " x " + std::to_string(run.a_cols) + ")"},
            {"B", run.command.b + " (" + std::to_string(run.b_rows) + " x " + std::to_string(run.b_cols) + ")"},
            {"matched", std::to_string(c.matched)},
            {"unmatched in A", std::to_string(c.unmatched_a)},
            {"unmatched in B", std::to_string(c.unmatched_b)},
            {"alignment", c.rotation ? "orthogonal" : "none"},
            {"median row cosine", c.row_cosine_percentiles ? number(c.row_cosine_percentiles->values[2]) : "-"},
            {"mean neighbour overlap", number(mean_of(c.neighbour_overlap))},
            {"top-1 agreement", optional(c.top1_agreement)},
            {"top-k overlap", optional(c.topk_overlap)},
            {"mean KL divergence", optional(c.kl_divergence)},
            {"largest logit difference", optional(c.max_abs_logit_diff)}};
}

}  // namespace

std::string render_compare_html(const CompareRun& run) {
    pages::Page page("embed_compare");
    page.heading("Summary");
    page.paragraph("Verdict: " + run.verdict.summary + ". A pair is identical when its relative change is at most " +
                   number(kIdenticalRelativeChange) + " (or both rows are zero), moved when its row cosine is below " +
                   number(kMovedCosine) + ", close otherwise.");
    page.numbers("summary", run_numbers(run));
    const TableComparison& c = run.comparison;
    if (!run.moved.empty()) {
        page.heading("The rows that moved most");
        pages::SortableTable table;
        table.id = "moved";
        table.caption = "The " + std::to_string(run.moved.size()) + " pairs of lowest row cosine";
        using Kind = pages::SortableTable::Kind;
        table.columns = {{"a", Kind::number},          {"b", Kind::number},         {"text", Kind::text},
                         {"row cosine", Kind::number}, {"relative change", Kind::number}};
        for (const MovedRow& row : run.moved) {
            table.rows.push_back({{std::to_string(row.a), static_cast<double>(row.a)},
                                  {std::to_string(row.b), static_cast<double>(row.b)},
                                  {row.text.value_or(""), 0.0},
                                  {number(row.row_cosine), row.row_cosine},
                                  {number(row.relative_change), row.relative_change}});
        }
        page.table(table);
    }
    if (c.row_cosine) {
        page.heading("Row cosine");
        page.figure(cosine_histogram(*c.row_cosine),
                    "How many pairs have each cosine between A's row and B's: " + std::to_string(kBins) +
                        " bins of equal width from the lowest cosine to the highest (at least " +
                        number(kNarrowestCosineRange) + " wide, widened downward), NaN left out.");
    }
    page.heading("Norms");
    const std::string candidates = "ringed, the pairs whose row in A is one of the scan's " +
                                   std::to_string(run.scan_a.scan.candidates.size()) +
                                   " under-trained candidates in A (orange), whose row in B is one of its " +
                                   std::to_string(run.scan_b.scan.candidates.size()) +
                                   " in B (green), or both (purple)";
    page.figure(norm_scatter(run), "Each pair's norm in A against its norm in B; filled red, the " +
                                       std::to_string(run.verdict.moved) + " pairs that moved (row cosine below " +
                                       number(kMovedCosine) + "); " + candidates +
                                       ". A ringed red point is a candidate that was trained between A and B.");
    return page.str();
}

}  // namespace embed::compare_tool
