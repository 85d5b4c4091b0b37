// Subgraph extraction (`parity surgeon extract`): cut a model at given tensors so they become the
// new graph's inputs and outputs, keeping only the nodes in between.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "onnx/graph.h"
#include "onnx/model.h"
#include "onnx/transforms/tensor_spec.h"

namespace parity::transforms {

/// Finds dtypes/shapes of tensors that type information and shape inference could not settle,
/// typically by running the model on generated inputs. Gets the original model and the names;
/// returns their metadata (static shapes as observed).
using TypeResolver = std::function<TensorMetadata(const onnx_io::Model& model, const std::vector<std::string>& names)>;

struct ExtractOptions {
  /// New graph inputs; empty keeps the model's inputs.
  std::vector<TensorSpec> inputs;
  /// New graph outputs; empty keeps the model's outputs.
  std::vector<TensorSpec> outputs;
  /// Used for `auto` fields that shape inference leaves unknown; when unset such fields stay unknown
  /// for outputs and are an error for inputs.
  TypeResolver resolve_types;
};

/// Returns the extracted graph. Unknown tensor names throw kNotFound with near matches; a cut that
/// leaves a needed tensor without a producer (neither a new input nor a constant) throws
/// kInvalidArgument naming the node and the tensor.
std::shared_ptr<ir::Graph> extract_subgraph(const onnx_io::Model& model, const ExtractOptions& options);

/// Runs libonnx shape inference on a copy and builds the IR from it, so values carry the types the
/// file records plus what inference finds. Inference failures only cost the extra types.
std::shared_ptr<ir::Graph> graph_with_inferred_types(const onnx_io::Model& model);

/// g.tensor(name) with the option (e.g. "--inputs") named in the error.
ir::ValuePtr lookup_tensor(const ir::Graph& g, const std::string& name, const std::string& option);

}  // namespace parity::transforms
