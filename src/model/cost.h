// Static cost of a model (what onnx-tool's profile table shows): per node its multiply-accumulates,
// parameters and activation bytes, counted from the graph and ONNX shape inference, without
// running anything. `inspect model --show cost` prints it; `bench` divides it by the measured
// latency to report GFLOP/s.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// One node's static cost.
struct NodeCost {
  std::string name;
  std::string op_type;
  /// Multiply-accumulates of the matrix work: Conv, ConvTranspose, MatMul, Gemm, RNN/GRU/LSTM
  /// (2 FLOPs each). Other ops count 0: their arithmetic is a few operations per element, which
  /// activation_bytes measures better.
  int64_t macs = 0;
  /// Elements of the node's constant inputs (initializers): its weights.
  int64_t params = 0;
  /// Bytes of the node's outputs.
  int64_t activation_bytes = 0;
  /// False when shape inference left an input or output shape this node's count needs unknown
  /// (its figures are then lower bounds).
  bool shapes_known = true;
};

struct ModelCost {
  std::vector<NodeCost> nodes;  // main graph, in graph order
  int64_t macs = 0;
  int64_t params = 0;           // every initializer once, however many nodes read it
  int64_t activation_bytes = 0;
  int64_t nodes_with_unknown_shapes = 0;
  /// 2 * macs.
  double flops() const { return 2.0 * static_cast<double>(macs); }
};

/// Counts the main graph's cost. `input_shapes` fixes graph input dims (by input name) before
/// shape inference, for models with dynamic dims; inputs not named keep their declared shapes.
/// Large initializer values are not copied: only their dims matter.
ModelCost count_cost(const onnx::ModelProto& model, const std::map<std::string, Shape>& input_shapes = {});

/// The per-node table and the totals, as text (no trailing newline).
std::string cost_table_text(const ModelCost& cost);

/// "1.23 G", "456 M", "7.8 k", "12": a count with an SI suffix.
std::string format_count(double value);

}  // namespace parity::model
