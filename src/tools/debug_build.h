// `parity debug build` (Polygraphy's): builds the plan again and again with different tactic
// choices (each node takes a seeded random variant among those that accept it), checks each
// build's outputs against the fp32 ONNX model, and sorts the builds' tactics files into good/ and
// bad/ for `parity inspect diff-tactics --dir`.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_map.h"
#include "runtime/session.h"
#include "tools/plan_build.h"

#include "model/onnx_fwd.h"

namespace parity::tools {

struct DebugBuildOptions {
  int builds = 5;                    // --until
  double atol = 1e-5, rtol = 1e-5;   // the check against the fp32 ONNX model
  std::filesystem::path artifacts;   // good/ and bad/ are made here
  /// When set, decides whether a build is good instead of comparing its outputs with the reference
  /// kernels' (`--check CMD`: tools/debug/plan_check.h).
  std::function<bool(const runtime::Session& plan)> judge;
  /// The plan each build makes, as `convert -o X.plan` builds it (fp16, int8, profiles, ...), so
  /// the builds vary the tactics of that plan; int8 is calibrated once for all builds. nullopt:
  /// the fp32 plan of the default session options.
  std::optional<PlanBuildOptions> plan;
};

struct DebugBuildResult {
  int good = 0, bad = 0;
};

DebugBuildResult debug_build(const onnx::ModelProto& model, const std::string& base_dir,
                             const std::vector<TensorMap>& feeds, const DebugBuildOptions& options,
                             const std::function<void(const std::string&)>& log = {});

}  // namespace parity::tools
