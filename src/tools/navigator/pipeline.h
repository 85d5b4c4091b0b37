// The navigator's pipeline (`parity optimize`): preprocessing (model inputs and outputs, dynamic
// axes, samples), the source's reference outputs, then per format the export and per runtime the
// conversion test, correctness and performance, each cell in its own subprocess. Everything lands
// in the workspace: status.yaml, navigator.log, model_input/, model_output/, one folder per format
// with config.yaml, the model and reproduce_<step>.sh scripts.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compare/comparator.h"
#include "compare/data_loader.h"
#include "runners/registry.h"
#include "tools/navigator/status.h"

namespace parity::tools::navigator {

/// navigator.log, echoed to stderr as progress lines (unless quiet).
class NavigatorLog {
 public:
  NavigatorLog(const std::filesystem::path& path, bool quiet);
  void line(const std::string& text);

 private:
  std::ofstream file_;
  bool quiet_;
};

struct OptimizeRequest {
  std::filesystem::path source;     // ONNX model or TorchScript .pt
  std::filesystem::path workspace;
  bool override_workspace = false;  // replace an existing workspace
  NavigatorConfig config;           // formats, runtimes, batch axis, tolerances, profiler
  /// Where samples come from: told the model's inputs, then asked for feeds 0, 1, ... until it
  /// returns nullopt or `feed_count` feeds were taken.
  std::unique_ptr<compare::FeedSource> data;
  int64_t feed_count = 1;
  /// Inputs of a TorchScript source (its file does not record them); ignored for ONNX.
  TensorMetadata torchscript_inputs;
  compare::Isolation isolation{.enabled = true};
  bool quiet = false;
  /// The runtimes' own options (--ort-threads, --torch-threads, ...) for every runner made; these
  /// are not stored in the workspace, so a re-test uses the runtimes' defaults.
  runners::RunnerOptions runner_options;
};

/// Runs the whole pipeline and returns what it wrote to status.yaml. Throws on bad input (an
/// existing workspace without override, an unreadable source, a data loader error); failures of
/// formats and cells are recorded, not thrown.
WorkspaceStatus optimize(OptimizeRequest& request);

/// Which cells and steps run_cells re-runs (empty sets = all).
struct CellSelection {
  std::set<std::string> formats;
  std::set<std::string> runtimes;
  std::set<std::string> steps;  // export, conversion, correctness, performance
};

/// Re-runs the selected steps of an existing workspace (package load, profile and retest, the
/// reproduce scripts) and records them in `status` and status.yaml. `source` is needed to export
/// the onnx/torchscript formats again; empty keeps the models already there.
void run_cells(const std::filesystem::path& workspace, WorkspaceStatus& status, const CellSelection& selection,
               const std::filesystem::path& source, const compare::Isolation& isolation, NavigatorLog& log,
               const runners::RunnerOptions& runner_options = {});

/// Sets or clears the verification step of one format x runtime (the user's verdict). Throws
/// kNotFound for a cell that does not exist, kInvalidArgument for one whose tests did not pass.
void set_verified(WorkspaceStatus& status, const std::string& format, const std::string& runtime, bool verified = true);

/// The text of <format>/config.yaml.
std::string format_config_yaml(const WorkspaceStatus& status, const std::string& format);

}  // namespace parity::tools::navigator
