// ONNX Runtime runner (`--ort`): runs an ONNX model with the ORT C API through parity's own binding
// (ort_api.h), loading libonnxruntime at activation time.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "options/group.h"
#include "runners/runner.h"

namespace parity::runners::ort {

/// Session settings; the CLI fills them from the "ONNX Runtime" option group.
struct OrtRunnerOptions {
  std::string library;                      // --ort-library; empty = default search
  int intra_op_threads = 0;                 // --ort-threads; 0 = ORT's default
  int inter_op_threads = 0;                 // --ort-inter-threads; 0 = ORT's default
  std::string optimization_level = "all";   // --ort-opt-level: disable, basic, extended, all
  std::vector<std::string> providers;       // --ort-providers, in priority order; empty = CPU
  /// --ort-config KEY=VALUE: session configuration entries (onnxruntime_session_options_config_keys.h).
  std::vector<std::pair<std::string, std::string>> config_entries;
  /// --ort-custom-op-library: ONNX Runtime custom-op libraries (exporting RegisterCustomOps) to load
  /// into the session, e.g. for a model with an extension's custom-domain ops.
  std::vector<std::string> custom_op_libraries;
};

/// The "ONNX Runtime" option group (--ort-threads, --ort-config, ...) the runner registers.
options::Group<OrtRunnerOptions> ort_option_group();

/// Creates an (inactive) ORT runner for an ONNX model file.
std::unique_ptr<Runner> make_ort_runner(std::string model_path, OrtRunnerOptions options);

/// Maps user spellings ("cpu", "XNNPACK", "CUDAExecutionProvider") to provider names of the build;
/// throws kUnavailable naming the available providers when one is missing.
std::vector<std::string> resolve_providers(const std::vector<std::string>& requested,
                                           const std::vector<std::string>& available);

}  // namespace parity::runners::ort
