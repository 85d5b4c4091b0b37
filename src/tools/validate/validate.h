// `parity validate` as a library: runs a model on a reference runner and candidate runners over a
// whole dataset, one sample at a time, and gathers the comparison statistics, accuracy against
// labels and the worst samples into a ValidationState that shards and ranks merge exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_func.h"
#include "runners/registry.h"
#include "tools/validate/collective.h"
#include "tools/validate/dataset.h"
#include "tools/validate/state.h"

namespace parity::tools {

/// Shard `index` of `count`: the contiguous samples [index*n/count, (index+1)*n/count).
struct Shard {
  int64_t index = 0, count = 1;
};
/// The samples of a shard of a dataset of `samples`.
std::pair<int64_t, int64_t> shard_range(int64_t samples, Shard shard);

struct ValidateConfig {
  std::string model_path;
  /// Runners by registry name ("ref", "ort"); each one other than the reference is compared with it.
  std::vector<std::string> runners;
  /// The runner the others are compared with (default: the first of `runners`).
  std::optional<std::string> reference;
  /// A plan file (parity convert -o X.plan) validated as one more candidate, named `plan_name`, on
  /// the ref runtime.
  std::optional<std::string> plan_path;
  std::string plan_name = "plan-file";
  /// How the summary names the plan (default: plan_path), e.g. "model.nav:plan-int8".
  std::optional<std::string> plan_label;
  /// Reference outputs stored per sample instead of a reference runner: a folder
  /// (read_reference_outputs) or "dataset" (the dataset's own, e.g. ONNX test data). The reference
  /// is then named "stored".
  std::optional<std::string> reference_outputs;
  /// The model's outputs (for a folder of .npy reference outputs).
  TensorMetadata model_outputs;
  /// Options the runner factories read (--ort-threads, ...); empty: defaults.
  runners::RunnerOptions runner_options;
  compare::SimpleCompareOptions compare;
  /// Top-k agreement (and top-k accuracy with labels) over each output's last axis; 0 = off.
  int64_t top_k = 0;
  /// One label per sample, in dataset order, and where they come from (for errors).
  std::optional<std::vector<int64_t>> labels;
  std::string labels_path;
  /// The output holding class scores for accuracy (default: the reference's first output).
  std::optional<std::string> label_output;
  size_t worst_count = 10;
  /// Stop at the first sample that fails the tolerances (the summary is then incomplete).
  bool fail_fast = false;
  /// Samples that cannot be read or fed are counted and listed instead of failing the run.
  bool skip_bad_samples = false;
  Shard shard;
  /// What earlier runs did (--resume): its samples are not run again.
  std::optional<validation::ValidationState> resume;
  /// Called with the local state every `checkpoint_every` samples (0: never).
  std::function<void(const validation::ValidationState&)> checkpoint;
  int64_t checkpoint_every = 0;
};

struct ValidateResult {
  /// On rank 0 (or without ranks): the whole run's state; on other ranks, their own share's.
  validation::ValidationState state;
  bool root = true;
  int ranks = 1;
  double wall_seconds = 0;
};

/// Validates the config's shard of `dataset` (with `collective`, this rank's share of it, gathered
/// on rank 0). Bad samples throw parity::Error naming the sample's file unless skipped; a label
/// list shorter than the dataset throws kInvalidArgument naming the label file.
ValidateResult validate(const ValidateConfig& config, const validation::DatasetReader& dataset,
                        validation::Collective* collective = nullptr);

}  // namespace parity::tools
