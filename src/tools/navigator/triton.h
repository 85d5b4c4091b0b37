// Deploying a package's best verified format to a Triton Inference Server model repository:
// NAME/1/model.onnx (or model.pt), NAME/config.pbtxt (backend, max_batch_size, dynamic batching,
// inputs/outputs without the batch axis, instance groups, warm-up from the profiling sample) and
// NAME/warmup/<input> (the raw warm-up data).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tools/navigator/package.h"

namespace parity::tools::navigator {

struct TritonOptions {
  std::string name;                  // model name in the repository
  Strategy strategy = Strategy::kMinLatency;
  std::optional<double> latency_budget_ms;  // for kMaxThroughputWithinLatency
  int instance_count = 1;
  int64_t max_queue_delay_us = 100;
  bool override = false;             // replace an existing NAME folder
};

/// What was deployed.
struct TritonDeployment {
  std::filesystem::path model_dir;  // REPOSITORY/NAME
  RuntimeChoice choice;
  std::string config_text;
};

/// Triton's data type name for a parity dtype name ("float32" -> "TYPE_FP32"); throws kUnsupported.
std::string triton_data_type(const std::string& dtype);

/// The config.pbtxt text for `format` of the package (no files touched).
std::string triton_config(const WorkspaceStatus& status, const std::string& format, const std::string& name,
                          const TritonOptions& options);

/// Picks the best verified format that Triton can serve (ONNX formats on the onnxruntime backend,
/// TorchScript on pytorch) and writes it into the repository. Throws kNotFound when no verified
/// deployable format exists, kInvalidArgument when NAME exists without override.
TritonDeployment deploy_to_triton(const PackageDescriptor& package, const std::filesystem::path& repository,
                                  const TritonOptions& options);

}  // namespace parity::tools::navigator
