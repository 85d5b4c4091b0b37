// Polygraphy's result containers: what runners produce, what `run --save-outputs` writes and
// what the comparator consumes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_map.h"

namespace parity {

/// Outputs of one inference (Polygraphy's IterationResult).
struct IterationResult {
  TensorMap outputs;  ///< Output tensors by name.
  std::optional<double> runtime;  ///< seconds; null when unknown
  std::string runner_name;  ///< Name of the runner that produced it.
};

/// Per-runner iteration results in run order (Polygraphy's RunResults). Runner names may repeat,
/// so this is a list of pairs, not a map.
struct RunResults {
  std::vector<std::pair<std::string, std::vector<IterationResult>>> runs;  ///< (runner name, iterations) in run order.

  /// Appends a runner's iterations.
  void add(std::string runner_name, std::vector<IterationResult> iterations) {
    runs.emplace_back(std::move(runner_name), std::move(iterations));
  }
  size_t size() const { return runs.size(); }  ///< Number of runs (not of distinct runner names).
  bool empty() const { return runs.empty(); }  ///< True when no runner has results.
  /// Iterations of the first runner with this name, or nullptr.
  const std::vector<IterationResult>* find(const std::string& runner_name) const {
    for (const auto& run : runs)
      if (run.first == runner_name) return &run.second;
    return nullptr;
  }
};

}  // namespace parity
