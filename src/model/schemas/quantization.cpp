// QuantizeLinear and DequantizeLinear after ai.onnx opset 22. Version 23 separated the scale's type
// from the input's (QuantizeLinear: int32 inputs, `precision`; DequantizeLinear: `output_dtype`);
// 24 and 25 widened the types to float8e8m0 scales and int2/uint2.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md#QuantizeLinear
#include <onnx/defs/shape_inference.h>

#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

namespace {

const std::vector<std::string>& quantized_types() {
  static const std::vector<std::string> types = {"tensor(int8)",         "tensor(uint8)",          "tensor(int16)",
                                                 "tensor(uint16)",       "tensor(float8e4m3fn)",   "tensor(float8e4m3fnuz)",
                                                 "tensor(float8e5m2)",   "tensor(float8e5m2fnuz)", "tensor(uint4)",
                                                 "tensor(int4)"};
  return types;
}

const std::vector<std::string>& scale_types() {
  static const std::vector<std::string> types = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"};
  return types;
}

// y's type: the zero point's, else output_dtype, else uint8; y has x's shape.
void infer_quantize(onnx::InferenceContext& ctx) {
  const auto* zero_point = ctx.getNumInputs() > 2 ? ctx.getInputType(2) : nullptr;
  const int64_t output_dtype = onnx::getAttribute(ctx, "output_dtype", 0);
  if (zero_point != nullptr && zero_point->has_tensor_type() &&
      zero_point->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED) {
    const int32_t zero_point_type = zero_point->tensor_type().elem_type();
    if (output_dtype != 0 && output_dtype != zero_point_type)
      fail_type_inference("QuantizeLinear: output_dtype ", output_dtype, " differs from the zero point's type ",
                          zero_point_type);
    onnx::updateOutputElemType(ctx, 0, zero_point_type);
  } else {
    onnx::updateOutputElemType(ctx, 0, output_dtype != 0 ? static_cast<int32_t>(output_dtype) : onnx::TensorProto::UINT8);
  }
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// y's type: output_dtype, else the scale's; y has x's shape.
void infer_dequantize(onnx::InferenceContext& ctx) {
  const int64_t output_dtype = onnx::getAttribute(ctx, "output_dtype", 0);
  if (output_dtype != 0) onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(output_dtype));
  else onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void add_block_attributes(onnx::OpSchema& schema) {
  schema.Attr("axis", "The axis of per-axis or blocked quantization.", onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("block_size", "The block size of blocked quantization (0: per-tensor or per-axis).", onnx::AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("output_dtype", "The output data type (0: inferred).", onnx::AttributeProto::INT, static_cast<int64_t>(0));
}

onnx::OpSchema quantize_linear_23() {
  onnx::OpSchema schema("QuantizeLinear", __FILE__, __LINE__);
  schema.SinceVersion(23).SetDoc("Quantizes x with y_scale and y_zero_point: saturate(round(x / y_scale) + y_zero_point).");
  add_block_attributes(schema);
  schema.Attr("precision", "The precision of x / y_scale (0: the scale's type).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("saturate", "Saturate float8 conversions.", onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "x", "Full-precision input.", "T1")
      .Input(1, "y_scale", "Scale.", "T2")
      .Input(2, "y_zero_point", "Zero point.", "T3", onnx::OpSchema::Optional)
      .Output(0, "y", "Quantized output.", "T3")
      .TypeConstraint("T1", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(int32)"}, "Input types.")
      .TypeConstraint("T2", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(int32)"}, "Scale types.")
      .TypeConstraint("T3", quantized_types(), "Quantized types.")
      .TypeAndShapeInferenceFunction(infer_quantize);
  return schema;
}

onnx::OpSchema dequantize_linear_23() {
  onnx::OpSchema schema("DequantizeLinear", __FILE__, __LINE__);
  schema.SinceVersion(23).SetDoc("Dequantizes x: (x - x_zero_point) * x_scale.");
  add_block_attributes(schema);
  std::vector<std::string> input_types = quantized_types();
  input_types.push_back("tensor(int32)");
  schema.Input(0, "x", "Quantized input.", "T1")
      .Input(1, "x_scale", "Scale.", "T2")
      .Input(2, "x_zero_point", "Zero point.", "T1", onnx::OpSchema::Optional)
      .Output(0, "y", "Full-precision output.", "T3")
      .TypeConstraint("T1", input_types, "Quantized types.")
      .TypeConstraint("T2", scale_types(), "Scale types.")
      .TypeConstraint("T3", scale_types(), "Output types.")
      .TypeAndShapeInferenceFunction(infer_dequantize);
  return schema;
}

}  // namespace

void register_quantization_schemas() {
  register_schema(quantize_linear_23());
  register_schema(dequantize_linear_23());
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) register_versions(op, {24, 25});
}

}  // namespace parity::model::schemas
