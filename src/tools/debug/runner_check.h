// The built-in check of `parity debug reduce` (instead of an external --check command): runs a
// candidate model on several runners with the same feeds, as `parity run --ref --ort` would, and
// fails when any compared pair differs beyond tolerance on any iteration (or a runner errors).
#pragma once

#include <string>
#include <vector>

#include "compare/compare_args.h"
#include "core/status.h"
#include "core/tensor_map.h"
#include "runners/registry.h"

namespace parity::tools::debug {

struct RunnerCheck {
  /// Registered runner names, compared each with the next (at least two).
  std::vector<std::string> runners;
  /// The runners' own options (empty: defaults).
  runners::RunnerOptions runner_options;
  compare::CompareSettings compare;
};

/// Runs the model at `model_path` on every runner with `feeds`. Returns true when it fails; a
/// runner that throws is a failure too (its message goes to `why`).
bool runner_check_fails(const RunnerCheck& check, const std::string& model_path, const std::vector<TensorMap>& feeds,
                        std::string* why = nullptr);

/// Runs the model at `model_path` once on runner `runner` (activate, infer on `feed`): OK when
/// it runs, else the runner's error. Logging is quiet meanwhile unless verbose output was asked for.
Status runs_on(const std::string& runner, const runners::RunnerOptions& runner_options, const std::string& model_path, const TensorMap& feed);

}  // namespace parity::tools::debug
