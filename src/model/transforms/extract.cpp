#include "model/transforms/extract.h"

#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <unordered_set>

#include "core/logger.h"
#include "model/shape_inference.h"

namespace parity::model::transforms {

std::shared_ptr<model::Graph> graph_with_inferred_types(const model::Model& model) {
  model::Model typed = model;
  try {
    // What these say (IR or opsets newer than libonnx) load_model already warned about, naming the
    // file; the tools that infer types again and again would only repeat it.
    for (const auto& w : model::infer_shapes(typed.proto(), model::ShapeInferenceOptions{}))
      logger().verbose(w);
  } catch (const Error& e) {
    logger().warning("shape inference failed (", e.what(), "); using the types the model records");
    typed = model;
  }
  return model::Graph::from_model(typed);
}

model::ValuePtr lookup_tensor(const model::Graph& g, const std::string& name, const std::string& option) {
  try {
    return g.tensor(name);
  } catch (const Error& e) {
    throw e.prefixed(option).with_missing({.tensor = name});
  }
}

namespace {

// The --inputs/--outputs spec naming a tensor; nullptr when it was not given there.
const TensorSpec* given_spec(const ExtractOptions& options, const std::string& name) {
  for (const auto* list : {&options.inputs, &options.outputs})
    for (const auto& spec : *list)
      if (spec.name == name) return &spec;
  return nullptr;
}

}  // namespace

std::shared_ptr<model::Graph> extract_subgraph(const model::Model& model, const ExtractOptions& options) {
  auto graph = graph_with_inferred_types(model);
  model::Graph& g = *graph;

  std::vector<model::ValuePtr> inputs;
  for (const auto& spec : options.inputs) inputs.push_back(lookup_tensor(g, spec.name, "--inputs"));
  std::vector<model::ValuePtr> outputs;
  for (const auto& spec : options.outputs) outputs.push_back(lookup_tensor(g, spec.name, "--outputs"));
  if (options.inputs.empty()) inputs = g.inputs;
  if (options.outputs.empty()) outputs = g.outputs;
  PARITY_CHECK(!outputs.empty(), kInvalidArgument, "extract: the graph would have no outputs");

  // Walk back from the outputs, stopping at the new inputs.
  std::unordered_set<const model::Value*> boundary;
  for (const auto& v : inputs) boundary.insert(v.get());
  const auto producer = g.producers();
  std::unordered_set<const model::Node*> alive;
  std::unordered_set<const model::Value*> seen;
  struct Need {
    model::ValuePtr value;
    const model::Node* consumer;  // nullptr for a graph output
  };
  std::vector<Need> work;
  for (const auto& v : outputs) work.push_back({v, nullptr});
  while (!work.empty()) {
    Need need = work.back();
    work.pop_back();
    if (!seen.insert(need.value.get()).second) continue;
    if (boundary.count(need.value.get())) continue;
    auto it = producer.find(need.value.get());
    if (it == producer.end()) {
      if (need.value->is_constant()) continue;
      const std::string who = need.consumer ? "node " + need.consumer->label() + " needs" : "graph output";
      fail(ErrorCode::kInvalidArgument, "extract: ", who, " tensor '", need.value->name,
           "', which has no producer once the graph is cut at the given inputs; add '", need.value->name,
           "' to --inputs or choose other boundaries");
    }
    if (!alive.insert(it->second).second) continue;
    for (const auto& in : it->second->inputs)
      if (in) work.push_back({in, it->second});
    for (const auto& [_, sub] : it->second->subgraphs)
      for (const auto& ref : sub->outer_references()) work.push_back({ref, it->second});
  }
  for (const auto& node : g.nodes) {
    if (!alive.count(node.get())) continue;
    for (const auto& out : node->outputs)
      PARITY_CHECK(!out || !boundary.count(out.get()), kInvalidArgument, "extract: tensor '", out->name,
                   "' is a new input, but its producer ", node->label(),
                   " is still needed for another of its outputs; cut at that node's inputs instead");
  }
  std::erase_if(g.nodes, [&](const model::NodePtr& n) { return !alive.count(n.get()); });

  // Apply the requested types; collect what is still unknown.
  std::vector<std::string> unresolved;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const TensorSpec& spec = options.inputs[i];
    model::Value& v = *inputs[i];
    if (v.is_constant()) v.to_variable();
    if (spec.dtype) v.dtype = *spec.dtype;
    if (spec.shape) v.shape = *spec.shape;
    const bool fallback = options.force_fallback && (!spec.dtype || !spec.shape);
    if (fallback || v.dtype == DType::kUndefined || v.shape.unknown_rank) unresolved.push_back(v.name);
  }
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    const TensorSpec& spec = options.outputs[i];
    model::Value& v = *outputs[i];
    if (spec.dtype) v.dtype = *spec.dtype;
    if ((options.force_fallback && !spec.dtype) || v.dtype == DType::kUndefined) unresolved.push_back(v.name);
  }
  // Graph inputs kept as they are (no --inputs) take the shapes the fallback run fed them, as in
  // Polygraphy.
  std::vector<std::string> kept_inputs;
  if (options.force_fallback && options.inputs.empty())
    for (const auto& in : g.inputs)
      if (in && !in->is_constant()) {
        unresolved.push_back(in->name);
        kept_inputs.push_back(in->name);
      }
  if (!unresolved.empty() && options.resolve_types) {
    logger().info("running the model to find the types of: ", join_names(unresolved));
    const TensorMetadata found = options.resolve_types(model, unresolved);
    for (const auto& name : unresolved) {
      const TensorMeta* meta = found.find(name);
      if (!meta) continue;
      model::ValuePtr v = g.find_tensor(name);
      const TensorSpec* spec = given_spec(options, name);
      const bool kept_input = std::find(kept_inputs.begin(), kept_inputs.end(), name) != kept_inputs.end();
      const bool forced = options.force_fallback && (spec || kept_input);
      if (v->dtype == DType::kUndefined || (forced && (!spec || !spec->dtype))) v->dtype = meta->dtype;
      if (v->shape.unknown_rank || (forced && (!spec || !spec->shape))) v->shape = meta->shape;
    }
  }
  for (size_t i = 0; i < options.inputs.size(); ++i)
    PARITY_CHECK(inputs[i]->dtype != DType::kUndefined, kInvalidArgument, "extract: could not determine the dtype of input '",
                 inputs[i]->name, "'; give it as ", inputs[i]->name, ":auto:<dtype>");
  for (size_t i = 0; i < options.outputs.size(); ++i)
    PARITY_CHECK(outputs[i]->dtype != DType::kUndefined, kInvalidArgument, "extract: could not determine the dtype of output '",
                 outputs[i]->name, "'; give it as ", outputs[i]->name, ":<dtype>");

  g.inputs = inputs;
  g.outputs = outputs;
  g.cleanup(false, false);
  return graph;
}

}  // namespace parity::model::transforms
