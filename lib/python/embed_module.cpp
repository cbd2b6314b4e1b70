// The Python module `embed`: the original specification's functions with its
// Python semantics (lists in, lists out, Python ints, Python exceptions),
// forwarding to the C++ library. This file converts arguments and results and
// nothing else, except where Python's semantics ask for more than the C++
// types can say: counts past 64 bits and seeds of any size.
//
// Errors are translated once, by pybind11's standard translation, which is
// exactly the mapping we want: std::out_of_range -> IndexError,
// std::invalid_argument -> ValueError, std::bad_alloc -> MemoryError. The
// library's messages name the value and what was allowed; the checks made
// here (types, sizes past 64 bits) use the same wording.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <embed/embed.hpp>

#include "../float_mode.hpp"

namespace py = pybind11;

namespace {

using embed::Index;
using embed::Table;
using embed::TableView;
using embed::Vector;

// ------------------------------------------------------------------ errors

[[noreturn]] void raise(PyObject* type, const std::string& message) {
    PyErr_SetString(type, message.c_str());
    throw py::error_already_set();
}

std::string repr_of(py::handle value) { return py::repr(value).cast<std::string>(); }

std::string type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

// ------------------------------------------------------------------ floating-point mode

// For its lifetime numbers convert as in the default floating-point mode: to nearest, subnormals kept.
// numpy's casts (an int64 past 2^53, a longdouble) and a numpy scalar's __float__ round in the caller's
// mode, which fesetround or torch.set_flush_denormal(True) may have changed, where Python's own int to
// float does not; the library computes in the default mode whatever the caller's. longdouble is cast on
// the x87 unit, whose control word has a rounding mode of its own, so that is set to its default too.
class DefaultConversionMode {
public:
    DefaultConversionMode() {
#if defined(__x86_64__)
        __asm__ volatile("fnstcw %0" : "=m"(callers_x87_control_));
        if (callers_x87_control_ != kDefaultX87Control) __asm__ volatile("fldcw %0" : : "m"(kDefaultX87Control));
#endif
    }
    ~DefaultConversionMode() {
#if defined(__x86_64__)
        if (callers_x87_control_ != kDefaultX87Control) __asm__ volatile("fldcw %0" : : "m"(callers_x87_control_));
#endif
    }
    DefaultConversionMode(const DefaultConversionMode&) = delete;
    DefaultConversionMode& operator=(const DefaultConversionMode&) = delete;

private:
#if defined(__x86_64__)
    // The x87 control word at process start: every exception masked, 64-bit precision, round to nearest.
    static constexpr std::uint16_t kDefaultX87Control = 0x037F;
    std::uint16_t callers_x87_control_ = kDefaultX87Control;
#endif
    embed::detail::DefaultFloatMode sse_mode_;
};

// ------------------------------------------------------------------ numpy, when importable

// numpy.ndarray, or null when numpy cannot be imported: then every argument
// is a list and every result a list. Looked up once, at import.
PyObject* ndarray_type = nullptr;

void detect_numpy() {
    try {
        // Kept for the life of the process: the module cannot be unloaded.
        py::object ndarray = py::module_::import("numpy").attr("ndarray");
        ndarray_type = ndarray.release().ptr();
    } catch (const py::error_already_set&) {
        PyErr_Clear();
    }
}

bool is_array(py::handle value) {
    return ndarray_type != nullptr && PyObject_IsInstance(value.ptr(), ndarray_type) == 1;
}

py::module_ numpy() { return py::module_::import("numpy"); }

// A C-contiguous array of Scalar in the machine's byte order: the layout the library reads in place.
template <class Scalar>
using ContiguousArray = py::array_t<Scalar, py::array::c_style>;

using DoubleArray = ContiguousArray<double>;

// array is any ndarray, returns it as C-contiguous Scalar: the same object when it already is one (read in
// place), a converted copy otherwise. Numbers only (bool, int, uint, float); anything else is a TypeError.
template <class Scalar>
ContiguousArray<Scalar> as_contiguous(py::handle array, const char* what) {
    const char kind = py::reinterpret_borrow<py::array>(array).dtype().kind();
    if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') {
        raise(PyExc_TypeError, std::string(what) + " must hold real numbers, got an array of dtype " +
                                   std::string(py::str(array.attr("dtype"))));
    }
    if (ContiguousArray<Scalar>::check_(array)) return py::reinterpret_borrow<ContiguousArray<Scalar>>(array);
    const DefaultConversionMode conversion_mode;
    return py::reinterpret_steal<ContiguousArray<Scalar>>(
        numpy().attr("ascontiguousarray")(array, py::arg("dtype") = py::dtype::of<Scalar>()).release());
}

DoubleArray as_double_array(py::handle array, const char* what) { return as_contiguous<double>(array, what); }

// Whether array stores float32 numbers, in either byte order.
bool holds_float32(py::handle array) {
    const py::dtype dtype = py::reinterpret_borrow<py::array>(array).dtype();
    return dtype.kind() == 'f' && dtype.itemsize() == 4;
}

// ------------------------------------------------------------------ numbers

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

// value as a Python int (anything with __index__, bool included, as list indexing takes); TypeError otherwise.
py::int_ as_int(py::handle value, const Where& where) {
    if (PyLong_CheckExact(value.ptr())) return py::reinterpret_borrow<py::int_>(value);
    PyObject* index = PyNumber_Index(value.ptr());
    if (index == nullptr) {
        PyErr_Clear();
        raise(PyExc_TypeError, where.str() + " must be an int, got " + type_name(value) + " " + repr_of(value));
    }
    return py::reinterpret_steal<py::int_>(index);
}

// value as an Index when it fits in 64 bits; nothing when it does not.
std::optional<Index> fits_index(const py::int_& value) {
    int overflow = 0;
    const long long result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) return std::nullopt;
    return static_cast<Index>(result);
}

bool is_negative(const py::int_& value) { return PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT) == 1; }

// A size or count: a non-negative int of any size; ValueError worded as the library's checks.
py::int_ count_arg(py::handle value, const char* what) {
    py::int_ count = as_int(value, what);
    if (is_negative(count)) raise(PyExc_ValueError, std::string(what) + " must be >= 0, got " + repr_of(count));
    return count;
}

// A size the library allocates: a non-negative int; past 64 bits nothing that big fits in memory.
Index size_arg(py::handle value, const char* what) {
    const py::int_ size = count_arg(value, what);
    const std::optional<Index> fitted = fits_index(size);
    if (!fitted) raise(PyExc_MemoryError, std::string(what) + " " + repr_of(size) + " is too large to allocate");
    return *fitted;
}

// A token id: ids past 64 bits are outside every vocabulary, so they get the library's IndexError.
Index token_arg(py::handle value, Index vocab, const Where& where) {
    const py::int_ id = as_int(value, where);
    const std::optional<Index> fitted = fits_index(id);
    if (!fitted) {
        raise(PyExc_IndexError,
              "token id " + repr_of(id) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
    return *fitted;
}

// k: non-negative; past 64 bits it already asks for every other id, as 2^63 - 1 does.
Index k_arg(py::handle value) {
    const py::int_ k = count_arg(value, "k");
    return fits_index(k).value_or(std::numeric_limits<Index>::max());
}

// A real number (float, int, bool or anything with __float__); TypeError naming where it was.
double real_arg(py::handle value, const Where& where) {
    if (PyFloat_CheckExact(value.ptr())) return PyFloat_AS_DOUBLE(value.ptr());
    // Python's own int rounds to nearest in integer arithmetic whatever the mode; anything else (a numpy
    // scalar's __float__, say) converts in the default mode.
    std::optional<DefaultConversionMode> conversion_mode;
    if (!PyLong_CheckExact(value.ptr())) conversion_mode.emplace();
    const double result = PyFloat_AsDouble(value.ptr());
    if (result == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();  // an int past a double
        PyErr_Clear();
        raise(PyExc_TypeError, where.str() + " must be a real number, got " + type_name(value) + " " + repr_of(value));
    }
    return result;
}

// value as a sequence with fast item access (a list or tuple as is); TypeError for anything else.
py::object as_sequence(py::handle value, const Where& where) {
    if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) return py::reinterpret_borrow<py::object>(value);
    if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) {
        raise(PyExc_TypeError, where.str() + " must be a list, got " + type_name(value));
    }
    PyObject* fast = PySequence_Fast(value.ptr(), "");
    if (fast == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(fast);
}

// ------------------------------------------------------------------ tables

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
    static TableArg from(py::handle value, const char* what, Float32 float32 = Float32::read_as_float32) {
        TableArg table;
        if (is_array(value)) {
            if (py::reinterpret_borrow<py::array>(value).ndim() != 2) {
                raise(PyExc_ValueError, std::string(what) + " must be a 2-D array (V, d), got shape " +
                                            std::string(py::str(value.attr("shape"))));
            }
            table.float32_ = float32 == Float32::read_as_float32 && holds_float32(value);
            if (table.float32_) {
                table.array_.emplace(as_contiguous<float>(value, what));
            } else {
                table.array_.emplace(as_double_array(value, what));
            }
        } else {
            table.owned_ = embed::from_rows(rows_of(value, what));
        }
        return table;
    }

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
    static std::vector<std::vector<double>> rows_of(py::handle value, const char* what) {
        const py::object outer = as_sequence(value, what);
        const Py_ssize_t vocab = PySequence_Fast_GET_SIZE(outer.ptr());
        PyObject** rows = PySequence_Fast_ITEMS(outer.ptr());
        std::vector<std::vector<double>> result(static_cast<std::size_t>(vocab));
        for (Py_ssize_t r = 0; r < vocab; ++r) {
            const py::object row = as_sequence(rows[r], Where(what, r));
            const Py_ssize_t dim = PySequence_Fast_GET_SIZE(row.ptr());
            PyObject** items = PySequence_Fast_ITEMS(row.ptr());
            std::vector<double>& out = result[static_cast<std::size_t>(r)];
            out.resize(static_cast<std::size_t>(dim));
            for (Py_ssize_t c = 0; c < dim; ++c) {
                out[static_cast<std::size_t>(c)] = real_arg(items[c], Where(what, r, c));
            }
        }
        return result;
    }

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

    static VectorArg from(py::handle value, const char* what) {
        VectorArg vec;
        vec.from_array = is_array(value);
        if (vec.from_array) {
            const DoubleArray array = as_double_array(value, what);
            if (array.ndim() != 1) {
                raise(PyExc_ValueError, std::string(what) + " must be a 1-D array, got shape " +
                                            std::string(py::str(value.attr("shape"))));
            }
            vec.values = Eigen::Map<const Vector>(array.data(), array.shape(0));
        } else {
            const py::object items = as_sequence(value, what);
            const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
            PyObject** item = PySequence_Fast_ITEMS(items.ptr());
            vec.values.resize(n);
            for (Py_ssize_t i = 0; i < n; ++i) {
                vec.values[i] = real_arg(item[i], Where(what, i));
            }
        }
        return vec;
    }
};

// Token ids, (n): a list of ints or an integer array; ids past 64 bits are IndexErrors (vocab names the range).
std::vector<Index> ids_arg(py::handle value, Index vocab) {
    if (is_array(value)) {
        const py::dtype dtype = py::reinterpret_borrow<py::array>(value).dtype();
        const char kind = dtype.kind();
        if (kind != 'i' && kind != 'u' && kind != 'b') {
            raise(PyExc_TypeError,
                  "ids must hold ints, got an array of dtype " + py::str(py::handle(dtype)).cast<std::string>());
        }
        // uint64 ids past 2^63 would wrap in int64: tolist() keeps them the Python ints they are.
        if (kind == 'u' && dtype.itemsize() == 8) return ids_arg(value.attr("tolist")(), vocab);
        const auto array = py::reinterpret_steal<py::array_t<std::int64_t, py::array::c_style>>(
            numpy().attr("ascontiguousarray")(value, py::arg("dtype") = numpy().attr("int64")).release());
        if (array.ndim() != 1) {
            raise(PyExc_ValueError, "ids must be a 1-D array, got shape " + std::string(py::str(value.attr("shape"))));
        }
        return std::vector<Index>(array.data(), array.data() + array.shape(0));
    }
    const py::object items = as_sequence(value, "ids");
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
    PyObject** item = PySequence_Fast_ITEMS(items.ptr());
    std::vector<Index> ids(static_cast<std::size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
        ids[static_cast<std::size_t>(i)] = token_arg(item[i], vocab, Where("ids", i));
    }
    return ids;
}

// ------------------------------------------------------------------ results

// values is (n) of double or float32, returns them as Python floats.
template <class Scalar>
py::list to_list(const Scalar* values, Index n) {
    py::list out(n);
    for (Index i = 0; i < n; ++i) {
        PyObject* number = PyFloat_FromDouble(static_cast<double>(values[i]));
        if (number == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), i, number);
    }
    return out;
}

// Pauses CPython's cyclic garbage collector while a list of row lists is built.
// Every new list counts toward the collector's next run, and each run
// traverses every young list item by item, so the collections can cost
// several times the building, and more in a process holding many objects.
// Nothing can form a cycle
// meanwhile (the rows hold numbers or the caller's own objects, and the GIL
// is held), and the collector runs as usual once they are handed back. A
// collector the caller had disabled stays disabled.
class CollectorPaused {
public:
    CollectorPaused() : was_enabled_(pause()) {}
    ~CollectorPaused() {
        if (was_enabled_) resume();
    }
    CollectorPaused(const CollectorPaused&) = delete;
    CollectorPaused& operator=(const CollectorPaused&) = delete;

private:
    // Whether the collector was enabled; PyGC_Disable is new in 3.10, and older interpreters collect as usual.
    static bool pause() {
#if PY_VERSION_HEX >= 0x030A0000
        return PyGC_Disable() != 0;
#else
        return false;
#endif
    }

    static void resume() {
#if PY_VERSION_HEX >= 0x030A0000
        PyGC_Enable();
#endif
    }

    bool was_enabled_;
};

template <class Scalar>
py::list to_lists(const embed::BasicTable<Scalar>& table) {
    const CollectorPaused paused;
    py::list out(table.rows());
    for (Index r = 0; r < table.rows(); ++r) {
        PyList_SET_ITEM(out.ptr(), r, to_list(table.data() + r * table.cols(), table.cols()).release().ptr());
    }
    return out;
}

// A (n, d) result: a new array of the table's own type owning its memory (no copy), or lists.
template <class Scalar>
py::object table_result(embed::BasicTable<Scalar>&& table, bool as_array) {
    if (as_array) return py::cast(std::move(table));
    return to_lists(table);
}

// A (n) result: a new array owning the vector's memory, or a list.
template <class VectorType>
py::object vector_result(VectorType&& vec, bool as_array) {
    if (as_array) return py::cast(std::forward<VectorType>(vec));
    return to_list(vec.data(), vec.size());
}

py::object ids_result(const std::vector<Index>& ids, bool as_array) {
    const auto n = static_cast<py::ssize_t>(ids.size());
    if (as_array) return py::array_t<std::int64_t>(n, ids.data());
    py::list out(ids.size());
    for (py::ssize_t i = 0; i < n; ++i) {
        PyObject* id = PyLong_FromLongLong(ids[static_cast<std::size_t>(i)]);
        if (id == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), i, id);
    }
    return out;
}

// ------------------------------------------------------------------ the functions

// Python ints of any size, as the specification's pure-Python counts are:
// the library's 64-bit Index would overflow where Python does not.
py::int_ param_count(py::handle vocab, py::handle dim) { return count_arg(vocab, "vocab") * count_arg(dim, "dim"); }

py::int_ one_hot_mults(py::handle vocab, py::handle dim, py::handle count) {
    return count_arg(vocab, "vocab") * count_arg(dim, "dim") * count_arg(count, "count");
}

py::int_ untied_params(py::handle vocab, py::handle dim) { return py::int_(2) * param_count(vocab, dim); }

py::dict vocab_growth(py::handle vocab_arg, py::handle dim_arg, py::handle factor_arg) {
    const py::int_ vocab = count_arg(vocab_arg, "vocab");
    const py::int_ dim = count_arg(dim_arg, "dim");
    const py::int_ factor = count_arg(factor_arg, "growth factor");
    const py::int_ bigger_vocab = vocab * factor;
    py::dict growth;
    growth["vocab"] = vocab;
    growth["bigger_vocab"] = bigger_vocab;
    growth["dim"] = dim;
    growth["tied"] = param_count(vocab, dim);
    growth["bigger_tied"] = param_count(bigger_vocab, dim);
    growth["untied"] = untied_params(vocab, dim);
    growth["bigger_untied"] = untied_params(bigger_vocab, dim);
    growth["saved"] = growth["untied"] - growth["tied"];
    return growth;
}

// seed as CPython's random.Random(seed) takes an int: the 32-bit words of abs(seed), least significant first.
std::vector<std::uint32_t> seed_words(py::handle seed_arg) {
    const py::int_ seed = py::reinterpret_steal<py::int_>(PyNumber_Absolute(as_int(seed_arg, "seed").ptr()));
    const auto bits = seed.attr("bit_length")().cast<std::size_t>();
    const std::size_t words = bits == 0 ? 1 : (bits + 31) / 32;
    const auto bytes = seed.attr("to_bytes")(words * 4, "little").cast<std::string>();
    std::vector<std::uint32_t> key(words);
    for (std::size_t w = 0; w < words; ++w) {
        for (std::size_t b = 0; b < 4; ++b) {
            key[w] |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * w + b])) << (8 * b);
        }
    }
    return key;
}

Table make_table_checked(py::handle vocab_arg, py::handle dim_arg, py::handle seed) {
    const Index vocab = size_arg(vocab_arg, "vocab");
    const Index dim = size_arg(dim_arg, "dim");
    const std::vector<std::uint32_t> key = seed_words(seed);
    if (vocab != 0 && dim > std::numeric_limits<Index>::max() / 8 / vocab) {
        raise(PyExc_MemoryError, "a " + std::to_string(vocab) + " x " + std::to_string(dim) +
                                     " table of doubles is too large to allocate");
    }
    try {
        py::gil_scoped_release unlocked;
        return embed::make_table(vocab, dim, key);
    } catch (const std::bad_alloc&) {
        raise(PyExc_MemoryError, "a " + std::to_string(vocab) + " x " + std::to_string(dim) +
                                     " table of doubles does not fit in memory");
    }
}

py::object make_table(py::handle vocab, py::handle dim, py::handle seed) {
    return to_lists(make_table_checked(vocab, dim, seed));
}

py::object make_table_array(py::handle vocab, py::handle dim, py::handle seed) {
    if (ndarray_type == nullptr) raise(PyExc_ImportError, "make_table_array needs numpy, which cannot be imported");
    return py::cast(make_table_checked(vocab, dim, seed));
}

py::tuple shape(py::handle matrix) {
    if (is_array(matrix)) {
        const auto array = py::reinterpret_borrow<py::array>(matrix);
        if (array.ndim() != 2) {
            raise(PyExc_ValueError, "matrix must be a 2-D array (V, d), got shape " +
                                        std::string(py::str(matrix.attr("shape"))));
        }
        return py::make_tuple(array.shape(0), array.shape(1));
    }
    const embed::Shape result = embed::shape(TableArg::rows_of(matrix, "matrix"));
    return py::make_tuple(result.rows, result.cols);
}

// Runs work without the GIL when it reads at least 2^16 values, so other
// Python threads run meanwhile; smaller work (the contract's 512 x 64 is 2^15)
// keeps it, since a release and re-acquire would cost more than they give.
template <class Work>
void without_gil_if_large(Index values_read, Work&& work) {
    constexpr Index kLargeWork = Index{1} << 16;
    if (values_read >= kLargeWork) {
        py::gil_scoped_release unlocked;
        work();
    } else {
        work();
    }
}

// A new (rows, cols) array of Scalar, C-contiguous, whose first value sits at the same place in its 64-byte
// cache line as like's. A numpy table's values start 16 bytes past a line; gathered into a result that starts
// on a line, every row would straddle lines differently from its source, and the library streams such rows
// past 8 MiB (lib/gather.hpp), slower than memcpy into a result lined up. The block comes from malloc, as an
// Eigen matrix's does: from aligned_alloc or aligned ::operator new, calls made over and over were many times
// slower, glibc handing the freed block back to the system (madvise) on every call.
template <class Scalar>
py::array_t<Scalar> array_lined_up_with(const Scalar* like, Index rows, Index cols) {
    constexpr std::size_t kLine = 64;
    if (cols != 0 && rows > std::numeric_limits<Index>::max() / Index{sizeof(Scalar)} / cols) {
        raise(PyExc_MemoryError, "a " + std::to_string(rows) + " x " + std::to_string(cols) +
                                     " result is too large to allocate");
    }
    const auto bytes = static_cast<std::size_t>(rows * cols) * sizeof(Scalar);
    std::unique_ptr<void, decltype(&std::free)> block(std::malloc(bytes + kLine), &std::free);
    if (block == nullptr) throw std::bad_alloc();
    const std::size_t offset = reinterpret_cast<std::uintptr_t>(like) % kLine;
    const std::size_t skip = (offset + kLine - reinterpret_cast<std::uintptr_t>(block.get()) % kLine) % kLine;
    auto* first = reinterpret_cast<Scalar*>(static_cast<unsigned char*>(block.get()) + skip);
    const py::capsule owner(block.get(), [](void* memory) { std::free(memory); });
    block.release();  // the capsule frees it now, with the array
    return py::array_t<Scalar>({rows, cols}, first, owner);
}

py::object lookup_rows(const TableArg& table, py::handle ids_value) {
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    const auto n = static_cast<Index>(ids.size());
    return std::visit(
        [&](auto view) -> py::object {
            using Scalar = std::remove_cv_t<std::remove_pointer_t<decltype(view.data())>>;
            if (!table.from_array()) {
                embed::BasicTable<Scalar> rows;
                without_gil_if_large(n * view.cols(), [&] { rows = embed::lookup(view, ids); });
                return to_lists(rows);
            }
            py::array_t<Scalar> rows = array_lined_up_with(view.data(), n, view.cols());
            Eigen::Map<embed::BasicTable<Scalar>> out(rows.mutable_data(), n, view.cols());
            without_gil_if_large(n * view.cols(), [&] { embed::lookup_into(view, ids, out); });
            return rows;
        },
        table.view());
}

// Lists in: each row comes back as a new list holding the caller's own
// objects, as the specification's list(table[i]) does: the numbers are never
// read, so they are neither converted nor checked (only the rows' lengths).
// Creating new floats would cost more than the gather itself.
py::object lookup(py::handle table_arg, py::handle ids_value) {
    if (is_array(table_arg)) return lookup_rows(TableArg::from(table_arg, "table"), ids_value);
    const py::object rows = as_sequence(table_arg, "table");
    const Py_ssize_t vocab = PySequence_Fast_GET_SIZE(rows.ptr());
    bool ragged = false;
    Py_ssize_t width = 0;
    for (Py_ssize_t r = 0; r < vocab; ++r) {
        const py::object row = as_sequence(PySequence_Fast_GET_ITEM(rows.ptr(), r), Where("table", r));
        const Py_ssize_t length = PySequence_Fast_GET_SIZE(row.ptr());
        if (r == 0) width = length;
        ragged = ragged || length != width;
    }
    if (ragged) {
        // Rows of the lists' lengths, only to raise the library's ragged-rows error and message.
        std::vector<std::vector<double>> lengths(static_cast<std::size_t>(vocab));
        for (Py_ssize_t r = 0; r < vocab; ++r) {
            lengths[static_cast<std::size_t>(r)].resize(
                static_cast<std::size_t>(PySequence_Size(PySequence_Fast_GET_ITEM(rows.ptr(), r))));
        }
        (void)embed::shape(lengths);
    }
    const std::vector<Index> ids = ids_arg(ids_value, vocab);
    embed::check_ids(ids, vocab);
    const CollectorPaused paused;
    py::list out(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        PyObject* copy = PySequence_List(PySequence_Fast_GET_ITEM(rows.ptr(), static_cast<Py_ssize_t>(ids[i])));
        if (copy == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), copy);
    }
    return out;
}

py::list one_hot(py::handle token_id, py::handle vocab_arg) {
    const Index vocab = size_arg(vocab_arg, "vocab");
    const Index id = token_arg(token_id, vocab, "token_id");
    embed::RowVector vec;
    try {
        vec = embed::one_hot(id, vocab);
    } catch (const std::bad_alloc&) {
        raise(PyExc_MemoryError, "a one-hot row of " + std::to_string(vocab) + " doubles does not fit in memory");
    }
    return to_list(vec.data(), vec.size());
}

// The library has row_times_matrix for float64 matrices only: a float32 matrix is widened first (exactly).
py::object row_times_matrix(py::handle vec_arg, py::handle matrix_arg) {
    const VectorArg vec = VectorArg::from(vec_arg, "vec");
    const TableArg matrix = TableArg::from(matrix_arg, "matrix", Float32::widen);
    embed::RowVector out;
    {
        py::gil_scoped_release unlocked;
        out = embed::row_times_matrix(vec.values.transpose(), matrix.double_view());
    }
    return vector_result(std::move(out), vec.from_array || matrix.from_array());
}

// The rows are float64 for a float32 table too: the library sums the one-hot products in double.
py::object lookup_via_one_hot(py::handle table_arg, py::handle ids_value) {
    const TableArg table = TableArg::from(table_arg, "table");
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    Table rows;
    std::visit(
        [&](auto view) {
            py::gil_scoped_release unlocked;
            rows = embed::lookup_via_one_hot(view, ids);
        },
        table.view());
    return table_result(std::move(rows), table.from_array());
}

py::object logits_of(const TableArg& table, py::handle hidden_arg) {
    const VectorArg hidden = VectorArg::from(hidden_arg, "hidden");
    const Index vocab = table.rows();
    if (!table.from_array() && !hidden.from_array) {
        Vector out;
        without_gil_if_large(table.size(), [&] { out = embed::logits(table.double_view(), hidden.values); });
        return to_list(out.data(), out.size());
    }
    // Arrays: the scores (float64 whatever the table's type) go straight into the result array, which
    // logits_into fills only after its checks.
    py::array_t<double> result(vocab);
    Eigen::Map<Vector> out(result.mutable_data(), vocab);
    std::visit(
        [&](auto view) {
            without_gil_if_large(view.size(), [&] { embed::logits_into(view, hidden.values, out); });
        },
        table.view());
    return result;
}

py::object logits(py::handle table, py::handle hidden) { return logits_of(TableArg::from(table, "table"), hidden); }

double dot(py::handle a, py::handle b) {
    return embed::dot(VectorArg::from(a, "a").values, VectorArg::from(b, "b").values);
}

double norm(py::handle a) { return embed::norm(VectorArg::from(a, "vec").values); }

double cosine(py::handle a, py::handle b) {
    return embed::cosine(VectorArg::from(a, "a").values, VectorArg::from(b, "b").values);
}

double rms(py::handle a) { return embed::rms(VectorArg::from(a, "vec").values); }

py::object stretch(py::handle table_arg, py::handle token_id, py::handle factor_arg) {
    const TableArg table = TableArg::from(table_arg, "table");
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const double factor = real_arg(factor_arg, "factor");
    return std::visit(
        [&](auto view) {
            decltype(embed::stretch(view, id, factor)) stretched;  // in the table's own type
            {
                py::gil_scoped_release unlocked;
                stretched = embed::stretch(view, id, factor);
            }
            return table_result(std::move(stretched), table.from_array());
        },
        table.view());
}

template <embed::Score score>
py::object nearest_by(py::handle table_arg, py::handle token_id, py::handle k_value) {
    const TableArg table = TableArg::from(table_arg, "table");
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const Index k = k_arg(k_value);
    std::vector<Index> ids;
    std::visit(
        [&](auto view) {
            without_gil_if_large(view.size(), [&] {
                ids = score == embed::Score::dot ? embed::nearest_by_dot(view, id, k)
                                                 : embed::nearest_by_cosine(view, id, k);
            });
        },
        table.view());
    return ids_result(ids, table.from_array());
}

// scaled_lookup's rows are float64 for a float32 table too: the library widens them, then scales.
py::object scaled_lookup(py::handle table_arg, py::handle ids_value, py::handle dim_arg) {
    const TableArg table = TableArg::from(table_arg, "table");
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    const py::int_ dim_value = count_arg(dim_arg, "dim");
    const std::optional<Index> dim = fits_index(dim_value);
    if (!dim) {
        raise(PyExc_OverflowError, "dim " + repr_of(dim_value) + " is past 2^63 - 1, the largest the library takes");
    }
    Table rows;
    std::visit(
        [&](auto view) {
            py::gil_scoped_release unlocked;
            rows = embed::scaled_lookup(view, ids, *dim);
        },
        table.view());
    return table_result(std::move(rows), table.from_array());
}

// ------------------------------------------------------------------ TiedEmbedding

// One table serving both directions. An array is held (kept alive) and read
// in place on every call, so both directions see the caller's changes to it;
// lists cannot be read in place, so they are converted once into a Table the
// object owns, which both directions then read.
class TiedEmbedding {
public:
    explicit TiedEmbedding(py::handle table) {
        if (is_array(table)) {
            (void)TableArg::from(table, "table");  // rejects what no call could read
            array_ = py::reinterpret_borrow<py::object>(table);
        } else {
            owned_ = embed::from_rows(TableArg::rows_of(table, "table"));
        }
    }

    py::object embed(py::handle ids) const { return lookup_rows(table(), ids); }

    py::object logits(py::handle hidden) const { return logits_of(table(), hidden); }

    py::int_ param_count() const {
        const TableArg tied = table();
        return ::param_count(py::int_(tied.rows()), py::int_(tied.cols()));
    }

    /// The one table: the caller's array itself, or (lists) a new list of lists of the owned table.
    py::object weights() const { return array_ ? array_ : py::object(to_lists(owned_)); }

private:
    // Re-read from the array on every call: its shape or contents may have changed since.
    TableArg table() const { return array_ ? TableArg::from(array_, "table") : TableArg::of(owned_); }

    py::object array_;
    Table owned_;
};

}  // namespace

PYBIND11_MODULE(embed, m) {
    detect_numpy();
    // Every docstring states its own signature with shapes; pybind11's would only say `handle`.
    py::options options;
    options.disable_function_signatures();
    m.doc() = R"doc(Token ids to vectors and back to scores over the whole vocabulary, exactly.

The original specification's module, served by the embed C++ library: the same
twenty functions and three constants, the same answers as its pure-Python
functions, much faster.

Tables are lists of V lists of d floats (V x d: V tokens, rows of width d),
vectors lists of floats, ids lists of ints; results are plain Python lists,
`shape` a tuple, `vocab_growth` a dict, counts Python ints of any size.

numpy (optional): every table and vector argument may also be a numpy array.
A C-contiguous float64 or float32 table is read in place, never copied; other
dtypes (bool, int, float16, ...) and layouts (Fortran order, strided views)
are converted to C-contiguous float64 first, a copy per call (rounding to
nearest whatever the caller's floating-point mode, as Python's int to float
does), except that a float32 table in another layout or byte order becomes a
C-contiguous float32 copy. When a function is given an array it returns
arrays (new arrays, owned by the caller). ids may be an integer array.
make_table_array(vocab, dim, seed) gives make_table's table as an array.

A float32 table is scored in float64: logits, nearest_by_dot and
nearest_by_cosine give bit for bit the results of table.astype(float64).
lookup returns float32 rows (the stored values), stretch a float32 table,
scaled_lookup and lookup_via_one_hot float64 rows. row_times_matrix widens a
float32 matrix to float64 first (exact; a copy per call). numpy has no
bfloat16 dtype (ml_dtypes is not part of numpy), so bfloat16 tables are not
taken from Python; the C++ library reads them.

Errors, each naming the value and what was allowed:
  IndexError   a token id outside [0, V), negative ids included
  ValueError   ragged tables, length mismatches, k < 0, negative sizes or counts,
               an array of the wrong number of dimensions
  TypeError    an argument that is not a number (or list of numbers) where one
               is expected; floats where ints are (sizes, ids, k, seed)
  MemoryError  a table too large to allocate (more than 2^63 - 1 bytes, or more
               than the machine has)
A call that raises has changed nothing: no function modifies its arguments.

Work on a table runs without the GIL, so other Python threads run meanwhile.
)doc";
    m.attr("__version__") = EMBED_VERSION;
    m.attr("VOCAB") = embed::VOCAB;
    m.attr("DIM") = embed::DIM;
    m.attr("SEED") = embed::SEED;

    m.def("make_table", &make_table, py::arg("vocab"), py::arg("dim"), py::arg("seed"),
          R"doc(make_table(vocab, dim, seed) -> (V, d) list of lists of floats

Entry [r][c] is the (r*dim + c)-th random.Random(seed).random() minus 0.5,
filled row by row from token 0 column 0: bit for bit what CPython gives, for
any int seed (negative seeds act as their absolute value, as in random.Random).
ValueError: vocab or dim < 0. TypeError: a size or seed that is not an int.
MemoryError: a table too large to allocate.)doc");
    m.def("make_table_array", &make_table_array, py::arg("vocab"), py::arg("dim"), py::arg("seed"),
          R"doc(make_table_array(vocab, dim, seed) -> (V, d) numpy float64 array

make_table's table as a C-contiguous numpy array (needs numpy; ImportError
without it). Same values, same errors.)doc");
    m.def("shape", &shape, py::arg("matrix"),
          R"doc(shape(matrix) -> (rows, cols)

matrix is (V, d); an empty list is (0, 0). ValueError: rows of different
lengths, or an array that is not 2-D. TypeError: an entry that is not a number.)doc");
    m.def("param_count", &param_count, py::arg("vocab"), py::arg("dim"),
          R"doc(param_count(vocab, dim) -> int

Entries of a (V, d) table: vocab * dim, an exact Python int of any size.
ValueError: vocab or dim < 0. TypeError: not an int.)doc");
    m.def("lookup", &lookup, py::arg("table"), py::arg("ids"),
          R"doc(lookup(table, ids) -> (n, d)

table is (V, d), ids is (n): row ids[i] of the table, as a new list the caller
may change freely, holding the table's own numbers as list(table[i]) does (a
new array for an array table, float32 for a float32 table, placed in its
64-byte cache lines as the table is, so the rows copy fastest). Repeated ids
give equal rows.
IndexError: an id outside [0, V), negative ids included. ValueError: a ragged
table. TypeError: an id that is not an int.)doc");
    m.def("one_hot", &one_hot, py::arg("token_id"), py::arg("vocab"),
          R"doc(one_hot(token_id, vocab) -> (V) list of floats

1.0 at token_id, 0.0 elsewhere. IndexError: token_id outside [0, vocab).
ValueError: vocab < 0. MemoryError: vocab too large to allocate.)doc");
    m.def("row_times_matrix", &row_times_matrix, py::arg("vec"), py::arg("matrix"),
          R"doc(row_times_matrix(vec, matrix) -> (d)

vec is (V), matrix is (V, d): out[c] = sum over r of vec[r] * matrix[r][c],
all V * d products. A float32 matrix is widened to float64 first (a copy).
ValueError: len(vec) != V, or a ragged matrix.)doc");
    m.def("lookup_via_one_hot", &lookup_via_one_hot, py::arg("table"), py::arg("ids"),
          R"doc(lookup_via_one_hot(table, ids) -> (n, d)

table is (V, d), ids is (n): each id through one_hot and row_times_matrix; the
same values as lookup on finite tables, at V * d multiplications per id.
A float32 table is read in place; its rows come back as float64, bit for bit
those of the table widened to float64.
IndexError: an id outside [0, V). ValueError: a ragged table.)doc");
    m.def("one_hot_mults", &one_hot_mults, py::arg("vocab"), py::arg("dim"), py::arg("count"),
          R"doc(one_hot_mults(vocab, dim, count) -> int

Multiplications the one-hot route spends on count tokens: vocab * dim * count
(lookup spends 0), an exact Python int. ValueError: a negative argument.)doc");
    m.def("logits", &logits, py::arg("table"), py::arg("hidden"),
          R"doc(logits(table, hidden) -> (V)

table is (V, d), hidden is (d): out[t] = sum over c of table[t][c] * hidden[c],
scored against the same table (weight tying; no new matrix is made). Scores
are float64 for a float32 table too, every product and sum in float64.
ValueError: len(hidden) != d, or a ragged table.)doc");
    m.def("tied_params", &param_count, py::arg("vocab"), py::arg("dim"),
          R"doc(tied_params(vocab, dim) -> int

Parameters with one table for input and output: vocab * dim, an exact int.
ValueError: vocab or dim < 0.)doc");
    m.def("untied_params", &untied_params, py::arg("vocab"), py::arg("dim"),
          R"doc(untied_params(vocab, dim) -> int

Parameters with separate input and output tables: 2 * vocab * dim, an exact
int. ValueError: vocab or dim < 0.)doc");
    m.def("vocab_growth", &vocab_growth, py::arg("vocab"), py::arg("dim"), py::arg("factor"),
          R"doc(vocab_growth(vocab, dim, factor) -> dict

Keys vocab, bigger_vocab (= vocab * factor), dim, tied, bigger_tied, untied,
bigger_untied and saved (= untied - tied), all exact ints.
ValueError: a negative argument.)doc");
    m.def("dot", &dot, py::arg("a"), py::arg("b"),
          R"doc(dot(a, b) -> float

a and b are (d): sum over i of a[i] * b[i]. ValueError: lengths differ.)doc");
    m.def("norm", &norm, py::arg("vec"),
          R"doc(norm(vec) -> float

vec is (d): sqrt(dot(vec, vec)); 0.0 for an empty vector.)doc");
    m.def("cosine", &cosine, py::arg("a"), py::arg("b"),
          R"doc(cosine(a, b) -> float

a and b are (d): dot / (norm(a) * norm(b)); 0.0 when either norm is 0 (empty
vectors included). ValueError: lengths differ.)doc");
    m.def("stretch", &stretch, py::arg("table"), py::arg("token_id"), py::arg("factor"),
          R"doc(stretch(table, token_id, factor) -> (V, d)

A new table with row token_id times factor; the argument is never modified.
On a float32 table the result is float32: each product is formed in float64,
then rounded once to the nearest float32 (ties to even).
IndexError: token_id outside [0, V). ValueError: a ragged table.
TypeError: a factor that is not a number.)doc");
    m.def("nearest_by_cosine", &nearest_by<embed::Score::cosine>, py::arg("table"), py::arg("token_id"),
          py::arg("k"),
          R"doc(nearest_by_cosine(table, token_id, k) -> (min(k, V-1)) list of ids

table is (V, d): the other ids with the highest cosine to row token_id, highest
first, equal scores by smaller id, token_id itself excluded; NaN ranks below
every number. An int64 array for an array table. IndexError: token_id outside
[0, V). ValueError: k < 0.)doc");
    m.def("nearest_by_dot", &nearest_by<embed::Score::dot>, py::arg("table"), py::arg("token_id"),
          py::arg("k"),
          R"doc(nearest_by_dot(table, token_id, k) -> (min(k, V-1)) list of ids

nearest_by_cosine with the dot product as the score. IndexError: token_id
outside [0, V). ValueError: k < 0.)doc");
    m.def("rms", &rms, py::arg("vec"),
          R"doc(rms(vec) -> float

vec is (d): sqrt(dot(vec, vec) / d); 0.0 for an empty vector.)doc");
    m.def("scaled_lookup", &scaled_lookup, py::arg("table"), py::arg("ids"), py::arg("dim"),
          R"doc(scaled_lookup(table, ids, dim) -> (n, d)

lookup(table, ids) times math.sqrt(dim) (not dim); float64 rows for a float32
table too (the stored values widened, then scaled). IndexError: an id outside
[0, V). ValueError: dim < 0.)doc");

    py::class_<TiedEmbedding>(m, "TiedEmbedding", R"doc(TiedEmbedding(table)

One (V, d) table serving both directions, weight tying as an object: embed(ids)
looks rows up in it and logits(hidden) scores against it. A numpy table is held
(kept alive) and read in place by both directions (a C-contiguous float64 or
float32 one without a copy), so changes made to the array are seen; a list
table is copied once into the object, which both directions then read.)doc")
        .def(py::init<py::handle>(), py::arg("table"),
             "TiedEmbedding(table): ties table (V, d); ValueError: a ragged table, TypeError: non-numbers.")
        .def("embed", &TiedEmbedding::embed, py::arg("ids"),
             "embed(ids) -> (n, d): lookup(table, ids) in the one table.")
        .def("logits", &TiedEmbedding::logits, py::arg("hidden"),
             "logits(hidden) -> (V): logits(table, hidden) against the same table.")
        .def("param_count", &TiedEmbedding::param_count, "param_count() -> int: V * d, the table counted once.")
        .def("input_weights", &TiedEmbedding::weights,
             "input_weights() -> (V, d): the one table (the caller's array itself; a copy of a list table).")
        .def("output_weights", &TiedEmbedding::weights,
             "output_weights() -> (V, d): the same table as input_weights().");
}
