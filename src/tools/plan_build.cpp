#include "tools/plan_build.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/logger.h"

#include <onnx/onnx_pb.h>

#include "core/status.h"
#include "runtime/plan/plan_file.h"
#include "runtime/reduced_precision.h"
#include "runtime/subgraph.h"
#include "tools/calibration.h"
#include "tools/precision_advice.h"
#include "tools/qdq.h"

namespace parity::tools {

namespace {

/// Bytes of the model's weights: its initializers and Constant nodes' tensors, as their dtype
/// stores them (from the dims: external data is not read).
uint64_t model_weight_bytes(const onnx::ModelProto& model) {
  auto bytes = [](const onnx::TensorProto& t) {
    uint64_t n = 1;
    for (int64_t d : t.dims()) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    return n * dtype_size(static_cast<DType>(t.data_type()));
  };
  uint64_t total = 0;
  for (const auto& t : model.graph().initializer()) total += bytes(t);
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Constant")
      for (const auto& a : n.attribute())
        if (a.has_t()) total += bytes(a.t());
  return total;
}

/// How messages name a model: its file name, "model" for one built in memory.
std::string model_name(const model::Model& model) {
  return model.path().empty() ? "model" : model.path().filename().string();
}

}  // namespace

std::map<std::string, float> calibration_scales(const model::Model& model, const std::filesystem::path& base_dir,
                                                const PlanBuildOptions& options) {
  const auto& cache = options.calibration_cache;
  if (!cache.empty() && std::filesystem::exists(cache)) {
    CalibrationTable table = read_calibration_cache_for(cache, model.proto(), model_name(model));
    logger().info("int8: ", table.scales.size(), " tensor ranges from calibration cache ", cache.string(), " (",
                  table.algorithm, ")");
    if (table.algorithm != options.calibration_algorithm)
      logger().warning("calibration cache ", cache.string(), " was made by the ", table.algorithm,
                       " calibrator, not ", options.calibration_algorithm, "; using it (delete it to recalibrate)");
    return table.scales;
  }
  PARITY_CHECK(static_cast<bool>(options.calibration_feeds), kInvalidArgument,
               "an int8 plan needs calibration data or a calibration cache");
  runtime::Session fp32 = runtime::Session::create(model.proto(), {}, base_dir).value();
  std::unique_ptr<compare::FeedSource> feeds = options.calibration_feeds();
  const std::string& algorithm = options.calibration_algorithm;
  CalibrationTable table = algorithm == "entropy" ? calibrate_entropy(fp32, *feeds) : calibrate_min_max(fp32, *feeds);
  logger().info("int8: calibrated ", table.scales.size(), " tensor ranges over ", table.batches, " batch(es) (",
                algorithm, ")");
  if (!cache.empty()) {
    table.model_fingerprint = calibration_fingerprint(model.proto());
    table.model_name = model_name(model);
    write_calibration_cache(cache, table);
    logger().info("Saved calibration cache to: ", cache.string());
  }
  return table.scales;
}

BuiltPlan build_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options) {
  // An explicitly quantized model brings its own scales: its int8 layers use them, not a calibration.
  std::optional<model::Model> imported;
  if (options.precision.int8 && has_qdq_nodes(model)) {
    check_qdq_scales(model, model_name(model));
    imported = model;
    if (std::optional<QdqImport> qdq = import_qdq(*imported)) {
      logger().info("int8: ", qdq->scales.size(), " tensor ranges from the model's QuantizeLinear nodes (",
                    qdq->activation_pairs, " QDQ pairs, ", qdq->weights, " int8 constants), no calibration");
      options.precision.int8_scales = std::move(qdq->scales);
    } else {
      imported.reset();
      logger().info("int8: the model's QDQ nodes are not all symmetric int8; they run as they are, and the "
                    "other layers are calibrated");
    }
  }
  const model::Model& planned = imported ? *imported : model;
  // Scales given already (a caller building several plans calibrates once) are used as they are.
  if (options.precision.int8 && !imported && options.precision.int8_scales.empty())
    options.precision.int8_scales = calibration_scales(model, base_dir, options);
  const PrecisionHardware hardware = options.hardware ? *options.hardware : PrecisionHardware::this_cpu();
  for (const PrecisionNote& note : precision_speed_notes(options.precision, hardware)) {
    if (note.warning)
      logger().warning(note.text);
    else
      logger().info(note.text);
  }
  runtime::SessionOptions session_options;
  session_options.reduced_precision = options.precision;
  session_options.tactics = options.tactics;
  session_options.profiles = options.profiles;
  session_options.threads = options.threads;
  session_options.kernel_options = options.kernel_options;
  const auto start = std::chrono::steady_clock::now();
  runtime::Session session = runtime::Session::create(planned.proto(), session_options, base_dir).value();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return BuiltPlan{std::move(session), seconds};
}

BuiltPlan build_and_save_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options,
                              const std::filesystem::path& out, const std::string& source_model) {
  BuiltPlan built = build_plan(model, base_dir, std::move(options));
  runtime::plan::save_plan(built.session, out, recorded_source_model(source_model, out), built.build_seconds,
                           model_weight_bytes(model.proto()));
  return built;
}

std::string recorded_source_model(const std::filesystem::path& model, const std::filesystem::path& plan) {
  if (model.empty()) return {};
  std::error_code ec;
  const auto model_abs = std::filesystem::absolute(model, ec);
  const auto plan_dir = std::filesystem::absolute(plan, ec).parent_path();
  if (ec) return model.filename().string();
  const std::filesystem::path relative = model_abs.lexically_normal().lexically_relative(plan_dir.lexically_normal());
  return relative.empty() ? model.filename().string() : relative.generic_string();
}

Result<std::filesystem::path> plan_source_model(const std::filesystem::path& plan) {
  const std::string recorded = runtime::plan::summarize_plan(plan).source_model;
  if (recorded.empty())
    return Error(ErrorCode::kInvalidArgument,
                 str_cat("the plan '", plan.string(), "' does not record the ONNX model it was built from"));
  const std::filesystem::path model = plan.parent_path() / recorded;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model, ec))
    return Error(ErrorCode::kNotFound, str_cat("the plan '", plan.string(), "' was built from '", recorded,
                                               "', which is not there any more (", model.string(), ")"));
  return model;
}

std::string layer_precision_summary(const runtime::Session& session) {
  std::map<std::string, int> counts;
  for (const auto& node : session.plan().nodes_)
    if (!node.folded) ++counts[runtime::precision_name(node.precision)];
  std::string text;
  for (const auto& [name, count] : counts) text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  return text;
}

}  // namespace parity::tools
