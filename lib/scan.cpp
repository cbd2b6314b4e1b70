#include "embed/scan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "floating_point/float_mode.hpp"
#include "kernels/base.hpp"
#include "percentile.hpp"
#include "scan/principal_component.hpp"
#include "scan/row_groups.hpp"
#include "stored_tables.hpp"

namespace embed {
namespace {

using detail::for_each_group;
using detail::RowMatrix;
using detail::row_groups;
using detail::RowReader;

double cosine_from_parts(double dot_ab, double square_a, double square_b) {
    const double norms = std::sqrt(square_a) * std::sqrt(square_b);
    return norms == 0.0 ? 0.0 : dot_ab / norms;
}

// What the first pass learns of each row.
struct RowStatistics {
    Vector input_norm;
    Vector output_norm;
    std::optional<Vector> input_output_cosine;
    detail::CovarianceRows output;  // which output rows hold no NaN or infinity, and their mean
};

// Norms, cosines and the finite rows' mean in one pass over both tables.
template <class Source>
RowStatistics row_statistics(const Source& input, const Source& output, bool tied, bool want_cosine) {
    const Index rows = input.rows();
    const Index dim_in = input.cols();
    const Index dim_out = output.cols();
    RowStatistics stats;
    stats.input_norm.resize(rows);
    stats.output_norm.resize(rows);
    if (want_cosine) stats.input_output_cosine.emplace(rows);
    stats.output.finite.assign(static_cast<std::size_t>(rows), 0);
    const detail::Pieces groups = row_groups(rows);
    RowMatrix sums = RowMatrix::Zero(groups.count, dim_out);
    std::vector<Index> finite(static_cast<std::size_t>(groups.count), 0);
    for_each_group(groups, dim_in + dim_out, [&](Index g, Index begin, Index end) {
        std::vector<double> in_row(static_cast<std::size_t>(dim_in));
        std::vector<double> out_row(static_cast<std::size_t>(dim_out));
        RowReader<Source> input_rows(input);
        RowReader<Source> output_rows(output);
        double* sum = sums.row(g).data();
        for (Index i = begin; i < end; ++i) {
            input_rows.widen(i, 1, in_row.data());
            const double in_square = detail::dot_kernel(in_row.data(), in_row.data(), dim_in);
            stats.input_norm[i] = std::sqrt(in_square);
            double out_square = in_square;
            if (!tied) {
                output_rows.widen(i, 1, out_row.data());
                out_square = detail::dot_kernel(out_row.data(), out_row.data(), dim_out);
            } else {
                out_row = in_row;
            }
            stats.output_norm[i] = std::sqrt(out_square);
            if (want_cosine) {
                const double dot_io = detail::dot_kernel(in_row.data(), out_row.data(), dim_in);
                (*stats.input_output_cosine)[i] = cosine_from_parts(dot_io, in_square, out_square);
            }
            // A sum of squares is finite exactly when every value is (an overflow to infinity aside,
            // which only values near the double range can cause; their rows are left out too).
            if (std::isfinite(out_square)) {
                stats.output.finite[static_cast<std::size_t>(i)] = 1;
                ++finite[static_cast<std::size_t>(g)];
                for (Index c = 0; c < dim_out; ++c) sum[c] += out_row[static_cast<std::size_t>(c)];
            }
        }
    });
    Vector total = Vector::Zero(dim_out);
    for (Index g = 0; g < groups.count; ++g) {
        total += sums.row(g).transpose();
        stats.output.count += finite[static_cast<std::size_t>(g)];
    }
    stats.output.mean = stats.output.count > 0 ? Vector(total / static_cast<double>(stats.output.count)) : total;
    return stats;
}

// U'_i = U_i minus its projection on v, into row (d).
void project_out(double* row, const Vector& v) {
    const Index dim = v.size();
    const double along = detail::dot_kernel(row, v.data(), dim);
    for (Index c = 0; c < dim; ++c) row[c] -= along * v[c];
}

// output_distance_i = 1 - cosine(U'_i, r'), r' the mean of U' over the (sorted, unique) finite reference
// rows; NaN for a non-finite row.
template <class Source>
Vector output_distances(const Source& output, const RowStatistics& stats, const Vector& v,
                        const std::vector<Index>& references) {
    const Index rows = output.rows();
    const Index dim = output.cols();
    Vector reference = Vector::Zero(dim);
    std::vector<double> row(static_cast<std::size_t>(dim));
    Index used = 0;
    RowReader<Source> reference_rows(output);
    for (const Index id : references) {
        if (stats.output.finite[static_cast<std::size_t>(id)] == 0) continue;
        reference_rows.widen(id, 1, row.data());
        project_out(row.data(), v);
        for (Index c = 0; c < dim; ++c) reference[c] += row[static_cast<std::size_t>(c)];
        ++used;
    }
    if (used > 0) reference /= static_cast<double>(used);
    const double reference_square = detail::dot_kernel(reference.data(), reference.data(), dim);
    Vector distance(rows);
    for_each_group(row_groups(rows), 4 * dim, [&](Index, Index begin, Index end) {
        std::vector<double> u(static_cast<std::size_t>(dim));
        RowReader<Source> rows_read(output);
        for (Index i = begin; i < end; ++i) {
            if (stats.output.finite[static_cast<std::size_t>(i)] == 0) {
                distance[i] = std::numeric_limits<double>::quiet_NaN();
                continue;
            }
            rows_read.widen(i, 1, u.data());
            project_out(u.data(), v);
            const double dot_ur = detail::dot_kernel(u.data(), reference.data(), dim);
            const double square = detail::dot_kernel(u.data(), u.data(), dim);
            distance[i] = 1.0 - cosine_from_parts(dot_ur, square, reference_square);
        }
    });
    return distance;
}

// Ids whose indicator is <= threshold, by (indicator, id); NaN is never <= anything.
std::vector<Index> candidates_of(const Vector& indicator, double threshold) {
    std::vector<Index> ids;
    for (Index i = 0; i < indicator.size(); ++i) {
        if (indicator[i] <= threshold) ids.push_back(i);
    }
    std::sort(ids.begin(), ids.end(), [&](Index a, Index b) {
        return indicator[a] != indicator[b] ? indicator[a] < indicator[b] : a < b;
    });
    return ids;
}

std::vector<Index> checked_references(const ScanOptions& options, Index rows) {
    std::vector<Index> ids = options.reference_ids;
    for (const Index id : ids) {
        if (id < 0 || id >= rows) {
            throw std::out_of_range("scan_vocabulary: reference id " + std::to_string(id) +
                                    " is outside the vocabulary [0, " + std::to_string(rows) + ")");
        }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

template <class Scalar>
bool same_values(BasicTableView<Scalar> a, BasicTableView<Scalar> b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    if (a.data() == b.data() || a.size() == 0) return true;
    return std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(Scalar)) == 0;
}

// Rows of two quantised tables compared per dequantising step.
constexpr Index kCompareRows = 64;

// Whether two quantised tables hold the same values: the same blocks of one type, or dequantised rows equal bit
// for bit, as their widened float32 tables would be compared (two types may dequantise alike).
bool same_values(const QuantisedTable& a, const QuantisedTable& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    if ((a.data() == b.data() && a.type() == b.type()) || a.size() == 0) return true;
    const Index dim = a.cols();
    std::vector<float> a_rows(static_cast<std::size_t>(kCompareRows * dim));
    std::vector<float> b_rows(a_rows.size());
    for (Index first = 0; first < a.rows(); first += kCompareRows) {
        const Index count = std::min(kCompareRows, a.rows() - first);
        a.dequantise_rows(first, count, a_rows.data());
        b.dequantise_rows(first, count, b_rows.data());
        if (std::memcmp(a_rows.data(), b_rows.data(), static_cast<std::size_t>(count * dim) * sizeof(float)) != 0) {
            return false;
        }
    }
    return true;
}

template <class Source>
VocabularyScan scan(const Source& input, const Source& output, const ScanOptions& options) {
    if (std::isnan(options.percentile) || options.percentile < 0.0 || options.percentile > 100.0) {
        throw std::invalid_argument("scan_vocabulary: percentile must be in [0, 100], got " +
                                    std::to_string(options.percentile));
    }
    if (input.rows() != output.rows()) {
        throw std::invalid_argument("scan_vocabulary: the input table has " + std::to_string(input.rows()) +
                                    " rows and the output table " + std::to_string(output.rows()) +
                                    "; they must be equal");
    }
    const std::vector<Index> references = checked_references(options, input.rows());
    const detail::DefaultFloatMode float_mode;
    const bool tied = same_values(input, output);
    const bool same_shape = input.cols() == output.cols();
    RowStatistics stats = row_statistics(input, output, tied, !tied && same_shape);
    VocabularyScan result;
    result.input_norm = std::move(stats.input_norm);
    result.output_norm = std::move(stats.output_norm);
    result.input_output_cosine = std::move(stats.input_output_cosine);
    if (!references.empty()) {
        const detail::PrincipalComponent component = detail::principal_component(output, stats.output);
        result.principal_component = component.component;
        result.principal_eigenvalue = component.eigenvalue;
        result.eigenvalue_gap = component.gap;
        result.component_error_bound = component.error_bound;
        result.principal_component_converged = component.converged;
        result.iterations = component.iterations;
        result.output_distance = output_distances(output, stats, result.principal_component, references);
        result.main_indicator = "output_distance";
    } else {
        result.main_indicator = "input_norm";
    }
    const Vector& indicator = result.output_distance ? *result.output_distance : result.input_norm;
    result.threshold = detail::nan_percentile(indicator, options.percentile);
    result.candidates = candidates_of(indicator, result.threshold);
    return result;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

template <TableOrView T>
VocabularyScan scan_vocabulary(const T& input, const T& output, const ScanOptions& options) {
    return scan(view_of(input), view_of(output), options);
}

VocabularyScan scan_vocabulary(const QuantisedTable& input, const QuantisedTable& output, const ScanOptions& options) {
    return scan(input, output, options);
}

std::vector<Index> unused_ids(const Vocabulary& vocabulary) {
    std::vector<Index> ids;
    for (Index id = 0; id < vocabulary.size(); ++id) {
        const TokenType type = vocabulary.type(id);
        if (type == TokenType::unused) {
            ids.push_back(id);
        } else if (type == TokenType::control) {
            const std::string& token = vocabulary.token(id);
            if (contains(token, "unused") || contains(token, "reserved")) ids.push_back(id);
        }
    }
    return ids;
}

#define EMBED_INSTANTIATE(T) template VocabularyScan scan_vocabulary<T>(const T&, const T&, const ScanOptions&);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE)
#undef EMBED_INSTANTIATE

}  // namespace embed
