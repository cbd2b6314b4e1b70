#pragma once
// The Python exceptions the binding raises from its own checks (types, sizes
// past 64 bits), worded as the library's messages are: the value, then what
// was allowed. The library's own C++ exceptions are translated in module.cpp.
#include <pybind11/pybind11.h>

#include <string>

namespace embed_python {

namespace py = pybind11;

/// Raises the Python exception type (PyExc_TypeError, ...) with message.
[[noreturn]] inline void raise(PyObject* type, const std::string& message) {
    PyErr_SetString(type, message.c_str());
    throw py::error_already_set();
}

/// repr(value), as an error message quotes it.
inline std::string repr_of(py::handle value) { return py::repr(value).cast<std::string>(); }

/// type(value).__name__, as an error message names it.
inline std::string type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

}  // namespace embed_python
