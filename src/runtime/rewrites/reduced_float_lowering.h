// Puts float16 and bfloat16 graphs on the optimized kernels, which compute in float32: without
// this rewrite every layer of such a model runs on a reference kernel (the oracle, which computes
// each layer in the model's type and rounds its output to it).
//
// The planner runs it on the main graph's nodes after function inlining and before any kernel is
// chosen, in optimized plans unless SessionOptions::reduced_floats asks for the strict semantics:
// - float16/bfloat16 initializers, Constant and ConstantOfShape values are converted to float32
//   once, at plan time (exactly: every float16 and bfloat16 value is a float32 value);
// - every float16/bfloat16 value inside the graph is carried as float32: layers compute on it in
//   float32 and their outputs are not rounded to the narrow type (closer to exact arithmetic than
//   the per-layer rounding of the reference kernels);
// - conversions remain at the graph's edges (a float16 input is widened on entry, a float16 output
//   narrowed on exit, so callers see the dtypes the model declares) and at the model's own Casts:
//   a Cast from a wider type to float16/bfloat16 rounds the value but keeps it float32
//   ("ai.parity" RoundToReducedFloat), a Cast from float16/bfloat16 to float32 disappears, and a
//   pair float16 -> float32 -> float16 (convert --fp-to-fp16 puts one around each layer it keeps
//   in float32) cancels;
// - attributes that ask for a float16/bfloat16 result (EyeLike's dtype, RandomNormal's, ...) ask
//   for float32.
// It declines (changes nothing, the reference kernels run the graph) when the graph has subgraphs
// (If, Loop, Scan), a node outside the ONNX domain, a float16 output that no node produces, or a
// CastLike whose target type is unknown.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity::runtime {

/// The main graph as the planner holds it before kernels exist; the rewrite edits it in place.
struct ReducedFloatGraph {
  /// The graph's nodes after function inlining; edited in place.
  std::vector<onnx::NodeProto*> nodes;
  /// Graph inputs (fed values and initializer defaults) and outputs, by name.
  std::vector<std::string> inputs, outputs;
  /// The graph's initializers; float16/bfloat16 ones that are not graph inputs become float32.
  std::vector<std::pair<std::string, Tensor*>> initializers;
  /// In: the model's value types (declared and inferred). Out: the types the kernels see.
  std::map<std::string, onnx::TypeProto> types;

  // Out:
  /// Per node of `nodes`: dropped (its readers now read what it read).
  std::vector<bool> removed;
  /// Nodes to run before `nodes` (widening inputs) and after them (narrowing outputs).
  std::vector<onnx::NodeProto> entry_nodes, exit_nodes;
};

/// Lowers `g` (see the file comment). Returns how many values are now carried as float32 instead
/// of float16/bfloat16 (edge conversions included); 0 when the graph has none or the rewrite
/// declined (then `g` is unchanged).
int lower_reduced_floats(ReducedFloatGraph& g);

}  // namespace parity::runtime
