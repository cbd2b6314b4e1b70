#include "compare.hpp"

#include <limits>
#include <optional>
#include <string>
#include <variant>

#include <embed/compare.hpp>
#include <embed/io.hpp>
#include <embed/vocabulary.hpp>

#include "convert.hpp"
#include "files.hpp"
#include "results.hpp"

namespace embed_python {
namespace {

constexpr embed::Index kMovedRows = 100;

[[noreturn]] void value_error(const std::string& message) {
    PyErr_SetString(PyExc_ValueError, message.c_str());
    throw py::error_already_set();
}

bool is_path(py::handle value) {
    return py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) || py::hasattr(value, "__fspath__");
}

// One side of the comparison: a table read from a file (kept here), or an array read in place.
struct Side {
    std::optional<embed::StoredTable> stored;
    std::optional<TableArg> array;
    std::optional<embed::Vocabulary> vocabulary;

    embed::AnyTableView view() const {
        if (stored) {
            return std::visit([](const auto& table) { return embed::AnyTableView(embed::view_of(table)); }, *stored);
        }
        return std::visit([](const auto& table) { return embed::AnyTableView(table); }, array->view());
    }
    Index rows() const {
        return std::visit([](const auto& table) { return table.rows(); }, view());
    }
};

Side side_arg(py::handle table, py::handle tensor, py::handle tokenizer, bool needs_vocabulary, const char* name) {
    Side side;
    if (is_path(table)) {
        const std::filesystem::path file = path_arg(table);
        const std::string tensor_name = tensor.is_none() ? std::string() : py::cast<std::string>(tensor);
        side.stored = call_library([&] { return embed::load_stored_table(file, tensor_name); });
        if (tokenizer.is_none() && needs_vocabulary) {
            side.vocabulary = call_library([&] { return embed::load_vocabulary(file); });
        }
    } else {
        if (!tensor.is_none()) value_error(std::string(name) + "_tensor names a tensor of a file, but " + name +
                                           " is an array");
        side.array = TableArg::from(table, name);
    }
    if (!tokenizer.is_none()) {
        const std::filesystem::path source = path_arg(tokenizer);
        side.vocabulary = call_library([&] { return embed::load_vocabulary(source); });
    }
    return side;
}

std::uint64_t seed_arg(py::handle value) {
    const py::int_ seed = as_int(value, "seed");
    if (seed < py::int_(0) || seed > py::int_(std::numeric_limits<std::uint64_t>::max())) {
        value_error("seed must be in [0, 2^64), got " + py::cast<std::string>(py::str(py::object(seed))));
    }
    return py::cast<std::uint64_t>(seed);
}

embed::CompareOptions options_arg(py::handle match, py::handle align, py::handle probes, py::handle k,
                                  py::handle seed, py::handle probe_ids, py::handle hidden, Index a_rows) {
    embed::CompareOptions options;
    const std::string match_name = py::cast<std::string>(py::str(match));
    if (match_name == "text") {
        options.match = embed::RowMatch::text;
    } else if (match_name != "id") {
        value_error("match must be \"id\" or \"text\", got \"" + match_name + "\"");
    }
    const std::string align_name = py::cast<std::string>(py::str(align));
    if (align_name == "orthogonal") {
        options.align = embed::Alignment::orthogonal;
    } else if (align_name != "none") {
        value_error("align must be \"none\" or \"orthogonal\", got \"" + align_name + "\"");
    }
    options.probes = size_arg(probes, "probes");
    options.k = k_arg(k);
    options.seed = seed_arg(seed);
    if (!probe_ids.is_none()) options.probe_ids = ids_arg(probe_ids, a_rows);
    if (!hidden.is_none()) options.hidden = Table(TableArg::from(hidden, "hidden", Float32::widen).double_view());
    return options;
}

py::object optional_vector(const std::optional<Vector>& values, bool as_array) {
    if (!values) return py::none();
    return vector_result(embed::RowVector(values->transpose()), as_array);
}

py::object optional_number(const std::optional<double>& value) {
    return value ? py::object(py::float_(*value)) : py::object(py::none());
}

py::object percentiles_dict(const std::optional<embed::Percentiles>& percentiles) {
    if (!percentiles) return py::none();
    py::dict out;
    for (std::size_t i = 0; i < embed::Percentiles::levels.size(); ++i) {
        out[py::str(std::to_string(static_cast<int>(embed::Percentiles::levels[i])))] = percentiles->values[i];
    }
    return out;
}

py::object pairs_result(const std::vector<embed::RowPair>& pairs, bool as_array) {
    if (as_array) {
        py::array_t<std::int64_t> out({static_cast<py::ssize_t>(pairs.size()), py::ssize_t{2}});
        auto cells = out.mutable_unchecked<2>();
        for (std::size_t p = 0; p < pairs.size(); ++p) {
            cells(static_cast<py::ssize_t>(p), 0) = pairs[p].a;
            cells(static_cast<py::ssize_t>(p), 1) = pairs[p].b;
        }
        return out;
    }
    py::list out;
    for (const embed::RowPair& pair : pairs) out.append(py::make_tuple(pair.a, pair.b));
    return out;
}

// A pair's name: a's text of its row, else b's, else None.
py::object pair_text(const embed::RowPair& pair, const Side& a, const Side& b) {
    if (a.vocabulary) return name_decoded(embed::row_name(*a.vocabulary, pair.a));
    if (b.vocabulary) return name_decoded(embed::row_name(*b.vocabulary, pair.b));
    return py::none();
}

py::list moved_list(const embed::TableComparison& comparison, const Side& a, const Side& b) {
    py::list moved;
    for (const Index p : embed::moved_pairs(comparison, kMovedRows)) {
        const embed::RowPair& pair = comparison.pairs[static_cast<std::size_t>(p)];
        py::dict row;
        row["a"] = pair.a;
        row["b"] = pair.b;
        row["text"] = pair_text(pair, a, b);
        row["row_cosine"] = (*comparison.row_cosine)[p];
        row["relative_change"] = (*comparison.relative_change)[p];
        moved.append(row);
    }
    return moved;
}

py::dict comparison_dict(const embed::TableComparison& comparison, const Side& a, const Side& b, bool as_array) {
    py::dict result;
    result["pairs"] = pairs_result(comparison.pairs, as_array);
    result["matched"] = comparison.matched;
    result["unmatched_a"] = comparison.unmatched_a;
    result["unmatched_b"] = comparison.unmatched_b;
    result["unmatched_a_examples"] = ids_result(comparison.unmatched_a_examples, false);
    result["unmatched_b_examples"] = ids_result(comparison.unmatched_b_examples, false);
    result["rotation"] = comparison.rotation ? table_result(Table(*comparison.rotation), as_array) : py::none();
    result["row_cosine"] = optional_vector(comparison.row_cosine, as_array);
    result["norm_a"] = vector_result(embed::RowVector(comparison.norm_a.transpose()), as_array);
    result["norm_b"] = vector_result(embed::RowVector(comparison.norm_b.transpose()), as_array);
    result["relative_change"] = optional_vector(comparison.relative_change, as_array);
    result["probe_ids"] = ids_result(comparison.probe_ids, as_array);
    result["neighbour_overlap"] = vector_result(embed::RowVector(comparison.neighbour_overlap.transpose()), as_array);
    result["hidden_count"] = comparison.hidden_count;
    result["top1_agreement"] = optional_number(comparison.top1_agreement);
    result["topk_overlap"] = optional_number(comparison.topk_overlap);
    result["kl_divergence"] = optional_number(comparison.kl_divergence);
    result["max_abs_logit_diff"] = optional_number(comparison.max_abs_logit_diff);
    py::dict percentiles;
    percentiles["row_cosine"] = percentiles_dict(comparison.row_cosine_percentiles);
    percentiles["norm_a"] = percentiles_dict(comparison.norm_a_percentiles);
    percentiles["norm_b"] = percentiles_dict(comparison.norm_b_percentiles);
    percentiles["relative_change"] = percentiles_dict(comparison.relative_change_percentiles);
    result["percentiles"] = percentiles;
    result["moved"] = moved_list(comparison, a, b);
    return result;
}

py::dict compare_tables(py::handle a, py::handle b, py::handle match, py::handle align, py::handle probes,
                        py::handle k, py::handle seed, py::handle probe_ids, py::handle hidden, py::handle a_tensor,
                        py::handle b_tensor, py::handle a_tokenizer, py::handle b_tokenizer) {
    const bool by_text = py::cast<std::string>(py::str(match)) == "text";
    const Side a_side = side_arg(a, a_tensor, a_tokenizer, by_text, "a");
    const Side b_side = side_arg(b, b_tensor, b_tokenizer, by_text, "b");
    embed::CompareOptions options = options_arg(match, align, probes, k, seed, probe_ids, hidden, a_side.rows());
    if (a_side.vocabulary) options.a_vocabulary = &*a_side.vocabulary;
    if (b_side.vocabulary) options.b_vocabulary = &*b_side.vocabulary;
    const embed::TableComparison comparison =
        call_library([&] { return embed::compare_tables(a_side.view(), b_side.view(), options); });
    return comparison_dict(comparison, a_side, b_side, numpy_available());
}

}  // namespace

void register_compare(py::module_& m) {
    m.def("compare_tables", &compare_tables, py::arg("a"), py::arg("b"), py::arg("match") = "id",
          py::arg("align") = "none", py::arg("probes") = 1000, py::arg("k") = 10, py::arg("seed") = 0,
          py::arg("probe_ids") = py::none(), py::arg("hidden") = py::none(), py::arg("a_tensor") = py::none(),
          py::arg("b_tensor") = py::none(), py::arg("a_tokenizer") = py::none(), py::arg("b_tokenizer") = py::none(),
          R"doc(compare_tables(a, b, match="id", align="none", probes=1000, k=10, seed=0, probe_ids=None, hidden=None, a_tensor=None, b_tensor=None, a_tokenizer=None, b_tokenizer=None) -> dict

Two tables side by side. a (Va, da) and b (Vb, db): arrays, or paths of
files load_table reads (a_tensor, b_tensor name the tensors). match "id"
pairs row i with row i; "text" pairs rows whose texts (Vocabulary.text) are
equal and held by one row of each table: the vocabularies come from
a_tokenizer / b_tokenizer, else from the table's own file. align
"orthogonal" rotates a's rows onto b's (orthogonal Procrustes on the pairs,
equal widths only). Everything is computed in float64.

Returns a dict: pairs (n, 2), matched, unmatched_a, unmatched_b (counts),
unmatched_a_examples, unmatched_b_examples (the first 10 ids), rotation
((d, d) or None), row_cosine (n), norm_a (n), norm_b (n), relative_change
(n): cosine(a_i R, b_j), the norms, norm(a_i R - b_j) / norm(a_i);
probe_ids (P), neighbour_overlap (P): the share of a probe's k nearest rows
by cosine in a that are also its partner's k nearest in b; hidden_count,
top1_agreement, topk_overlap, kl_divergence, max_abs_logit_diff over hidden
vectors (rows of hidden, else probes Gaussian vectors); percentiles (1, 5,
50, 95, 99 of each per-row measure, numpy's linear rule, NaN left out);
moved (the 100 pairs of lowest row_cosine: a, b, text, row_cosine,
relative_change). Different widths: no rotation, row_cosine,
relative_change or logit measures (None). Random draws, rebuilt in Python:
probes = sorted(random.Random(seed).sample(range(matched), min(probes,
matched))) as indices into pairs; g = random.Random(seed), hidden =
[[g.gauss(0.0, 1.0) for c in range(d)] for r in range(probes)].
ValueError: unknown match or align, k < 1, negative probes, seed outside
[0, 2^64), orthogonal alignment of different widths, match "text" without
vocabularies, hidden of the wrong width, a probe id not paired. IndexError:
a probe id outside [0, Va).)doc");
}

}  // namespace embed_python
