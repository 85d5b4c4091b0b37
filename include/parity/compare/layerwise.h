// Layer-by-layer comparison without keeping every intermediate tensor ("--onnx-outputs mark all"
// with bounded memory). The intermediates are split into windows (consecutive in execution order,
// sized to a byte budget). For each window the peer runtime runs a model cut down to the nodes the
// window needs, with the window's tensors as outputs, and is released; then the reference runner
// (parity's ref executor) runs up to the window's last tensor and compares each value through its
// per-tensor hook as it is produced, keeping only statistics. The two runtimes never hold their
// working memory at the same time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runners/registry.h"
#include "compare/compare_func.h"
#include "core/formats/run_results_stream.h"
#include "core/tensor_map.h"

namespace parity::compare {

/// How compare_layerwise marks, windows and compares every intermediate tensor.
struct LayerwiseOptions {
  SimpleCompareOptions compare;  ///< tolerances per tensor name, error stat
  /// Bytes of peer outputs held at once; the window of marked tensors adapts to stay near it.
  int64_t window_bytes = int64_t{64} << 20;
  /// Tensors to leave out (--onnx-exclude-outputs).
  std::set<std::string> exclude;
  /// Count NaN/Inf in every reference tensor; a tensor holding one fails the run (--validate).
  bool validate = false;
  /// Count float32/float64 values outside float16's range in every reference tensor: above 65504
  /// in magnitude fails the run, nonzero below 2^-24 is reported (--check-fp16-range).
  bool check_fp16_range = false;
  /// Whether the reference runner is the first of the pair (out0) or the second (out1).
  bool reference_first = true;
  /// Called with every tensor as it is produced (`--save-outputs` streams them to a file): the
  /// reference's in execution order, the peer's window by window. Either may be empty.
  std::function<void(const std::string& name, const Tensor&)> on_reference_tensor, on_peer_tensor;
  /** \var LayerwiseOptions::on_peer_tensor
      As on_reference_tensor, for the peer's tensors (window by window). */
};

/// One iteration of one runner in a stored RunResults file (Polygraphy's `mark all` golden run).
struct GoldenRun {
  const RunResultsIndex* file = nullptr;  ///< The indexed file (not owned; must outlive the comparison).
  size_t run = 0;  ///< Index of the runner's run in the file.
  size_t iteration = 0;  ///< Index of the iteration within that run.
};

/// The comparison of one intermediate tensor across the runners.
struct LayerResult {
  std::string name;     ///< tensor name
  std::string node;     ///< producing node's name
  std::string op_type;  ///< producing node's op type
  std::vector<std::string> inputs;  ///< producing node's input tensors (empty names dropped)
  DType dtype = DType::kUndefined;  ///< Element type of the reference tensor.
  Shape shape;  ///< Shape of the reference tensor.
  bool compared = false;  ///< false when the peer did not produce it or it is not a tensor
  bool passed = true;  ///< True unless the compared values exceeded the tolerances.
  /// Largest absolute difference.
  double max_absdiff = 0, max_reldiff = 0, mean_absdiff = 0, mean_reldiff = 0;
  /** \var LayerResult::max_reldiff
      Largest relative difference. */
  /** \var LayerResult::mean_absdiff
      Mean absolute difference. */
  /** \var LayerResult::mean_reldiff
      Mean relative difference. */
  std::string note;  ///< why not compared
  // The reference tensor's own values (with LayerwiseOptions::validate / check_fp16_range).
  /// NaN elements of the reference tensor.
  int64_t nan_count = 0, inf_count = 0;
  /** \var LayerResult::inf_count
      Infinite elements of the reference tensor. */
  int64_t fp16_overflow = 0;   ///< finite values with magnitude above 65504
  int64_t fp16_underflow = 0;  ///< nonzero values with magnitude below 2^-24
  double max_magnitude = 0;    ///< largest finite magnitude
};

/// Every intermediate tensor's result, in model order, and the first that mismatched.
struct LayerwiseReport {
  /// Name of the reference runner.
  std::string reference_name, peer_name;
  /** \var LayerwiseReport::peer_name
      Name of the peer runner (empty for reference statistics only). */
  std::vector<LayerResult> layers;     ///< in execution order
  std::optional<size_t> first_failure;  ///< index into layers
  /// The first failing layer whose producing node's inputs all passed (or are model inputs and
  /// weights, which both sides share): where the divergence starts rather than where it shows.
  std::optional<size_t> divergence_start;
  int64_t peak_rss_bytes = 0;           ///< process peak resident memory after the run
  int64_t total_tensor_bytes = 0;       ///< all compared tensors of both runners together
  int64_t largest_tensor_bytes = 0;  ///< Largest single compared tensor in bytes.
  int peer_runs = 0;  ///< Peer inference runs made (one per window of marked tensors).
  /// Most bytes of peer outputs held at once (one window; a single tensor above the budget is a
  /// window of its own).
  int64_t peak_peer_bytes_held = 0;
  /// Reference values compared while a peer session was alive; 0 by design (the runtimes take
  /// turns), kept so tests can check it.
  int64_t reference_steps_with_peer_alive = 0;
  /// With a golden file: its size (the stored tensors are read one at a time, never all held).
  int64_t golden_file_bytes = 0;
  /// With validate: the first layer holding a NaN or Inf.
  std::optional<size_t> first_invalid;
  /// With check_fp16_range: layers with values above float16's range.
  size_t fp16_overflow_layers = 0;
  bool passed() const { return !first_failure.has_value() && !first_invalid.has_value() && fp16_overflow_layers == 0; }  ///< True when no layer mismatched, held NaN/Inf (with validate) or overflowed float16 (with check_fp16_range).
};

/// Compares every intermediate tensor of `model_path` between parity's ref runner and the
/// registered runner `peer` (e.g. "ort"; empty for reference statistics only) on one feed.
/// `args` carries both runtimes' CLI options (may be null). Logs a per-layer table.
/// Peak memory stays near one runtime's working set plus one window only when freed activations go
/// back to the system: a program that cares sets glibc's mmap threshold first
/// (compare_every_layer with MarkAllOptions::map_large_tensors, as `parity run` asks); otherwise
/// the library does not change process-wide allocator settings.
LayerwiseReport compare_layerwise(const std::string& model_path, const std::string& peer,
                                  const runners::RunnerOptions& runner_options, const TensorMap& feed, const LayerwiseOptions& options);

/// Compares every intermediate tensor of `model_path`, as parity's ref runner produces it on `feed`,
/// with the tensor of the same name stored in `golden`, reading one stored tensor at a time (the
/// file is never held). Throws kInvalidArgument when the file holds tensors the model does not
/// produce (a golden run of another model). Logs the same table and first divergence as
/// compare_layerwise; peak_peer_bytes_held is the largest stored tensor.
LayerwiseReport compare_layerwise_golden(const std::string& model_path, const runners::RunnerOptions& runner_options, const TensorMap& feed,
                                         const GoldenRun& golden, const LayerwiseOptions& options);

/// The layer divergence_start names (see LayerwiseReport), from the layers and their inputs.
std::optional<size_t> find_divergence_start(const LayerwiseReport& report);

/// Every intermediate tensor of `model_path` as the registered runner `runner` (any but "ref", e.g.
/// "ort" alone) produces it on `feed`: window by window, each a model cut down to the window's
/// tensors that the runner runs and releases, so about one window of tensors is held at once
/// (window_bytes). Each tensor goes to options.on_peer_tensor, then is summarized (mean, largest
/// magnitude) or, with `golden`, compared with the stored tensor of the same name; the report's
/// reference is the runner. Logs the same table as compare_layerwise.
LayerwiseReport runner_layerwise(const std::string& model_path, const std::string& runner, const runners::RunnerOptions& runner_options,
                                 const TensorMap& feed, const LayerwiseOptions& options,
                                 const GoldenRun* golden = nullptr);

/// Current peak resident set size of this process, in bytes (getrusage).
int64_t peak_rss_bytes();

}  // namespace parity::compare
