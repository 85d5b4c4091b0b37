// float32 -> float16 conversion of a graph (`parity convert --fp-to-fp16`).
//
// Every node whose operator accepts float16 (per libonnx's schema for the model's opset) computes in
// float16; nodes that cannot (schema allows only float32 for an input, custom or unknown ops, nodes
// with subgraphs, a small list of numerically delicate ops) keep float32, with Casts at their
// edges. Graph inputs and outputs keep their dtype by default (Casts at the edges too).
#pragma once

#include <set>
#include <string>

#include "model/graph.h"

namespace parity::model::transforms {

struct Fp16Options {
  /// Keep float32 graph inputs/outputs float32 (Casts inside the graph); otherwise they become float16.
  bool keep_io_types = true;
  /// Extra op types to keep in float32 besides the built-in list.
  std::set<std::string> keep_ops;
};

struct Fp16Report {
  size_t converted_nodes = 0;
  size_t kept_nodes = 0;  // nodes with float32 tensors that stayed float32
  size_t casts_added = 0;
  size_t constants_converted = 0;
};

/// Op types kept in float32 by default: their float16 kernels are missing in common runtimes or
/// lose too much (index/box computations, cumulative sums, resampling coordinates).
const std::set<std::string>& default_fp32_ops();

/// Converts the graph in place. Values need dtypes: build the graph with graph_with_inferred_types.
Fp16Report convert_to_fp16(model::Graph& graph, const Fp16Options& options = {});

}  // namespace parity::model::transforms
