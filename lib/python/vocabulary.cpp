// The module's vocabulary: embed.load_vocabulary and the class embed.Vocabulary
// (embed/vocabulary.hpp from Python).
//
// Python sees a token as stored as a str: the bytes decoded as UTF-8, any that
// are not (a GGUF may store a lone byte of a multi-byte character) kept as
// surrogates (surrogateescape), as the module gives tensor names. So every
// token is a str, and token.encode("utf-8", "surrogateescape") gives its bytes
// back. A token's text is always valid UTF-8, so always a plain str. Types and
// the reading are their C++ names as str ("normal", "byte_level"): they print
// and compare as they read, with no enum to import.
#include "vocabulary.hpp"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include <embed/vocabulary.hpp>

#include "errors.hpp"
#include "files.hpp"

namespace embed_python {

namespace {

/// A token type's C++ name.
const char* type_name_of(embed::TokenType type) {
    switch (type) {
        case embed::TokenType::normal: return "normal";
        case embed::TokenType::unknown: return "unknown";
        case embed::TokenType::control: return "control";
        case embed::TokenType::user_defined: return "user_defined";
        case embed::TokenType::unused: return "unused";
        case embed::TokenType::byte: return "byte";
    }
    return "normal";
}

/// A reading's C++ name.
const char* reading_name_of(embed::TokenReading reading) {
    switch (reading) {
        case embed::TokenReading::byte_level: return "byte_level";
        case embed::TokenReading::sentencepiece: return "sentencepiece";
        case embed::TokenReading::as_stored: return "as_stored";
    }
    return "as_stored";
}

/// id as the library's Index: an int or anything with __index__ (TypeError otherwise). An int past 64 bits
/// is outside every vocabulary: IndexError, as the library says for one inside 64 bits.
embed::Index id_arg(const embed::Vocabulary& vocabulary, py::handle id) {
    if (!PyIndex_Check(id.ptr())) raise(PyExc_TypeError, "id must be an int, not " + type_name(id));
    const py::object value = py::reinterpret_steal<py::object>(PyNumber_Index(id.ptr()));
    if (!value) throw py::error_already_set();
    int overflow = 0;
    const long long result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (result == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0) {
        raise(PyExc_IndexError, "token id " + repr_of(value) + " is outside the vocabulary [0, " +
                                    std::to_string(vocabulary.size()) + ")");
    }
    return static_cast<embed::Index>(result);
}

/// The bytes find compares: a str encoded as UTF-8 with surrogateescape (so a token from `tokens` finds
/// itself), or bytes as they are. TypeError for anything else.
std::string find_arg(py::handle s) {
    if (PyBytes_Check(s.ptr())) return py::reinterpret_borrow<py::bytes>(s);
    if (!PyUnicode_Check(s.ptr())) raise(PyExc_TypeError, "find takes a str or bytes, not " + type_name(s));
    PyObject* bytes = PyUnicode_AsEncodedString(s.ptr(), "utf-8", "surrogateescape");
    if (bytes == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(bytes);
}

/// f(id) for every id, as a list.
template <class Each>
py::list every_id(const embed::Vocabulary& vocabulary, Each&& each) {
    py::list out(static_cast<std::size_t>(vocabulary.size()));
    for (embed::Index id = 0; id < vocabulary.size(); ++id) out[static_cast<std::size_t>(id)] = each(id);
    return out;
}

embed::Vocabulary load_vocabulary(py::handle path) {
    const std::filesystem::path source = path_arg(path);
    return call_library([&] { return embed::load_vocabulary(source); });
}

}  // namespace

void register_vocabulary(py::module_& m) {
    using embed::Index;
    using embed::Vocabulary;
    py::class_<Vocabulary>(m, "Vocabulary", R"doc(The tokens of a model, made by load_vocabulary: id -> token as stored,
its text as a person reads it, its type. Ids run over [0, len(v)), holes in
the tokenizer's id space included (see missing). Read-only.

A token as stored is a str: its bytes decoded as UTF-8, bytes that are not
kept as surrogates (surrogateescape), so token.encode("utf-8",
"surrogateescape") is the file's bytes. A text is always valid UTF-8. Types
are str: "normal", "unknown", "control", "user_defined", "unused", "byte".
A bad id (negative, or len(v) or more) is an IndexError.)doc")
        .def("__len__", &Vocabulary::size, "len(v): the number of ids, holes included.")
        .def_property_readonly(
            "tokens",
            [](const Vocabulary& v) { return every_id(v, [&](Index id) { return name_decoded(v.token(id)); }); },
            "Every token as stored, by id (a new list; \"\" for a missing id).")
        .def_property_readonly(
            "texts", [](const Vocabulary& v) { return every_id(v, [&](Index id) { return py::str(v.text(id)); }); },
            "Every token's text, by id (a new list; \"<no token N>\" for a missing id N).")
        .def_property_readonly(
            "types",
            [](const Vocabulary& v) {
                return every_id(v, [&](Index id) { return py::str(type_name_of(v.type(id))); });
            },
            "Every token's type name, by id (a new list; \"unused\" for a missing id).")
        .def_property_readonly(
            "missing",
            [](const Vocabulary& v) { return every_id(v, [&](Index id) { return py::bool_(v.missing(id)); }); },
            "For every id, whether no token holds it: a hole in the tokenizer's ids (a new list of bools).")
        .def_property_readonly(
            "reading", [](const Vocabulary& v) { return reading_name_of(v.reading()); },
            "How texts read the tokens: \"byte_level\" (GPT-2), \"sentencepiece\" or \"as_stored\".")
        .def(
            "token",
            [](const Vocabulary& v, py::handle id) {
                const Index at = id_arg(v, id);
                return name_decoded(call_library([&] { return v.token(at); }));
            },
            py::arg("id"), "token(id) -> str: token id as stored (\"Ġking\"). IndexError for a bad id.")
        .def(
            "text",
            [](const Vocabulary& v, py::handle id) {
                const Index at = id_arg(v, id);
                return py::str(call_library([&] { return v.text(at); }));
            },
            py::arg("id"), "text(id) -> str: token id as a person reads it (\" king\"). IndexError for a bad id.")
        .def(
            "type",
            [](const Vocabulary& v, py::handle id) {
                const Index at = id_arg(v, id);
                return type_name_of(call_library([&] { return v.type(at); }));
            },
            py::arg("id"), "type(id) -> str: token id's type name. IndexError for a bad id.")
        .def(
            "find",
            [](const Vocabulary& v, py::handle s) {
                const std::string wanted = find_arg(s);
                return call_library([&] { return v.find(wanted); });
            },
            py::arg("s"),
            "find(s) -> list of int: every id whose token or text is s (str, or bytes as stored), ascending;\n"
            "duplicates all listed, missing ids never.")
        .def("__repr__", [](const Vocabulary& v) {
            return "<embed.Vocabulary of " + std::to_string(v.size()) + " ids, reading " +
                   reading_name_of(v.reading()) + ">";
        });

    m.def("load_vocabulary", &load_vocabulary, py::arg("path"),
          R"doc(load_vocabulary(path) -> Vocabulary

The vocabulary of a .gguf (tokenizer.ggml.tokens, token_type and model), a
tokenizer .json, or a Hugging Face checkpoint directory holding a
tokenizer.json. path is a str, bytes or os.PathLike.
FileFormatError (a ValueError): no vocabulary in it (a .safetensors, a .npy,
any other extension), or one that cannot be read; the message names the file,
the field and the value.
OSError (FileNotFoundError, ...): the file cannot be read.
TypeError: path of another type.)doc");
}

}  // namespace embed_python
