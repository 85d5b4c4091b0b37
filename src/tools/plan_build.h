// Building an engine plan of the ref runtime at a precision: the one path `parity convert -o X.plan`
// and the navigator's plan-* formats share (int8 calibration or its cache, the planned session,
// the saved plan file).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compare/data_loader.h"
#include "model/model.h"
#include "runtime/session.h"
#include "tools/precision_advice.h"

namespace parity::tools {

struct PlanBuildOptions {
  runtime::ReducedPrecisionConfig precision;  // int8_scales are filled by build_plan when int8 is on
  runtime::TacticOptions tactics;
  /// Optimization profiles (runtime/profiles.h); empty: the model's input shapes.
  std::vector<runtime::OptimizationProfile> profiles;
  /// int8: read when the file exists (no calibration run), else written after calibrating ("": none).
  std::filesystem::path calibration_cache;
  std::string calibration_algorithm = "minmax";  // or "entropy"
  /// int8 without a cache: makes the calibration feeds (called only when calibration runs).
  std::function<std::unique_ptr<compare::FeedSource>()> calibration_feeds;
  /// The CPU facts convert's "cannot pay here" notes are judged by (tools/precision_advice.h);
  /// unset: this CPU's.
  std::optional<PrecisionHardware> hardware;
  /// Threads the built session runs with (not stored in a saved plan: a load chooses again).
  int threads = 1;
  /// ISA cap and kernel switches (recorded in the plan).
  runtime::KernelOptions kernel_options;
};

struct BuiltPlan {
  runtime::Session session;
  double build_seconds = 0;
};

/// int8 scales: from the calibration cache when it exists, else by running the fp32 model over
/// the calibration feeds (and writing the cache when one is named). Logs what it did.
std::map<std::string, float> calibration_scales(const model::Model& model, const std::filesystem::path& base_dir,
                                                const PlanBuildOptions& options);

/// Plans `model` (external data relative to `base_dir`) at the options' precision, calibrating
/// first for int8. Throws parity::Error (build failures, calibration without feeds).
BuiltPlan build_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options);

/// build_plan, then saves the plan to `out` recording `source_model` (the ONNX file's path) as
/// recorded_source_model() writes it.
BuiltPlan build_and_save_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options,
                              const std::filesystem::path& out, const std::string& source_model);

/// How a plan records the model it was built from: the model's path relative to the plan's folder
/// ("m.onnx" beside it, "../onnx/m.onnx"), so the two can move together.
std::string recorded_source_model(const std::filesystem::path& model, const std::filesystem::path& plan);
/// The ONNX model a plan file records, resolved against the plan's folder; an error saying why
/// when the plan records none or the file is gone. Throws for a file that is not a readable plan.
Result<std::filesystem::path> plan_source_model(const std::filesystem::path& plan);

/// "N fp32, M int8": the plan's layers by precision.
std::string layer_precision_summary(const runtime::Session& session);

}  // namespace parity::tools
