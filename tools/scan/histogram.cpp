#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

namespace embed::scan_tool {
namespace {

constexpr int kBins = 60;
constexpr double kWidth = 760, kHeight = 300;
constexpr double kLeft = 60, kRight = 20, kTop = 36, kBottom = 48;
constexpr const char* kCandidateColour = "#c0392b";
constexpr const char* kOtherColour = "#8a9bb0";

std::string num(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", value);
    return buffer;
}

std::string label(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

// Each bin's count of candidate rows and of the others.
struct Bins {
    double low = 0.0;
    double high = 0.0;
    std::vector<long long> candidates = std::vector<long long>(kBins, 0);
    std::vector<long long> others = std::vector<long long>(kBins, 0);
    long long not_finite = 0;
};

Bins count(const ScanRun& run) {
    const Vector& values = main_values(run);
    Bins bins;
    bins.low = std::numeric_limits<double>::infinity();
    bins.high = -std::numeric_limits<double>::infinity();
    for (const double v : values) {
        if (!std::isfinite(v)) continue;
        bins.low = std::min(bins.low, v);
        bins.high = std::max(bins.high, v);
    }
    if (!(bins.low <= bins.high)) bins.low = bins.high = 0.0;  // no finite value at all
    const double span = bins.high > bins.low ? bins.high - bins.low : 1.0;
    for (const double v : values) {
        if (!std::isfinite(v)) {
            ++bins.not_finite;
            continue;
        }
        const int bin = std::clamp(static_cast<int>((v - bins.low) / span * kBins), 0, kBins - 1);
        (v <= run.scan.threshold ? bins.candidates : bins.others)[static_cast<std::size_t>(bin)] += 1;
    }
    return bins;
}

}  // namespace

std::string histogram_svg(const ScanRun& run) {
    const Bins bins = count(run);
    long long tallest = 1;
    for (int b = 0; b < kBins; ++b) {
        tallest = std::max(tallest, bins.candidates[static_cast<std::size_t>(b)] + bins.others[static_cast<std::size_t>(b)]);
    }
    const double plot_width = kWidth - kLeft - kRight;
    const double plot_height = kHeight - kTop - kBottom;
    const double bar = plot_width / kBins;
    const double span = bins.high > bins.low ? bins.high - bins.low : 1.0;
    const auto px = [&](double v) { return kLeft + (v - bins.low) / span * plot_width; };
    const auto height = [&](long long n) { return static_cast<double>(n) / static_cast<double>(tallest) * plot_height; };

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
        << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
        << "\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"12\" fill=\"#222\">\n"
        << "<title>Histogram of " << run.scan.main_indicator << " over " << run.vocab << " rows</title>\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
        << run.scan.main_indicator << ": " << run.scan.candidates.size() << " candidates of " << run.vocab
        << " rows</text>\n";
    for (int b = 0; b < kBins; ++b) {
        const auto i = static_cast<std::size_t>(b);
        const double x = kLeft + b * bar;
        const double low = height(bins.candidates[i]);
        const double high = height(bins.others[i]);
        const double base = kTop + plot_height;
        if (bins.candidates[i] > 0) {
            svg << "<rect class=\"candidates\" data-bin=\"" << b << "\" data-n=\"" << bins.candidates[i] << "\" x=\""
                << num(x) << "\" y=\"" << num(base - low) << "\" width=\"" << num(bar - 1) << "\" height=\"" << num(low)
                << "\" fill=\"" << kCandidateColour << "\"/>\n";
        }
        if (bins.others[i] > 0) {
            svg << "<rect class=\"others\" data-bin=\"" << b << "\" data-n=\"" << bins.others[i] << "\" x=\"" << num(x)
                << "\" y=\"" << num(base - low - high) << "\" width=\"" << num(bar - 1) << "\" height=\"" << num(high)
                << "\" fill=\"" << kOtherColour << "\"/>\n";
        }
    }
    const double axis_y = kTop + plot_height;
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << axis_y << "\" x2=\"" << kLeft + plot_width << "\" y2=\"" << axis_y
        << "\" stroke=\"#444\"/>\n"
        << "<text x=\"" << kLeft << "\" y=\"" << axis_y + 16 << "\" text-anchor=\"start\">" << label(bins.low)
        << "</text>\n"
        << "<text x=\"" << kLeft + plot_width << "\" y=\"" << axis_y + 16 << "\" text-anchor=\"end\">"
        << label(bins.high) << "</text>\n"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << kTop + 4 << "\" text-anchor=\"end\">" << tallest << "</text>\n"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << axis_y << "\" text-anchor=\"end\">0</text>\n"
        << "<text x=\"" << kWidth / 2 << "\" y=\"" << kHeight - 8 << "\" text-anchor=\"middle\">"
        << run.scan.main_indicator << " (rows per bin up; " << bins.not_finite << " NaN or infinite not drawn)</text>\n";
    if (bins.not_finite == static_cast<long long>(main_values(run).size())) {
        svg << "<text class=\"empty\" x=\"" << kLeft + plot_width / 2 << "\" y=\"" << kTop + plot_height / 2
            << "\" text-anchor=\"middle\">no finite value to draw</text>\n";
    }
    if (std::isfinite(run.scan.threshold)) {
        const double x = std::clamp(px(run.scan.threshold), kLeft, kLeft + plot_width);
        svg << "<line class=\"threshold\" x1=\"" << num(x) << "\" y1=\"" << kTop << "\" x2=\"" << num(x) << "\" y2=\""
            << axis_y << "\" stroke=\"" << kCandidateColour << "\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n"
            << "<text x=\"" << num(x + 4) << "\" y=\"" << kTop + 12 << "\" fill=\"" << kCandidateColour
            << "\">threshold " << label(run.scan.threshold) << " (percentile " << label(run.percentile)
            << ")</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace embed::scan_tool
