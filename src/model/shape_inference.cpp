#include "model/shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/status.h"
#include "model/model.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model {

std::vector<std::string> infer_shapes(onnx::ModelProto& model, const ShapeInferenceOptions& options) {
  register_newer_onnx_schemas();
  std::vector<std::string> warnings = newer_than_library_warnings(model);
  onnx::ShapeInferenceOptions lib_options(/*check_type=*/options.strict, /*error_mode=*/options.strict ? 1 : 0,
                                          /*data_prop=*/options.data_prop);
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), lib_options);
  } catch (const onnx::InferenceError& e) {
    fail(ErrorCode::kInvalidModel, "shape inference failed: ", e.what());
  } catch (const std::exception& e) {
    // libonnx reports malformed models (bad attributes, unknown types) with plain exceptions.
    fail(ErrorCode::kInvalidModel, "shape inference failed: ", e.what());
  }
  return warnings;
}

std::vector<std::string> infer_shapes(onnx::ModelProto& model, bool data_prop) {
  ShapeInferenceOptions options;
  options.data_prop = data_prop;
  return infer_shapes(model, options);
}

}  // namespace parity::model
