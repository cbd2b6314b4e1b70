#pragma once
// The module's vocabulary scan, scan_vocabulary and unused_ids (lib/scan.cpp), in a file of its own.
#include <pybind11/pybind11.h>

namespace embed_python {

/// Adds scan_vocabulary(input, output=None, reference_ids=None, percentile=2.0) and unused_ids(vocabulary) to
/// the module.
void register_scan(pybind11::module_& m);

}  // namespace embed_python
