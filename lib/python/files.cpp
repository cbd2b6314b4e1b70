// The module's file functions (see files.hpp): embed/io.hpp from Python.
//
// Paths are taken as Python takes them (str, bytes or os.PathLike, through
// os.fsencode), so a name that is not valid UTF-8 reaches the file as its raw
// bytes. The library's exceptions become Python's, each with the library's
// message, whose path is decoded as os.fsdecode would (its raw bytes kept):
//   embed::FileFormatError             -> embed.FileFormatError, a ValueError
//   std::filesystem::filesystem_error  -> OSError built from its errno, so
//                                         FileNotFoundError, IsADirectoryError, ...
//   std::invalid_argument              -> ValueError
//   std::out_of_range                  -> IndexError
// Every call runs without the GIL: reading a model's table takes a while.
#include "files.hpp"

#include <pybind11/numpy.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <embed/io.hpp>

#include "convert.hpp"
#include "errors.hpp"
#include "results.hpp"

namespace embed_python {

namespace {

// embed.FileFormatError, made once when the module is imported; the module holds it for the process's life.
PyObject* file_format_error = nullptr;

/// bytes as a str the way os.fsdecode decodes a path: bytes that are not UTF-8 kept as surrogates.
py::str fs_decoded(const std::string& bytes) {
    PyObject* text = PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size()));
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
}

}  // namespace

std::string tensor_arg(py::handle tensor) {
    if (tensor.is_none()) return {};
    if (!PyUnicode_Check(tensor.ptr())) {
        raise(PyExc_TypeError, "tensor must be a str or None, not " + type_name(tensor));
    }
    PyObject* bytes = PyUnicode_AsEncodedString(tensor.ptr(), "utf-8", "surrogateescape");
    if (bytes == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(bytes);
}

namespace {

/// Raises error (an instance of an exception class) as the current Python exception.
[[noreturn]] void raise_instance(const py::object& error) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
}

/// embed.FileFormatError with the library's message; its filename attribute is the file, as OSError's is.
[[noreturn]] void raise_file_format_error(const embed::FileFormatError& error) {
    py::object instance = py::handle(file_format_error)(fs_decoded(error.what()));
    instance.attr("filename") = fs_decoded(error.file().native());
    raise_instance(instance);
}

/// OSError(errno, message, filename[, filename2]): Python picks the subclass from errno, as for its own
/// errors (FileNotFoundError for ENOENT). message is the library's, which says what it was doing.
[[noreturn]] void raise_os_error(const std::filesystem::filesystem_error& error) {
    const py::handle os_error(PyExc_OSError);
    const py::str message = fs_decoded(error.what());
    const std::error_code code = error.code();
    if (code.category() != std::generic_category() && code.category() != std::system_category()) {
        raise_instance(os_error(message));
    }
    const py::object first = error.path1().empty() ? py::object(py::none()) : fs_decoded(error.path1().native());
    if (error.path2().empty()) raise_instance(os_error(code.value(), message, first));
    raise_instance(os_error(code.value(), message, first, py::none(), fs_decoded(error.path2().native())));
}

}  // namespace

py::str name_decoded(const std::string& bytes) {
    PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
}

std::filesystem::path path_arg(py::handle path) {
    const py::object encoded = py::module_::import("os").attr("fsencode")(path);
    std::string bytes = py::reinterpret_borrow<py::bytes>(encoded);
    if (bytes.find('\0') != std::string::npos) {
        raise(PyExc_ValueError, "path " + repr_of(path) + " contains a null byte, which no file name can");
    }
    return std::filesystem::path(std::move(bytes));
}

void raise_library_error() {
    try {
        throw;
    } catch (const embed::FileFormatError& error) {
        raise_file_format_error(error);
    } catch (const std::filesystem::filesystem_error& error) {
        raise_os_error(error);
    } catch (const std::invalid_argument& error) {
        raise_instance(py::handle(PyExc_ValueError)(fs_decoded(error.what())));
    } catch (const std::out_of_range& error) {
        raise_instance(py::handle(PyExc_IndexError)(fs_decoded(error.what())));
    }
    // Any other exception has left the try above as it is, for pybind11 to translate.
}

namespace {

// A table as numpy can hold it: numpy has float64 and float32, but no bfloat16.
using NumpyTable = std::variant<embed::Table, embed::TableF32>;

/// The dtype, as the file spells it, of the tensor load_table(file, tensor) reads. Reads headers only.
std::string chosen_dtype(const std::filesystem::path& file, const std::string& tensor) {
    const std::string chosen = embed::chosen_tensor(file, tensor);
    for (const embed::TensorInfo& info : embed::list_tensors(file)) {
        if (info.name == chosen) return info.dtype;
    }
    return {};
}

/// The table in file for numpy: float64 as float64, everything else as float32, each value exact. A bfloat16
/// tensor is decoded straight into float32: loaded as bfloat16 and widened after, both tables would be held
/// at once, half as much again as the result. So its dtype is looked up first; should the file have been
/// replaced since, whatever the load finds is still converted exactly.
NumpyTable load_for_numpy(const std::filesystem::path& file, const std::string& tensor) {
    if (chosen_dtype(file, tensor) == "BF16") return embed::load_table_f32(file, tensor);
    return std::visit(
        [](auto&& stored) -> NumpyTable {
            if constexpr (std::is_same_v<std::decay_t<decltype(stored)>, embed::TableBF16>) {
                return embed::TableF32(stored.template cast<float>());
            } else {
                return std::move(stored);  // the buffer itself, not a copy
            }
        },
        embed::load_stored_table(file, tensor));
}

py::object load_table(py::handle path, py::handle tensor) {
    if (!numpy_available()) raise(PyExc_ImportError, "load_table needs numpy, which cannot be imported");
    const std::filesystem::path file = path_arg(path);
    const std::string name = tensor_arg(tensor);
    NumpyTable table = call_library([&] { return load_for_numpy(file, name); });
    // Moved into the array, which owns the library's buffer from then on: no copy.
    return std::visit([](auto& loaded) { return table_result(std::move(loaded), true); }, table);
}

py::list list_tensors(py::handle path) {
    const std::filesystem::path file = path_arg(path);
    const std::vector<embed::TensorInfo> infos = call_library([&] { return embed::list_tensors(file); });
    py::list out;
    for (const embed::TensorInfo& info : infos) {
        py::tuple shape(info.shape.size());
        for (std::size_t i = 0; i < info.shape.size(); ++i) shape[i] = py::int_(info.shape[i]);
        py::dict entry;
        entry["name"] = name_decoded(info.name);
        entry["dtype"] = name_decoded(info.dtype);
        entry["shape"] = shape;
        entry["loadable"] = py::bool_(info.loadable);
        out.append(entry);
    }
    return out;
}

py::object check_tying(py::handle path, py::handle tensor) {
    const std::filesystem::path file = path_arg(path);
    const std::string name = tensor_arg(tensor);
    const std::optional<embed::Tying> tying = call_library([&] { return embed::check_tying(file, name); });
    if (!tying) return py::none();
    py::dict out;
    out["embedding"] = name_decoded(tying->embedding);
    out["output"] = name_decoded(tying->output);
    out["tied"] = py::bool_(tying->tied);
    out["config_tied"] = tying->config_tied ? py::object(py::bool_(*tying->config_tied)) : py::object(py::none());
    out["disagreement"] = name_decoded(tying->disagreement);
    out["config_vocab_size"] =
        tying->config_vocab_size ? py::object(py::int_(*tying->config_vocab_size)) : py::object(py::none());
    return out;
}

/// dtype: None keeps the array's own (float64 -> f64, float32 -> f32, lists f64), else an element type's name
/// ("f16", "q8_0", upper case accepted); another str is the library's ValueError, another type TypeError.
std::optional<embed::ElementType> dtype_arg(py::handle dtype) {
    if (dtype.is_none()) return std::nullopt;
    if (!PyUnicode_Check(dtype.ptr())) raise(PyExc_TypeError, "dtype must be a str or None, not " + type_name(dtype));
    return embed::parse_element_type(dtype.cast<std::string>());
}

void save_table(py::handle path, py::handle table, py::handle tensor, py::handle dtype, bool allow_overflow) {
    const std::filesystem::path file = path_arg(path);
    const std::string name = tensor_arg(tensor);
    const std::optional<embed::ElementType> type = dtype_arg(dtype);
    const embed::SaveOptions options{.allow_overflow = allow_overflow};
    const TableArg values = TableArg::from(table, "table");
    // The library writes an owned table: the values are copied once into one of the array's own dtype.
    std::visit(
        [&](auto view) {
            using Scalar = typename decltype(view)::Scalar;
            const embed::BasicTable<Scalar> owned(view);
            const embed::ElementType chosen =
                type.value_or(std::is_same_v<Scalar, float> ? embed::ElementType::f32 : embed::ElementType::f64);
            call_library([&] { embed::save_table(file, owned, name, chosen, options); });
        },
        values.view());
}

}  // namespace

void register_files(py::module_& m) {
    file_format_error = PyErr_NewExceptionWithDoc(
        "embed.FileFormatError",
        "A file whose contents cannot be read as asked: the message names the file, the field and the value\n"
        "found; filename is the file. A subclass of ValueError.",
        PyExc_ValueError, nullptr);
    if (file_format_error == nullptr) throw py::error_already_set();
    m.add_object("FileFormatError", py::handle(file_format_error));

    m.def("load_table", &load_table, py::arg("path"), py::arg("tensor") = py::none(),
          R"doc(load_table(path, tensor=None) -> (V, d) numpy array

The table stored in a .npy, .safetensors or .gguf file (by extension, in any
case): float64 data as float64, every other dtype (float32, float16, bfloat16,
GGUF's Q8_0) as float32, each value exact. The new array owns the memory the
file was read into: no copy is made. tensor names the tensor; None picks the
one 2-D tensor named like a token embedding (a name component embed_tokens,
wte, tok_embeddings, word_embeddings or token_embd), else the only 2-D
tensor. path is a str, bytes or os.PathLike: a file, or a Hugging Face
checkpoint directory (config.json with model.safetensors or an index of
shards, read as one file). Needs numpy (ImportError without it).
FileFormatError (a ValueError): contents that are not such a table, an absent
tensor, a .npy given a tensor name; the message names the file.
OSError (FileNotFoundError, PermissionError, ...): the file cannot be read.
ValueError: another extension. TypeError: path or tensor of another type.)doc");
    m.def("list_tensors", &list_tensors, py::arg("path"),
          R"doc(list_tensors(path) -> list of dicts

Every tensor of a .npy, .safetensors or .gguf file or a checkpoint directory
(each file's in its own order: a .safetensors header's key order, a .gguf's
tensor infos'; a directory's shard by shard in file-name order), one dict each: name (str, ""
for a .npy), dtype (str, as the file spells it: "<f4", "F32", "Q8_0"), shape
(tuple of ints, outermost first, as numpy gives: a GGUF table ne = [d, V] is
(V, d)) and loadable (bool: load_table reads it). Reads no tensor data.
Errors as load_table's.)doc");
    m.def("check_tying", &check_tying, py::arg("path"), py::arg("tensor") = py::none(),
          R"doc(check_tying(path, tensor=None) -> dict or None

Whether the model in a .safetensors or .gguf file or a checkpoint directory
reuses its token embedding as its output layer, a dict of:
  embedding          the tensor load_table(path, tensor) reads
  output             the output tensor's name (an lm_head name component or
                     output.weight); "" when there is none
  tied               True when there is no output tensor or it equals the
                     embedding bit for bit as float64: what the tensors say
  config_tied        a directory's config.json tie_word_embeddings (its
                     text_config's if it has one); None when it does not say
  disagreement       "" when the config and the tensors agree or the config
                     does not say; else what disagrees, in words
  config_vocab_size  config.json's vocab_size, or None
None for a .npy, or when the embedding chosen is itself the output tensor.
The tensors are compared a block of rows at a time, never held whole.
Errors as load_table's; FileFormatError too for several output tensors.)doc");
    m.def("save_table", &save_table, py::arg("path"), py::arg("table"), py::arg("tensor") = py::none(),
          py::arg("dtype") = py::none(), py::kw_only(), py::arg("allow_overflow") = false,
          R"doc(save_table(path, table, tensor=None, dtype=None, *, allow_overflow=False) -> None

Writes table (V, d), lists or an array, to a .npy (format 1.0), a .safetensors
file of one tensor named tensor (None: "weight") or a .gguf file (version 3,
alignment 32, one tensor named tensor, None: "token_embd.weight", ne = [d, V]).
dtype None writes a float64 array (or lists) as f64, a float32 array as f32;
else an element type's name: f64 f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_k
q3_k q4_k q5_k q6_k (upper case accepted). Each value is rounded once, to
nearest with ties to even, from the value given (f16 equal to numpy's
astype(np.float16)); the quantised types go through float32 and ggml's
reference quantisers, bit for bit. .npy holds f64, f32 and f16 only (numpy
has no bfloat16); .safetensors f64, f32, f16, bf16; quantised types need
.gguf and d a multiple of their block (32, or 256 for the K types). NaN and
infinity are written as themselves except to a quantised type, which
refuses them. Written beside the file and renamed into place, so a failed
call leaves an existing file as it was.
ValueError: a finite value that would round past the type's largest finite
value (or a quantised block whose fp16 scale would), naming its row and
column, unless allow_overflow (then infinity is written); an unknown dtype;
a dtype the format cannot hold; another extension, a directory, a tensor
name for a .npy, a ragged table.
OSError: the file cannot be written. TypeError: as load_table's, or a table
entry that is not a number.)doc");
}

}  // namespace embed_python
