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

}  // namespace parity::model
