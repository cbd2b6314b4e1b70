#pragma once
// The module's vocabulary (embed/vocabulary.hpp from Python): load_vocabulary
// and the class Vocabulary. Defined in vocabulary.cpp, docstrings included.
#include <pybind11/pybind11.h>

namespace embed_python {

namespace py = pybind11;

/// Adds load_vocabulary and the class Vocabulary to the module m.
void register_vocabulary(py::module_& m);

}  // namespace embed_python
