// numpy.matmul's shape rules, shared by MatMul, MatMulInteger/QLinearMatMul and the oneDNN MatMul.
// Spec: https://onnx.ai/onnx/operators/onnx__MatMul.html (numpy.matmul semantics).
#pragma once

#include <optional>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime::ops {

/// How two operands multiply: A [batch_a..., m, k] x B [batch_b..., k, n] -> [batch..., m, n]. A
/// 1-D A is a row [1, k] and a 1-D B a column [k, 1]; their unit dim is left out of `out`.
struct MatMulShapes {
  int64_t m = 0, k = 0, n = 0;
  bool a_vector = false, b_vector = false;
  Shape batch_a, batch_b;  // each operand's batch dims, right-aligned to the rank of batch (1s in front)
  Shape batch;             // the broadcast batch dims
  Shape out;               // the product's shape
};

/// The shapes of A x B; nullopt when an operand is a scalar, the inner dims differ or the batch
/// dims do not broadcast.
std::optional<MatMulShapes> matmul_shapes(const Shape& a, const Shape& b);

/// As matmul_shapes for operands of rank >= 1, failing the node (kRuntime) with the reason when
/// they do not multiply.
MatMulShapes matmul_shapes(const KernelContext& ctx, const Shape& a, const Shape& b);

}  // namespace parity::runtime::ops
