// The Python module `embed`: the exercise's functions with their Python
// semantics (lists in, lists out, Python ints, Python exceptions; SPECIFICATION.md, Python form),
// forwarding to the C++ library. This file only defines the module: each
// name, its docstring and the function it forwards to. The conversions are in
// convert.hpp (arguments) and results.hpp (results), the functions that join
// them to the library in functions.hpp.
//
// Errors are translated once, by pybind11's standard translation, which is
// exactly the mapping we want: std::out_of_range -> IndexError,
// std::invalid_argument -> ValueError, std::bad_alloc -> MemoryError. The
// library's messages name the value and what was allowed; the checks made
// in convert.cpp (types, sizes past 64 bits) use the same wording.
#include <pybind11/pybind11.h>

#include <embed/embed.hpp>

#include "compare.hpp"
#include "edit.hpp"
#include "files.hpp"
#include "functions.hpp"
#include "quantised.hpp"
#include "scan.hpp"
#include "vocabulary.hpp"

namespace py = pybind11;

using namespace embed_python;

PYBIND11_MODULE(embed, m) {
    detect_numpy();
    // Every docstring states its own signature with shapes; pybind11's would only say `handle`.
    py::options options;
    options.disable_function_signatures();
    m.doc() = R"doc(Token ids to vectors and back to scores over the whole vocabulary, exactly.

The module of embed's exercise (SPECIFICATION.md, installed beside the C++
headers), served by the embed C++ library: the same twenty functions and three
constants, the same answers as the exercise's pure-Python functions, much faster.

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
taken from Python; the C++ library reads them, and load_table reads a
bfloat16 file as float32 (exact).

Files: load_table, list_tensors, check_tying and save_table read .npy,
.safetensors and .gguf files and checkpoint directories (save_table writes
all three, in any element type the format holds: f16, bf16, GGUF's q8_0 ...);
resize_rows, pad_to_multiple_of and reinitialise_rows grow or refill a
table's rows (mean, sampled or zeros); paths are str, bytes or os.PathLike. load_vocabulary
reads a model's tokens (a .gguf, a tokenizer.json or a checkpoint directory)
as a Vocabulary: token, text and type for each id.

Errors, each naming the value and what was allowed:
  IndexError   a token id outside [0, V), negative ids included
  ValueError   ragged tables, length mismatches, k < 0, negative sizes or counts,
               an array of the wrong number of dimensions
  TypeError    an argument that is not a number (or list of numbers) where one
               is expected; floats where ints are (sizes, ids, k, seed)
  MemoryError  a table too large to allocate (more than 2^63 - 1 bytes, or more
               than the machine has)
  FileFormatError  (a ValueError) a file whose contents cannot be read as asked
  OSError      a file that cannot be opened, read or written (by errno:
               FileNotFoundError, PermissionError, ...)
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
    m.def("nearest_by_cosine", &nearest_by_cosine, py::arg("table"), py::arg("token_id"),
          py::arg("k"),
          R"doc(nearest_by_cosine(table, token_id, k) -> (min(k, V-1)) list of ids

table is (V, d): the other ids with the highest cosine to row token_id, highest
first, equal scores by smaller id, token_id itself excluded; NaN ranks below
every number. An int64 array for an array table. IndexError: token_id outside
[0, V). ValueError: k < 0.)doc");
    m.def("nearest_by_dot", &nearest_by_dot, py::arg("table"), py::arg("token_id"),
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

    register_compare(m);  // compare_tables (compare.cpp)
    register_edit(m);  // resize_rows, pad_to_multiple_of, reinitialise_rows (edit.cpp)
    register_files(m);  // load_table, list_tensors, check_tying, save_table, FileFormatError (files.cpp)
    register_open_table(m);  // open_table, OpenedTable (quantised.cpp)
    register_vocabulary(m);  // load_vocabulary, Vocabulary (vocabulary.cpp)
    register_scan(m);  // scan_vocabulary, unused_ids (scan.cpp); after Vocabulary, which unused_ids takes
}
