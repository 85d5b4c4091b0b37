// `parity debug reduce` as one library call: records the model, cuts candidates, runs the check
// on each (an external command, runners compared, or the user's answer), keeps a replay of the
// verdicts and returns the smallest failing model. The command only parses into these options.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "options/data_loader_args.h"
#include "tools/debug/check_command.h"
#include "tools/debug/reduce.h"
#include "tools/debug/runner_check.h"
#include "tools/report/debug_report.h"

namespace parity::tools::debug {

/// Asked in interactive mode (neither a command nor runners): whether the candidate saved at
/// the given path passed.
using AskPassed = std::function<bool(const std::string& artifact)>;

struct ReduceModelOptions {
  ReduceOptions reduce;
  /// Feeds of the recording (generated, or --load-inputs; input shapes included).
  options::DataLoaderOptions data;
  int64_t iterations = 1;
  /// Fold every constant-computable node first; otherwise only Constant nodes become
  /// initializers, as Polygraphy does.
  bool fold_constants = false;

  /// Exactly one of these decides each candidate.
  std::optional<CheckCommand> command;
  std::optional<RunnerCheck> runners;
  AskPassed ask_passed;

  bool show_output = false;  // log the command's whole output for every check
  std::string iter_artifact = "polygraphy_debug.onnx";
  std::string iter_inputs;  // written when the command mentions {inputs}
  std::string save_replay = "polygraphy_debug_replay.json";
  std::optional<std::string> load_replay;
  std::vector<std::string> artifacts;  // moved into good/ or bad/ of artifacts_dir after each check
  std::string artifacts_dir = "polygraphy_artifacts";
};

struct ReduceModelResult {
  model::Model reduced;                 // the smallest failing candidate (the whole model if none failed)
  std::optional<model::Model> passing;  // the passing candidate closest in size (for --min-good)
  size_t passing_nodes = 0;
  bool any_failed = false;               // some check failed (else nothing was reduced)
  size_t node_count = 0;                 // nodes of the recorded model
  std::vector<std::string> final_nodes;  // labels of the reduced model's nodes
  NodeSet final_indices;
  std::vector<report::ReduceStep> steps;  // every check, in order
  size_t checks = 0, ran = 0;             // checks asked, and those run (not from the replay)
};

/// Reduces `model`. As Polygraphy does, the whole model is assumed to fail and is not checked by
/// itself. Candidates checked by a command that is not given {inputs}, or by the user, keep the
/// model's own inputs (values of cut-away nodes frozen from the first feed); the others take
/// their cut tensors as inputs, fed with every recorded feed.
ReduceModelResult reduce_model(const model::Model& model, const ReduceModelOptions& options);

/// "a, b, c": up to 8 node labels, then "...".
std::string describe_nodes(const std::vector<std::string>& labels);

/// The report's summary of a reduction (model and output paths left for the caller).
report::ReduceSummary reduce_summary(const ReduceModelOptions& options, ReduceModelResult result);

}  // namespace parity::tools::debug
