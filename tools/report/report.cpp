#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "flags.hpp"

namespace embed::report {
namespace {

// The id of the largest logit in the library's ranking order: a higher score first, NaN below every
// number, the smaller id on a tie (so 0 when every logit is NaN).
Index argmax_smaller_id(const Vector& scores) {
    Index best = 0;
    for (Index t = 1; t < scores.size(); ++t) {
        if (scores[t] > scores[best] || (std::isnan(scores[best]) && !std::isnan(scores[t]))) best = t;
    }
    return best;
}

bool same_ids(const std::vector<Neighbour>& a, const std::vector<Neighbour>& b) { return ids_of(a) == ids_of(b); }

// table is (V, d): every other token's cosine and dot product with the probe, both sorted by id.
struct ProbeScores {
    std::vector<Neighbour> cosine;
    std::vector<Neighbour> dot;
};

template <class Source>
ProbeScores score_every_token(const Source& table, Index probe) {
    const Index others = table.rows() - 1;
    const auto by_id = [](std::vector<Neighbour> ranked) {
        std::sort(ranked.begin(), ranked.end(), [](const Neighbour& a, const Neighbour& b) { return a.id < b.id; });
        return ranked;
    };
    return {by_id(rank_neighbours(table, probe, others, Score::cosine)),
            by_id(rank_neighbours(table, probe, others, Score::dot))};
}

// The (V - 1) points of the figure, by id, from the scores before and after the stretch.
std::vector<TokenPoint> points_of(const ProbeScores& before, const ProbeScores& after) {
    std::vector<TokenPoint> points(before.cosine.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        points[i] = {before.cosine[i].id, before.cosine[i].score, before.dot[i].score, after.cosine[i].score,
                     after.dot[i].score};
    }
    return points;
}

std::vector<MemoryRow> memory_rows(const VocabGrowth& g, Index bigger_saved) {
    std::vector<MemoryRow> rows;
    for (ElementType type : {ElementType::f32, ElementType::bf16, ElementType::f16}) {
        rows.push_back({type, table_bytes(g.tied, type), table_bytes(g.untied, type), table_bytes(g.saved, type),
                        table_bytes(g.bigger_tied, type), table_bytes(g.bigger_untied, type),
                        table_bytes(bigger_saved, type)});
    }
    return rows;
}

// rows (n, d) of Scalar as doubles, exactly.
template <class Scalar>
Table widened(const BasicTable<Scalar>& rows) {
    if constexpr (std::is_same_v<Scalar, double>) {
        return rows;
    } else {
        return to_double(rows);
    }
}

// row (d) of doubles stored as Scalar, rounded once to nearest even as embed::stretch rounds its row.
template <class Scalar>
BasicTable<Scalar> stored_as(const Table& row) {
    if constexpr (std::is_same_v<Scalar, double>) {
        return row;
    } else if constexpr (std::is_same_v<Scalar, float>) {
        return to_f32(row);
    } else {
        return to_bf16(row);
    }
}

template <class Source>
void measure_lookup(const Source& table, const ReportInputs& in, ReportResult& r) {
    const std::vector<Index> one{in.probe};
    const std::vector<Index> twice{in.probe, in.probe};
    r.lookup_mults = 0;  // a row gather multiplies nothing; SPECIFICATION.md, Report keys, fixes this value
    r.one_hot_mults = one_hot_mults(in.vocab, in.dim, 1);
    // A NaN difference (the one-hot route multiplies a NaN or an infinity anywhere in a column by 0) is
    // the answer, not a value to skip: the two routes then differ, and the JSON holds null.
    const Table difference = widened(lookup(table, one)) - lookup_via_one_hot(table, one);
    r.max_abs_diff = difference.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
    // Compared as numbers: a probe row holding NaN is not equal to itself.
    const auto repeated = lookup(table, twice);
    r.repeat_same = repeated.row(0) == repeated.row(1);
}

template <class Source>
void measure_logits(const Source& table, const ReportInputs& in, ReportResult& r) {
    const Vector hidden = widened(lookup(table, std::vector<Index>{in.probe})).row(0).transpose();
    const Vector scores = logits(table, hidden);  // the same table, by reference: weight tying
    r.logit_len = scores.size();
    r.logit_argmax = argmax_smaller_id(scores);
    r.logit_argmax_is_self = r.logit_argmax == in.probe;
}

// embed::stretch returns a stretched copy, which would double the memory a loaded
// table takes. The same multiplication done on the row in place (in double, then
// rounded once to the table's type, as stretch does), and undone from a saved copy
// of that row afterwards, gives the same bits for d extra values.
template <class Scalar>
void measure_neighbours(BasicTable<Scalar>& table, const ReportInputs& in, ReportResult& r) {
    r.cos_neighbors = rank_neighbours(table, in.probe, in.k, Score::cosine);
    r.dot_neighbors = rank_neighbours(table, in.probe, in.k, Score::dot);
    r.neighbors_differ = !same_ids(r.cos_neighbors, r.dot_neighbors);
    r.stretch_target = r.cos_neighbors[static_cast<std::size_t>(in.pick)].id;
    const ProbeScores before = score_every_token(table, in.probe);
    const BasicTable<Scalar> saved = table.row(r.stretch_target);
    table.row(r.stretch_target) = stored_as<Scalar>(widened(saved) * in.stretch_factor);
    r.cos_after_stretch = rank_neighbours(table, in.probe, in.k, Score::cosine);
    r.dot_after_stretch = rank_neighbours(table, in.probe, in.k, Score::dot);
    r.points = points_of(before, score_every_token(table, in.probe));
    table.row(r.stretch_target) = saved;
}

// The first k of scores (every other token's, by id) in the library's ranking order: a higher score first, NaN
// below every number, the smaller id on a tie.
std::vector<Neighbour> best_of(std::vector<Neighbour> scores, Index k) {
    const auto ranks_before = [](const Neighbour& a, const Neighbour& b) {
        const bool a_nan = std::isnan(a.score);
        const bool b_nan = std::isnan(b.score);
        if (a_nan != b_nan) return b_nan;
        if (!a_nan && a.score != b.score) return a.score > b.score;
        return a.id < b.id;
    };
    const auto keep = static_cast<std::ptrdiff_t>(std::min<Index>(k, static_cast<Index>(scores.size())));
    std::partial_sort(scores.begin(), scores.begin() + keep, scores.end(), ranks_before);
    scores.resize(static_cast<std::size_t>(keep));
    return scores;
}

// A quantised table's row cannot be stretched in place, and the table is not widened to make room. The stretch
// changes one row, never the probe's, so it changes one score of each kind: the stretched row is made as the
// widened float32 table's would be (rounded once to float32), scored against the probe's row by the library in a
// table of the two, and put in place of the target's score before; the rankings after are those scores ranked.
void measure_neighbours(const QuantisedTable& table, const ReportInputs& in, ReportResult& r) {
    r.cos_neighbors = rank_neighbours(table, in.probe, in.k, Score::cosine);
    r.dot_neighbors = rank_neighbours(table, in.probe, in.k, Score::dot);
    r.neighbors_differ = !same_ids(r.cos_neighbors, r.dot_neighbors);
    r.stretch_target = r.cos_neighbors[static_cast<std::size_t>(in.pick)].id;
    const ProbeScores before = score_every_token(table, in.probe);
    TableF32 probe_and_stretched = lookup(table, std::vector<Index>{in.probe, r.stretch_target});
    probe_and_stretched.row(1) = stored_as<float>(widened(TableF32(probe_and_stretched.row(1))) * in.stretch_factor);
    ProbeScores after = before;
    const auto target = std::find_if(before.cosine.begin(), before.cosine.end(),
                                     [&](const Neighbour& n) { return n.id == r.stretch_target; }) -
                        before.cosine.begin();
    after.cosine[static_cast<std::size_t>(target)].score = rank_neighbours(probe_and_stretched, 0, 1, Score::cosine)[0].score;
    after.dot[static_cast<std::size_t>(target)].score = rank_neighbours(probe_and_stretched, 0, 1, Score::dot)[0].score;
    r.cos_after_stretch = best_of(after.cosine, in.k);
    r.dot_after_stretch = best_of(after.dot, in.k);
    r.points = points_of(before, after);
}

template <class Source>
void measure_scaling(const Source& table, const ReportInputs& in, ReportResult& r) {
    constexpr double tolerance = 1e-12;  // "the same to 1e-12" (SPECIFICATION.md, Report keys)
    const Index neighbour = r.cos_neighbors.front().id;
    const std::vector<Index> pair{in.probe, neighbour};
    const Table plain = widened(lookup(table, pair));
    const Table scaled = scaled_lookup(table, pair, in.dim);
    const Vector probe_plain = plain.row(0).transpose();
    const Vector probe_scaled = scaled.row(0).transpose();
    r.cos_plain_scaled = cosine(probe_plain, probe_scaled);
    r.cos_first_neighbour = cosine(probe_plain, plain.row(1).transpose());
    r.cos_first_neighbour_scaled = cosine(probe_scaled, scaled.row(1).transpose());
    r.cos_unchanged_by_scale = std::fabs(r.cos_plain_scaled - 1.0) <= tolerance &&
                               std::fabs(r.cos_first_neighbour - r.cos_first_neighbour_scaled) <= tolerance;
    r.rms_plain = rms(probe_plain);
    r.rms_scaled = rms(probe_scaled);
    r.rms_ratio = r.rms_scaled / r.rms_plain;
    const double root = std::sqrt(static_cast<double>(in.dim));
    r.sqrt_d = {root, round_to_bf16(root), round_to_fp16(root)};
}

}  // namespace

std::vector<Index> ids_of(const std::vector<Neighbour>& ranked) {
    std::vector<Index> ids;
    ids.reserve(ranked.size());
    for (const Neighbour& n : ranked) ids.push_back(n.id);
    return ids;
}

Index position_of(const std::vector<Neighbour>& ranked, Index id) {
    const auto found = std::find_if(ranked.begin(), ranked.end(), [id](const Neighbour& n) { return n.id == id; });
    return found == ranked.end() ? -1 : static_cast<Index>(found - ranked.begin());
}

ReportResult measure(const ReportInputs& inputs) {
    validate(inputs);
    return measure(make_table(inputs.vocab, inputs.dim, inputs.seed), inputs);
}

namespace {

// Every measure on table (V, d), a stored table (stretched in place and put back) or a quantised one.
template <class Source>
ReportResult measure_table(Source& table, const ReportInputs& inputs) {
    validate(inputs);
    if (table.rows() != inputs.vocab || table.cols() != inputs.dim) {
        throw std::invalid_argument("the table is (" + std::to_string(table.rows()) + ", " +
                                    std::to_string(table.cols()) + ") but the inputs say (" +
                                    std::to_string(inputs.vocab) + ", " + std::to_string(inputs.dim) + ")");
    }
    ReportResult r;
    r.inputs = inputs;
    r.table_shape = {table.rows(), table.cols()};
    r.params = param_count(inputs.vocab, inputs.dim);
    r.growth = vocab_growth(inputs.vocab, inputs.dim, inputs.growth);
    r.bigger_saved = r.growth.bigger_untied - r.growth.bigger_tied;
    r.memory = memory_rows(r.growth, r.bigger_saved);
    measure_lookup(table, inputs, r);
    measure_logits(table, inputs, r);
    measure_neighbours(table, inputs, r);
    measure_scaling(table, inputs, r);
    return r;
}

}  // namespace

template <class Scalar>
ReportResult measure(BasicTable<Scalar> table, const ReportInputs& inputs) {
    return measure_table(table, inputs);
}

ReportResult measure(const QuantisedTable& table, const ReportInputs& inputs) { return measure_table(table, inputs); }

template ReportResult measure<double>(Table, const ReportInputs&);
template ReportResult measure<float>(TableF32, const ReportInputs&);
template ReportResult measure<Eigen::bfloat16>(TableBF16, const ReportInputs&);

}  // namespace embed::report
