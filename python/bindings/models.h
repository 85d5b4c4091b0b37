// The model and plan objects the binding files pass to each other.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "compare/plan_loaders.h"
#include "runners/runner.h"

namespace parity::python {

namespace py = pybind11;

using Model = compare::loaders::Model;

/// An ONNX model (onnx::ModelProto) held for Python.
struct OnnxModel {
  Model model;
};

/// A built plan (parity's engine) held for Python.
struct Plan {
  compare::loaders::Plan plan;
};

/// A runner made for Python.
struct PyRunner {
  std::unique_ptr<runners::Runner> runner;

  /// The runner; ValueError once it was closed.
  runners::Runner& get() {
    if (!runner) throw py::value_error("the runner was closed");
    return *runner;
  }
};

/// The model a Python value stands for: an OnnxModel, an onnx.ModelProto (serialized and parsed
/// again), serialized bytes, or a path. TypeError for anything else.
Model model_from_python(const py::handle& value);

}  // namespace parity::python
