// Subgraph extraction (`parity surgeon extract`): cut a model at given tensors so they become the
// new graph's inputs and outputs, keeping only the nodes in between.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "model/graph.h"
#include "model/model.h"
#include "model/transforms/tensor_spec.h"

namespace parity::model::transforms {

/// Finds dtypes/shapes of tensors that type information and shape inference could not settle,
/// typically by running the model on generated inputs. Gets the original model and the names;
/// returns their metadata (static shapes as observed).
using TypeResolver = std::function<TensorMetadata(const model::Model& model, const std::vector<std::string>& names)>;

struct ExtractOptions {
  /// New graph inputs; empty keeps the model's inputs.
  std::vector<TensorSpec> inputs;
  /// New graph outputs; empty keeps the model's outputs.
  std::vector<TensorSpec> outputs;
  /// Used for `auto` fields that shape inference leaves unknown; when unset such fields stay unknown
  /// for outputs and are an error for inputs.
  TypeResolver resolve_types;
  /// Take every `auto` field from resolve_types (running the model) instead of shape inference,
  /// like Polygraphy's --force-fallback-shape-inference.
  bool force_fallback = false;
};

/// Returns the extracted graph. Unknown tensor names throw kNotFound with near matches; a cut that
/// leaves a needed tensor without a producer (neither a new input nor a constant) throws
/// kInvalidArgument naming the node and the tensor.
std::shared_ptr<model::Graph> extract_subgraph(const model::Model& model, const ExtractOptions& options);

/// Runs libonnx shape inference on a copy and builds the IR from it, so values carry the types the
/// file records plus what inference finds. Inference failures only cost the extra types.
std::shared_ptr<model::Graph> graph_with_inferred_types(const model::Model& model);

/// g.tensor(name) with the option (e.g. "--inputs") named in the error.
model::ValuePtr lookup_tensor(const model::Graph& g, const std::string& name, const std::string& option);

}  // namespace parity::model::transforms
