// Tensor operators after ai.onnx opset 22: the type-widening versions 23-25 of the shape and copy
// operators, SplitToSequence-24, TensorScatter-24 and BitCast-26.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md
#include <onnx/defs/shape_inference.h>

#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

namespace {

// Bits of one element of an ONNX data type; 0 for string and unknown types.
int element_bits(int32_t data_type) {
  using onnx::TensorProto;
  switch (data_type) {
    case TensorProto::UINT4:
    case TensorProto::INT4: return 4;
    case TensorProto::BOOL:
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::FLOAT8E4M3FN:
    case TensorProto::FLOAT8E4M3FNUZ:
    case TensorProto::FLOAT8E5M2:
    case TensorProto::FLOAT8E5M2FNUZ: return 8;
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: return 16;
    case TensorProto::UINT32:
    case TensorProto::INT32:
    case TensorProto::FLOAT: return 32;
    case TensorProto::UINT64:
    case TensorProto::INT64:
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX64: return 64;
    case TensorProto::COMPLEX128: return 128;
    default: return 0;
  }
}

// BitCast: the same shape, the element type of `to`, which must have the input's bit width.
void infer_bitcast(onnx::InferenceContext& ctx) {
  const auto* to = ctx.getAttribute("to");
  if (to == nullptr || !to->has_i()) fail_type_inference("BitCast needs the attribute 'to'");
  const auto target = static_cast<int32_t>(to->i());
  if (element_bits(target) == 0) fail_type_inference("BitCast cannot produce data type ", target);
  onnx::updateOutputElemType(ctx, 0, target);
  const auto* input = ctx.getInputType(0);
  if (input != nullptr && input->has_tensor_type() && input->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED) {
    const int source_bits = element_bits(input->tensor_type().elem_type());
    if (source_bits != element_bits(target))
      fail_type_inference("BitCast needs the same bit width: input data type ", input->tensor_type().elem_type(), " (",
                          source_bits, " bits) to ", target, " (", element_bits(target), " bits)");
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// TensorScatter: present_cache is past_cache with the update written in; checks the ranks agree.
void infer_tensor_scatter(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& past = onnx::getInputShape(ctx, 0);
  if (onnx::hasInputShape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() != past.dim_size())
    fail_shape_inference("TensorScatter: update has rank ", onnx::getInputShape(ctx, 1).dim_size(),
                         ", past_cache has rank ", past.dim_size());
  const int64_t axis = onnx::getAttribute(ctx, "axis", -2);
  const int rank = past.dim_size();
  if (axis < -rank || axis >= rank || axis == 0 || axis == -rank)
    fail_shape_inference("TensorScatter: axis ", axis, " is the batch axis or out of range for rank ", rank);
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

onnx::OpSchema bitcast_26() {
  onnx::OpSchema schema("BitCast", __FILE__, __LINE__);
  schema.SinceVersion(26)
      .SetDoc("Reinterprets the bytes of a tensor as another data type of the same bit width (`to`); same shape.")
      .Attr("to", "The data type to reinterpret the input as.", onnx::AttributeProto::INT, true)
      .Input(0, "input", "Input tensor to be bitcast.", "T1")
      .Output(0, "output", "Output tensor with the same shape as the input.", "T2")
      .TypeConstraint("T1", non_string_tensor_types(), "Every type but string.")
      .TypeConstraint("T2", non_string_tensor_types(), "Every type but string.")
      .TypeAndShapeInferenceFunction(infer_bitcast);
  return schema;
}

onnx::OpSchema tensor_scatter_24() {
  onnx::OpSchema schema("TensorScatter", __FILE__, __LINE__);
  schema.SinceVersion(24)
      .SetDoc("Writes `update` into the key/value cache `past_cache` along `axis` at `write_indices` per batch entry.")
      .Attr("axis", "Sequence dimension of past_cache and update (not 0).", onnx::AttributeProto::INT, static_cast<int64_t>(-2))
      .Attr("mode", "Write mode: linear or circular.", onnx::AttributeProto::STRING, std::string("linear"))
      .Input(0, "past_cache", "Past state cache.", "T")
      .Input(1, "update", "New update tensor.", "T")
      .Input(2, "write_indices", "Write index per batch entry.", "tensor(int64)", onnx::OpSchema::Optional)
      .Output(0, "present_cache", "Updated cache.", "T")
      .TypeConstraint("T", all_tensor_types(), "Every tensor type.")
      .TypeAndShapeInferenceFunction(infer_tensor_scatter);
  return schema;
}

}  // namespace

void register_tensor_schemas() {
  // Versions 23, 24 and 25 added float4e2m1, float8e8m0 and int2/uint2 to these operators.
  for (const char* op : {"Constant", "ConstantOfShape", "Flatten", "Identity", "Pad", "Reshape", "Shape", "Size",
                         "Squeeze", "Transpose", "Unsqueeze", "Cast"})
    register_versions(op, {23});
  // Cast-24 and CastLike-24: round_mode, the rounding to float8e8m0.
  for (const char* op : {"Cast", "CastLike"}) {
    if (std::string(op) == "CastLike") register_versions(op, {23});
    onnx::OpSchema v24 = next_version_of(op, 24);
    v24.Attr("round_mode", "Rounding to float8e8m0: up, down or nearest.", onnx::AttributeProto::STRING, std::string("up"));
    register_schema(std::move(v24));
    register_versions(op, {25});
  }
  for (const char* op : {"Constant", "ConstantOfShape", "Flatten", "Identity", "Pad", "Reshape", "Shape", "Size",
                         "Squeeze", "Transpose", "Unsqueeze"})
    register_versions(op, {24, 25});
  register_schema(next_version_of("SplitToSequence", 24, {{"T", {"tensor(bfloat16)"}}, {"S", {"seq(tensor(bfloat16))"}}}));
  register_schema(tensor_scatter_24());
  register_schema(bitcast_26());
}

}  // namespace parity::model::schemas
