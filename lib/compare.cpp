#include "embed/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "compare/draws.hpp"
#include "compare/measures.hpp"
#include "percentile.hpp"
#include "floating_point/float_mode.hpp"

namespace embed {
namespace {

constexpr std::size_t kUnmatchedExamples = 10;

Index rows_of(const AnyTableView& table) {
    return std::visit([](const auto& view) { return view.rows(); }, table);
}

Index cols_of(const AnyTableView& table) {
    return std::visit([](const auto& view) { return view.cols(); }, table);
}

void check_options(const AnyTableView& a, const AnyTableView& b, const CompareOptions& options) {
    if (options.k < 1) throw std::invalid_argument("compare_tables: k must be >= 1, got " + std::to_string(options.k));
    detail::require_non_negative(options.probes, "compare_tables: probes");
    const Index a_dim = cols_of(a);
    const Index b_dim = cols_of(b);
    if (options.align == Alignment::orthogonal && a_dim != b_dim) {
        throw std::invalid_argument("compare_tables: an orthogonal alignment needs tables of one width, got " +
                                    std::to_string(a_dim) + " and " + std::to_string(b_dim));
    }
    if (options.match == RowMatch::text && (options.a_vocabulary == nullptr || options.b_vocabulary == nullptr)) {
        throw std::invalid_argument("compare_tables: matching by text needs both tables' vocabularies");
    }
    if (options.hidden) {
        if (a_dim != b_dim) {
            throw std::invalid_argument("compare_tables: hidden vectors need tables of one width, got " +
                                        std::to_string(a_dim) + " and " + std::to_string(b_dim));
        }
        detail::require_same_length(options.hidden->cols(), a_dim, "compare_tables: hidden's width (must equal d)");
    } else if (a_dim == b_dim && a_dim > 0 && options.probes > std::numeric_limits<Index>::max() / a_dim) {
        throw std::overflow_error("compare_tables: probes * d overflows 64 bits: probes " +
                                  std::to_string(options.probes) + ", d " + std::to_string(a_dim));
    }
}

std::vector<RowPair> pairs_of(const AnyTableView& a, const AnyTableView& b, const CompareOptions& options) {
    if (options.match == RowMatch::text) {
        return pairs_by_text(*options.a_vocabulary, rows_of(a), *options.b_vocabulary, rows_of(b));
    }
    std::vector<RowPair> pairs(static_cast<std::size_t>(std::min(rows_of(a), rows_of(b))));
    for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {static_cast<Index>(i), static_cast<Index>(i)};
    return pairs;
}

// The ids in [0, rows) no pair holds: how many, and the first few.
void unmatched(const std::vector<RowPair>& pairs, bool side_a, Index rows, Index& count, std::vector<Index>& examples) {
    std::vector<char> paired(static_cast<std::size_t>(rows), 0);
    for (const RowPair& pair : pairs) paired[static_cast<std::size_t>(side_a ? pair.a : pair.b)] = 1;
    count = 0;
    for (Index id = 0; id < rows; ++id) {
        if (paired[static_cast<std::size_t>(id)] != 0) continue;
        ++count;
        if (examples.size() < kUnmatchedExamples) examples.push_back(id);
    }
}

// The probes as pair indices, ascending: the given ids' pairs, or a seeded sample.
std::vector<Index> probe_pairs(const std::vector<RowPair>& pairs, Index a_rows, const CompareOptions& options) {
    const auto n = static_cast<Index>(pairs.size());
    std::vector<Index> chosen;
    if (options.probe_ids) {
        std::vector<Index> pair_of(static_cast<std::size_t>(a_rows), -1);
        for (Index p = 0; p < n; ++p) pair_of[static_cast<std::size_t>(pairs[static_cast<std::size_t>(p)].a)] = p;
        for (const Index id : *options.probe_ids) {
            detail::require_token(id, a_rows);
            const Index p = pair_of[static_cast<std::size_t>(id)];
            if (p < 0) {
                throw std::invalid_argument("compare_tables: probe id " + std::to_string(id) +
                                            " is not paired with a row of b");
            }
            chosen.push_back(p);
        }
    } else {
        chosen = detail::python_sample(options.seed, n, std::min(options.probes, n));
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
}

Percentiles percentiles_of(const Vector& values) {
    Percentiles result;
    for (std::size_t i = 0; i < Percentiles::levels.size(); ++i) {
        result.values[i] = detail::nan_percentile(values, Percentiles::levels[i]);
    }
    return result;
}

}  // namespace

TableComparison compare_tables(const AnyTableView& a, const AnyTableView& b, const CompareOptions& options) {
    const detail::DefaultFloatMode float_mode;
    check_options(a, b, options);
    TableComparison result;
    result.pairs = pairs_of(a, b, options);
    result.matched = static_cast<Index>(result.pairs.size());
    const std::vector<Index> probes = probe_pairs(result.pairs, rows_of(a), options);
    unmatched(result.pairs, true, rows_of(a), result.unmatched_a, result.unmatched_a_examples);
    unmatched(result.pairs, false, rows_of(b), result.unmatched_b, result.unmatched_b_examples);
    const bool same_width = cols_of(a) == cols_of(b);
    if (options.align == Alignment::orthogonal) result.rotation = detail::fit_rotation(a, b, result.pairs);
    detail::measure_rows(a, b, result);
    for (const Index p : probes) result.probe_ids.push_back(result.pairs[static_cast<std::size_t>(p)].a);
    result.neighbour_overlap = detail::neighbour_overlaps(a, b, result, probes, options.k);
    if (same_width) {
        const Table hidden = options.hidden ? *options.hidden
                                            : detail::python_gauss_rows(options.seed, options.probes, cols_of(a));
        result.hidden_count = hidden.rows();
        const detail::LogitAgreement logits = detail::logit_agreement(
            a, b, result.pairs, hidden, result.rotation ? &*result.rotation : nullptr, options.k);
        result.top1_agreement = logits.top1_agreement;
        result.topk_overlap = logits.topk_overlap;
        result.kl_divergence = logits.kl_divergence;
        result.max_abs_logit_diff = logits.max_abs_logit_diff;
        result.row_cosine_percentiles = percentiles_of(*result.row_cosine);
        result.relative_change_percentiles = percentiles_of(*result.relative_change);
    }
    result.norm_a_percentiles = percentiles_of(result.norm_a);
    result.norm_b_percentiles = percentiles_of(result.norm_b);
    return result;
}

TableComparison compare_tables(const StoredTable& a, const StoredTable& b, const CompareOptions& options) {
    const auto any_view = [](const StoredTable& table) {
        return std::visit([](const auto& owned) { return AnyTableView(view_of(owned)); }, table);
    };
    return compare_tables(any_view(a), any_view(b), options);
}

TableComparison compare_tables(const OpenedTable& a, const OpenedTable& b, const CompareOptions& options) {
    const auto any_view = [](const OpenedTable& opened) {
        return std::visit(
            [](const auto& table) {
                if constexpr (std::is_same_v<std::decay_t<decltype(table)>, QuantisedTable>) {
                    return AnyTableView(table);
                } else {
                    return AnyTableView(view_of(table));
                }
            },
            opened.table);
    };
    return compare_tables(any_view(a), any_view(b), options);
}

TableComparison compare_table_files(const std::filesystem::path& a, const std::filesystem::path& b,
                                    const CompareOptions& options, const CompareSources& sources) {
    const OpenedTable a_table = open_table(a, sources.a_tensor);
    const OpenedTable b_table = open_table(b, sources.b_tensor);
    CompareOptions with_vocabularies = options;
    Vocabulary a_vocabulary;
    Vocabulary b_vocabulary;
    if (options.match == RowMatch::text && with_vocabularies.a_vocabulary == nullptr) {
        a_vocabulary = load_vocabulary(sources.a_tokenizer.empty() ? a : sources.a_tokenizer);
        with_vocabularies.a_vocabulary = &a_vocabulary;
    }
    if (options.match == RowMatch::text && with_vocabularies.b_vocabulary == nullptr) {
        b_vocabulary = load_vocabulary(sources.b_tokenizer.empty() ? b : sources.b_tokenizer);
        with_vocabularies.b_vocabulary = &b_vocabulary;
    }
    return compare_tables(a_table, b_table, with_vocabularies);
}

std::vector<Index> moved_pairs(const TableComparison& comparison, Index count) {
    if (!comparison.row_cosine) return {};
    const Vector& cosine = *comparison.row_cosine;
    std::vector<Index> order(static_cast<std::size_t>(cosine.size()));
    for (std::size_t p = 0; p < order.size(); ++p) order[p] = static_cast<Index>(p);
    const auto lower = [&](Index x, Index y) {
        const bool nan_x = std::isnan(cosine[x]);
        const bool nan_y = std::isnan(cosine[y]);
        if (nan_x != nan_y) return nan_x;
        if (!nan_x && cosine[x] != cosine[y]) return cosine[x] < cosine[y];
        return comparison.pairs[static_cast<std::size_t>(x)].a < comparison.pairs[static_cast<std::size_t>(y)].a;
    };
    const auto last = order.begin() + std::min<Index>(std::max<Index>(count, 0), cosine.size());
    std::partial_sort(order.begin(), last, order.end(), lower);
    order.erase(last, order.end());
    return order;
}

}  // namespace embed
