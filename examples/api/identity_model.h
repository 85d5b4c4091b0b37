// Shared by the examples: writes a one-node Identity model x -> y (float32, 1x1x2x2), the model
// Polygraphy's API examples use.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>

inline std::shared_ptr<onnx::ModelProto> make_identity_model() {
  auto model = std::make_shared<onnx::ModelProto>();
  model->set_ir_version(8);
  model->set_producer_name("parity example");
  model->add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model->mutable_graph();
  graph->set_name("identity");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Identity");
  node->set_name("identity");
  node->add_input("x");
  node->add_output("y");
  for (auto [list, name] : {std::pair{graph->add_input(), "x"}, std::pair{graph->add_output(), "y"}}) {
    list->set_name(name);
    auto* tensor_type = list->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 1, 2, 2}) tensor_type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return model;
}
