#include "tools/runtime_types.h"

#include <onnx/onnx_pb.h>

#include "compare/data_loader.h"
#include "runtime/session.h"

namespace parity::tools {

TensorMetadata resolve_types_by_running(const model::Model& model, const std::vector<std::string>& names) {
  runtime::Session session = runtime::Session::create(model.proto(), {}, model.base_dir()).value();
  compare::DataLoader loader;
  loader.input_metadata(session.input_metadata());
  const TensorMap feed = loader.generate(0);
  runtime::RunOptions run;
  run.outputs = names;
  const TensorMap results = session.run(feed, run);
  TensorMetadata found;
  for (const auto& name : names) {
    const Tensor* t = results.find(name);
    if (t) found.add(name, t->dtype(), DimShape(t->shape()));
  }
  return found;
}

size_t set_types_by_running(model::Graph& graph) {
  std::vector<std::string> names;
  for (const auto& node : graph.nodes)
    for (const auto& out : node->outputs)
      if (out) names.push_back(out->name);
  const TensorMetadata found = resolve_types_by_running(graph.to_model(), names);
  size_t set = 0;
  for (const auto& node : graph.nodes)
    for (const auto& out : node->outputs) {
      const TensorMeta* meta = out ? found.find(out->name) : nullptr;
      if (!meta) continue;
      out->dtype = meta->dtype;
      out->shape = meta->shape;
      ++set;
    }
  return set;
}

}  // namespace parity::tools
