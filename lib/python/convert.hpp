#pragma once
// Python values -> the library's arguments: ints of any size (sizes, counts,
// token ids, k, seeds), real numbers, lists of lists, and numpy arrays read in
// place when their layout allows. Each conversion checks its value and raises
// the Python exception the module's docstring names, with a message that says
// where the value was (table[3][1]) and what was allowed.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cassert>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <embed/types.hpp>

namespace embed_python {

namespace py = pybind11;

using embed::Index;
using embed::Table;
using embed::TableView;
using embed::Vector;

/// Looks numpy.ndarray up, once, at import: without numpy every argument is a list and every result a list.
void detect_numpy();

/// Whether numpy could be imported when the module was.
bool numpy_available();

/// Whether value is a numpy array (always false without numpy).
bool is_array(py::handle value);

// Where an argument sits, such as table[3][1]: spelled out only when an error names it.
class Where {
public:
    Where(const char* name) : name_(name) {}  // NOLINT(google-explicit-constructor): a plain name converts
    Where(const char* name, Py_ssize_t first, Py_ssize_t second = -1) : name_(name), first_(first), second_(second) {}

    std::string str() const {
        std::string text = name_;
        if (first_ >= 0) text += "[" + std::to_string(first_) + "]";
        if (second_ >= 0) text += "[" + std::to_string(second_) + "]";
        return text;
    }

private:
    const char* name_;
    Py_ssize_t first_ = -1;
    Py_ssize_t second_ = -1;
};

/// value as a Python int (anything with __index__, bool included, as list indexing takes); TypeError otherwise.
py::int_ as_int(py::handle value, const Where& where);

/// value as an Index when it fits in 64 bits; nothing when it does not.
std::optional<Index> fits_index(const py::int_& value);

/// A size or count: a non-negative int of any size; ValueError worded as the library's checks.
py::int_ count_arg(py::handle value, const char* what);

/// A size the library allocates: a non-negative int; past 64 bits nothing that big fits in memory.
Index size_arg(py::handle value, const char* what);

/// A token id: ids past 64 bits are outside every vocabulary, so they get the library's IndexError.
Index token_arg(py::handle value, Index vocab, const Where& where);

/// k: non-negative; past 64 bits it already asks for every other id, as 2^63 - 1 does.
Index k_arg(py::handle value);

/// A real number (float, int, bool or anything with __float__); TypeError naming where it was.
double real_arg(py::handle value, const Where& where);

/// value as a sequence with fast item access (a list or tuple as is); TypeError for anything else.
py::object as_sequence(py::handle value, const Where& where);

// What a float32 array becomes: read as float32 by the functions the library
// has for float32 tables, or widened to float64 (exactly) for row_times_matrix,
// which it has for float64 only.
enum class Float32 { read_as_float32, widen };

// A table as the library reads it, (V, d): float64 or float32 storage. Each
// function visits it once, so one generic call serves both storage types.
using AnyTableView = std::variant<TableView, embed::TableViewF32>;

// A table argument, (V, d): a C-contiguous float64 or float32 array read in
// place (and kept alive while it is read), or lists / other arrays converted
// into a Table. A float32 array in another layout or byte order becomes a
// C-contiguous float32 copy, so its results are those of the float32 table.
class TableArg {
public:
    /// value is a (V, d) array or V lists of d numbers, named what in errors.
    static TableArg from(py::handle value, const char* what, Float32 float32 = Float32::read_as_float32);

    /// table is (V, d) and outlives the result: read as it is, results as lists.
    static TableArg of(const Table& table) {
        TableArg borrowed;
        borrowed.borrowed_ = &table;
        return borrowed;
    }

    /// The table as the library reads it, (V, d): the array's own memory, or the converted Table's.
    AnyTableView view() const {
        if (float32_) return embed::TableViewF32(static_cast<const float*>(array_->data()), rows(), cols());
        return double_view();
    }

    /// The table as float64, (V, d), for a TableArg made with Float32::widen (or holding no float32 array).
    TableView double_view() const {
        assert(!float32_ && "a float32 table read as float64: make the TableArg with Float32::widen");
        if (array_) return TableView(static_cast<const double*>(array_->data()), rows(), cols());
        return embed::view_of(borrowed_ != nullptr ? *borrowed_ : owned_);
    }

    /// V, the table's rows.
    Index rows() const { return array_ ? array_->shape(0) : table().rows(); }

    /// d, the width of a row.
    Index cols() const { return array_ ? array_->shape(1) : table().cols(); }

    /// V * d, the values a pass over the table reads.
    Index size() const { return rows() * cols(); }

    /// Whether the caller passed an array, so results should be arrays too.
    bool from_array() const { return array_.has_value(); }

    /// value is V lists of d numbers: the numbers as V rows, for from_rows (which rejects ragged rows).
    static std::vector<std::vector<double>> rows_of(py::handle value, const char* what);

private:
    const Table& table() const { return borrowed_ != nullptr ? *borrowed_ : owned_; }

    // Optional: an empty array would need numpy even on the list path.
    std::optional<py::array> array_;
    bool float32_ = false;  // array_ holds C-contiguous float32, not float64
    Table owned_;
    const Table* borrowed_ = nullptr;
};

// A vector argument, (n): a 1-D array or a list of numbers, as a Vector.
// Vectors are d or V long, so a copy costs nothing next to the table.
struct VectorArg {
    Vector values;
    bool from_array = false;

    /// value is a 1-D array or a list of n numbers, named what in errors.
    static VectorArg from(py::handle value, const char* what);
};

/// Token ids, (n): a list of ints or an integer array; ids past 64 bits are IndexErrors (vocab names the range).
std::vector<Index> ids_arg(py::handle value, Index vocab);

}  // namespace embed_python
