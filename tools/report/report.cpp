#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace embed::report {
namespace {

// The tool keeps the table, a stretched copy and per-token scores in memory;
// past this many entries (256 MiB per table) a run is refused rather than
// left to fail half-way through an allocation.
constexpr Index MAX_ENTRIES = Index{1} << 25;

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string str(Index value) { return std::to_string(value); }

// Every count the report prints must fit in Index; the library throws
// overflow_error otherwise, which is a bad input here, not a failed run.
void check_counts_fit(const ReportInputs& in) {
    try {
        const VocabGrowth growth = vocab_growth(in.vocab, in.dim, in.growth);
        (void)table_bytes(growth.bigger_untied, Dtype::fp32);
    } catch (const std::overflow_error&) {
        refuse("--growth " + str(in.growth) + " with --vocab " + str(in.vocab) + " and --dim " + str(in.dim) +
               " gives parameter or byte counts past 2^63 - 1");
    }
}

// table is (V, d), hidden is (d): the id of the largest logit, the smaller id on a tie.
Index argmax_smaller_id(const Vector& scores) {
    Index best = 0;
    for (Index t = 1; t < scores.size(); ++t) {
        if (scores[t] > scores[best]) best = t;
    }
    return best;
}

bool same_ids(const std::vector<Neighbour>& a, const std::vector<Neighbour>& b) { return ids_of(a) == ids_of(b); }

// table and stretched are (V, d): every other token's cosine and dot with the probe, by id.
std::vector<TokenPoint> score_points(const Table& table, const Table& stretched, Index probe) {
    const Index others = table.rows() - 1;
    const auto by_id = [](std::vector<Neighbour> ranked) {
        std::sort(ranked.begin(), ranked.end(), [](const Neighbour& a, const Neighbour& b) { return a.id < b.id; });
        return ranked;
    };
    const auto cos_before = by_id(rank_neighbours(table, probe, others, Score::cosine));
    const auto dot_before = by_id(rank_neighbours(table, probe, others, Score::dot));
    const auto cos_after = by_id(rank_neighbours(stretched, probe, others, Score::cosine));
    const auto dot_after = by_id(rank_neighbours(stretched, probe, others, Score::dot));
    std::vector<TokenPoint> points(static_cast<std::size_t>(others));
    for (std::size_t i = 0; i < points.size(); ++i) {
        points[i] = {cos_before[i].id, cos_before[i].score, dot_before[i].score, cos_after[i].score,
                     dot_after[i].score};
    }
    return points;
}

std::vector<MemoryRow> memory_rows(const VocabGrowth& g, Index bigger_saved) {
    std::vector<MemoryRow> rows;
    for (Dtype dtype : {Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
        rows.push_back({dtype, table_bytes(g.tied, dtype), table_bytes(g.untied, dtype), table_bytes(g.saved, dtype),
                        table_bytes(g.bigger_tied, dtype), table_bytes(g.bigger_untied, dtype),
                        table_bytes(bigger_saved, dtype)});
    }
    return rows;
}

void measure_lookup(const Table& table, const ReportInputs& in, ReportResult& r) {
    const std::vector<Index> one{in.probe};
    const std::vector<Index> twice{in.probe, in.probe};
    r.lookup_mults = 0;  // a row gather multiplies nothing; the contract fixes this value
    r.one_hot_mults = one_hot_mults(in.vocab, in.dim, 1);
    r.max_abs_diff = (lookup(table, one) - lookup_via_one_hot(table, one)).cwiseAbs().maxCoeff();
    const Table repeated = lookup(table, twice);
    r.repeat_same = repeated.row(0) == repeated.row(1);
}

void measure_logits(const Table& table, const ReportInputs& in, ReportResult& r) {
    const Vector hidden = table.row(in.probe).transpose();
    const Vector scores = logits(table, hidden);  // the same table, by reference: weight tying
    r.logit_len = scores.size();
    r.logit_argmax = argmax_smaller_id(scores);
    r.logit_argmax_is_self = r.logit_argmax == in.probe;
}

void measure_neighbours(const Table& table, const ReportInputs& in, ReportResult& r) {
    r.cos_neighbors = rank_neighbours(table, in.probe, in.k, Score::cosine);
    r.dot_neighbors = rank_neighbours(table, in.probe, in.k, Score::dot);
    r.neighbors_differ = !same_ids(r.cos_neighbors, r.dot_neighbors);
    r.stretch_target = r.cos_neighbors[static_cast<std::size_t>(in.pick)].id;
    const Table stretched = stretch(table, r.stretch_target, in.stretch_factor);
    r.cos_after_stretch = rank_neighbours(stretched, in.probe, in.k, Score::cosine);
    r.dot_after_stretch = rank_neighbours(stretched, in.probe, in.k, Score::dot);
    r.points = score_points(table, stretched, in.probe);
}

void measure_scaling(const Table& table, const ReportInputs& in, ReportResult& r) {
    constexpr double tolerance = 1e-12;  // the contract's "the same to 1e-12"
    const Index neighbour = r.cos_neighbors.front().id;
    const std::vector<Index> pair{in.probe, neighbour};
    const Table plain = lookup(table, pair);
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

void validate(const ReportInputs& in) {
    // One token has no neighbours to rank, so the smallest useful vocabulary is 2.
    if (in.vocab < 2) refuse("--vocab " + str(in.vocab) + " must be at least 2");
    if (in.dim < 1) refuse("--dim " + str(in.dim) + " must be at least 1");
    if (in.vocab > MAX_ENTRIES / in.dim) {
        refuse("--vocab " + str(in.vocab) + " times --dim " + str(in.dim) + " must be at most " + str(MAX_ENTRIES) +
               " table entries");
    }
    if (in.probe < 0 || in.probe >= in.vocab) {
        refuse("--probe " + str(in.probe) + " is outside the vocabulary [0, " + str(in.vocab) + ")");
    }
    if (in.k < 1 || in.k > in.vocab - 1) {
        refuse("--k " + str(in.k) + " must be in [1, " + str(in.vocab - 1) + "] (1 to vocab - 1)");
    }
    if (in.pick < 0 || in.pick >= in.k) {
        refuse("--pick " + str(in.pick) + " must be in [0, " + str(in.k) + ") (a position in the top-k list)");
    }
    if (!std::isfinite(in.stretch_factor)) {
        refuse("--stretch-factor " + std::to_string(in.stretch_factor) + " must be a finite number");
    }
    if (in.growth < 1) refuse("--growth " + str(in.growth) + " must be at least 1");
    check_counts_fit(in);
}

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
    ReportResult r;
    r.inputs = inputs;
    const Table table = make_table(inputs.vocab, inputs.dim, inputs.seed);
    r.table_shape = shape(table);
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

}  // namespace embed::report
