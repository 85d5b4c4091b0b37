// Guards around libonnx inference functions that index input shapes before checking them. A
// crafted model reaches them with the shapes that earlier nodes' inference produced, so a check of
// the declared shapes before inference cannot catch it: the schema's inference function is
// replaced by one that checks first, then calls libonnx's.
//
// Einsum-12 (onnx/defs/math/defs.cc, einsumShapeInference): a term with more letters than its
// operand's rank, ellipsis terms of different widths, and an output letter that no input term has
// all index past the end of a shape (fuzz_model_load: 'ij->i' on a rank-1 input crashed
// `inspect model --shape-inference`). They fail inference here instead, as libonnx would after
// reading out of bounds.
//
// Convolutions and MaxUnpool (onnx/defs/nn/defs.cc, old.cc) read dims of their second tensor
// without checking its rank: ConvTranspose-1/11/22 with kernel_shape given take the output
// channels from the weight's dim 1 (fuzz_model_load: a rank-1 weight under a rank-4 input crashed
// `inspect model --shape-inference`); Conv-22, ConvInteger and QLinearConv without kernel_shape
// take one kernel dim per weight dim past 2 and index the input's dims, dilations and pads with
// them, so a weight of higher rank reads past all three; MaxUnpool takes the channels from the
// indices' dim 1 (the last three found by a rank sweep of the node tests' inputs under ASan). The
// spec gives these tensors the input's rank; inference fails otherwise.
//
// Attributes used as indices or divisors unchecked (the attribute sweep in
// tests/model/inference_rank_sweep_test.cpp under ASan): pooling and convolution strides,
// dilations and kernel_shape of 0 divide by zero (LpPool-22); LayerNormalization's axis outside
// [-rank, rank) and GatherND's negative batch_dims index past the input's dims. They fail inference.
//
// Add/Sub/Mul/Div data propagation (onnx/defs/math/defs.cc, MathOpDataPropagator): an operand
// whose propagated value is an empty vector (the Shape of a scalar) broadcast against a one-element
// vector reads element 0 of the empty one (a rank sweep of the node tests' inputs under ASan:
// Sub-14 in the expanded Attention-24 tests). An empty operand propagates nothing instead; the
// node's shape inference is untouched.
//
// SplitToSequence-11 (onnx/defs/sequence/defs.cc) divides the axis by a constant scalar split and
// sums a constant 1-D one unchecked: a split of 0 raised SIGFPE, INT64_MAX entries overflowed (the
// constant-input value sweep in tests/runtime/run_value_sweep_test.cpp). Inference fails unless a
// scalar split is positive and 1-D entries are non-negative with a sum that fits.
//
// Every schema: an input whose value has no type (a name nothing defines, or the output of a node
// whose own inference gave none) reaches inference functions that use the type unchecked, e.g.
// EyeLike-9 with its dtype attribute copies the shape of a null type (fuzz_model_load: a 148-byte
// model crashed `inspect model --shape-inference` and `check lint`). A required input without a
// type fails inference first, with the message libonnx's own type propagation gives for it.
//
// Every schema: a node with fewer outputs than its schema's minimum reaches inference functions
// that divide by the output count, e.g. Split-2/11/13 without a split (fuzz_model_load: a Split
// node with no outputs raised SIGFPE in `inspect model --shape-inference` and `check lint`). It
// fails inference first, as the checker's arity check would.
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

size_t count_labels(const std::string& term) {
  size_t n = 0;
  for (char c : term) n += is_label(c) ? 1 : 0;
  return n;
}

/// Fails inference unless every operand term fits its operand's rank the way einsumShapeInference
/// reads them (letters = rank without an ellipsis, letters <= rank with one, every ellipsis the same
/// width) and every output letter occurs in an input term.
void check_einsum_equation(onnx::InferenceContext& ctx, const std::string& equation) {
  const size_t num_inputs = ctx.getNumInputs();
  if (num_inputs < 1 || !onnx::hasNInputShapes(ctx, static_cast<int>(num_inputs))) return;
  const size_t arrow = equation.find("->");
  const std::string left = equation.substr(0, arrow);
  std::set<char> input_labels;
  std::optional<size_t> ellipsis_width;
  size_t operand = 0, start = 0;
  while (true) {
    const size_t comma = left.find(',', start);
    const std::string term = left.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (operand >= num_inputs) fail_shape_inference("Einsum: the equation has more operands than the node has inputs");
    const size_t rank = static_cast<size_t>(ctx.getInputType(operand)->tensor_type().shape().dim_size());
    const size_t labels = count_labels(term);
    for (char c : term)
      if (is_label(c)) input_labels.insert(c);
    if (term.find("...") == std::string::npos) {
      if (labels != rank)
        fail_shape_inference("Einsum: term '", term, "' has ", labels, " indices but input ", operand, " has rank ",
                             rank);
    } else {
      if (labels > rank)
        fail_shape_inference("Einsum: term '", term, "' has ", labels, " indices but input ", operand, " has rank ",
                             rank);
      if (ellipsis_width && *ellipsis_width != rank - labels)
        fail_shape_inference("Einsum: the ellipses of the equation stand for different numbers of dimensions");
      ellipsis_width = rank - labels;
    }
    ++operand;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow == std::string::npos) return;
  for (char c : equation.substr(arrow + 2))
    if (is_label(c) && input_labels.count(c) == 0)
      fail_shape_inference("Einsum: output index '", std::string(1, c), "' occurs in no input term");
}

void guard_einsum() {
  const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema("Einsum", 12, "");
  if (base == nullptr || base->SinceVersion() != 12 || !base->GetTypeAndShapeInferenceFunction()) return;
  onnx::OpSchema guarded = *base;
  const onnx::InferenceFunction libonnx_inference = base->GetTypeAndShapeInferenceFunction();
  guarded.TypeAndShapeInferenceFunction([libonnx_inference](onnx::InferenceContext& ctx) {
    if (const onnx::AttributeProto* equation = ctx.getAttribute("equation"); equation && equation->has_s())
      check_einsum_equation(ctx, equation->s());
    libonnx_inference(ctx);
  });
  onnx::DeregisterSchema("Einsum", 12, onnx::ONNX_DOMAIN);
  register_schema(std::move(guarded));
}

/// An operator whose tensor at `other_index` must have the rank of its input 0.
struct SameRankAsInput {
  const char* op;
  size_t other_index;
  const char* other_name;
};

constexpr SameRankAsInput kSameRankAsInput[] = {
    {"Conv", 1, "weight"},        {"ConvInteger", 1, "weight"},   {"QLinearConv", 3, "weight"},
    {"ConvTranspose", 1, "weight"}, {"DeformConv", 1, "weight"}, {"MaxUnpool", 1, "indices"},
};

/// Fails inference when both shapes are known and their ranks differ.
void check_same_rank_as_input(onnx::InferenceContext& ctx, const SameRankAsInput& rule) {
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, rule.other_index)) return;
  const int input_rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const int other_rank = ctx.getInputType(rule.other_index)->tensor_type().shape().dim_size();
  if (input_rank != other_rank)
    fail_shape_inference(rule.op, ": the ", rule.other_name, " (input ", rule.other_index, ") has rank ", other_rank,
                         " but the input has rank ", input_rank);
}

using Schemas = std::vector<onnx::OpSchema>;

/// Runs `check` before libonnx's inference for every version of `op` (default domain). The
/// registry owns its schemas as non-const objects and hands out const pointers; the function is
/// replaced in place, once, before any model is inferred. `schemas` is the registry's list, copied
/// once for all guards (each copy is the whole registry: under ASan, whose quarantine keeps freed
/// memory, a copy per guard added 70 MB to the first model load).
void check_before_inference(const Schemas& schemas, const std::string& op,
                            const std::function<void(onnx::InferenceContext&)>& check) {
  for (const onnx::OpSchema& listed : schemas) {
    if (listed.Name() != op || !listed.domain().empty()) continue;
    const onnx::OpSchema* registered = onnx::OpSchemaRegistry::Schema(op, listed.SinceVersion(), "");
    if (registered == nullptr || registered->SinceVersion() != listed.SinceVersion()) continue;
    const onnx::InferenceFunction libonnx_inference = registered->GetTypeAndShapeInferenceFunction();
    if (!libonnx_inference) continue;
    const_cast<onnx::OpSchema*>(registered)->TypeAndShapeInferenceFunction(
        [libonnx_inference, check](onnx::InferenceContext& ctx) {
          check(ctx);
          libonnx_inference(ctx);
        });
  }
}

void guard_same_rank_inputs(const Schemas& schemas) {
  for (const SameRankAsInput& rule : kSameRankAsInput)
    check_before_inference(schemas, rule.op, [rule](onnx::InferenceContext& ctx) { check_same_rank_as_input(ctx, rule); });
}

int input_rank(onnx::InferenceContext& ctx, size_t index) {
  return ctx.getInputType(index)->tensor_type().shape().dim_size();
}

/// Fails inference unless every value of the INTS attributes `names` is at least 1.
void check_positive_ints(onnx::InferenceContext& ctx, const char* op, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const onnx::AttributeProto* attribute = ctx.getAttribute(name))
      for (int64_t value : attribute->ints())
        if (value < 1) fail_shape_inference(op, ": attribute ", name, " has the value ", value, "; it must be 1 or more");
}

void guard_attribute_ranges(const Schemas& schemas) {
  for (const char* op : {"AveragePool", "MaxPool", "LpPool", "Conv", "ConvInteger", "QLinearConv", "ConvTranspose"})
    check_before_inference(schemas, op, [op](onnx::InferenceContext& ctx) {
      check_positive_ints(ctx, op, {"strides", "dilations", "kernel_shape"});
    });
  check_before_inference(schemas, "LayerNormalization", [](onnx::InferenceContext& ctx) {
    if (!onnx::hasInputShape(ctx, 0)) return;
    const int64_t rank = input_rank(ctx, 0);
    const int64_t axis = onnx::getAttribute(ctx, "axis", -1);
    if (axis < -rank || axis >= rank)
      fail_shape_inference("LayerNormalization: axis ", axis, " is outside [", -rank, ", ", rank - 1, "]");
  });
  check_before_inference(schemas, "GatherND", [](onnx::InferenceContext& ctx) {
    if (!onnx::hasNInputShapes(ctx, 2)) return;
    const int64_t batch_dims = onnx::getAttribute(ctx, "batch_dims", 0);
    const int64_t limit = std::min(input_rank(ctx, 0), input_rank(ctx, 1));
    if (batch_dims < 0 || batch_dims >= limit)
      fail_shape_inference("GatherND: batch_dims ", batch_dims, " must be in [0, ", limit,
                           "), below the ranks of data and indices");
  });
}

void guard_math_data_propagation(const Schemas& schemas) {
  for (const onnx::OpSchema& listed : schemas) {
    const std::string& name = listed.Name();
    if (!listed.domain().empty() || (name != "Add" && name != "Sub" && name != "Mul" && name != "Div")) continue;
    const onnx::OpSchema* registered = onnx::OpSchemaRegistry::Schema(name, listed.SinceVersion(), "");
    if (registered == nullptr || registered->SinceVersion() != listed.SinceVersion() ||
        !registered->has_data_propagation_function())
      continue;
    const onnx::DataPropagationFunction libonnx_propagation = registered->GetDataPropagationFunction();
    const_cast<onnx::OpSchema*>(registered)->PartialDataPropagationFunction(
        [libonnx_propagation](onnx::DataPropagationContext& ctx) {
          for (size_t i = 0; i < 2 && i < ctx.getNumInputs(); ++i)
            if (const onnx::TensorShapeProto* value = ctx.getInputData(i); value && value->dim_size() == 0) return;
          libonnx_propagation(ctx);
        });
  }
}

/// The values of a constant int32 or int64 tensor (empty for other types).
std::vector<int64_t> constant_integers(const onnx::TensorProto& tensor) {
  if (tensor.data_type() == onnx::TensorProto::INT64) return onnx::ParseData<int64_t>(&tensor);
  if (tensor.data_type() != onnx::TensorProto::INT32) return {};
  const std::vector<int32_t> values = onnx::ParseData<int32_t>(&tensor);
  return {values.begin(), values.end()};
}

void guard_constant_splits(const Schemas& schemas) {
  check_before_inference(schemas, "SplitToSequence", [](onnx::InferenceContext& ctx) {
    const onnx::TensorProto* split = ctx.getNumInputs() > 1 ? ctx.getInputData(1) : nullptr;
    if (split == nullptr) return;
    const std::vector<int64_t> sizes = constant_integers(*split);
    if (split->dims_size() == 0) {
      if (sizes.size() == 1 && sizes[0] < 1)
        fail_shape_inference("SplitToSequence: the scalar split is ", sizes[0], "; it must be 1 or more");
      return;
    }
    int64_t sum = 0;
    for (int64_t size : sizes)
      if (size < 0 || __builtin_add_overflow(sum, size, &sum))
        fail_shape_inference("SplitToSequence: the split ", size < 0 ? "has the negative entry " : "overflows at ",
                             size, "; entries must be 0 or more and sum to the axis");
  });
}

/// Whether input `i` of a node is one the schema requires (a single formal input, or one of a
/// variadic group past its minimum arity is not: those may be absent).
bool is_required_input(const onnx::OpSchema& schema, size_t i) {
  const auto& formals = schema.inputs();
  if (formals.empty()) return false;
  if (i < formals.size() && formals[i].GetOption() == onnx::OpSchema::Single) return true;
  const auto& last = formals.back();
  return i >= formals.size() - 1 && last.GetOption() == onnx::OpSchema::Variadic &&
         i - (formals.size() - 1) < static_cast<size_t>(std::max(last.GetMinArity(), 1));
}

/// Fails inference when the node has fewer outputs than the schema requires, or a required input
/// has no type.
void check_outputs_and_input_types(onnx::InferenceContext& ctx, const onnx::OpSchema& schema) {
  const size_t min_outputs = static_cast<size_t>(std::max(schema.min_output(), 0));
  if (ctx.getNumOutputs() < min_outputs)
    fail_shape_inference(schema.Name(), "-", schema.SinceVersion(), ": the node has ", ctx.getNumOutputs(),
                         " outputs; it needs at least ", min_outputs);
  for (size_t i = 0; i < ctx.getNumInputs(); ++i)
    if (ctx.getInputType(i) == nullptr && is_required_input(schema, i))
      fail_type_inference("Input ", i, " expected to have type but instead is null");
}

void guard_outputs_and_untyped_inputs(const Schemas& schemas) {
  for (const onnx::OpSchema& listed : schemas) {
    const onnx::OpSchema* registered =
        onnx::OpSchemaRegistry::Schema(listed.Name(), listed.SinceVersion(), listed.domain());
    if (registered == nullptr || registered->SinceVersion() != listed.SinceVersion()) continue;
    const onnx::InferenceFunction inference = registered->GetTypeAndShapeInferenceFunction();
    if (!inference) continue;
    // The registry owns its schemas as non-const objects and hands out const pointers; the
    // inference function is replaced in place, once, before any model is inferred.
    auto* schema = const_cast<onnx::OpSchema*>(registered);
    schema->TypeAndShapeInferenceFunction([schema, inference](onnx::InferenceContext& ctx) {
      check_outputs_and_input_types(ctx, *schema);
      inference(ctx);
    });
  }
}

}  // namespace

void guard_libonnx_inference() {
  guard_einsum();
  const Schemas schemas = onnx::OpSchemaRegistry::get_all_schemas_with_history();
  guard_same_rank_inputs(schemas);
  guard_math_data_propagation(schemas);
  guard_attribute_ranges(schemas);
  guard_constant_splits(schemas);
  // Last, so that its checks run before the guards above read input types or output counts.
  guard_outputs_and_untyped_inputs(schemas);
}

}  // namespace parity::model::schemas
