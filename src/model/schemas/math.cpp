// Math and activation operators after ai.onnx opset 22: TopK-24 and Range-27 (bfloat16/float16,
// Range's stash_type), CumProd-26, Swish-24, SwiGLU-28 and Celu-28 (every float type).
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md#Swish
#include <onnx/defs/shape_inference.h>

#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

namespace {

// SwiGLU: Y = Swish(A) * B, where A and B have the same shape (no broadcasting).
void infer_swiglu(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) {
    if (onnx::hasInputShape(ctx, 1)) onnx::propagateShapeFromInputToOutput(ctx, 1, 0);
    return;
  }
  const auto& gate = onnx::getInputShape(ctx, 0);
  if (onnx::hasInputShape(ctx, 1)) {
    const auto& value = onnx::getInputShape(ctx, 1);
    if (value.dim_size() != gate.dim_size())
      fail_shape_inference("SwiGLU: A has rank ", gate.dim_size(), ", B has rank ", value.dim_size());
    for (int i = 0; i < gate.dim_size(); ++i)
      if (gate.dim(i).has_dim_value() && value.dim(i).has_dim_value() && gate.dim(i).dim_value() != value.dim(i).dim_value())
        fail_shape_inference("SwiGLU: A and B differ in dimension ", i, " (", gate.dim(i).dim_value(), " vs ",
                             value.dim(i).dim_value(), ")");
  }
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

onnx::OpSchema swish_24() {
  onnx::OpSchema schema("Swish", __FILE__, __LINE__);
  schema.SinceVersion(24)
      .SetDoc("Y = X * Sigmoid(alpha * X).")
      .Attr("alpha", "Coefficient of X inside the sigmoid.", onnx::AttributeProto::FLOAT, 1.0f)
      .Input(0, "X", "Input tensor.", "T")
      .Output(0, "Y", "Output tensor.", "T")
      .TypeConstraint("T", float_types(), "Float tensors.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

onnx::OpSchema swiglu_28() {
  onnx::OpSchema schema("SwiGLU", __FILE__, __LINE__);
  schema.SinceVersion(28)
      .SetDoc("Y = Swish_alpha(A) * B; A and B have identical shapes.")
      .Attr("alpha", "The Swish alpha of the gate.", onnx::AttributeProto::FLOAT, 1.0f)
      .Input(0, "A", "Gate input tensor.", "T")
      .Input(1, "B", "Linear (value) input tensor.", "T")
      .Output(0, "Y", "Output tensor.", "T")
      .TypeConstraint("T", float_types(), "Float tensors.")
      .TypeAndShapeInferenceFunction(infer_swiglu);
  return schema;
}

onnx::OpSchema cumprod_26() {
  onnx::OpSchema schema("CumProd", __FILE__, __LINE__);
  schema.SinceVersion(26)
      .SetDoc("Cumulative product of x along axis (exclusive and reverse as in CumSum).")
      .Attr("exclusive", "Leave out the element itself.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("reverse", "Run from the last element.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "x", "Input tensor.", "T")
      .Input(1, "axis", "Scalar (or 1-element) axis.", "T2")
      .Output(0, "y", "Output tensor of x's shape.", "T")
      .TypeConstraint("T",
                      {"tensor(uint32)", "tensor(uint64)", "tensor(int32)", "tensor(int64)", "tensor(float16)",
                       "tensor(float)", "tensor(double)", "tensor(bfloat16)"},
                      "Numeric tensors.")
      .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "Axis types.")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

}  // namespace

void register_math_schemas() {
  register_schema(next_version_of("TopK", 24, {{"T", {"tensor(bfloat16)"}}}));
  onnx::OpSchema range = next_version_of("Range", 27, {{"T", {"tensor(float16)", "tensor(bfloat16)"}}});
  range.Attr("stash_type", "Type of the intermediate computation for float16/bfloat16 (1: float).",
             onnx::AttributeProto::INT, static_cast<int64_t>(1));
  register_schema(std::move(range));
  register_schema(next_version_of("Celu", 28, {{"T", float_types()}}));
  register_schema(swish_24());
  register_schema(cumprod_26());
  register_schema(swiglu_28());
}

}  // namespace parity::model::schemas
