// `parity run` as one call: a model run on several runners with identical inputs and their
// outputs compared (compare::Comparator), or with `--onnx-outputs mark all` every intermediate
// tensor compared layer by layer (compare::compare_every_layer); saved inputs, outputs, the model
// as the runners load it and an HTML report on the way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_args.h"
#include "compare/comparator.h"
#include "compare/postprocess_args.h"
#include "runners/registry.h"
#include "options/data_loader_args.h"
#include "tools/report/report_args.h"

namespace parity::tools {

/// What run_models runs, compares and writes; each field is one of `parity run`'s options.
struct RunModelsOptions {
  /// The model (ONNX or a parity plan); may be absent when only saved outputs are compared.
  std::optional<std::string> model;
  /// Registered runner names, in the order their flags were given.
  std::vector<std::string> runners;
  /// The runtimes' own options, as runners::RunnerConfig takes them (empty: defaults).
  runners::RunnerOptions runner_options;
  /// Folder of the model's external data, when not the model's own.
  std::optional<std::string> external_data_dir;
  /// Where to save the ONNX model as the runners load it.
  std::optional<std::string> save_onnx;
  /// --onnx-outputs (`mark all` compares every layer) and --onnx-exclude-outputs.
  std::vector<std::string> outputs, exclude_outputs;
  /// With `mark all`: bytes of peer outputs held at once (LayerwiseOptions::window_bytes).
  std::optional<int64_t> window_bytes;
  /// Feeds and iterations.
  options::DataLoaderOptions data;
  options::IterationOptions runs;
  /// Comparison function, tolerances, validation.
  compare::CompareSettings compare;
  /// Child processes per runner; crash-prone runners (RunnerInfo::isolate_by_default) are added
  /// unless isolate_crash_prone is false.
  compare::Isolation isolation;
  bool isolate_crash_prone = true;
  /// Top-K post-processing before comparing.
  compare::PostprocessSettings postprocess;
  /// RunResults files or ONNX test-data folders compared as well (golden runs with `mark all`).
  std::vector<std::string> saved_outputs;
  /// Where to save the inputs used and the runners' outputs.
  std::optional<std::string> save_inputs, save_outputs;
  /// Compare every runner with the first instead of each with the next.
  bool compare_to_first = false;
  /// The HTML report, and the command line it quotes.
  report::ReportOptions report;
  std::string command_line;
};

/// Runs and compares as `parity run` does. Returns whether every comparison (and validation)
/// passed; throws parity::Error for bad settings (a name that exists nowhere, output sets that
/// differ, option combinations that cannot work).
bool run_models(const RunModelsOptions& options);

}  // namespace parity::tools
