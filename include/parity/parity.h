/// \file
/// The whole public API in one include: errors, tensors, models, sessions and plans, loaders,
/// runners, the comparator, data loaders, results files and navigator packages.
#pragma once

#include "comparator.h"
#include "data_loader.h"
#include "errors.h"
#include "loaders.h"
#include "model.h"
#include "navigator.h"
#include "results.h"
#include "runners.h"
#include "session.h"
#include "tensor.h"

/// \namespace parity
/// parity's public API: core types (tensors, metadata, errors, logging, results files) at the top.
/// \namespace parity::compare
/// Running runners on the same inputs and judging their outputs (Polygraphy's comparator, data
/// loaders and compare functions), layer by layer too.
/// \namespace parity::compare::loaders
/// Polygraphy-style loaders: immediate functions and lazy Loader forms that chain.
/// \namespace parity::compare::compare_funcs
/// The compare functions Comparator::compare_accuracy takes (Polygraphy's CompareFunc).
/// \namespace parity::compare::numpy_stats
/// Reductions with numpy's semantics, as the compare functions compute them.
/// \namespace parity::model
/// ONNX models: loading and saving, and the editable graph IR.
/// \namespace parity::runtime
/// parity's own ONNX executor: sessions, kernels, precision, tactics and profiles.
/// \namespace parity::runtime::plan
/// Plan files: a planned session saved to disk and mapped back.
/// \namespace parity::runners
/// Runners: one runtime running one model (Polygraphy's runners), and their registry.
/// \namespace parity::options
/// Command-line options shared by the CLI and the loaders.
/// \namespace parity::tools
/// The CLI's tools that have a C++ API.
/// \namespace parity::tools::navigator
/// Model Navigator: workspaces, their status record and .nav packages.
