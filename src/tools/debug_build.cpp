#include "tools/debug_build.h"

#include <onnx/onnx_pb.h>

#include "core/formats/file_io.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "tools/debug_precision.h"
#include "tools/plan_build.h"
#include "tools/qdq.h"

namespace parity::tools {

DebugBuildResult debug_build(const onnx::ModelProto& model, const std::string& base_dir,
                             const std::vector<TensorMap>& feeds, const DebugBuildOptions& options,
                             const std::function<void(const std::string&)>& log) {
  runtime::SessionOptions reference_options;
  reference_options.kernels = runtime::KernelTier::kReference;
  std::vector<TensorMap> want;
  if (!options.judge) {
    runtime::Session reference = runtime::Session::create(model, reference_options, base_dir).value();
    for (const auto& feed : feeds) want.push_back(reference.run(feed));
  }
  std::filesystem::create_directories(options.artifacts / "good");
  std::filesystem::create_directories(options.artifacts / "bad");
  std::optional<model::Model> planned;
  std::optional<PlanBuildOptions> plan = options.plan;
  if (plan) {
    planned.emplace(std::make_unique<onnx::ModelProto>(model), base_dir);
    // One calibration for every build: the builds differ in tactics only.
    if (plan->precision.int8 && !has_qdq_nodes(*planned))
      plan->precision.int8_scales = calibration_scales(*planned, base_dir, *plan);
  }
  DebugBuildResult result;
  for (int i = 0; i < options.builds; ++i) {
    const uint64_t seed = static_cast<uint64_t>(i) + 1;
    runtime::Session session = [&] {
      if (plan) {
        PlanBuildOptions build = *plan;
        build.tactics.random_seed = seed;
        return build_plan(*planned, base_dir, std::move(build)).session;
      }
      runtime::SessionOptions build_options;
      build_options.tactics.random_seed = seed;
      return runtime::Session::create(model, build_options, base_dir).value();
    }();
    bool ok = options.judge ? options.judge(session) : true;
    for (size_t f = 0; f < want.size() && ok; ++f) ok = outputs_pass(session.run(feeds[f]), want[f], options.atol, options.rtol);
    std::map<std::string, std::string> tactics;
    for (const auto& node : session.plan().nodes_)
      if (!node.folded) tactics[runtime::tactic_node_key(node.kernel_spec)] = node.tactic;
    const auto path = options.artifacts / (ok ? "good" : "bad") / ("build-" + std::to_string(i) + ".json");
    formats::write_binary_file(path.string(), runtime::tactics_to_json(tactics));
    (ok ? result.good : result.bad)++;
    if (log)
      log("build " + std::to_string(i) + ": " + (ok ? "PASSED" : "FAILED") + " -> " + path.string() +
          (plan ? " (layers: " + layer_precision_summary(session) + ")" : ""));
  }
  return result;
}

}  // namespace parity::tools
