// 2:4 structured sparsity as Polygraphy's `surgeon prune` and weight-strip see it: the weights of
// MatMul, Gemm and Conv (found through Q/DQ/Cast and Transpose producers) whose every group of four
// consecutive values along the reduction axis holds at least two zeros.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/model.h"

namespace parity::model::transforms {

/// An initializer that 2:4 sparsity applies to, and the axis the groups of four run along.
struct SparsityCandidate {
  std::string name;
  int64_t axis = 0;
};

/// Initializers of the main graph that feed MatMul (A along axis 1, B along 0), Gemm (per transA/
/// transB) or Conv weights (axis 1), directly or through QuantizeLinear/DequantizeLinear/Cast
/// (axis kept) and Transpose (axis mapped through perm). Only float32/float16/bfloat16 tensors whose
/// axis length is a multiple of 4 qualify.
std::vector<SparsityCandidate> sparsity_candidates(const onnx::ModelProto& model);

/// True when every group of four along `axis` has at least two zeros.
bool is_2_4_sparse(const Tensor& tensor, int64_t axis);
/// Zeroes the two smallest magnitudes of every group of four along `axis` (in place).
void prune_2_4(Tensor& tensor, int64_t axis);

/// The candidates that are 2:4 sparse already (values read from external data where needed;
/// tensors without values are skipped).
std::set<std::string> sparse_2_4_tensors(const model::Model& model);

/// `surgeon prune`: prunes every candidate not in `skip` to 2:4 sparsity, in place. Returns the
/// names pruned, in initializer order.
std::vector<std::string> prune_model_2_4(model::Model& model, const std::set<std::string>& skip = {});

}  // namespace parity::model::transforms
