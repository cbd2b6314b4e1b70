#pragma once
// embed.open_table: a table opened for scoring without widening it. A quantised GGUF tensor stays in its
// blocks (embed::QuantisedTable); any other table is held as the array embed.load_table gives. lookup,
// logits, nearest_by_dot and nearest_by_cosine take the object in place of an array and return what
// they return for that array. Defined in quantised.cpp, docstrings included.
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include <embed/quantised_table.hpp>

namespace embed_python {

namespace py = pybind11;

/// What embed.open_table returns: the table, its shape and the file's element type.
class OpenedTable {
public:
    OpenedTable(std::optional<embed::QuantisedTable> quantised, py::object array, std::string dtype);

    /// (V, d) as a tuple.
    py::tuple shape() const;
    /// The element type's name as the file stores it: "q4_k", "f32", "bf16", ...
    const std::string& dtype() const { return dtype_; }

    /// The functions of the same names (functions.hpp) on this table: each returns what it returns for the
    /// array embed.load_table gives.
    py::object lookup(py::handle ids) const;
    py::object logits(py::handle hidden) const;
    py::object nearest_by_cosine(py::handle token_id, py::handle k) const;
    py::object nearest_by_dot(py::handle token_id, py::handle k) const;

private:
    std::optional<embed::QuantisedTable> quantised_;  ///< the blocks, for a quantised tensor
    py::object array_;                               ///< else the array load_table gives
    std::string dtype_;
};

/// value as the table embed.open_table returned, or null when it is something else.
const OpenedTable* as_opened_table(py::handle value);

/// Adds open_table and its table class to the module m.
void register_open_table(py::module_& m);

}  // namespace embed_python
