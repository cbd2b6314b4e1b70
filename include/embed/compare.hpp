#pragma once
// Two tables side by side: how far each row moved from one model (or one
// precision, or one checkpoint) to the other, whether each row's neighbours
// stayed its neighbours, and whether the two serve the same next-token
// distributions as output layers.
//
// Rows are paired by id (one vocabulary) or by text (two vocabularies). With
// equal widths, a's rows may first be rotated onto b's (orthogonal Procrustes,
// fitted in double on the paired rows), so that two models trained apart, or a
// model and its rotated copy, are compared up to a rotation.
//
// Every measure is computed in double on the stored values widened exactly;
// each sum runs in an order fixed by the sizes alone, so results never depend
// on the thread count. A quantised table (QuantisedTable) is read in its
// blocks, its rows dequantised a chunk at a time: every measure is, bit for
// bit, the one on its widened float32 table (load_table_f32's). The
// neighbourhoods are screened in float32 first, with a proven error bound,
// and only rows the bound cannot rule out are scored in double: the lists
// are the double computation's, bit for bit. The random draws are CPython's, so Python rebuilds them:
//     probes: sorted(random.Random(seed).sample(range(matched), min(probes, matched)))
//             (indices into pairs; the probe ids are a's ids of those pairs)
//     hidden: g = random.Random(seed); [[g.gauss(0.0, 1.0) for c in range(d)] for n in range(probes)]
//             (a fresh generator, drawn row by row)
//
// NaN and infinity: a pair holding either gets NaN (or what IEEE arithmetic
// gives) in its measures; such pairs are left out of the rotation's fit; NaN
// ranks below every number in every ranking, ties by the lower id or index.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "embed/io.hpp"
#include "embed/types.hpp"
#include "embed/vocabulary.hpp"

namespace embed {

/// How rows of a and b are paired.
enum class RowMatch {
    /// (i, i) for i < min(Va, Vb): one vocabulary.
    id,
    /// (i, j) where a's text of i equals b's text of j and that text is held by exactly one row of each.
    text,
};

/// Whether a's rows are rotated onto b's before they are compared.
enum class Alignment {
    /// a's rows as they are.
    none,
    /// a_i R with R the orthogonal (d, d) matrix minimising ||A_m R - B_m||_F (a reflection allowed).
    orthogonal,
};

/// One pair of rows: a's id and b's id.
struct RowPair {
    Index a = 0;
    Index b = 0;
    friend bool operator==(const RowPair&, const RowPair&) = default;
};

/// What compare_tables pairs, aligns and draws.
struct CompareOptions {
    RowMatch match = RowMatch::id;
    Alignment align = Alignment::none;
    /// Probe rows for the neighbourhoods and Gaussian hidden vectors for the logits, drawn by seed; at most the
    /// matched count of probe rows are drawn. Negative: invalid_argument.
    Index probes = 1000;
    /// Neighbours and top logits compared, at least 1 (invalid_argument otherwise); more than there are other
    /// rows asks for all of them.
    Index k = 10;
    std::uint64_t seed = 0;
    /// a's ids to probe instead of drawn ones: each a paired row of a (out_of_range outside [0, Va),
    /// invalid_argument if unpaired); used ascending, duplicates once.
    std::optional<std::vector<Index>> probe_ids;
    /// (n, d) hidden vectors instead of drawn ones; width other than d: invalid_argument.
    std::optional<Table> hidden;
    /// The vocabularies behind a and b; both needed for RowMatch::text (invalid_argument without). Read
    /// during the call only.
    const Vocabulary* a_vocabulary = nullptr;
    const Vocabulary* b_vocabulary = nullptr;
};

/// The five percentiles reported for each per-pair measure, by numpy's linear rule, NaN values left out.
struct Percentiles {
    static constexpr std::array<double, 5> levels = {1.0, 5.0, 50.0, 95.0, 99.0};
    /// values[i] is the levels[i]-th percentile; NaN when no value is a number.
    std::array<double, 5> values{};
};

/// Everything compare_tables measures. n is the number of pairs (matched).
struct TableComparison {
    /// (n) paired rows, ascending by a's id.
    std::vector<RowPair> pairs;
    Index matched = 0;
    Index unmatched_a = 0;
    Index unmatched_b = 0;
    /// The first (up to 10) unpaired ids of each table, ascending.
    std::vector<Index> unmatched_a_examples;
    std::vector<Index> unmatched_b_examples;
    /// (d, d) the fitted rotation with Alignment::orthogonal; absent otherwise.
    std::optional<Table> rotation;
    /// (n) cosine(a_i R, b_j) (0.0 when either is all zeros); absent for tables of different widths.
    std::optional<Vector> row_cosine;
    /// (n) norm of a_i and of b_j.
    Vector norm_a;
    Vector norm_b;
    /// (n) norm(a_i R - b_j) / norm(a_i), NaN where a_i is zero; absent for tables of different widths.
    std::optional<Vector> relative_change;
    /// (P) a's ids of the probe rows, ascending.
    std::vector<Index> probe_ids;
    /// (P) per probe: |k nearest in a  ∩  k nearest of its partner in b, mapped to a's ids| / k', by cosine among
    /// the paired rows other than itself; k' = min(k, matched - 1) (NaN when no other pair exists).
    Vector neighbour_overlap;
    /// Hidden vectors the logit measures were taken over.
    Index hidden_count = 0;
    /// Over the hidden vectors h, with z_a = A_m h and z_b = B_m (h R) (B_m h unaligned), both (n): the share
    /// whose argmax agrees, the mean |top-k' z_a ∩ top-k' z_b| / k' (k' = min(k, n)), the mean KL(softmax z_a ||
    /// softmax z_b) (natural log), the largest |z_a - z_b|. Absent for tables of different widths; NaN without
    /// hidden vectors or pairs.
    std::optional<double> top1_agreement;
    std::optional<double> topk_overlap;
    std::optional<double> kl_divergence;
    std::optional<double> max_abs_logit_diff;
    /// Percentiles of row_cosine, norm_a, norm_b, relative_change (absent where the measure is).
    std::optional<Percentiles> row_cosine_percentiles;
    Percentiles norm_a_percentiles;
    Percentiles norm_b_percentiles;
    std::optional<Percentiles> relative_change_percentiles;
};

/// A read-only view of a table of any stored type, or a quantised table in its blocks (a copy that shares them).
using AnyTableView = std::variant<TableView, TableViewF32, TableViewBF16, QuantisedTable>;

/// a is (Va, da), b is (Vb, db), of any stored or quantised types; returns the comparison options ask for.
/// invalid_argument: k < 1, probes < 0, Alignment::orthogonal with da != db, RowMatch::text without both
/// vocabularies, hidden of the wrong width, an unpaired probe id; out_of_range: a probe id outside [0, Va).
TableComparison compare_tables(const AnyTableView& a, const AnyTableView& b, const CompareOptions& options = {});

/// a and b are tables of any stored types, owned or viewed (see compare_tables above).
template <TableOrView A, TableOrView B>
TableComparison compare_tables(const A& a, const B& b, const CompareOptions& options = {}) {
    return compare_tables(AnyTableView(view_of(a)), AnyTableView(view_of(b)), options);
}

/// a and b as load_stored_table gives them (see compare_tables above).
TableComparison compare_tables(const StoredTable& a, const StoredTable& b, const CompareOptions& options = {});

/// a (Va, da) and b (Vb, db) as open_table gives them, a quantised one never widened: bit for bit the
/// comparison of the tables load_stored_table gives (see compare_tables above).
TableComparison compare_tables(const OpenedTable& a, const OpenedTable& b, const CompareOptions& options = {});

/// Where compare_table_files reads its tables and vocabularies.
struct CompareSources {
    /// Tensors to read (empty: as chosen_tensor picks).
    std::string a_tensor;
    std::string b_tensor;
    /// Vocabulary sources (load_vocabulary); empty: the table's own file, when options.match needs one.
    std::filesystem::path a_tokenizer;
    std::filesystem::path b_tokenizer;
};

/// Reads both tables (open_table: a quantised one stays in its blocks) and, for RowMatch::text, both vocabularies, then compares them.
/// options' vocabularies, when set, are used instead of loading. Errors: the readers', then compare_tables'.
TableComparison compare_table_files(const std::filesystem::path& a, const std::filesystem::path& b,
                                    const CompareOptions& options = {}, const CompareSources& sources = {});

/// a and b are vocabularies of tables with a_rows and b_rows rows: pairs (i, j), ascending by i, where a's
/// text of i equals b's text of j and that text is held by exactly one row of each (ids that are missing or
/// have no row never match).
std::vector<RowPair> pairs_by_text(const Vocabulary& a, Index a_rows, const Vocabulary& b, Index b_rows);

/// comparison's pair indices (at most count) by row_cosine ascending, NaN first, ties by a's id: the rows that
/// moved most. Empty when row_cosine is absent.
std::vector<Index> moved_pairs(const TableComparison& comparison, Index count);

}  // namespace embed
