// The pieces of the extension module parity._parity, one function per binding file.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "compare/data_loader.h"

namespace parity::python {

namespace py = pybind11;

/// The feeds a Python data loader gives: parity's DataLoader for None, the Python DataLoader
/// itself, or any iterable of feed dicts (read under the GIL, one feed at a time).
std::unique_ptr<compare::FeedSource> feed_source_from_python(const py::object& data_loader);

/// OnnxModel, the ONNX loaders' immediate forms, Plan, Runner and the runner factories.
void bind_runners(py::module_& m);
/// DataLoader, RunResults, compare functions, Comparator and AccuracyResult.
void bind_compare(py::module_& m);
/// The logger, tools.main and the navigator pipeline.
void bind_tools(py::module_& m);

}  // namespace parity::python
