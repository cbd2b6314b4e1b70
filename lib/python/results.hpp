#pragma once
// The library's results -> Python: floats into new lists, tables into lists of
// lists, or into new numpy arrays that own the result's memory (no copy) when
// the caller passed arrays; ids into lists of ints or int64 arrays. Every
// Eigen -> numpy conversion happens in results.cpp, the one file that includes
// pybind11's Eigen support.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include <embed/types.hpp>

namespace embed_python {

namespace py = pybind11;

using embed::Index;

// Pauses CPython's cyclic garbage collector while a list of row lists is built.
// Every new list counts toward the collector's next run, and each run
// traverses every young list item by item, so the collections can cost
// several times the building, and more in a process holding many objects.
// Nothing can form a cycle meanwhile (the rows hold numbers or the caller's own objects, and the GIL
// is held), and the collector runs as usual once they are handed back. A
// collector the caller had disabled stays disabled.
class CollectorPaused {
public:
    CollectorPaused() : was_enabled_(pause()) {}
    ~CollectorPaused() {
        if (was_enabled_) resume();
    }
    CollectorPaused(const CollectorPaused&) = delete;
    CollectorPaused& operator=(const CollectorPaused&) = delete;

private:
    // Whether the collector was enabled; PyGC_Disable is new in 3.10, and older interpreters collect as usual.
    static bool pause() {
#if PY_VERSION_HEX >= 0x030A0000
        return PyGC_Disable() != 0;
#else
        return false;
#endif
    }

    static void resume() {
#if PY_VERSION_HEX >= 0x030A0000
        PyGC_Enable();
#endif
    }

    bool was_enabled_;
};

/// values is (n) of double or float, returns them as a new list of Python floats.
template <class Scalar>
py::list to_list(const Scalar* values, Index n);

/// table is (V, d) of double or float, returns V new lists of d Python floats.
template <class Scalar>
py::list to_lists(const embed::BasicTable<Scalar>& table);

/// table is (n, d): a new array of the table's own type owning its memory (no copy), or lists.
template <class Scalar>
py::object table_result(embed::BasicTable<Scalar>&& table, bool as_array);

/// vec is (n): a new array owning the vector's memory, or a list.
py::object vector_result(embed::RowVector&& vec, bool as_array);

/// ids is (n): a new int64 array, or a list of Python ints.
py::object ids_result(const std::vector<Index>& ids, bool as_array);

/// A new (rows, cols) C-contiguous array of Scalar (double or float) for the library to fill, its first
/// value at the same place in its 64-byte cache line as like's.
template <class Scalar>
py::array_t<Scalar> array_lined_up_with(const Scalar* like, Index rows, Index cols);

}  // namespace embed_python
