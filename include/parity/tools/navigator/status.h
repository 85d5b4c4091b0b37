// The navigator workspace's record (status.yaml): configuration, environment, the model's inputs
// and outputs, and per format and runtime the outcome of every step with its measurements
// (Triton Model Navigator's status file). Read and written with yaml-cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parity::tools::navigator {

/// Version of the status.yaml layout; a package with a newer one is refused.
inline constexpr int kStatusFormatVersion = 1;

/// Outcome of a step: not run yet, passed, failed, or skipped.
enum class StepState { kNotRun, kOk, kFail, kSkipped };
/** \var StepState::kNotRun
    The step has not run. */
/** \var StepState::kOk
    The step passed. */
/** \var StepState::kFail
    The step failed (StepResult::reason says why). */
/** \var StepState::kSkipped
    The step was skipped (StepResult::reason says why). */
const char* step_state_name(StepState state);  ///< "NOT_RUN", "OK", "FAIL", "SKIPPED"
/// Parses a step_state_name(); throws kInvalidModel for any other name.
StepState step_state_from_name(const std::string& name);

/// Measured tolerance of one output over all correctness samples.
struct OutputTolerance {
  std::string output;  ///< Output name.
  double atol = 0;  ///< max |source - format|
  double rtol = 0;  ///< max |source - format| / |format| over elements whose |format| > 0
};

/// Latency and throughput at one batch size.
struct BatchPerformance {
  int64_t batch_size = 1;  ///< Batch size the figures were measured at.
  /// Median latency in milliseconds.
  double p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, avg_ms = 0;
  /** \var BatchPerformance::p90_ms
      90th percentile latency in milliseconds. */
  /** \var BatchPerformance::p95_ms
      95th percentile latency in milliseconds. */
  /** \var BatchPerformance::p99_ms
      99th percentile latency in milliseconds. */
  /** \var BatchPerformance::avg_ms
      Mean latency in milliseconds. */
  double throughput = 0;      ///< samples per second (batch size x inferences per second)
  int64_t inferences = 0;     ///< inferences behind the figures (the last windows)
  int trials = 0;             ///< windows run
  bool stable = false;        ///< the last windows agreed within the stability percentage
};

/// Outcome of one step; the measurement fields are filled by the steps that make them.
struct StepResult {
  StepState state = StepState::kNotRun;  ///< Whether the step ran and how it ended.
  std::string reason;   ///< why it failed or was skipped
  double seconds = 0;   ///< wall time of the step
  std::vector<OutputTolerance> tolerances;     ///< correctness
  std::vector<BatchPerformance> performance;   ///< performance
  std::optional<int64_t> saturated_at;         ///< performance: batch size where throughput stopped growing
  bool ok() const { return state == StepState::kOk; }  ///< True when the step passed.
};

/// Cell steps, in the order they run. "verification" is the user's (set_verified).
inline const std::vector<std::string>& cell_steps() {
  static const std::vector<std::string> steps{"conversion", "correctness", "performance", "verification"};
  return steps;
}

/// One format x runtime.
struct RuntimeStatus {
  std::string runtime;  ///< runner name: ref, ort, opencv, torch, an extension's
  std::map<std::string, StepResult> steps;  ///< Step name (cell_steps()) -> its result.
  StepResult& step(const std::string& name) { return steps[name]; }  ///< The named step's result, created (not run) when absent.
  const StepResult* find_step(const std::string& name) const;  ///< The named step's result, or nullptr when absent.
  /// conversion and correctness passed (performance may be missing or unstable).
  bool passed() const;
  bool verified() const;  ///< The user marked the cell verified (the "verification" step passed).
};

/// One format of a workspace: its model file and each step's result.
struct FormatStatus {
  std::string format;      ///< onnx, onnx-sanitized, onnx-fp16, plan-fp32, ..., torchscript
  std::string model_path;  ///< relative to the workspace: "onnx-fp16/model.onnx"
  StepResult export_step;  ///< producing the model file
  std::vector<RuntimeStatus> runtimes;  ///< One entry per runtime the format ran on.
  RuntimeStatus* find_runtime(const std::string& runtime);  ///< The runtime's entry, or nullptr.
  const RuntimeStatus* find_runtime(const std::string& runtime) const;  ///< The runtime's entry, or nullptr.
};

/// One input or output of the model: name, dtype and shape (-1 = dynamic), as the model file says.
struct TensorSpec {
  std::string name;  ///< Tensor name.
  std::string dtype;  ///< parity's dtype name
  std::vector<int64_t> shape;  ///< Dimensions; -1 for a dynamic one.
  bool unknown_rank = false;  ///< True when not even the rank is known.
};

/// Range of one dynamic axis over the samples (optimization profile of an input).
struct AxisProfile {
  std::string input;  ///< Input name.
  int64_t axis = 0;  ///< The dynamic axis.
  /// Smallest axis size over the samples (1 for the batch axis).
  int64_t min = 0, opt = 0, max = 0;
  /** \var AxisProfile::opt
      Typical axis size: the first sample's (1 for the batch axis). */
  /** \var AxisProfile::max
      Largest axis size over the samples (max_batch_size for the batch axis). */
};

/// The configuration of the run, as given (and defaulted).
struct NavigatorConfig {
  std::string source;        ///< file name of the source model inside the workspace's source folder
  std::string source_kind;   ///< "onnx" or "torchscript"
  /// A TorchScript file of the same model as an ONNX source (traced or scripted from the same module):
  /// the torchscript format is a copy of it. Empty when the source itself is TorchScript or there is none.
  std::string torchscript_copy;
  std::vector<std::string> target_formats;  ///< Formats to produce and test (the source's default formats when empty).
  std::vector<std::string> runtimes;  ///< asked for; empty = every available
  std::optional<int64_t> batch_dim;   ///< nullopt: the model has no batch axis
  int64_t max_batch_size = 1;  ///< Largest batch size profiled (batch sizes 1, 2, 4, ... up to it).
  int64_t sample_count = 10;  ///< Samples the correctness step uses, drawn (seeded) from the data loader's.
  int64_t seed = 1;  ///< Seed of the sample draw.
  /// Absolute tolerance the correctness step judges by (nullopt: measured only).
  std::optional<double> atol, rtol;
  /** \var NavigatorConfig::rtol
      Relative tolerance the correctness step judges by (nullopt: measured only). */
  std::map<std::string, std::vector<int64_t>> dynamic_axes;  ///< --dynamic-axes (input -> axes)
  // Profiling.
  std::string measurement_mode = "time_windows";  ///< or "count_windows"
  int64_t window_ms = 500;  ///< Length of a time window in milliseconds.
  int64_t window_count = 50;  ///< Inferences per count window.
  double stability_percentage = 10;  ///< Windows agree when within this percentage of each other.
  int max_trials = 10;  ///< Most windows run per batch size before giving up on stability.
  double throughput_cutoff = 0.05;  ///< a batch size adding less than this (relative) saturates
  bool run_profiling = true;  ///< false skips the performance step (--no-profiling).
  double cell_timeout_s = 0;        ///< 0: none
};

/// A workspace's status.yaml: every format and runtime with its results.
struct WorkspaceStatus {
  int format_version = kStatusFormatVersion;  ///< Layout version of the file (kStatusFormatVersion when written).
  std::string parity_version;  ///< parity version that wrote it.
  std::map<std::string, std::string> environment;  ///< os, machine, cpu_count and each runner's version (runner_NAME).
  NavigatorConfig config;  ///< The run's configuration.
  /// The model's inputs, as the source model declares them.
  std::vector<TensorSpec> inputs, outputs;
  /** \var WorkspaceStatus::outputs
      The model's outputs, as the source model declares them. */
  std::vector<AxisProfile> profiles;  ///< Range of each dynamic axis over the samples.
  std::map<std::string, int64_t> sample_counts;  ///< conversion/correctness/profiling -> count
  std::string source_outputs_failure;            ///< why the source produced no reference outputs
  std::vector<FormatStatus> formats;  ///< Every format with its results.

  FormatStatus* find_format(const std::string& format);  ///< The format's entry, or nullptr.
  const FormatStatus* find_format(const std::string& format) const;  ///< The format's entry, or nullptr.
};

/// status.yaml text of `status`.
std::string status_to_yaml(const WorkspaceStatus& status);
/// Parses status.yaml text; throws kInvalidModel naming `what` on malformed or newer files.
WorkspaceStatus status_from_yaml(const std::string& text, const std::string& what);
/// Writes `workspace`/status.yaml.
void write_status(const std::filesystem::path& workspace, const WorkspaceStatus& status);
/// Reads `workspace`/status.yaml; kNotFound when it is not a workspace, kInvalidModel when malformed.
WorkspaceStatus read_status(const std::filesystem::path& workspace);

/// Reads a file of the workspace or of a cell's scratch folder. Not noted as an input of the command
/// (formats::read_binary_file would), since the navigator rewrites its own files.
std::string read_workspace_file(const std::filesystem::path& path);

/// A step result as YAML text (the cell subprocesses hand results back this way).
std::string step_to_yaml(const StepResult& step);
/// Parses step_to_yaml()'s text.
StepResult step_from_yaml(const std::string& text);

}  // namespace parity::tools::navigator
