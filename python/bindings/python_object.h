// Python objects held by C++ callables that may be copied, called and destroyed on threads that do
// not hold the GIL (loaders run inside runner activation, feed sources inside Comparator::run).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

namespace parity::python {

namespace py = pybind11;

/// A reference to a Python object whose copies need no GIL; the last one drops it under the GIL.
using SharedObject = std::shared_ptr<py::object>;

inline SharedObject share(py::object object) {
  return SharedObject(new py::object(std::move(object)), [](py::object* held) {
    py::gil_scoped_acquire gil;
    delete held;
  });
}

}  // namespace parity::python
