#include "tools/plan_build.h"

#include <chrono>

#include "core/logger.h"
#include "core/status.h"
#include "runtime/plan/plan_file.h"
#include "runtime/reduced_precision.h"
#include "runtime/subgraph.h"
#include "tools/calibration.h"

namespace parity::tools {

std::map<std::string, float> calibration_scales(const model::Model& model, const std::filesystem::path& base_dir,
                                                const PlanBuildOptions& options) {
  const auto& cache = options.calibration_cache;
  if (!cache.empty() && std::filesystem::exists(cache)) {
    CalibrationTable table = read_calibration_cache(cache);
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
    write_calibration_cache(cache, table);
    logger().info("Saved calibration cache to: ", cache.string());
  }
  return table.scales;
}

BuiltPlan build_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options) {
  if (options.precision.int8) {
    options.precision.int8_scales = calibration_scales(model, base_dir, options);
    if (!runtime::native_int8_available())
      logger().warning("int8: this CPU has no VNNI, without which oneDNN's int8 sums of signed sources saturate: "
                       "layers whose source is >= 0 (after a Relu or Clip) run int8 on u8 sources, the others in "
                       "fp32 on the quantized values (`inspect model X.plan --show layers` tells which)");
  }
  runtime::SessionOptions session_options;
  session_options.reduced_precision = options.precision;
  session_options.tactics = options.tactics;
  session_options.profiles = options.profiles;
  session_options.threads = options.threads;
  const auto start = std::chrono::steady_clock::now();
  runtime::Session session = runtime::Session::create(model.proto(), session_options, base_dir).value();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return BuiltPlan{std::move(session), seconds};
}

BuiltPlan build_and_save_plan(const model::Model& model, const std::filesystem::path& base_dir, PlanBuildOptions options,
                              const std::filesystem::path& out, const std::string& source_model) {
  BuiltPlan built = build_plan(model, base_dir, std::move(options));
  runtime::plan::save_plan(built.session, out, recorded_source_model(source_model, out), built.build_seconds);
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
