// The pieces of the extension module parity._parity, one function per binding file.
#pragma once

#include <pybind11/pybind11.h>

namespace parity::python {

namespace py = pybind11;

/// OnnxModel, the ONNX loaders' immediate forms, Plan, Runner and the runner factories.
void bind_runners(py::module_& m);
/// DataLoader, RunResults, compare functions, Comparator and AccuracyResult.
void bind_compare(py::module_& m);
/// The logger, tools.main and the navigator pipeline.
void bind_tools(py::module_& m);

}  // namespace parity::python
