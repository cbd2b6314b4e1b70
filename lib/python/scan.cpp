#include "scan.hpp"

#include <variant>

#include <embed/scan.hpp>
#include <embed/vocabulary.hpp>

#include "convert.hpp"
#include "results.hpp"

namespace embed_python {
namespace {

py::object optional_vector(const std::optional<Vector>& values, bool as_array) {
    if (!values) return py::none();
    return vector_result(embed::RowVector(values->transpose()), as_array);
}

py::dict scan_dict(const embed::VocabularyScan& scan, bool as_array) {
    py::dict result;
    result["input_norm"] = vector_result(embed::RowVector(scan.input_norm.transpose()), as_array);
    result["output_norm"] = vector_result(embed::RowVector(scan.output_norm.transpose()), as_array);
    result["output_distance"] = optional_vector(scan.output_distance, as_array);
    result["input_output_cosine"] = optional_vector(scan.input_output_cosine, as_array);
    result["main_indicator"] = scan.main_indicator;
    result["threshold"] = scan.threshold;
    result["candidates"] = ids_result(scan.candidates, as_array);
    result["principal_component"] = vector_result(embed::RowVector(scan.principal_component.transpose()), as_array);
    result["principal_eigenvalue"] = scan.principal_eigenvalue;
    result["eigenvalue_gap"] = scan.eigenvalue_gap;
    result["component_error_bound"] = scan.component_error_bound;
    result["principal_component_converged"] = scan.principal_component_converged;
    result["iterations"] = scan.iterations;
    return result;
}

// Both tables as one stored type: float32 only when both are float32 arrays, else both as float64 (a float32
// array widened exactly), since the library scans two tables of one type.
embed::VocabularyScan scan_tables(py::handle input_arg, py::handle output_arg, py::handle reference_ids,
                                  py::handle percentile) {
    const bool tied = output_arg.is_none() || output_arg.is(input_arg);
    TableArg input = TableArg::from(input_arg, "input");
    TableArg output = tied ? TableArg() : TableArg::from(output_arg, "output");
    const bool same_type = tied || input.view().index() == output.view().index();
    if (!same_type) {
        input = TableArg::from(input_arg, "input", Float32::widen);
        output = TableArg::from(output_arg, "output", Float32::widen);
    }
    const TableArg& second = tied ? input : output;
    embed::ScanOptions options;
    if (!reference_ids.is_none()) options.reference_ids = ids_arg(reference_ids, input.rows());
    options.percentile = real_arg(percentile, "percentile");
    embed::VocabularyScan scan;
    std::visit(
        [&](auto in_view) {
            using View = decltype(in_view);
            const View out_view = std::get<View>(second.view());
            py::gil_scoped_release unlocked;
            scan = embed::scan_vocabulary(in_view, tied ? in_view : out_view, options);
        },
        input.view());
    return scan;
}

py::dict scan_vocabulary(py::handle input, py::handle output, py::handle reference_ids, py::handle percentile) {
    const embed::VocabularyScan scan = scan_tables(input, output, reference_ids, percentile);
    return scan_dict(scan, numpy_available());
}

// The ids as a list of ints.
py::list unused_ids(const embed::Vocabulary& vocabulary) {
    py::list ids;
    for (const embed::Index id : embed::unused_ids(vocabulary)) ids.append(py::int_(id));
    return ids;
}

}  // namespace

void register_scan(py::module_& m) {
    m.def("unused_ids", &unused_ids, py::arg("vocabulary"),
          R"doc(unused_ids(vocabulary) -> list[int]

The reference ids a vocabulary declares, for scan_vocabulary's reference_ids:
the ids of type "unused", and of type "control" whose token contains
"unused" or "reserved" (case-sensitive), ascending. vocabulary is an
embed.Vocabulary (load_vocabulary); anything else is a TypeError.)doc");
    m.def("scan_vocabulary", &scan_vocabulary, py::arg("input"), py::arg("output") = py::none(),
          py::arg("reference_ids") = py::none(), py::arg("percentile") = 2.0,
          R"doc(scan_vocabulary(input, output=None, reference_ids=None, percentile=2.0) -> dict

Which tokens never learned anything (Land & Bartolo 2024, "Fishing for
Magikarp"). input (V, d) and output (V, d') tables (output None: tied, the
input serves both); reference_ids: ids known to be unused. Computed in float64.
Returns a dict: input_norm (V), output_norm (V), output_distance (V, or None
without reference ids: 1 - cosine of each output row, its first principal
component projected out, with the reference rows' mean), input_output_cosine
(V, or None when the tables are one or differ in width), main_indicator
("output_distance" or "input_norm"), threshold (that indicator's percentile,
numpy's linear rule, NaN values left out), candidates (ids with indicator <=
threshold, by indicator then id), principal_component (d'),
principal_eigenvalue, eigenvalue_gap, component_error_bound,
principal_component_converged, iterations. Arrays when numpy is there.
IndexError: a reference id outside [0, V). ValueError: percentile outside
[0, 100] or NaN, row counts that differ.)doc");
}

}  // namespace embed_python
