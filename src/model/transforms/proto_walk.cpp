#include "model/transforms/proto_walk.h"

#include <onnx/onnx_pb.h>

namespace parity::model::transforms {

namespace {

void walk_graph_tensors(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& fn);

void walk_node_tensors(onnx::NodeProto& node, const std::function<void(onnx::TensorProto&)>& fn) {
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.has_t()) fn(*attr.mutable_t());
    for (auto& t : *attr.mutable_tensors()) fn(t);
    if (attr.has_g()) walk_graph_tensors(*attr.mutable_g(), fn);
    for (auto& g : *attr.mutable_graphs()) walk_graph_tensors(g, fn);
  }
}

void walk_graph_tensors(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& fn) {
  for (auto& t : *graph.mutable_initializer()) fn(t);
  for (auto& node : *graph.mutable_node()) walk_node_tensors(node, fn);
}

}  // namespace

void for_each_dense_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn) {
  if (model.has_graph()) walk_graph_tensors(*model.mutable_graph(), fn);
  for (auto& f : *model.mutable_functions())
    for (auto& node : *f.mutable_node()) walk_node_tensors(node, fn);
}

void for_each_node(onnx::GraphProto& graph, const std::function<void(onnx::NodeProto&)>& fn) {
  for (auto& node : *graph.mutable_node()) {
    fn(node);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_node(*attr.mutable_g(), fn);
      for (auto& g : *attr.mutable_graphs()) for_each_node(g, fn);
    }
  }
}

}  // namespace parity::model::transforms
