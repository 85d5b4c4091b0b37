// Visiting every TensorProto / NodeProto of a model, through subgraphs (transform helpers).
#pragma once

#include <functional>

#include "model/onnx_fwd.h"

namespace parity::model::transforms {

/// Calls fn on every dense tensor: initializers and tensor attributes (Constant values,
/// ConstantOfShape values, ...), in the main graph, subgraphs and functions.
void for_each_dense_tensor(onnx::ModelProto& model, const std::function<void(onnx::TensorProto&)>& fn);
/// Calls fn on every node of the main graph and, recursively, of its subgraphs.
void for_each_node(onnx::GraphProto& graph, const std::function<void(onnx::NodeProto&)>& fn);

}  // namespace parity::model::transforms
