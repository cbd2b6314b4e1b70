#include "edit.hpp"

#include <limits>
#include <optional>
#include <string>
#include <variant>

#include <embed/edit.hpp>
#include <embed/edit_model.hpp>

#include "convert.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "results.hpp"

namespace embed_python {
namespace {

/// init: "mean", "sampled" or "zeros"; another str is the library's ValueError, another type TypeError.
embed::RowInit init_arg(py::handle init) {
    if (!PyUnicode_Check(init.ptr())) raise(PyExc_TypeError, "init must be a str, not " + type_name(init));
    return embed::parse_row_init(init.cast<std::string>());
}

/// Runs edit(view) on table's storage (float64 or float32) without the GIL; the result in the same dtype,
/// an array for an array, lists for lists.
template <class Edit>
py::object edited(const TableArg& table, Edit&& edit) {
    return std::visit(
        [&](auto view) {
            decltype(edit(view)) out;
            {
                py::gil_scoped_release unlocked;
                out = edit(view);
            }
            return table_result(std::move(out), table.from_array());
        },
        table.view());
}

py::object resize_rows(py::handle table_arg, py::handle rows_arg, py::handle init_arg_, py::handle seed) {
    const TableArg table = TableArg::from(table_arg, "table");
    const Index rows = size_arg(rows_arg, "rows");
    const embed::RowInit init = init_arg(init_arg_);
    const std::uint64_t key = seed_arg(seed);
    return edited(table, [&](auto view) { return embed::resize_rows(view, rows, init, key); });
}

py::object pad_to_multiple_of(py::handle table_arg, py::handle k_arg_, py::handle init_arg_, py::handle seed) {
    const TableArg table = TableArg::from(table_arg, "table");
    const py::int_ k_int = as_int(k_arg_, "k");
    const std::optional<Index> k = fits_index(k_int);
    if (!k) {
        raise(PyExc_OverflowError, "k = " + repr_of(k_int) + " does not fit in 64 bits (largest " +
                                       std::to_string(std::numeric_limits<Index>::max()) + ")");
    }
    const embed::RowInit init = init_arg(init_arg_);
    const std::uint64_t key = seed_arg(seed);
    return edited(table, [&](auto view) { return embed::pad_to_multiple_of(view, *k, init, key); });
}

py::object reinitialise_rows(py::handle table_arg, py::handle ids_arg_, py::handle init_arg_, py::handle seed) {
    const TableArg table = TableArg::from(table_arg, "table");
    const std::vector<Index> ids = ids_arg(ids_arg_, table.rows());
    const embed::RowInit init = init_arg(init_arg_);
    const std::uint64_t key = seed_arg(seed);
    return edited(table, [&](auto view) { return embed::reinitialise_rows(view, ids, init, key); });
}

/// reinitialise: None, "under-trained" (the scan's candidates) or a list of ids, checked by the library.
void reinitialise_arg(py::handle value, embed::ModelEdits& edits) {
    if (value.is_none()) return;
    if (PyUnicode_Check(value.ptr())) {
        const std::string text = value.cast<std::string>();
        if (text != "under-trained") {
            raise(PyExc_ValueError, "reinitialise = " + repr_of(value) + "; allowed: None, \"under-trained\" or a list of ids");
        }
        edits.reinitialise_under_trained = true;
        return;
    }
    edits.reinitialise = ids_arg(value, std::numeric_limits<Index>::max());
}

/// add_tokens: a str is refused (it would add one token per character), else a sequence of str.
std::vector<std::string> tokens_arg(py::handle value) {
    if (PyUnicode_Check(value.ptr())) {
        raise(PyExc_TypeError, "add_tokens must be a list of str, not a str (" + repr_of(value) + ")");
    }
    std::vector<std::string> tokens;
    for (const py::handle token : py::iter(value)) {
        if (!PyUnicode_Check(token.ptr())) raise(PyExc_TypeError, "add_tokens holds " + type_name(token) + ", not str");
        tokens.push_back(token.cast<std::string>());
    }
    return tokens;
}

py::dict record_dict(const embed::EditRecord& record, py::handle source, py::handle destination) {
    py::dict out;
    out["source"] = source;
    out["destination"] = destination;
    out["rows_before"] = record.rows_before;
    out["rows_after"] = record.rows_after;
    py::list added;
    for (const embed::EditRecord::AddedToken& token : record.tokens_added) {
        py::dict entry;
        entry["id"] = token.id;
        entry["text"] = name_decoded(token.text);
        added.append(entry);
    }
    out["tokens_added"] = added;
    py::list reinitialised;
    for (const Index id : record.rows_reinitialised) reinitialised.append(id);
    out["rows_reinitialised"] = reinitialised;
    out["type"] = std::string(embed::element_type_name(record.type));
    out["tied"] = record.tied;
    return out;
}

py::dict edit_model(py::handle source, py::handle destination, py::handle add_tokens, bool special,
                    py::handle pad_arg, py::handle reinitialise, py::handle init, py::handle seed, py::handle dtype) {
    embed::ModelEdits edits;
    edits.add_tokens = tokens_arg(add_tokens);
    edits.special = special;
    edits.pad_to_multiple_of = size_arg(pad_arg, "pad_to_multiple_of");
    reinitialise_arg(reinitialise, edits);
    edits.init = init_arg(init);
    edits.seed = seed_arg(seed);
    if (!dtype.is_none()) {
        if (!PyUnicode_Check(dtype.ptr())) raise(PyExc_TypeError, "dtype must be a str or None, not " + type_name(dtype));
        edits.type = embed::parse_element_type(dtype.cast<std::string>());
    }
    const std::filesystem::path from = path_arg(source);
    const std::filesystem::path to = path_arg(destination);
    const embed::EditRecord record = call_library([&] { return embed::edit_model(from, to, edits); });
    return record_dict(record, source, destination);
}

constexpr const char* rules = R"doc(
init: "mean": every new row is the mean of the source rows, each column
summed in float64 over the rows in order (numpy's table.mean(axis=0) for
float64, table.mean(axis=0, dtype=float64) for float32), rounded once to the
table's dtype. "sampled": transformers' mean-resizing rule, drawn from the
normal with the source rows' mean m and covariance 1e-9 * C (C divided by the
row count): m + L z with L the Cholesky factor and z standard normals, the
mean itself where that covariance is not positive definite (one row, d > n).
z is random.Random(seed).normalvariate(0.0, 1.0), new row r's column c the
(r * d + c)-th draw; the same rows for one seed at any thread count.
"zeros": rows of zeros. seed: an int as random.Random takes it (its abs),
below 2**64.)doc";

}  // namespace

std::uint64_t seed_arg(py::handle seed) {
    const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Absolute(as_int(seed, "seed").ptr()));
    const std::optional<Index> fitted = fits_index(value);
    if (fitted) return static_cast<std::uint64_t>(*fitted);
    if (value.attr("bit_length")().cast<int>() <= 64) return value.cast<std::uint64_t>();
    raise(PyExc_ValueError, "seed " + repr_of(seed) + " is too large; allowed: abs(seed) < 2**64");
}

void register_edit(py::module_& m) {
    m.def("resize_rows", &resize_rows, py::arg("table"), py::arg("rows"), py::arg("init") = "mean",
          py::arg("seed") = 0,
          (std::string(R"doc(resize_rows(table, rows, init="mean", seed=0) -> (rows, d)

A new table of rows rows in table's dtype (float64 or float32; an array for
an array, lists for lists): fewer rows cut from the end, more rows keep every
old row and add rows - V rows by init from all V old rows. table is
untouched. For an untied model, call it on the output table too: its new
rows then come from its own rows.
ValueError: rows < 0, an unknown init, growing a table of no rows by mean
or sampled. TypeError: arguments of other types.)doc") + rules).c_str());
    m.def("pad_to_multiple_of", &pad_to_multiple_of, py::arg("table"), py::arg("k"), py::arg("init") = "mean",
          py::arg("seed") = 0,
          (std::string(R"doc(pad_to_multiple_of(table, k, init="mean", seed=0) -> (V', d)

table (V, d) grown to V' rows, the smallest multiple of k >= V (never fewer
rows than V), the new rows as resize_rows adds them. ValueError: k < 1.
OverflowError: k past 64 bits.)doc") + rules).c_str());
    m.def("reinitialise_rows", &reinitialise_rows, py::arg("table"), py::arg("ids"), py::arg("init") = "mean",
          py::arg("seed") = 0,
          (std::string(R"doc(reinitialise_rows(table, ids, init="mean", seed=0) -> (V, d)

A copy of table (V, d) whose rows ids are set by init from the rows not in
ids (duplicates count once; sampled rows filled in ascending id order); the
other rows are copied bit for bit. IndexError: an id outside [0, V).
ValueError: every row listed with mean or sampled (no row is left to take
the mean of); zeros is fine.)doc") + rules).c_str());
    m.def("edit_model", &edit_model, py::arg("source"), py::arg("destination"), py::arg("add_tokens") = py::tuple(),
          py::arg("special") = false, py::arg("pad_to_multiple_of") = 0, py::arg("reinitialise") = py::none(),
          py::arg("init") = "mean", py::arg("seed") = 0, py::arg("dtype") = py::none(),
          R"doc(edit_model(source, destination, add_tokens=(), special=False, pad_to_multiple_of=0, reinitialise=None, init="mean", seed=0, dtype=None) -> dict

Writes the model source (.gguf or checkpoint folder), edited, to destination (which must not
exist): tokens added (user-defined, or control with special=True), rows
padded to a multiple, rows re-initialised (a list of ids, or
"under-trained": the scan's candidates), the table's element type changed
(dtype None keeps it). Returns the edit record: source, destination,
rows_before, rows_after, tokens_added ([{"id", "text"}]),
rows_reinitialised, type, tied. See include/embed/edit_model.hpp.
ValueError: destination exists, a token that exists, k < 0, an unknown
init or dtype. IndexError: an id outside the rows. OSError: a failed write
(nothing is left behind).)doc");
}

}  // namespace embed_python
