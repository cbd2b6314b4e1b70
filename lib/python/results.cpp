// The library's results -> Python (see results.hpp).
#include "results.hpp"

#include <pybind11/eigen.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace embed_python {

template <class Scalar>
py::list to_list(const Scalar* values, Index n) {
    py::list out(n);
    for (Index i = 0; i < n; ++i) {
        PyObject* number = PyFloat_FromDouble(static_cast<double>(values[i]));
        if (number == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), i, number);
    }
    return out;
}

template <class Scalar>
py::list to_lists(const embed::BasicTable<Scalar>& table) {
    const CollectorPaused paused;
    py::list out(table.rows());
    for (Index r = 0; r < table.rows(); ++r) {
        PyList_SET_ITEM(out.ptr(), r, to_list(table.data() + r * table.cols(), table.cols()).release().ptr());
    }
    return out;
}

template <class Scalar>
py::object table_result(embed::BasicTable<Scalar>&& table, bool as_array) {
    if (as_array) return py::cast(std::move(table));
    return to_lists(table);
}

py::object vector_result(embed::RowVector&& vec, bool as_array) {
    if (as_array) return py::cast(std::move(vec));
    return to_list(vec.data(), vec.size());
}

py::object ids_result(const std::vector<Index>& ids, bool as_array) {
    const auto n = static_cast<py::ssize_t>(ids.size());
    if (as_array) return py::array_t<std::int64_t>(n, ids.data());
    py::list out(ids.size());
    for (py::ssize_t i = 0; i < n; ++i) {
        PyObject* id = PyLong_FromLongLong(ids[static_cast<std::size_t>(i)]);
        if (id == nullptr) throw py::error_already_set();
        PyList_SET_ITEM(out.ptr(), i, id);
    }
    return out;
}

// A new (rows, cols) array of Scalar, C-contiguous, whose first value sits at the same place in its 64-byte
// cache line as like's. A numpy table's values start 16 bytes past a line; gathered into a result that starts
// on a line, every row would straddle lines differently from its source, and the library streams such rows
// past 8 MiB (lib/kernels/gather.hpp), slower than memcpy into a result lined up. The block comes from malloc, as
// an Eigen matrix's does: from aligned_alloc or aligned ::operator new, calls made over and over were many times
// slower, glibc handing the freed block back to the system (madvise) on every call.
template <class Scalar>
py::array_t<Scalar> array_lined_up_with(const Scalar* like, Index rows, Index cols) {
    constexpr std::size_t kLine = 64;
    if (cols != 0 && rows > std::numeric_limits<Index>::max() / Index{sizeof(Scalar)} / cols) {
        raise(PyExc_MemoryError, "a " + std::to_string(rows) + " x " + std::to_string(cols) +
                                     " result is too large to allocate");
    }
    const auto bytes = static_cast<std::size_t>(rows * cols) * sizeof(Scalar);
    std::unique_ptr<void, decltype(&std::free)> block(std::malloc(bytes + kLine), &std::free);
    if (block == nullptr) throw std::bad_alloc();
    const std::size_t offset = reinterpret_cast<std::uintptr_t>(like) % kLine;
    const std::size_t skip = (offset + kLine - reinterpret_cast<std::uintptr_t>(block.get()) % kLine) % kLine;
    auto* first = reinterpret_cast<Scalar*>(static_cast<unsigned char*>(block.get()) + skip);
    const py::capsule owner(block.get(), [](void* memory) { std::free(memory); });
    block.release();  // the capsule frees it now, with the array
    return py::array_t<Scalar>({rows, cols}, first, owner);
}

// The scalar types a table argument has (see AnyTableView in convert.hpp).
template py::list to_list(const double*, Index);
template py::list to_list(const float*, Index);
template py::list to_lists(const embed::BasicTable<double>&);
template py::list to_lists(const embed::BasicTable<float>&);
template py::object table_result(embed::BasicTable<double>&&, bool);
template py::object table_result(embed::BasicTable<float>&&, bool);
template py::array_t<double> array_lined_up_with(const double*, Index, Index);
template py::array_t<float> array_lined_up_with(const float*, Index, Index);

}  // namespace embed_python
