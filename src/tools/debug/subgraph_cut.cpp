#include "tools/debug/subgraph_cut.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/status.h"
#include "runtime/session.h"

namespace parity::tools::debug {

GraphCutter::GraphCutter(model::Model base) : GraphCutter(std::move(base), CutBoundary::kExposed, {}) {}

GraphCutter::GraphCutter(model::Model base, CutBoundary boundary, TensorMap frozen_values)
    : base_(std::move(base)), boundary_(boundary), frozen_values_(std::move(frozen_values)) {
  auto graph = model::Graph::from_model(base_);
  for (const auto& in : graph->inputs) graph_inputs_.push_back(in->name);
  for (const auto& out : graph->outputs) graph_outputs_.push_back(out->name);
  for (const auto& node : graph->nodes) {
    NodeInfo info{node->label(), node->op_type, {}, {}};
    auto use = [&](const model::ValuePtr& v) {
      if (v && v->is_variable() && std::find(info.uses.begin(), info.uses.end(), v->name) == info.uses.end())
        info.uses.push_back(v->name);
    };
    for (const auto& in : node->inputs) use(in);
    for (const auto& [attr, body] : node->subgraphs)
      for (const auto& v : body->outer_references()) {
        // A body may name an initializer of the main graph: those stay with the cut as constants.
        const model::ValuePtr outer = graph->find_tensor(v->name);
        if (outer) use(outer);
      }
    for (const auto& out : node->outputs)
      if (out && !out->name.empty()) info.produces.push_back(out->name);
    nodes_.push_back(std::move(info));
  }
}

std::string GraphCutter::node_label(size_t i) const { return nodes_.at(i).label; }

std::optional<Cut> GraphCutter::cut(const std::vector<size_t>& keep) const {
  if (keep.empty()) return std::nullopt;
  const bool model_inputs = boundary_ == CutBoundary::kModelInputs;
  std::vector<bool> kept(nodes_.size(), false);
  for (size_t i : keep) kept.at(i) = true;
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (const auto& name : nodes_[i].uses) consumers[name].push_back(i);
  std::unordered_set<std::string> produced;
  for (size_t i : keep) produced.insert(nodes_[i].produces.begin(), nodes_[i].produces.end());
  auto used = [&](const std::string& name, bool inside) {
    auto it = consumers.find(name);
    return it != consumers.end() &&
           std::any_of(it->second.begin(), it->second.end(), [&](size_t c) { return kept[c] == inside; });
  };

  Cut cut;
  const std::set<std::string> own_inputs(graph_inputs_.begin(), graph_inputs_.end());
  std::unordered_set<std::string> listed;
  for (size_t i : keep)
    for (const auto& name : nodes_[i].uses)
      if (!produced.count(name) && listed.insert(name).second)
        (model_inputs && !own_inputs.count(name) ? cut.frozen : cut.inputs).push_back(name);
  const std::set<std::string> model_outputs(graph_outputs_.begin(), graph_outputs_.end());
  for (size_t i : keep)
    for (const auto& name : nodes_[i].produces)
      if (model_outputs.count(name) || (used(name, false) && !(model_inputs && used(name, true))))
        cut.outputs.push_back(name);
  if (cut.outputs.empty()) {
    // The subset's results feed nothing the rest of the model uses (e.g. every consumer kept):
    // its dangling values are what it computes.
    for (size_t i : keep)
      for (const auto& name : nodes_[i].produces)
        if (!used(name, true)) cut.outputs.push_back(name);
  }
  if (cut.outputs.empty()) return std::nullopt;
  cut.model = cut_model(keep, cut);
  return cut;
}

model::Model GraphCutter::cut_model(const std::vector<size_t>& keep, const Cut& cut) const {
  auto graph = model::Graph::from_model(base_);
  std::vector<model::NodePtr> nodes;
  for (size_t i : keep) nodes.push_back(graph->nodes.at(i));
  graph->nodes = std::move(nodes);
  graph->inputs.clear();
  for (const auto& name : cut.inputs) graph->inputs.push_back(graph->tensor(name));
  for (const auto& name : cut.frozen) {
    const Tensor* value = frozen_values_.find(name);
    PARITY_CHECK(value, kInternal, "no recorded value to freeze '", name, "' with");
    const model::ValuePtr tensor = graph->tensor(name);
    tensor->set_values(value->clone());
    graph->initializers.push_back(tensor);
  }
  graph->outputs.clear();
  for (const auto& name : cut.outputs) graph->outputs.push_back(graph->tensor(name));
  graph->cleanup(false);
  // value_info of values the cut no longer has would only bloat the file.
  std::unordered_set<std::string> present(cut.inputs.begin(), cut.inputs.end());
  for (const auto& node : graph->nodes)
    for (const auto& out : node->outputs)
      if (out) present.insert(out->name);
  std::erase_if(graph->value_info, [&](const model::ValuePtr& v) { return !present.count(v->name); });
  return graph->to_model();
}

std::vector<size_t> GraphCutter::ancestors(size_t index) const {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (const auto& name : nodes_[i].produces) producer.emplace(name, i);
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<size_t> stack{index};
  seen.at(index) = true;
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    for (const auto& name : nodes_[i].uses) {
      auto it = producer.find(name);
      if (it != producer.end() && !seen[it->second]) {
        seen[it->second] = true;
        stack.push_back(it->second);
      }
    }
  }
  std::vector<size_t> result;
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i]) result.push_back(i);
  return result;
}

std::vector<TensorMap> record_all_values(const model::Model& model, const std::vector<TensorMap>& feeds) {
  runtime::Session session = runtime::Session::create(model.proto(), {}, model.base_dir()).value();
  runtime::RunOptions options;
  for (const auto& node : model.proto().graph().node())
    for (const auto& out : node.output())
      if (!out.empty()) options.outputs.push_back(out);
  std::vector<TensorMap> all;
  for (const auto& feed : feeds) {
    TensorMap values = feed.clone();
    for (const auto& [name, tensor] : session.run(feed, options)) values.set(name, tensor.clone());
    all.push_back(std::move(values));
  }
  return all;
}

model::Model with_observed_types(const model::Model& model, const TensorMap& values) {
  auto graph = model::Graph::from_model(model);
  for (const auto& [name, value] : graph->tensors())
    if (value->is_variable())
      if (const Tensor* t = values.find(name)) {
        value->dtype = t->dtype();
        value->shape = DimShape(t->shape());
      }
  return graph->to_model();
}

std::vector<TensorMap> feeds_for(const Cut& cut, const std::vector<TensorMap>& values) {
  std::vector<TensorMap> feeds;
  for (const auto& iteration : values) {
    TensorMap feed;
    for (const auto& name : cut.inputs) {
      const Tensor* t = iteration.find(name);
      PARITY_CHECK(t, kInternal, "no recorded value for cut input '", name, "'");
      feed.set(name, *t);
    }
    feeds.push_back(std::move(feed));
  }
  return feeds;
}

}  // namespace parity::tools::debug
