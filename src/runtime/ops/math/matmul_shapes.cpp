#include "runtime/ops/math/matmul_shapes.h"

#include <algorithm>

#include "runtime/ops/common/broadcast.h"

namespace parity::runtime::ops {
namespace {

/// The operands as matrices: m, k, n and the vector flags set; the batch dims of each unpadded.
MatMulShapes as_matrices(const Shape& a, const Shape& b, Shape& batch_a, Shape& batch_b) {
  MatMulShapes s;
  Shape sa = a, sb = b;
  s.a_vector = sa.size() == 1;
  s.b_vector = sb.size() == 1;
  if (s.a_vector) sa.insert(sa.begin(), 1);
  if (s.b_vector) sb.push_back(1);
  s.m = sa[sa.size() - 2];
  s.k = sa.back();
  s.n = sb.back();
  batch_a.assign(sa.begin(), sa.end() - 2);
  batch_b.assign(sb.begin(), sb.end() - 2);
  return s;
}

bool inner_dims_match(const MatMulShapes& s, const Shape& b) {
  return (s.b_vector ? b[0] : b[b.size() - 2]) == s.k;
}

Shape right_aligned(const Shape& dims, size_t rank) {
  Shape out(rank - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

void finish(MatMulShapes& s, const Shape& batch_a, const Shape& batch_b, Shape batch) {
  s.batch_a = right_aligned(batch_a, batch.size());
  s.batch_b = right_aligned(batch_b, batch.size());
  s.out = batch;
  s.batch = std::move(batch);
  if (!s.a_vector) s.out.push_back(s.m);
  if (!s.b_vector) s.out.push_back(s.n);
}

}  // namespace

std::optional<MatMulShapes> matmul_shapes(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  Shape batch_a, batch_b;
  MatMulShapes s = as_matrices(a, b, batch_a, batch_b);
  if (!inner_dims_match(s, b)) return std::nullopt;
  const std::optional<Shape> batch = try_broadcast_shapes(std::array<Shape, 2>{batch_a, batch_b});
  if (!batch) return std::nullopt;
  finish(s, batch_a, batch_b, *batch);
  return s;
}

MatMulShapes matmul_shapes(const KernelContext& ctx, const Shape& a, const Shape& b) {
  PARITY_ASSERT(!a.empty() && !b.empty(), "matmul_shapes: a scalar operand");
  Shape batch_a, batch_b;
  MatMulShapes s = as_matrices(a, b, batch_a, batch_b);
  if (!inner_dims_match(s, b))
    ctx.fail("inner dimensions do not match: ", shape_to_string(a), " x ", shape_to_string(b));
  finish(s, batch_a, batch_b, broadcast_shapes(ctx, {batch_a, batch_b}));
  return s;
}

}  // namespace parity::runtime::ops
