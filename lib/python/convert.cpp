// Python values -> the library's arguments (see convert.hpp). Every
// conversion that can round runs in the default floating-point mode, whatever
// mode the caller left the thread in, as the library computes in it.
#include "convert.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <embed/embed.hpp>

#include "floating_point/float_mode.hpp"
#include "errors.hpp"

namespace embed_python {

namespace {

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

// numpy.ndarray, or null when numpy cannot be imported. Set once, at import.
PyObject* ndarray_type = nullptr;

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

bool is_negative(const py::int_& value) { return PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT) == 1; }

}  // namespace

void detect_numpy() {
    try {
        // Kept for the life of the process: the module cannot be unloaded.
        py::object ndarray = py::module_::import("numpy").attr("ndarray");
        ndarray_type = ndarray.release().ptr();
    } catch (const py::error_already_set&) {
        PyErr_Clear();
    }
}

bool numpy_available() { return ndarray_type != nullptr; }

bool is_array(py::handle value) {
    return ndarray_type != nullptr && PyObject_IsInstance(value.ptr(), ndarray_type) == 1;
}

py::int_ as_int(py::handle value, const Where& where) {
    if (PyLong_CheckExact(value.ptr())) return py::reinterpret_borrow<py::int_>(value);
    PyObject* index = PyNumber_Index(value.ptr());
    if (index == nullptr) {
        PyErr_Clear();
        raise(PyExc_TypeError, where.str() + " must be an int, got " + type_name(value) + " " + repr_of(value));
    }
    return py::reinterpret_steal<py::int_>(index);
}

std::optional<Index> fits_index(const py::int_& value) {
    int overflow = 0;
    const long long result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) return std::nullopt;
    return static_cast<Index>(result);
}

py::int_ count_arg(py::handle value, const char* what) {
    py::int_ count = as_int(value, what);
    if (is_negative(count)) raise(PyExc_ValueError, std::string(what) + " must be >= 0, got " + repr_of(count));
    return count;
}

Index size_arg(py::handle value, const char* what) {
    const py::int_ size = count_arg(value, what);
    const std::optional<Index> fitted = fits_index(size);
    if (!fitted) raise(PyExc_MemoryError, std::string(what) + " " + repr_of(size) + " is too large to allocate");
    return *fitted;
}

Index token_arg(py::handle value, Index vocab, const Where& where) {
    const py::int_ id = as_int(value, where);
    const std::optional<Index> fitted = fits_index(id);
    if (!fitted) {
        raise(PyExc_IndexError,
              "token id " + repr_of(id) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
    return *fitted;
}

Index k_arg(py::handle value) {
    const py::int_ k = count_arg(value, "k");
    return fits_index(k).value_or(std::numeric_limits<Index>::max());
}

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

py::object as_sequence(py::handle value, const Where& where) {
    if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) return py::reinterpret_borrow<py::object>(value);
    if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) {
        raise(PyExc_TypeError, where.str() + " must be a list, got " + type_name(value));
    }
    PyObject* fast = PySequence_Fast(value.ptr(), "");
    if (fast == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(fast);
}

TableArg TableArg::from(py::handle value, const char* what, Float32 float32) {
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

std::vector<std::vector<double>> TableArg::rows_of(py::handle value, const char* what) {
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

VectorArg VectorArg::from(py::handle value, const char* what) {
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

}  // namespace embed_python
