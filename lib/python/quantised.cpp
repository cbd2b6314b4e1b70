#include "quantised.hpp"

#include <pybind11/numpy.h>

#include <type_traits>
#include <utility>
#include <variant>

#include <embed/io.hpp>

#include "convert.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "functions.hpp"
#include "results.hpp"

namespace embed_python {

namespace {

/// A table the library decoded, as the array embed.load_table makes of it: float64 as float64, anything
/// else as float32 (bfloat16 widened exactly: numpy has no bfloat16).
py::object as_load_table_array(std::variant<embed::Table, embed::TableF32, embed::TableBF16, embed::QuantisedTable>&& table) {
    return std::visit(
        [](auto&& values) -> py::object {
            using Values = std::decay_t<decltype(values)>;
            if constexpr (std::is_same_v<Values, embed::TableBF16>) {
                return table_result(embed::TableF32(values.template cast<float>()), true);
            } else if constexpr (std::is_same_v<Values, embed::QuantisedTable>) {
                return py::none();  // never asked: a quantised table is kept as it is
            } else {
                return table_result(std::move(values), true);  // the buffer itself, not a copy
            }
        },
        std::move(table));
}

py::object open_table(py::handle path, py::handle tensor) {
    if (!numpy_available()) raise(PyExc_ImportError, "open_table needs numpy, which cannot be imported");
    const std::filesystem::path file = path_arg(path);
    const std::string name = tensor_arg(tensor);
    embed::OpenedTable opened = call_library([&] { return embed::open_table(file, name); });
    const std::string dtype(embed::element_type_name(opened.type));
    if (auto* quantised = std::get_if<embed::QuantisedTable>(&opened.table)) {
        return py::cast(OpenedTable(std::move(*quantised), py::none(), dtype));
    }
    return py::cast(OpenedTable(std::nullopt, as_load_table_array(std::move(opened.table)), dtype));
}

}  // namespace

OpenedTable::OpenedTable(std::optional<embed::QuantisedTable> quantised, py::object array, std::string dtype)
    : quantised_(std::move(quantised)), array_(std::move(array)), dtype_(std::move(dtype)) {}

py::tuple OpenedTable::shape() const {
    if (!quantised_) return array_.attr("shape");
    return py::make_tuple(quantised_->rows(), quantised_->cols());
}

// Each works on a copy of the table object (the blocks are shared, not copied), so it outlives the call
// whatever other threads do with this one while the GIL is released.

py::object OpenedTable::lookup(py::handle ids_value) const {
    if (!quantised_) return embed_python::lookup(array_, ids_value);
    const embed::QuantisedTable table = *quantised_;
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    py::array_t<float> rows({static_cast<Index>(ids.size()), table.cols()});
    Eigen::Map<embed::TableF32> out(rows.mutable_data(), static_cast<Index>(ids.size()), table.cols());
    call_library([&] { embed::lookup_into(table, ids, out); });
    return rows;
}

py::object OpenedTable::logits(py::handle hidden_arg) const {
    if (!quantised_) return embed_python::logits(array_, hidden_arg);
    const embed::QuantisedTable table = *quantised_;
    const VectorArg hidden = VectorArg::from(hidden_arg, "hidden");
    py::array_t<double> result(table.rows());
    Eigen::Map<Vector> out(result.mutable_data(), table.rows());
    call_library([&] { embed::logits_into(table, hidden.values, out); });
    return result;
}

py::object OpenedTable::nearest_by_cosine(py::handle token_id, py::handle k_value) const {
    if (!quantised_) return embed_python::nearest_by_cosine(array_, token_id, k_value);
    const embed::QuantisedTable table = *quantised_;
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const Index k = k_arg(k_value);
    return ids_result(call_library([&] { return embed::nearest_by_cosine(table, id, k); }), true);
}

py::object OpenedTable::nearest_by_dot(py::handle token_id, py::handle k_value) const {
    if (!quantised_) return embed_python::nearest_by_dot(array_, token_id, k_value);
    const embed::QuantisedTable table = *quantised_;
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const Index k = k_arg(k_value);
    return ids_result(call_library([&] { return embed::nearest_by_dot(table, id, k); }), true);
}

const OpenedTable* as_opened_table(py::handle value) {
    if (!py::isinstance<OpenedTable>(value)) return nullptr;
    return &value.cast<const OpenedTable&>();
}

void register_open_table(py::module_& m) {
    py::class_<OpenedTable>(m, "OpenedTable", R"doc(A table embed.open_table opened: pass it to lookup, logits,
nearest_by_dot and nearest_by_cosine in place of an array. A quantised GGUF
tensor is held in its blocks as the file stores them; any other table as the
array load_table gives. Not made directly: call embed.open_table.)doc")
        .def_property_readonly("shape", &OpenedTable::shape, "(V, d) as a tuple of ints.")
        .def_property_readonly("dtype", &OpenedTable::dtype,
                               "The element type the file stores: 'q4_k', 'q8_0', 'f32', 'f16', 'bf16', 'f64', ...")
        .def("__repr__", [](const OpenedTable& table) -> std::string {
            const py::str shape(py::object(table.shape()));
            return "embed.OpenedTable(shape=" + std::string(shape) + ", dtype='" + table.dtype() + "')";
        });
    m.def("open_table", &open_table, py::arg("path"), py::arg("tensor") = py::none(),
          R"doc(open_table(path, tensor=None) -> OpenedTable (V, d)

Opens the table load_table(path, tensor) reads for scoring without widening
it: a GGUF quantised tensor (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K ... Q6_K) is
read as it lies in the file, its blocks only (a Q4_K table holds 4.5 bits a
value: a seventh of float32), and never dequantised whole. lookup, logits,
nearest_by_dot and nearest_by_cosine accept the result in place of an array
and return exactly what they return for load_table(path, tensor): the same
type, dtype, shape and bits (lookup: float32 rows, dequantised as ggml does;
logits: float64; neighbours: int64 arrays). Rows are dequantised a few at a
time as they are scored, without the GIL. .shape is (V, d); .dtype names the
file's element type ("q4_k", "f32", ...). Errors are load_table's, raised here.)doc");
}

}  // namespace embed_python
