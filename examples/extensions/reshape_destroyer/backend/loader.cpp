#include "backend/loader.h"

#include <parity/logging.h>
#include <parity/model.h>

namespace reshape_destroyer {

using parity::model::Graph;

GraphLoader GraphFromPath(std::string path) {
  return [path = std::move(path)] { return Graph::from_model(parity::model::load_model(path).value()); };
}

namespace {

// A Reshape is a no-op when its target shape is a constant equal to the input's known shape.
bool is_no_op(const parity::model::Node& node) {
  if (node.op_type != "Reshape" || !node.domain.empty() || node.inputs.size() != 2 || !node.inputs[0] ||
      !node.inputs[1] || !node.inputs[1]->is_constant())
    return false;
  const parity::DimShape& in = node.inputs[0]->shape;
  if (in.unknown_rank) return false;
  const parity::Tensor& target = node.inputs[1]->values();
  if (target.dtype() != parity::DType::kInt64 || target.numel() != static_cast<int64_t>(in.dims.size())) return false;
  for (size_t i = 0; i < in.dims.size(); ++i)
    if (!in.dims[i].is_static() || in.dims[i].value != target.data<int64_t>()[i]) return false;
  return true;
}

}  // namespace

std::shared_ptr<Graph> ReplaceReshapes::operator()() const {
  std::shared_ptr<Graph> graph = graph_();
  for (auto& node : graph->nodes) {
    if (!is_no_op(*node)) continue;
    parity::logger().info("Replacing no-op reshape: ", node->name, " with an Identity node");
    if (rename_nodes_) {
      node->name += "_destroyed";
      parity::logger().info("Renamed Identity node to: ", node->name);
    }
    node->op_type = "Identity";
    node->attrs.clear();
    node->inputs.resize(1);
  }
  // The target-shape constants are unused now.
  graph->cleanup();
  return graph;
}

}  // namespace reshape_destroyer
