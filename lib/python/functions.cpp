// The module's functions (see functions.hpp): arguments converted, the
// library called, results converted. Work on a table runs without the GIL.
#include "functions.hpp"

#include <pybind11/numpy.h>

#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <embed/embed.hpp>

#include "errors.hpp"
#include "quantised.hpp"
#include "results.hpp"

namespace embed_python {

namespace {

// Runs work without the GIL when it reads at least 2^16 values, so other
// Python threads run meanwhile; smaller work (the exercise's 512 x 64 is 2^15)
// keeps it, since a release and re-acquire would cost more than they give.
template <class Work>
void without_gil_if_large(Index values_read, Work&& work) {
    constexpr Index kLargeWork = Index{1} << 16;
    if (values_read >= kLargeWork) {
        py::gil_scoped_release unlocked;
        work();
    } else {
        work();
    }
}

// seed as CPython's random.Random(seed) takes an int: the 32-bit words of abs(seed), least significant first.
std::vector<std::uint32_t> seed_words(py::handle seed_arg) {
    const py::int_ seed = py::reinterpret_steal<py::int_>(PyNumber_Absolute(as_int(seed_arg, "seed").ptr()));
    const auto bits = seed.attr("bit_length")().cast<std::size_t>();
    const std::size_t words = bits == 0 ? 1 : (bits + 31) / 32;
    const auto bytes = seed.attr("to_bytes")(words * 4, "little").cast<std::string>();
    std::vector<std::uint32_t> key(words);
    for (std::size_t w = 0; w < words; ++w) {
        for (std::size_t b = 0; b < 4; ++b) {
            key[w] |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * w + b])) << (8 * b);
        }
    }
    return key;
}

// make_table's (vocab, dim) table; MemoryError when it cannot be allocated.
Table make_table_checked(py::handle vocab_arg, py::handle dim_arg, py::handle seed) {
    const Index vocab = size_arg(vocab_arg, "vocab");
    const Index dim = size_arg(dim_arg, "dim");
    const std::vector<std::uint32_t> key = seed_words(seed);
    if (vocab != 0 && dim > std::numeric_limits<Index>::max() / 8 / vocab) {
        raise(PyExc_MemoryError, "a " + std::to_string(vocab) + " x " + std::to_string(dim) +
                                     " table of doubles is too large to allocate");
    }
    try {
        py::gil_scoped_release unlocked;
        return embed::make_table(vocab, dim, key);
    } catch (const std::bad_alloc&) {
        raise(PyExc_MemoryError, "a " + std::to_string(vocab) + " x " + std::to_string(dim) +
                                     " table of doubles does not fit in memory");
    }
}

// table is (V, d), ids is (n): the (n, d) rows, as lists or as a new array lined up with the table's.
py::object lookup_rows(const TableArg& table, py::handle ids_value) {
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    const auto n = static_cast<Index>(ids.size());
    return std::visit(
        [&](auto view) -> py::object {
            using Scalar = std::remove_cv_t<std::remove_pointer_t<decltype(view.data())>>;
            if (!table.from_array()) {
                embed::BasicTable<Scalar> rows;
                without_gil_if_large(n * view.cols(), [&] { rows = embed::lookup(view, ids); });
                return to_lists(rows);
            }
            py::array_t<Scalar> rows = array_lined_up_with(view.data(), n, view.cols());
            Eigen::Map<embed::BasicTable<Scalar>> out(rows.mutable_data(), n, view.cols());
            without_gil_if_large(n * view.cols(), [&] { embed::lookup_into(view, ids, out); });
            return rows;
        },
        table.view());
}

// table is (V, d), hidden is (d): the (V) scores, as a list or (either one an array) a new array.
py::object logits_of(const TableArg& table, py::handle hidden_arg) {
    const VectorArg hidden = VectorArg::from(hidden_arg, "hidden");
    const Index vocab = table.rows();
    if (!table.from_array() && !hidden.from_array) {
        Vector out;
        without_gil_if_large(table.size(), [&] { out = embed::logits(table.double_view(), hidden.values); });
        return to_list(out.data(), out.size());
    }
    // Arrays: the scores (float64 whatever the table's type) go straight into the result array, which
    // logits_into fills only after its checks.
    py::array_t<double> result(vocab);
    Eigen::Map<Vector> out(result.mutable_data(), vocab);
    std::visit(
        [&](auto view) {
            without_gil_if_large(view.size(), [&] { embed::logits_into(view, hidden.values, out); });
        },
        table.view());
    return result;
}

// nearest_by_cosine or nearest_by_dot, as score says: the ids as a list, or an int64 array.
template <embed::Score score>
py::object nearest_by(py::handle table_arg, py::handle token_id, py::handle k_value) {
    const TableArg table = TableArg::from(table_arg, "table");
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const Index k = k_arg(k_value);
    std::vector<Index> ids;
    std::visit(
        [&](auto view) {
            without_gil_if_large(view.size(), [&] {
                ids = score == embed::Score::dot ? embed::nearest_by_dot(view, id, k)
                                                 : embed::nearest_by_cosine(view, id, k);
            });
        },
        table.view());
    return ids_result(ids, table.from_array());
}

}  // namespace

// Python ints of any size, as the exercise's pure-Python counts are:
// the library's 64-bit Index would overflow where Python does not.
py::int_ param_count(py::handle vocab, py::handle dim) { return count_arg(vocab, "vocab") * count_arg(dim, "dim"); }

py::int_ one_hot_mults(py::handle vocab, py::handle dim, py::handle count) {
    return count_arg(vocab, "vocab") * count_arg(dim, "dim") * count_arg(count, "count");
}

py::int_ untied_params(py::handle vocab, py::handle dim) { return py::int_(2) * param_count(vocab, dim); }

py::dict vocab_growth(py::handle vocab_arg, py::handle dim_arg, py::handle factor_arg) {
    const py::int_ vocab = count_arg(vocab_arg, "vocab");
    const py::int_ dim = count_arg(dim_arg, "dim");
    const py::int_ factor = count_arg(factor_arg, "growth factor");
    const py::int_ bigger_vocab = vocab * factor;
    py::dict growth;
    growth["vocab"] = vocab;
    growth["bigger_vocab"] = bigger_vocab;
    growth["dim"] = dim;
    growth["tied"] = param_count(vocab, dim);
    growth["bigger_tied"] = param_count(bigger_vocab, dim);
    growth["untied"] = untied_params(vocab, dim);
    growth["bigger_untied"] = untied_params(bigger_vocab, dim);
    growth["saved"] = growth["untied"] - growth["tied"];
    return growth;
}

py::object make_table(py::handle vocab, py::handle dim, py::handle seed) {
    return to_lists(make_table_checked(vocab, dim, seed));
}

py::object make_table_array(py::handle vocab, py::handle dim, py::handle seed) {
    if (!numpy_available()) raise(PyExc_ImportError, "make_table_array needs numpy, which cannot be imported");
    return table_result(make_table_checked(vocab, dim, seed), true);
}

py::tuple shape(py::handle matrix) {
    if (is_array(matrix)) {
        const auto array = py::reinterpret_borrow<py::array>(matrix);
        if (array.ndim() != 2) {
            raise(PyExc_ValueError, "matrix must be a 2-D array (V, d), got shape " +
                                        std::string(py::str(matrix.attr("shape"))));
        }
        return py::make_tuple(array.shape(0), array.shape(1));
    }
    const embed::Shape result = embed::shape(TableArg::rows_of(matrix, "matrix"));
    return py::make_tuple(result.rows, result.cols);
}

// Lists in: each row comes back as a new list holding the caller's own
// objects, as the exercise's list(table[i]) does: the numbers are never
// read, so they are neither converted nor checked (only the rows' lengths).
// Creating new floats would cost more than the gather itself.
py::object lookup(py::handle table_arg, py::handle ids_value) {
    if (const OpenedTable* opened = as_opened_table(table_arg)) return opened->lookup(ids_value);
    if (is_array(table_arg)) return lookup_rows(TableArg::from(table_arg, "table"), ids_value);
    const py::object rows = as_sequence(table_arg, "table");
    const Py_ssize_t vocab = PySequence_Fast_GET_SIZE(rows.ptr());
    bool ragged = false;
    Py_ssize_t width = 0;
    for (Py_ssize_t r = 0; r < vocab; ++r) {
        const py::object row = as_sequence(PySequence_Fast_GET_ITEM(rows.ptr(), r), Where("table", r));
        const Py_ssize_t length = PySequence_Fast_GET_SIZE(row.ptr());
        if (r == 0) width = length;
        ragged = ragged || length != width;
    }
    if (ragged) {
        // Rows of the lists' lengths, only to raise the library's ragged-rows error and message.
        std::vector<std::vector<double>> lengths(static_cast<std::size_t>(vocab));
        for (Py_ssize_t r = 0; r < vocab; ++r) {
            lengths[static_cast<std::size_t>(r)].resize(
                static_cast<std::size_t>(PySequence_Size(PySequence_Fast_GET_ITEM(rows.ptr(), r))));
        }
        (void)embed::shape(lengths);
    }
    const std::vector<Index> ids = ids_arg(ids_value, vocab);
    embed::check_ids(ids, vocab);
    const CollectorPaused paused;
    py::list out(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        PyObject* copy = PySequence_List(PySequence_Fast_GET_ITEM(rows.ptr(), static_cast<Py_ssize_t>(ids[i])));
        if (copy == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), copy);
    }
    return out;
}

py::list one_hot(py::handle token_id, py::handle vocab_arg) {
    const Index vocab = size_arg(vocab_arg, "vocab");
    const Index id = token_arg(token_id, vocab, "token_id");
    embed::RowVector vec;
    try {
        vec = embed::one_hot(id, vocab);
    } catch (const std::bad_alloc&) {
        raise(PyExc_MemoryError, "a one-hot row of " + std::to_string(vocab) + " doubles does not fit in memory");
    }
    return to_list(vec.data(), vec.size());
}

// The library has row_times_matrix for float64 matrices only: a float32 matrix is widened first (exactly).
py::object row_times_matrix(py::handle vec_arg, py::handle matrix_arg) {
    const VectorArg vec = VectorArg::from(vec_arg, "vec");
    const TableArg matrix = TableArg::from(matrix_arg, "matrix", Float32::widen);
    embed::RowVector out;
    {
        py::gil_scoped_release unlocked;
        out = embed::row_times_matrix(vec.values.transpose(), matrix.double_view());
    }
    return vector_result(std::move(out), vec.from_array || matrix.from_array());
}

// The rows are float64 for a float32 table too: the library sums the one-hot products in double.
py::object lookup_via_one_hot(py::handle table_arg, py::handle ids_value) {
    const TableArg table = TableArg::from(table_arg, "table");
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    Table rows;
    std::visit(
        [&](auto view) {
            py::gil_scoped_release unlocked;
            rows = embed::lookup_via_one_hot(view, ids);
        },
        table.view());
    return table_result(std::move(rows), table.from_array());
}

// scaled_lookup's rows are float64 for a float32 table too: the library widens them, then scales.
py::object scaled_lookup(py::handle table_arg, py::handle ids_value, py::handle dim_arg) {
    const TableArg table = TableArg::from(table_arg, "table");
    const std::vector<Index> ids = ids_arg(ids_value, table.rows());
    const py::int_ dim_value = count_arg(dim_arg, "dim");
    const std::optional<Index> dim = fits_index(dim_value);
    if (!dim) {
        raise(PyExc_OverflowError, "dim " + repr_of(dim_value) + " is past 2^63 - 1, the largest the library takes");
    }
    Table rows;
    std::visit(
        [&](auto view) {
            py::gil_scoped_release unlocked;
            rows = embed::scaled_lookup(view, ids, *dim);
        },
        table.view());
    return table_result(std::move(rows), table.from_array());
}

py::object logits(py::handle table, py::handle hidden) {
    if (const OpenedTable* opened = as_opened_table(table)) return opened->logits(hidden);
    return logits_of(TableArg::from(table, "table"), hidden);
}

double dot(py::handle a, py::handle b) {
    return embed::dot(VectorArg::from(a, "a").values, VectorArg::from(b, "b").values);
}

double norm(py::handle a) { return embed::norm(VectorArg::from(a, "vec").values); }

double cosine(py::handle a, py::handle b) {
    return embed::cosine(VectorArg::from(a, "a").values, VectorArg::from(b, "b").values);
}

double rms(py::handle a) { return embed::rms(VectorArg::from(a, "vec").values); }

py::object stretch(py::handle table_arg, py::handle token_id, py::handle factor_arg) {
    const TableArg table = TableArg::from(table_arg, "table");
    const Index id = token_arg(token_id, table.rows(), "token_id");
    const double factor = real_arg(factor_arg, "factor");
    return std::visit(
        [&](auto view) {
            decltype(embed::stretch(view, id, factor)) stretched;  // in the table's own type
            {
                py::gil_scoped_release unlocked;
                stretched = embed::stretch(view, id, factor);
            }
            return table_result(std::move(stretched), table.from_array());
        },
        table.view());
}

py::object nearest_by_cosine(py::handle table, py::handle token_id, py::handle k) {
    if (const OpenedTable* opened = as_opened_table(table)) return opened->nearest_by_cosine(token_id, k);
    return nearest_by<embed::Score::cosine>(table, token_id, k);
}

py::object nearest_by_dot(py::handle table, py::handle token_id, py::handle k) {
    if (const OpenedTable* opened = as_opened_table(table)) return opened->nearest_by_dot(token_id, k);
    return nearest_by<embed::Score::dot>(table, token_id, k);
}

TiedEmbedding::TiedEmbedding(py::handle table) {
    if (is_array(table)) {
        (void)TableArg::from(table, "table");  // rejects what no call could read
        array_ = py::reinterpret_borrow<py::object>(table);
    } else {
        owned_ = embed::from_rows(TableArg::rows_of(table, "table"));
    }
}

py::object TiedEmbedding::embed(py::handle ids) const { return lookup_rows(table(), ids); }

py::object TiedEmbedding::logits(py::handle hidden) const { return logits_of(table(), hidden); }

py::int_ TiedEmbedding::param_count() const {
    const TableArg tied = table();
    return embed_python::param_count(py::int_(tied.rows()), py::int_(tied.cols()));
}

py::object TiedEmbedding::weights() const { return array_ ? array_ : py::object(to_lists(owned_)); }

TableArg TiedEmbedding::table() const { return array_ ? TableArg::from(array_, "table") : TableArg::of(owned_); }

}  // namespace embed_python
