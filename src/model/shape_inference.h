// Shape inference through libonnx: fills value_info (and refines graph outputs) in place.
#pragma once

#include <string>
#include <vector>

#include "model/onnx_fwd.h"

namespace parity::model {

struct ShapeInferenceOptions {
  /// Propagate constant shape values (Shape -> Gather -> Reshape chains) to get more static dims.
  bool data_prop = true;
  /// Throw on the first node whose types/shapes are inconsistent instead of skipping it.
  bool strict = false;
};

/// Runs libonnx shape inference on the model in place. In the default (lenient) mode, nodes that
/// cannot be inferred (unknown or newer ops, custom domains) are skipped; errors that make the model
/// inconsistent throw kInvalidModel with libonnx's message. Returns warnings worth showing (for
/// example a model newer than the linked libonnx).
std::vector<std::string> infer_shapes(onnx::ModelProto& model, const ShapeInferenceOptions& options = {});
/// Shorthand kept for callers that only choose data propagation.
std::vector<std::string> infer_shapes(onnx::ModelProto& model, bool data_prop);

/// The model as shape inference needs it: the main graph's large initializers keep their name,
/// type and dims but not their bytes (inference reads the values of small shape-like tensors only),
/// so inferring the types of a model with gigabytes of weights copies none of them.
onnx::ModelProto copy_for_inference(const onnx::ModelProto& model);
/// copy_for_inference(model) typed by libonnx's shape inference with its default options, best
/// effort: when inference throws, the plain copy (the types the model records), and `failure`, if
/// given, says why.
onnx::ModelProto inferred_copy(const onnx::ModelProto& model, std::string* failure = nullptr);

}  // namespace parity::model
