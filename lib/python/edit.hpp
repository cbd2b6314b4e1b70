#pragma once
// The module's row edits (embed/edit.hpp from Python): resize_rows, pad_to_multiple_of and
// reinitialise_rows. Defined in edit.cpp, docstrings included.
#include <pybind11/pybind11.h>

#include <cstdint>

namespace embed_python {

namespace py = pybind11;

/// A seed as random.Random takes an int, the sign dropped (abs); past 64 bits: ValueError.
std::uint64_t seed_arg(py::handle seed);

/// Adds resize_rows, pad_to_multiple_of and reinitialise_rows to the module m.
void register_edit(py::module_& m);

}  // namespace embed_python
