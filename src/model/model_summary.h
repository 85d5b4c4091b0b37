// Human-readable and JSON summaries of an ONNX graph (what `parity inspect model` prints), in
// Polygraphy's layout: model header, graph inputs/outputs, initializers, nodes with their tensors,
// attributes and nested subgraphs.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/tensor.h"

namespace parity::model {
class Graph;
}  // namespace parity::model

namespace parity::model {

struct SummaryOptions {
  bool layers = false;   // per-node listing
  bool attrs = false;    // node attributes and doc strings (implies nothing else)
  bool weights = false;  // initializer values
  /// parity's additions to Polygraphy's text: IR version, producer, metadata, doc string and the
  /// weights summary (JSON always has them).
  bool info = false;
  /// Elements shown per tensor when printing values.
  int64_t max_values = 16;
  /// The model was loaded without its external data (--ignore-external-data): external weights show
  /// their type and shape, not their values.
  bool external_values_missing = false;
};

/// Weights of a graph and its subgraphs: initializers and the values of Constant nodes.
struct WeightStats {
  size_t initializers = 0;
  uint64_t initializer_bytes = 0;
  size_t external_initializers = 0;
  size_t constant_nodes = 0;
  uint64_t constant_node_bytes = 0;
  std::map<std::string, size_t> dtype_counts;  // dtype name -> number of tensors (both kinds)
};

WeightStats weight_stats(const model::Graph& graph);
/// "1.5 MiB (1572864 bytes)"-style size.
std::string format_bytes(uint64_t bytes);
/// Values of a tensor as "[1, 2, 3, ..., 9]" (at most max_values elements).
std::string format_values(const Tensor& tensor, int64_t max_values);

/// Text summary (no trailing newline), for logger().info.
std::string summarize_model_text(const model::Graph& graph, const SummaryOptions& options);
/// JSON summary (serialized, indented by 2).
std::string summarize_model_json(const model::Graph& graph, const SummaryOptions& options);

}  // namespace parity::model
