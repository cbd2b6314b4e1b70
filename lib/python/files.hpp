#pragma once
// The module's file functions (embed/io.hpp from Python): load_table,
// list_tensors, check_tying and save_table, with the exception
// embed.FileFormatError. Defined in files.cpp, docstrings included.
#include <pybind11/pybind11.h>

#include <exception>
#include <filesystem>
#include <string>

namespace embed_python {

namespace py = pybind11;

/// path (str, bytes or os.PathLike) as the library's path: the bytes os.fsencode gives. TypeError from
/// os.fsencode for anything else; ValueError for a null byte, which would cut the name short.
std::filesystem::path path_arg(py::handle path);

/// A name the files store as UTF-8 (a tensor's, a token's) as a str; invalid bytes kept as surrogates
/// (surrogateescape), so the str encoded back gives the same bytes and finds the same tensor or token.
py::str name_decoded(const std::string& bytes);

/// tensor: None (or "") lets the library choose, a str names the tensor (its UTF-8 bytes, surrogates escaped).
/// TypeError for anything else.
std::string tensor_arg(py::handle tensor);

/// Called in a catch block: raises the exception being handled as Python's (FileFormatError, OSError from
/// its errno, ValueError, IndexError: see files.cpp); any other is rethrown as it is.
[[noreturn]] void raise_library_error();

/// Runs work (a call into the library) without the GIL and returns its result; the library's exceptions
/// become Python's, as raise_library_error says.
template <class Work>
auto call_library(Work&& work) -> decltype(work()) {
    try {
        const py::gil_scoped_release released;
        return work();
    } catch (const std::exception&) {
        raise_library_error();
    }
}

/// Adds the file functions and FileFormatError to the module m.
void register_files(py::module_& m);

}  // namespace embed_python
