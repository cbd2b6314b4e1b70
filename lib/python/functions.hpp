#pragma once
// The module's functions, one per Python function: each converts its
// arguments (convert.hpp), calls the library and converts the result
// (results.hpp). Their docstrings, in module.cpp, give the shapes and errors.
// The counts are Python ints of any size, as the exercise's pure-Python
// counts are (SPECIFICATION.md, Python form): the library's 64-bit Index
// would overflow where Python does not.
#include <pybind11/pybind11.h>

#include <embed/types.hpp>

#include "convert.hpp"

namespace embed_python {

namespace py = pybind11;

/// vocab * dim, an exact Python int.
py::int_ param_count(py::handle vocab, py::handle dim);

/// vocab * dim * count, an exact Python int.
py::int_ one_hot_mults(py::handle vocab, py::handle dim, py::handle count);

/// 2 * vocab * dim, an exact Python int.
py::int_ untied_params(py::handle vocab, py::handle dim);

/// The counts for vocab and vocab * factor tokens, tied and untied, as a dict of exact ints.
py::dict vocab_growth(py::handle vocab, py::handle dim, py::handle factor);

/// A (vocab, dim) table of random.Random(seed) numbers, as lists.
py::object make_table(py::handle vocab, py::handle dim, py::handle seed);

/// make_table's (vocab, dim) table as a numpy array; ImportError without numpy.
py::object make_table_array(py::handle vocab, py::handle dim, py::handle seed);

/// matrix is (V, d), returns (V, d) as a tuple.
py::tuple shape(py::handle matrix);

/// table is (V, d), token_id an id, factor a number: a new (V, d) table with that row times factor.
py::object stretch(py::handle table, py::handle token_id, py::handle factor);

/// table is (V, d), ids is (n), returns the (n, d) rows.
py::object lookup(py::handle table, py::handle ids);

/// token_id in [0, vocab), returns the (vocab) one-hot row as a list.
py::list one_hot(py::handle token_id, py::handle vocab);

/// vec is (V), matrix is (V, d), returns (d).
py::object row_times_matrix(py::handle vec, py::handle matrix);

/// table is (V, d), ids is (n), returns the (n, d) rows through one-hot products, as float64.
py::object lookup_via_one_hot(py::handle table, py::handle ids);

/// table is (V, d), ids is (n), dim a size: returns the (n, d) rows times sqrt(dim), as float64.
py::object scaled_lookup(py::handle table, py::handle ids, py::handle dim);

/// table is (V, d), hidden is (d), returns the (V) scores.
py::object logits(py::handle table, py::handle hidden);

/// a and b are (d), returns their dot product.
double dot(py::handle a, py::handle b);

/// vec is (d), returns its Euclidean norm.
double norm(py::handle vec);

/// a and b are (d), returns their cosine (0.0 when either norm is 0).
double cosine(py::handle a, py::handle b);

/// vec is (d), returns its root mean square.
double rms(py::handle vec);

/// table is (V, d), returns the (min(k, V-1)) other ids by highest cosine to row token_id.
py::object nearest_by_cosine(py::handle table, py::handle token_id, py::handle k);

/// table is (V, d), returns the (min(k, V-1)) other ids by highest dot product with row token_id.
py::object nearest_by_dot(py::handle table, py::handle token_id, py::handle k);

// One table serving both directions. An array is held (kept alive) and read
// in place on every call, so both directions see the caller's changes to it;
// lists cannot be read in place, so they are converted once into a Table the
// object owns, which both directions then read.
class TiedEmbedding {
public:
    /// table is (V, d): an array, held, or lists, copied.
    explicit TiedEmbedding(py::handle table);

    /// ids is (n), returns the (n, d) rows of the one table.
    py::object embed(py::handle ids) const;

    /// hidden is (d), returns the (V) scores against the one table.
    py::object logits(py::handle hidden) const;

    /// V * d, the table counted once, an exact Python int.
    py::int_ param_count() const;

    /// The one table: the caller's array itself, or (lists) a new list of lists of the owned table.
    py::object weights() const;

private:
    // Re-read from the array on every call: its shape or contents may have changed since.
    TableArg table() const;

    py::object array_;
    Table owned_;
};

}  // namespace embed_python
