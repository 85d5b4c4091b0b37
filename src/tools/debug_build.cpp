#include "tools/debug_build.h"

#include <onnx/onnx_pb.h>

#include "core/formats/file_io.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "tools/debug_precision.h"

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
  DebugBuildResult result;
  for (int i = 0; i < options.builds; ++i) {
    runtime::SessionOptions build_options;
    build_options.tactics.random_seed = static_cast<uint64_t>(i) + 1;
    runtime::Session session = runtime::Session::create(model, build_options, base_dir).value();
    bool ok = options.judge ? options.judge(session) : true;
    for (size_t f = 0; f < want.size() && ok; ++f) ok = outputs_pass(session.run(feeds[f]), want[f], options.atol, options.rtol);
    std::map<std::string, std::string> tactics;
    for (const auto& node : session.plan().nodes_)
      if (!node.folded) tactics[runtime::tactic_node_key(node.kernel_spec)] = node.tactic;
    const auto path = options.artifacts / (ok ? "good" : "bad") / ("build-" + std::to_string(i) + ".json");
    formats::write_binary_file(path.string(), runtime::tactics_to_json(tactics));
    (ok ? result.good : result.bad)++;
    if (log) log("build " + std::to_string(i) + ": " + (ok ? "PASSED" : "FAILED") + " -> " + path.string());
  }
  return result;
}

}  // namespace parity::tools
