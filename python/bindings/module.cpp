// parity._parity: the extension module under the `parity` package. The Python files around it give
// Polygraphy's and Model Navigator's module layout; everything they do happens here, in libparity.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "core/status.h"

namespace py = pybind11;

PYBIND11_MODULE(_parity, m) {
  m.doc() = "parity's C++ core for Python (import the parity package rather than this module)";
  // One-line messages stay as they are: the same text the CLI prints.
  static py::exception<parity::Error> error_type(m, "ParityError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const parity::Error& e) {
      error_type(e.what());
    }
  });
  parity::python::bind_runners(m);
  parity::python::bind_compare(m);
  parity::python::bind_tools(m);
}
