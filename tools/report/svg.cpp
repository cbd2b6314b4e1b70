// embed_report.svg: every other token as a point, cosine to the probe across
// and dot product up, before and after stretching one row, side by side on
// the same axes. The stretched row can only move vertically, which is the
// point of the figure: length changes the dot ranking, not the cosine one.
//
// Up to MAX_DOTS tokens each get a dot. Past that, dots would pile on top of
// each other and the file would grow with V (a 3 000 000-token table made a
// 252 MB SVG), so the other tokens become grey cells shaded by how many fall in
// each, a fixed grid whatever V is. Either way the points that carry the story
// are drawn one by one on top: each top-k list (its first MAX_MARKED when k is
// larger) and the stretched row, before and after.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "format.hpp"
#include "report.hpp"
#include "tokens.hpp"

namespace embed::report {
namespace {

constexpr double kWidth = 1000.0;
constexpr double kHeight = 560.0;
constexpr double kPlotLeft = 80.0;
constexpr double kPlotTop = 78.0;
constexpr double kPlotWidth = 400.0;
constexpr double kPlotHeight = 340.0;
constexpr double kPanelGap = 100.0;

const char* const kCosineColour = "#1f77b4";
const char* const kDotColour = "#e8710a";
const char* const kTargetColour = "#d62728";

// Above this many other tokens the panels show density cells instead of dots.
constexpr std::size_t MAX_DOTS = 5000;
// The density grid's cell side in pixels: 100 x 85 cells per panel at most.
constexpr double kCell = 4.0;
// Each ranked list marks at most this many of its tokens, best first, so the
// file stays small when k is large; the dashed cut-off lines still bound the whole top k.
constexpr std::size_t MAX_MARKED = 100;

std::string num(double value) { return fixed(value, 2); }

struct Range {
    double low = std::numeric_limits<double>::infinity();
    double high = -std::numeric_limits<double>::infinity();
    void include(double value) {
        if (!std::isfinite(value)) return;  // a non-finite score cannot be placed; it is left out of the axes
        low = std::min(low, value);
        high = std::max(high, value);
    }
};

// A 1, 2 or 5 times a power of ten near span / 5, so an axis gets about five labelled ticks.
double tick_step(double span) {
    const double raw = span / 5.0;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double nice : {1.0, 2.0, 5.0}) {
        if (raw <= nice * power) return nice * power;
    }
    return 10.0 * power;
}

// The range widened to whole ticks, so the data never touches the frame.
struct Axis {
    double low = 0.0;
    double high = 1.0;
    double step = 0.2;
};

Axis make_axis(Range range) {
    if (!(range.low <= range.high)) range = {0.0, 1.0};
    if (range.low == range.high) range = {range.low - 1.0, range.high + 1.0};
    const double pad = 0.04 * (range.high - range.low);
    const double step = tick_step(range.high - range.low + 2.0 * pad);
    return {std::floor((range.low - pad) / step) * step, std::ceil((range.high + pad) / step) * step, step};
}

int tick_decimals(double step) { return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))); }

struct Panel {
    double left = 0.0;
    Axis x;
    Axis y;
    double px(double value) const { return left + (value - x.low) / (x.high - x.low) * kPlotWidth; }
    double py(double value) const { return kPlotTop + kPlotHeight - (value - y.low) / (y.high - y.low) * kPlotHeight; }
};

// A token's text inside an SVG element: the three characters XML gives a meaning to.
std::string xml_text(const std::string& raw) {
    std::string escaped;
    for (const char c : raw) {
        if (c == '&') escaped += "&amp;";
        else if (c == '<') escaped += "&lt;";
        else if (c == '>') escaped += "&gt;";
        else escaped += c;
    }
    return escaped;
}

void text(std::ostringstream& svg, double x, double y, const std::string& body, const char* anchor,
          const char* extra = "") {
    svg << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"" << anchor << "\"" << extra << ">"
        << body << "</text>\n";
}

void draw_frame(std::ostringstream& svg, const Panel& p, const ReportInputs& in, const std::string& title) {
    const int x_decimals = tick_decimals(p.x.step);
    const int y_decimals = tick_decimals(p.y.step);
    svg << "<rect x=\"" << num(p.left) << "\" y=\"" << num(kPlotTop) << "\" width=\"" << num(kPlotWidth)
        << "\" height=\"" << num(kPlotHeight) << "\" fill=\"#fbfbfb\" stroke=\"#444\"/>\n";
    const auto tick_count = [](const Axis& a) { return static_cast<int>(std::lround((a.high - a.low) / a.step)); };
    for (int i = 0; i <= tick_count(p.x); ++i) {
        const double value = p.x.low + i * p.x.step;
        const double x = p.px(value);
        svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(kPlotTop) << "\" x2=\"" << num(x) << "\" y2=\""
            << num(kPlotTop + kPlotHeight + 5) << "\" stroke=\"#e3e3e3\"/>\n";
        text(svg, x, kPlotTop + kPlotHeight + 20, fixed(std::fabs(value) < p.x.step * 1e-6 ? 0.0 : value, x_decimals),
             "middle");
    }
    for (int i = 0; i <= tick_count(p.y); ++i) {
        const double value = p.y.low + i * p.y.step;
        const double y = p.py(value);
        svg << "<line x1=\"" << num(p.left - 5) << "\" y1=\"" << num(y) << "\" x2=\"" << num(p.left + kPlotWidth)
            << "\" y2=\"" << num(y) << "\" stroke=\"#e3e3e3\"/>\n";
        text(svg, p.left - 8, y + 4, fixed(std::fabs(value) < p.y.step * 1e-6 ? 0.0 : value, y_decimals), "end");
    }
    text(svg, p.left + kPlotWidth / 2, kPlotTop - 12, title, "middle", " font-size=\"15\" font-weight=\"bold\"");
    text(svg, p.left + kPlotWidth / 2, kPlotTop + kPlotHeight + 42, "cosine to probe " + std::to_string(in.probe),
         "middle");
    const double label_x = p.left - 58;
    const double label_y = kPlotTop + kPlotHeight / 2;
    svg << "<text x=\"" << num(label_x) << "\" y=\"" << num(label_y) << "\" text-anchor=\"middle\" transform=\"rotate(-90 "
        << num(label_x) << " " << num(label_y) << ")\">dot product with probe " << in.probe << "</text>\n";
}

// Halfway between the k-th and the (k+1)-th best score, so the line separates
// the top k from the rest instead of running through the k-th point.
double cutoff(std::vector<double> scores, Index k) {
    std::erase_if(scores, [](double v) { return !std::isfinite(v); });
    const auto kth = static_cast<std::size_t>(k - 1);
    if (scores.size() <= kth) return std::numeric_limits<double>::quiet_NaN();
    std::sort(scores.begin(), scores.end(), std::greater<>());
    return kth + 1 < scores.size() ? (scores[kth] + scores[kth + 1]) / 2.0 : scores[kth];
}

// Dashed lines at each ranking's top-k boundary: points beyond a line are in that top k.
void draw_cutoffs(std::ostringstream& svg, const Panel& p, const ReportResult& r, bool after) {
    std::vector<double> cosines;
    std::vector<double> dots;
    for (const TokenPoint& t : r.points) {
        cosines.push_back(after ? t.cosine_after : t.cosine_before);
        dots.push_back(after ? t.dot_after : t.dot_before);
    }
    const std::string k = std::to_string(r.inputs.k);
    const double cos_cut = cutoff(cosines, r.inputs.k);
    const double dot_cut = cutoff(dots, r.inputs.k);
    if (std::isfinite(cos_cut)) {
        const double x = p.px(cos_cut);
        svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(kPlotTop) << "\" x2=\"" << num(x) << "\" y2=\""
            << num(kPlotTop + kPlotHeight) << "\" stroke=\"" << kCosineColour
            << "\" stroke-dasharray=\"5 4\" stroke-width=\"1.2\"/>\n";
        text(svg, x - 4, kPlotTop + 14, "cosine top " + k + " \u2192", "end",
             (std::string(" font-size=\"12\" fill=\"") + kCosineColour + "\"").c_str());
    }
    if (std::isfinite(dot_cut)) {
        const double y = p.py(dot_cut);
        svg << "<line x1=\"" << num(p.left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(p.left + kPlotWidth)
            << "\" y2=\"" << num(y) << "\" stroke=\"" << kDotColour
            << "\" stroke-dasharray=\"5 4\" stroke-width=\"1.2\"/>\n";
        text(svg, p.left + 6, y - 6, "dot top " + k + " \u2191", "start",
             (std::string(" font-size=\"12\" fill=\"") + kDotColour + "\"").c_str());
    }
}

// One panel's view of the tokens: before or after the stretch.
struct Side {
    bool after = false;
    double x(const TokenPoint& t) const { return after ? t.cosine_after : t.cosine_before; }
    double y(const TokenPoint& t) const { return after ? t.dot_after : t.dot_before; }
    bool placeable(const TokenPoint& t) const { return std::isfinite(x(t)) && std::isfinite(y(t)); }
};

bool dense(const ReportResult& r) { return r.points.size() > MAX_DOTS; }

// The point of token id (never the probe); points are sorted by id.
const TokenPoint& point_of(const ReportResult& r, Index id) {
    return *std::lower_bound(r.points.begin(), r.points.end(), id,
                             [](const TokenPoint& t, Index wanted) { return t.id < wanted; });
}

// Whether id is among the first MAX_MARKED of a ranked list.
bool marked_in(const std::vector<Neighbour>& ranked, Index id) {
    const auto end = ranked.begin() + static_cast<std::ptrdiff_t>(std::min(ranked.size(), MAX_MARKED));
    return std::any_of(ranked.begin(), end, [id](const Neighbour& n) { return n.id == id; });
}

void draw_dots(std::ostringstream& svg, const Panel& p, const ReportResult& r, Side side) {
    svg << "<g fill=\"#8a8f96\" fill-opacity=\"0.55\">\n";
    for (const TokenPoint& t : r.points) {
        if (!side.placeable(t)) continue;
        svg << "<circle cx=\"" << num(p.px(side.x(t))) << "\" cy=\"" << num(p.py(side.y(t))) << "\" r=\"2.2\"/>\n";
    }
    svg << "</g>\n";
}

// How many tokens fall in each kCell x kCell cell of one panel, row by row from the top left.
struct DensityGrid {
    static constexpr int kColumns = static_cast<int>(kPlotWidth / kCell);
    static constexpr int kRows = static_cast<int>(kPlotHeight / kCell);
    std::vector<Index> counts = std::vector<Index>(static_cast<std::size_t>(kColumns * kRows), 0);
    Index largest() const { return *std::max_element(counts.begin(), counts.end()); }
};

DensityGrid count_tokens(const Panel& p, const ReportResult& r, Side side) {
    DensityGrid grid;
    for (const TokenPoint& t : r.points) {
        if (!side.placeable(t)) continue;
        const int column = std::clamp(static_cast<int>((p.px(side.x(t)) - p.left) / kCell), 0, DensityGrid::kColumns - 1);
        const int row = std::clamp(static_cast<int>((p.py(side.y(t)) - kPlotTop) / kCell), 0, DensityGrid::kRows - 1);
        ++grid.counts[static_cast<std::size_t>(row * DensityGrid::kColumns + column)];
    }
    return grid;
}

// Darker for more tokens, on a log scale shared by both panels so a cell of 1
// stays visible beside a cell of thousands; data-n holds the exact count.
void draw_density(std::ostringstream& svg, const Panel& p, const DensityGrid& grid, Index largest) {
    svg << "<g fill=\"#4d535b\">\n";
    for (int row = 0; row < DensityGrid::kRows; ++row) {
        for (int column = 0; column < DensityGrid::kColumns; ++column) {
            const Index n = grid.counts[static_cast<std::size_t>(row * DensityGrid::kColumns + column)];
            if (n == 0) continue;
            const double shade = 0.15 + 0.85 * std::log1p(static_cast<double>(n)) /
                                            std::log1p(static_cast<double>(std::max<Index>(largest, 1)));
            svg << "<rect x=\"" << num(p.left + column * kCell) << "\" y=\"" << num(kPlotTop + row * kCell)
                << "\" width=\"" << kCell << "\" height=\"" << kCell << "\" fill-opacity=\"" << fixed(shade, 2)
                << "\" data-n=\"" << n << "\"/>\n";
        }
    }
    svg << "</g>\n";
}

// The top-k marks, in id order: a circle for the cosine list, a square for the dot list.
void draw_marks(std::ostringstream& svg, const Panel& p, const ReportResult& r, Side side) {
    const auto& cos_top = side.after ? r.cos_after_stretch : r.cos_neighbors;
    const auto& dot_top = side.after ? r.dot_after_stretch : r.dot_neighbors;
    std::vector<Index> ids;
    for (const auto* ranked : {&cos_top, &dot_top}) {
        for (std::size_t i = 0; i < std::min(ranked->size(), MAX_MARKED); ++i) ids.push_back((*ranked)[i].id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (const Index id : ids) {
        const TokenPoint& t = point_of(r, id);
        if (!side.placeable(t)) continue;
        const double x = p.px(side.x(t));
        const double y = p.py(side.y(t));
        if (marked_in(cos_top, id)) {
            svg << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"6\" fill=\"none\" stroke=\""
                << kCosineColour << "\" stroke-width=\"1.8\"/>\n";
        }
        if (marked_in(dot_top, id)) {
            svg << "<rect x=\"" << num(x - 4.5) << "\" y=\"" << num(y - 4.5)
                << "\" width=\"9\" height=\"9\" fill=\"none\" stroke=\"" << kDotColour << "\" stroke-width=\"1.8\"/>\n";
        }
    }
}

// The stretched row, labelled; after the stretch also where it was and an arrow from there.
void draw_target(std::ostringstream& svg, const Panel& p, const ReportResult& r, Side side) {
    const TokenPoint& target = point_of(r, r.stretch_target);
    if (!side.placeable(target)) return;
    const double x = p.px(side.x(target));
    const double y = p.py(side.y(target));
    if (side.after && Side{false}.placeable(target)) {
        const double x0 = p.px(target.cosine_before);
        const double y0 = p.py(target.dot_before);
        svg << "<circle cx=\"" << num(x0) << "\" cy=\"" << num(y0) << "\" r=\"4.5\" fill=\"none\" stroke=\""
            << kTargetColour << "\" stroke-dasharray=\"2 2\"/>\n";
        const double length = std::hypot(x - x0, y - y0);
        if (length > 20.0) {
            const double ux = (x - x0) / length;
            const double uy = (y - y0) / length;
            svg << "<line x1=\"" << num(x0 + 6.0 * ux) << "\" y1=\"" << num(y0 + 6.0 * uy) << "\" x2=\""
                << num(x - 8.0 * ux) << "\" y2=\"" << num(y - 8.0 * uy) << "\" stroke=\"" << kTargetColour
                << "\" stroke-width=\"1.6\" marker-end=\"url(#arrow)\"/>\n";
        }
    }
    svg << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"4.5\" fill=\"" << kTargetColour << "\"/>\n";
    const bool label_left = x > p.left + kPlotWidth * 0.75;
    text(svg, label_left ? x - 10 : x + 10, y + 4, "token " + xml_text(id_with_text(r, target.id)),
         label_left ? "end" : "start",
         (std::string(" font-size=\"13\" font-weight=\"bold\" fill=\"") + kTargetColour +
              "\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"")
             .c_str());
}

// largest is the most tokens in one density cell, or 0 when every token is a dot.
void draw_legend(std::ostringstream& svg, const ReportResult& r, Index largest) {
    const double y = kPlotTop + kPlotHeight + 78;
    const std::string k = std::to_string(r.inputs.k);
    double x = kPlotLeft;
    if (largest == 0) {
        svg << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"2.5\" fill=\"#8a8f96\"/>\n";
        text(svg, x + 10, y + 4, "every other token", "start");
    } else {
        const double shades[] = {0.15, 0.6, 1.0};  // the lightest, a middle and the darkest cell
        for (int i = 0; i < 3; ++i) {
            svg << "<rect x=\"" << num(x - 8 + 6 * i) << "\" y=\"" << num(y - 3)
                << "\" width=\"6\" height=\"6\" fill=\"#4d535b\" fill-opacity=\"" << fixed(shades[i], 2) << "\"/>\n";
        }
        text(svg, x + 14, y + 4, "1 to " + std::to_string(largest) + " tokens per cell", "start");
    }
    x += largest == 0 ? 170 : 200;  // the cells' label is longer than the dots'

    svg << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"6\" fill=\"none\" stroke=\"" << kCosineColour
        << "\" stroke-width=\"1.8\"/>\n";
    text(svg, x + 12, y + 4, "top " + k + " by cosine", "start");
    x += 170;
    svg << "<rect x=\"" << num(x - 4.5) << "\" y=\"" << num(y - 4.5) << "\" width=\"9\" height=\"9\" fill=\"none\" stroke=\""
        << kDotColour << "\" stroke-width=\"1.8\"/>\n";
    text(svg, x + 12, y + 4, "top " + k + " by dot product", "start");
    x += 200;
    svg << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"4.5\" fill=\"" << kTargetColour << "\"/>\n";
    text(svg, x + 12, y + 4,
         "stretched token " + std::to_string(r.stretch_target) + " (row \u00d7 " + json_text(r.inputs.stretch_factor) +
             ")",
         "start");
}

// "4 → 4" or "out → 0": where the token stands in a top-k list before and after.
std::string rank_text(const std::vector<Neighbour>& before, const std::vector<Neighbour>& after, Index id) {
    const auto one = [id](const std::vector<Neighbour>& ranked) {
        const Index position = position_of(ranked, id);
        return position < 0 ? std::string("outside the top ") + std::to_string(ranked.size())
                            : std::to_string(position);
    };
    return one(before) + " \u2192 " + one(after);
}

Range cosine_range(const ReportResult& r) {
    Range range;
    for (const TokenPoint& t : r.points) {
        range.include(t.cosine_before);
        range.include(t.cosine_after);
    }
    return range;
}

Range dot_range(const ReportResult& r) {
    Range range;
    for (const TokenPoint& t : r.points) {
        range.include(t.dot_before);
        range.include(t.dot_after);
    }
    return range;
}

}  // namespace

std::string render_svg(const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    const Axis x = make_axis(cosine_range(r));
    const Axis y = make_axis(dot_range(r));
    const Panel before{kPlotLeft, x, y};
    const Panel after{kPlotLeft + kPlotWidth + kPanelGap, x, y};
    const std::string factor = json_text(in.stretch_factor);
    std::ostringstream svg;
    svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
        << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
        << "\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"13\" fill=\"#222\">\n"
        << "<title>Cosine and dot product with probe " << in.probe << ", before and after stretching token "
        << r.stretch_target << " by " << factor << "</title>\n"
        << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
           "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\""
        << kTargetColour << "\"/></marker></defs>\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    text(svg, kWidth / 2, 30,
         "Stretching token " + xml_text(id_with_text(r, r.stretch_target)) + " by " + factor + ": cosine rank " +
             rank_text(r.cos_neighbors, r.cos_after_stretch, r.stretch_target) + ", dot rank " +
             rank_text(r.dot_neighbors, r.dot_after_stretch, r.stretch_target),
         "middle", " font-size=\"16\" font-weight=\"bold\"");
    draw_frame(svg, before, in, in.source ? "before: the table as loaded" : "before: the table as made");
    draw_frame(svg, after, in, "after: row " + std::to_string(r.stretch_target) + " \u00d7 " + factor);
    draw_cutoffs(svg, before, r, false);
    draw_cutoffs(svg, after, r, true);
    Index largest = 0;
    if (dense(r)) {
        const DensityGrid grid_before = count_tokens(before, r, Side{false});
        const DensityGrid grid_after = count_tokens(after, r, Side{true});
        largest = std::max(grid_before.largest(), grid_after.largest());
        draw_density(svg, before, grid_before, largest);
        draw_density(svg, after, grid_after, largest);
    } else {
        draw_dots(svg, before, r, Side{false});
    }
    draw_marks(svg, before, r, Side{false});
    draw_target(svg, before, r, Side{false});
    if (!dense(r)) draw_dots(svg, after, r, Side{true});
    draw_marks(svg, after, r, Side{true});
    draw_target(svg, after, r, Side{true});
    draw_legend(svg, r, largest);
    const std::string others = std::to_string(r.points.size()) + " tokens other than probe " + std::to_string(in.probe);
    text(svg, kWidth / 2, kHeight - 22,
         (dense(r) ? "Grey cells hold the " + others + " (darker: more)"
                   : "Each grey dot is one of the " + others) +
             "; both panels share their axes; dashed lines separate each top " + std::to_string(in.k) +
             " from the rest.",
         "middle", " font-size=\"12\" fill=\"#555\"");
    if (static_cast<std::size_t>(in.k) > MAX_MARKED) {
        text(svg, kWidth / 2, kHeight - 7,
             "Circles and squares mark the first " + std::to_string(MAX_MARKED) + " of each top " +
                 std::to_string(in.k) + "; the dashed lines bound the whole list.",
             "middle", " font-size=\"12\" fill=\"#555\"");
    }
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace embed::report
