// One cell of the navigator: a format on a runtime. Its steps (conversion test, correctness,
// performance) run in one forked subprocess that writes each step's result as soon as it is done,
// so a crash or a hang fails the step it interrupted (with the signal or limit as the reason) and
// leaves the other cells alone.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/comparator.h"
#include "core/tensor_map.h"
#include "runners/registry.h"
#include "runners/runner.h"
#include "tools/navigator/status.h"

namespace parity::tools::navigator {

/// "" when runner `runtime` is registered and available now, else why not.
std::string runtime_unavailable(const std::string& runtime);

/// A runner of `runtime` over a model file (activated by the caller), with the runtimes' own
/// options (--ort-threads, ...; empty: their defaults).
std::unique_ptr<runners::Runner> make_runner(const std::string& runtime, const std::filesystem::path& model,
                                             const runners::RunnerOptions& runner_options = {});

/// Per-output tolerances of `actual` (the format's outputs) against `expected` (the source's),
/// sample by sample: atol = max |expected - actual|, rtol = max |expected - actual| / |actual| over
/// the elements where actual is not 0 (a zero reference has no relative error; its difference
/// counts in atol). FAIL with the reason on a missing output, a shape mismatch, NaN or infinity,
/// or an element outside atol + rtol * |actual| when either limit is given.
StepResult compare_outputs(const std::vector<TensorMap>& expected, const std::vector<TensorMap>& actual,
                           std::optional<double> atol, std::optional<double> rtol);

struct CellRequest {
  std::filesystem::path workspace;
  const WorkspaceStatus* status = nullptr;
  std::string format;
  std::string runtime;
  std::vector<std::string> steps;  // of conversion, correctness, performance, in that order
  compare::Isolation isolation;
  runners::RunnerOptions runner_options;  // the runtimes' own options, when a command has them
};

/// Runs the cell's steps in a subprocess. Every asked step gets a result: a step interrupted by a
/// crash is FAIL with the reason, the steps after a failed one are SKIPPED.
std::map<std::string, StepResult> run_cell(const CellRequest& request);

/// Runs the source model on `runtime` over every stored sample (at batch size 1) in a subprocess
/// and writes model_output/<kind>/N.npz. Returns why it could not, or "".
std::string make_source_outputs(const std::filesystem::path& workspace, const std::filesystem::path& source,
                                const std::string& runtime, const WorkspaceStatus& status,
                                const compare::Isolation& isolation, const runners::RunnerOptions& runner_options = {});

}  // namespace parity::tools::navigator
