// Shared by the examples: a one-node Identity model x -> y (float32, 1x1x2x2), the model
// Polygraphy's API examples use, built with parity's graph IR (no ONNX protobuf code needed).
#pragma once

#include <memory>

#include <parity/loaders.h>
#include <parity/model.h>

inline parity::compare::loaders::Model make_identity_model() {
  using parity::model::Graph;
  using parity::model::Node;
  using parity::model::Value;
  Graph graph;
  graph.name = "identity";
  graph.model.ir_version = 8;
  graph.model.producer_name = "parity example";
  graph.model.opset_imports = {{"", 13}};
  auto x = Value::variable("x", parity::DType::kFloat32, {1, 1, 2, 2});
  auto y = Value::variable("y", parity::DType::kFloat32, {1, 1, 2, 2});
  graph.inputs = {x};
  graph.outputs = {y};
  graph.nodes.push_back(std::make_shared<Node>("Identity", std::vector{x}, std::vector{y}, "identity"));
  return parity::compare::loaders::onnx_from_graph(graph);
}
