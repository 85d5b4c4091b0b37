#include "tools/runtime_types.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "compare/data_loader.h"
#include "core/logger.h"
#include "model/transforms/outputs.h"
#include "runtime/session.h"

namespace parity::tools {

namespace {

// The model run once on generated inputs: the feed and the named tensors it produced.
struct RunOnce {
  TensorMap feed;
  TensorMap results;
};

RunOnce run_once(const model::Model& model, const std::vector<std::string>& names) {
  runtime::Session session = runtime::Session::create(model.proto(), {}, model.base_dir()).value();
  compare::DataLoader loader;
  loader.input_metadata(session.input_metadata());
  RunOnce run{loader.generate(0), {}};
  runtime::RunOptions options;
  options.outputs = names;
  run.results = session.run(run.feed, options);
  return run;
}

}  // namespace

TensorMetadata resolve_types_by_running(const model::Model& model, const std::vector<std::string>& names) {
  // Graph inputs are fed, not computed: their types are those of the feed.
  std::vector<std::string> computed;
  for (const auto& name : names) {
    const auto& inputs = model.proto().graph().input();
    if (std::none_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in.name() == name; }))
      computed.push_back(name);
  }
  const RunOnce run = run_once(model, computed);
  TensorMetadata found;
  for (const auto& name : names) {
    const Tensor* t = run.results.find(name);
    if (!t) t = run.feed.find(name);
    if (t) found.add(name, t->dtype(), DimShape(t->shape()));
  }
  return found;
}

size_t set_types_by_running(model::Graph& graph) {
  std::vector<std::string> names;
  for (const auto& node : graph.nodes)
    for (const auto& out : node->outputs)
      if (out) names.push_back(out->name);
  const RunOnce run = run_once(graph.to_model(), names);
  size_t set = 0;
  auto observe = [&](model::Value& value, const Tensor& t) {
    value.dtype = t.dtype();
    value.shape = DimShape(t.shape());
    ++set;
  };
  // As Polygraphy's fallback: the graph inputs take the shapes they ran with (dynamic dims 1).
  for (const auto& in : graph.inputs)
    if (const Tensor* t = in ? run.feed.find(in->name) : nullptr) observe(*in, *t);
  for (const auto& node : graph.nodes)
    for (const auto& out : node->outputs)
      if (const Tensor* t = out ? run.results.find(out->name) : nullptr) observe(*out, *t);
  return set;
}

void mark_outputs_typed(model::Graph& graph, const std::vector<std::string>& outputs,
                        const std::vector<std::string>& exclude) {
  model::transforms::mark_outputs(graph, outputs, exclude);
  std::vector<std::string> unknown;
  for (const auto& v : graph.outputs)
    if (v->dtype == DType::kUndefined) unknown.push_back(v->name);
  if (unknown.empty()) return;
  logger().info("running the model to find the types of ", unknown.size(), " marked outputs");
  const TensorMetadata found = resolve_types_by_running(graph.to_model(), unknown);
  for (const auto& v : graph.outputs)
    if (const TensorMeta* meta = found.find(v->name); meta && v->dtype == DType::kUndefined) {
      v->dtype = meta->dtype;
      v->shape = meta->shape;
    }
}

}  // namespace parity::tools
