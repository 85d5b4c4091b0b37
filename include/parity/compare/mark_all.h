/// \file
/// Polygraphy's `--onnx-outputs mark all` as one call (compare::compare_every_layer): every
/// intermediate tensor of a model compared layer by layer, feed by feed, between parity's ref
/// runner and one peer, with stored golden runs, or summarized for one runner alone; optionally
/// streamed into a RunResults file as Polygraphy's `mark all --save-outputs` stores a golden run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/data_loader.h"
#include "compare/layerwise.h"
#include "core/tensor_map.h"
#include "runners/registry.h"

namespace parity::compare {

/// One layer-by-layer comparison: a feed against a live peer runner or a stored golden run.
struct LayerwiseComparison {
  /// Every layer's result.
  LayerwiseReport report;
  /// The feed's index.
  size_t iteration = 0;
  /// The golden file the peer was read from; empty for a live peer.
  std::string golden_file;
};

/// What compare_every_layer runs, compares and keeps.
struct MarkAllOptions {
  /// Registered runner names, in the order given: one runner alone, or "ref" and at most one other
  /// (see streams_every_layer).
  std::vector<std::string> runners;
  /// Tolerances, windowing, excluded tensors and value checks.
  LayerwiseOptions layerwise;
  /// RunResults files of earlier `mark all` runs to compare with; each is indexed and its tensors
  /// read one at a time.
  std::vector<std::string> golden_files;
  /// When set, every layer's tensors are streamed into this RunResults file.
  std::optional<std::string> save_outputs;
  /// Stop after the first feed that fails.
  bool fail_fast = false;
  /// Per option (its flag, for the error), tensor names its per-tensor settings name: each must be
  /// a tensor of the model.
  std::vector<std::pair<std::string, std::vector<std::string>>> named_tensors;
  /// Sets glibc's mmap threshold process-wide, so that every tensor of 1 MiB or more has its own
  /// mapping and goes back to the system when freed (the heap would otherwise keep freed
  /// activations pinned). For a process that does nothing else afterwards, as `parity run`.
  bool map_large_tensors = false;
  /// The runtimes' own options, as runners::RunnerConfig takes them (empty: defaults).
  runners::RunnerOptions runner_options;
};

/// What compare_every_layer found.
struct MarkAllResult {
  /// One entry per feed and peer (live or stored), in order.
  std::vector<LayerwiseComparison> comparisons;
  /// The feeds used, in iteration order.
  std::vector<TensorMap> feeds;
  /// Every comparison passed.
  bool passed = true;
};

/// Whether compare_every_layer can stream `runners` layer by layer: one runner alone, or "ref" and
/// one other. Other sets (the same runner twice) need every tensor as an output of every runner.
bool streams_every_layer(const std::vector<std::string>& runners);

/// Compares (or with one runner alone, summarizes) every intermediate tensor of `model_path` on
/// each feed of `feeds`, which is told the probed runner's input metadata first. Logs each
/// comparison's table. Throws kInvalidArgument for a runner set it cannot stream, a named tensor
/// the model lacks, a golden path that is a folder, or a golden file with fewer iterations than
/// the feeds.
MarkAllResult compare_every_layer(const std::string& model_path, FeedSource& feeds, const MarkAllOptions& options);

}  // namespace parity::compare
