#pragma once
// The module's file functions (embed/io.hpp from Python): load_table,
// list_tensors, check_tying and save_table, with the exception
// embed.FileFormatError. Defined in files.cpp, docstrings included.
#include <pybind11/pybind11.h>

namespace embed_python {

namespace py = pybind11;

/// Adds the file functions and FileFormatError to the module m.
void register_files(py::module_& m);

}  // namespace embed_python
