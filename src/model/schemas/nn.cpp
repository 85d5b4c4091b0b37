// The nn family's operators ONNX added after opset 22 (ONNX keeps them in onnx/defs/nn/; the
// file's name is the family reports group them under): transformer and state-space operators Attention-23/24/25,
// RMSNormalization-23, RotaryEmbedding-23, LinearAttention-27, CausalConvWithState-27 and
// ai.onnx.preview's FlexAttention-1, with their type and shape inference.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md#Attention
#include <onnx/defs/shape_inference.h>

#include <optional>

#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

namespace {

using Dim = onnx::TensorShapeProto_Dimension;
using Shape = onnx::TensorShapeProto;

const Shape* input_shape(onnx::InferenceContext& ctx, size_t index) {
  return onnx::hasInputShape(ctx, index) ? &onnx::getInputShape(ctx, index) : nullptr;
}

void require_rank(const Shape* shape, std::initializer_list<int> ranks, const char* op, const char* input) {
  if (shape == nullptr) return;
  for (int r : ranks)
    if (shape->dim_size() == r) return;
  fail_shape_inference(op, ": input ", input, " has rank ", shape->dim_size(), ", which the operator does not take");
}

// dim / divisor when dim is known; unknown otherwise.
Dim divided(const Dim& dim, int64_t divisor) {
  Dim out;
  if (dim.has_dim_value() && divisor > 0) out.set_dim_value(dim.dim_value() / divisor);
  return out;
}

// A dim from a crafted model or attribute may be near INT64_MAX; a result past it is no shape.
Dim multiplied(const Dim& dim, int64_t factor) {
  Dim out;
  int64_t product = 0;
  if (dim.has_dim_value() && factor > 0) {
    if (__builtin_mul_overflow(dim.dim_value(), factor, &product))
      fail_shape_inference("a dimension of ", dim.dim_value(), " times ", factor, " overflows 64 bits");
    out.set_dim_value(product);
  }
  return out;
}

Dim summed(const Dim& a, const Dim& b) {
  Dim out;
  int64_t sum = 0;
  if (a.has_dim_value() && b.has_dim_value()) {
    if (__builtin_add_overflow(a.dim_value(), b.dim_value(), &sum))
      fail_shape_inference("dimensions ", a.dim_value(), " and ", b.dim_value(), " add past 64 bits");
    out.set_dim_value(sum);
  }
  return out;
}

void set_output_shape(onnx::InferenceContext& ctx, size_t output, std::initializer_list<Dim> dims) {
  if (ctx.getNumOutputs() <= output || ctx.getOutputType(output) == nullptr) return;
  Shape* shape = onnx::getOutputShape(ctx, output);
  shape->clear_dim();
  for (const Dim& d : dims) *shape->add_dim() = d;
}

bool has_output(onnx::InferenceContext& ctx, size_t output) {
  return ctx.getNumOutputs() > output && ctx.getOutputType(output) != nullptr;
}

// Attention: Q, K, V are 4-D (batch, heads, sequence, head size) or 3-D (batch, sequence, heads *
// head size, with q_num_heads/kv_num_heads); past_key/past_value are 4-D and grow by K's sequence.
void infer_attention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (has_output(ctx, 1)) onnx::propagateElemTypeFromInputToOutput(ctx, 1, 1);
  if (has_output(ctx, 2)) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
  if (has_output(ctx, 3)) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
  const Shape* q = input_shape(ctx, 0);
  const Shape* k = input_shape(ctx, 1);
  const Shape* v = input_shape(ctx, 2);
  require_rank(q, {3, 4}, "Attention", "Q");
  require_rank(k, {3, 4}, "Attention", "K");
  require_rank(v, {3, 4}, "Attention", "V");
  if (q == nullptr || k == nullptr || v == nullptr) return;
  const int64_t q_heads_attr = onnx::getAttribute(ctx, "q_num_heads", 0);
  const int64_t kv_heads_attr = onnx::getAttribute(ctx, "kv_num_heads", 0);
  const bool q_3d = q->dim_size() == 3;
  if ((q_3d || k->dim_size() == 3 || v->dim_size() == 3) && (q_heads_attr <= 0 || kv_heads_attr <= 0))
    fail_shape_inference("Attention: 3-D Q, K or V needs the attributes q_num_heads and kv_num_heads");
  const Dim batch = q->dim(0);
  const Dim q_seq = q_3d ? q->dim(1) : q->dim(2);
  Dim q_heads;
  if (q_3d) q_heads.set_dim_value(q_heads_attr);
  else q_heads = q->dim(1);
  const Dim kv_seq = k->dim_size() == 3 ? k->dim(1) : k->dim(2);
  Dim kv_heads;
  if (k->dim_size() == 3) kv_heads.set_dim_value(kv_heads_attr);
  else kv_heads = k->dim(1);
  const Dim head = k->dim_size() == 3 ? divided(k->dim(2), kv_heads_attr) : k->dim(3);
  const Dim v_head = v->dim_size() == 3 ? divided(v->dim(2), kv_heads_attr) : v->dim(3);

  if (q_3d) set_output_shape(ctx, 0, {batch, q_seq, multiplied(v_head, q_heads_attr)});
  else set_output_shape(ctx, 0, {batch, q_heads, q_seq, v_head});

  // present_key/present_value: past (if given) followed by this call's keys/values.
  Dim total_seq = kv_seq;
  const Shape* past_key = ctx.getNumInputs() > 4 ? input_shape(ctx, 4) : nullptr;
  require_rank(past_key, {4}, "Attention", "past_key");
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4) != nullptr) total_seq = past_key ? summed(past_key->dim(2), kv_seq) : Dim();
  if (has_output(ctx, 1)) set_output_shape(ctx, 1, {batch, kv_heads, total_seq, head});
  if (has_output(ctx, 2)) set_output_shape(ctx, 2, {batch, kv_heads, total_seq, v_head});
  if (has_output(ctx, 3)) set_output_shape(ctx, 3, {batch, q_heads, q_seq, total_seq});
}

onnx::OpSchema attention(int since_version) {
  onnx::OpSchema schema("Attention", __FILE__, __LINE__);
  schema.SinceVersion(since_version)
      .SetDoc("Scaled dot-product attention with grouped-query heads, causal and additive masks and a key/value cache.")
      .Attr("is_causal", "Mask future positions.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("kv_num_heads", "Number of key/value heads (3-D inputs).", onnx::AttributeProto::INT, false)
      .Attr("q_num_heads", "Number of query heads (3-D inputs).", onnx::AttributeProto::INT, false)
      .Attr("qk_matmul_output_mode", "What the fourth output holds.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("scale", "Scale of Q*K^T (default 1/sqrt(head size)).", onnx::AttributeProto::FLOAT, false)
      .Attr("softcap", "Softcap of the scores (0: none).", onnx::AttributeProto::FLOAT, 0.0f)
      .Attr("softmax_precision", "Data type of the softmax.", onnx::AttributeProto::INT, false)
      .Input(0, "Q", "Query.", "T1")
      .Input(1, "K", "Key.", "T1")
      .Input(2, "V", "Value.", "T2")
      .Input(3, "attn_mask", "Boolean or additive mask.", "U", onnx::OpSchema::Optional)
      .Input(4, "past_key", "Key cache.", "T1", onnx::OpSchema::Optional)
      .Input(5, "past_value", "Value cache.", "T2", onnx::OpSchema::Optional);
  if (since_version >= 24)
    schema.Input(6, "nonpad_kv_seqlen", "Valid key/value length per batch entry.", "tensor(int64)", onnx::OpSchema::Optional);
  if (since_version >= 25)
    schema.Attr("left_window_size", "Positions left of the query that may be attended (-1: all).", onnx::AttributeProto::INT,
                static_cast<int64_t>(-1))
        .Attr("right_window_size", "Positions right of the query that may be attended (-1: all).", onnx::AttributeProto::INT,
              static_cast<int64_t>(-1));
  schema.Output(0, "Y", "Attention output.", "T1")
      .Output(1, "present_key", "Updated key cache.", "T1", onnx::OpSchema::Optional)
      .Output(2, "present_value", "Updated value cache.", "T2", onnx::OpSchema::Optional)
      .Output(3, "qk_matmul_output", "Scores (see qk_matmul_output_mode).", "T1", onnx::OpSchema::Optional)
      .TypeConstraint("T1", float_types(), "Float tensors.")
      .TypeConstraint("T2", float_types(), "Float tensors.")
      .TypeConstraint("U",
                      {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(int8)",
                       "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(bfloat16)", "tensor(float16)",
                       "tensor(float)", "tensor(double)", "tensor(bool)"},
                      "Mask types.")
      .TypeAndShapeInferenceFunction(infer_attention);
  return schema;
}

// RMSNormalization: Y has X's shape and the scale's type; axis must be within X's rank.
void infer_rms_normalization(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  const Shape* x = input_shape(ctx, 0);
  if (x == nullptr) return;
  const int64_t axis = onnx::getAttribute(ctx, "axis", -1);
  if (axis < -x->dim_size() || axis >= x->dim_size())
    fail_shape_inference("RMSNormalization: axis ", axis, " is out of range for rank ", x->dim_size());
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

onnx::OpSchema rms_normalization_23() {
  onnx::OpSchema schema("RMSNormalization", __FILE__, __LINE__);
  schema.SinceVersion(23)
      .SetDoc("Y = X / sqrt(mean(X^2 over the axes from axis on) + epsilon) * scale.")
      .Attr("axis", "First normalized axis.", onnx::AttributeProto::INT, static_cast<int64_t>(-1))
      .Attr("epsilon", "Added to the mean square.", onnx::AttributeProto::FLOAT, 1e-5f)
      .Attr("stash_type", "Data type of the computation.", onnx::AttributeProto::INT, static_cast<int64_t>(1))
      .Input(0, "X", "Input tensor.", "T")
      .Input(1, "scale", "Scale, broadcastable to the normalized axes.", "V")
      .Output(0, "Y", "Normalized tensor.", "V")
      .TypeConstraint("T", float_types(), "Float tensors.")
      .TypeConstraint("V", float_types(), "Float tensors.")
      .TypeAndShapeInferenceFunction(infer_rms_normalization);
  return schema;
}

void infer_rotary_embedding(onnx::InferenceContext& ctx) {
  require_rank(input_shape(ctx, 0), {3, 4}, "RotaryEmbedding", "X");
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
}

onnx::OpSchema rotary_embedding_23() {
  onnx::OpSchema schema("RotaryEmbedding", __FILE__, __LINE__);
  schema.SinceVersion(23)
      .SetDoc("Rotary positional embedding of X from cos/sin caches (interleaved or half-split pairs).")
      .Attr("interleaved", "Rotate interleaved pairs.", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("num_heads", "Number of heads (3-D X).", onnx::AttributeProto::INT, false)
      .Attr("rotary_embedding_dim", "Rotated part of the head (0: all).", onnx::AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "X", "Input tensor.", "T")
      .Input(1, "cos_cache", "Cosine cache.", "T")
      .Input(2, "sin_cache", "Sine cache.", "T")
      .Input(3, "position_ids", "Positions into the caches.", "M", onnx::OpSchema::Optional)
      .Output(0, "Y", "Rotated tensor of X's shape.", "T")
      .TypeConstraint("T", float_types_no_double(), "Float tensors.")
      .TypeConstraint("M", {"tensor(int64)"}, "Position ids.")
      .TypeAndShapeInferenceFunction(infer_rotary_embedding);
  return schema;
}

// LinearAttention: output (B, T, q_heads * d_v), present_state (B, kv_heads, d_k, d_v).
void infer_linear_attention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const bool has_past = ctx.getNumInputs() > 3 && ctx.getInputType(3) != nullptr;
  onnx::propagateElemTypeFromInputToOutput(ctx, has_past ? 3 : 0, 1);
  const Shape* q = input_shape(ctx, 0);
  const Shape* k = input_shape(ctx, 1);
  const Shape* v = input_shape(ctx, 2);
  require_rank(q, {3}, "LinearAttention", "query");
  require_rank(k, {3}, "LinearAttention", "key");
  require_rank(v, {3}, "LinearAttention", "value");
  const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", 0);
  const int64_t kv_heads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0)
    fail_shape_inference("LinearAttention: q_num_heads (", q_heads, ") must be a positive multiple of kv_num_heads (",
                         kv_heads, ")");
  if (q == nullptr || k == nullptr || v == nullptr) return;
  const Dim d_k = divided(k->dim(2), kv_heads);
  const Dim d_v = divided(v->dim(2), kv_heads);
  set_output_shape(ctx, 0, {q->dim(0), q->dim(1), multiplied(d_v, q_heads)});
  Dim heads;
  heads.set_dim_value(kv_heads);
  set_output_shape(ctx, 1, {q->dim(0), heads, d_k, d_v});
}

onnx::OpSchema linear_attention_27() {
  onnx::OpSchema schema("LinearAttention", __FILE__, __LINE__);
  schema.SinceVersion(27)
      .SetDoc("Linear attention (linear, gated, delta, gated_delta recurrences) over packed 3-D inputs with a 4-D state.")
      .Attr("chunk_size", "Chunk length of chunk-parallel implementations.", onnx::AttributeProto::INT, static_cast<int64_t>(64))
      .Attr("kv_num_heads", "Number of key/value heads.", onnx::AttributeProto::INT, true)
      .Attr("q_num_heads", "Number of query heads.", onnx::AttributeProto::INT, true)
      .Attr("scale", "Output scale (0: 1/sqrt(d_k)).", onnx::AttributeProto::FLOAT, 0.0f)
      .Attr("update_rule", "linear, gated, delta or gated_delta.", onnx::AttributeProto::STRING, std::string("gated_delta"))
      .Input(0, "query", "(B, T, H_q * d_k).", "T")
      .Input(1, "key", "(B, T, H_kv * d_k).", "T")
      .Input(2, "value", "(B, T, H_kv * d_v).", "T")
      .Input(3, "past_state", "(B, H_kv, d_k, d_v).", "S", onnx::OpSchema::Optional)
      .Input(4, "decay", "Log-space decay gate.", "T", onnx::OpSchema::Optional)
      .Input(5, "beta", "Update rate.", "T", onnx::OpSchema::Optional)
      .Output(0, "output", "(B, T, H_q * d_v).", "T")
      .Output(1, "present_state", "(B, H_kv, d_k, d_v).", "S")
      .TypeConstraint("T", float_types_no_double(), "Float tensors.")
      .TypeConstraint("S", float_types_no_double(), "Float tensors.")
      .TypeAndShapeInferenceFunction(infer_linear_attention);
  return schema;
}

// CausalConvWithState: output has the input's shape, present_state is (B, C, k - 1).
void infer_causal_conv(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  const Shape* x = input_shape(ctx, 0);
  const Shape* w = input_shape(ctx, 1);
  require_rank(x, {3}, "CausalConvWithState", "input");
  require_rank(w, {3}, "CausalConvWithState", "weight");
  if (x == nullptr) return;
  onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  Dim state;
  if (w != nullptr && w->dim(2).has_dim_value() && w->dim(2).dim_value() >= 1)
    state.set_dim_value(w->dim(2).dim_value() - 1);
  set_output_shape(ctx, 1, {x->dim(0), x->dim(1), state});
}

onnx::OpSchema causal_conv_with_state_27() {
  onnx::OpSchema schema("CausalConvWithState", __FILE__, __LINE__);
  schema.SinceVersion(27)
      .SetDoc("Stateful causal depthwise 1-D convolution (batch, channels, length) with a carried state.")
      .Attr("activation", "none, silu or swish.", onnx::AttributeProto::STRING, std::string("none"))
      .Input(0, "input", "(B, C, L).", "T")
      .Input(1, "weight", "(C, 1, k).", "T")
      .Input(2, "bias", "(C).", "T", onnx::OpSchema::Optional)
      .Input(3, "past_state", "(B, C, k - 1).", "T", onnx::OpSchema::Optional)
      .Output(0, "output", "(B, C, L).", "T")
      .Output(1, "present_state", "(B, C, k - 1).", "T")
      .TypeConstraint("T", float_types_no_double(), "Float tensors.")
      .TypeAndShapeInferenceFunction(infer_causal_conv);
  return schema;
}

// FlexAttention: Y is (B, Hq, L, Ev) from Q (B, Hq, L, E) and V (B, Hkv, S, Ev).
void infer_flex_attention(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const Shape* q = input_shape(ctx, 0);
  const Shape* v = input_shape(ctx, 2);
  require_rank(q, {4}, "FlexAttention", "Q");
  require_rank(input_shape(ctx, 1), {4}, "FlexAttention", "K");
  require_rank(v, {4}, "FlexAttention", "V");
  if (q == nullptr || v == nullptr) return;
  set_output_shape(ctx, 0, {q->dim(0), q->dim(1), q->dim(2), v->dim(3)});
}

onnx::OpSchema flex_attention_preview_1() {
  onnx::OpSchema schema("FlexAttention", __FILE__, __LINE__);
  schema.SetDomain("ai.onnx.preview")
      .SinceVersion(1)
      .SetDoc("Attention with optional score and probability modifier subgraphs (experimental).")
      .Attr("prob_mod", "Probability modifier subgraph.", onnx::AttributeProto::GRAPH, false)
      .Attr("scale", "Scale of Q*K^T.", onnx::AttributeProto::FLOAT, false)
      .Attr("score_mod", "Score modifier subgraph.", onnx::AttributeProto::GRAPH, false)
      .Attr("softmax_precision", "Data type of the softmax.", onnx::AttributeProto::INT, false)
      .Input(0, "Q", "(B, Hq, L, E).", "T1")
      .Input(1, "K", "(B, Hkv, S, E).", "T1")
      .Input(2, "V", "(B, Hkv, S, Ev).", "T1")
      .Output(0, "Y", "(B, Hq, L, Ev).", "T1")
      .TypeConstraint("T1", float_types(), "Float tensors.")
      .TypeAndShapeInferenceFunction(infer_flex_attention);
  return schema;
}

}  // namespace

void register_nn_schemas() {
  for (int version : {23, 24, 25}) register_schema(attention(version));
  register_schema(rms_normalization_23());
  register_schema(rotary_embedding_23());
  register_schema(linear_attention_27());
  register_schema(causal_conv_with_state_27());
  register_schema(flex_attention_preview_1());
}

}  // namespace parity::model::schemas
