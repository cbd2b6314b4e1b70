#pragma once
// The module's comparison of two tables, compare_tables (lib/compare.cpp), in a file of its own.
#include <pybind11/pybind11.h>

namespace embed_python {

/// Adds compare_tables(a, b, match="id", align="none", probes=1000, k=10, seed=0, ...) to the module.
void register_compare(pybind11::module_& m);

}  // namespace embed_python
