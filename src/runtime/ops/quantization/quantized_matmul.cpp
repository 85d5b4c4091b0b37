// Spec: https://onnx.ai/onnx/operators/onnx__MatMulInteger.html, onnx__QLinearMatMul.html
// MatMulInteger and QLinearMatMul: integer matrix products with zero points (scalar, or per row of
// A / per column of B), numpy.matmul batching.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/ops/common/broadcast.h"
#include "runtime/ops/math/matmul_shapes.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

using MatMulQuantTypes = TypeList<uint8_t, int8_t>;

/// Operand widened to int32 with its zero point(s) subtracted. per_row: zero point varies along
/// the second-to-last dim (A), otherwise along the last dim (B).
std::vector<int32_t> centered(const KernelContext& ctx, const Tensor& t, const Tensor* zero_point, bool per_row,
                              const char* what) {
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  const int64_t rank = t.rank();
  const int64_t cols = t.dim(rank - 1);
  const int64_t rows = rank >= 2 ? t.dim(rank - 2) : 1;
  std::vector<int32_t> zp;
  if (zero_point) {
    if (zero_point->dtype() != t.dtype())
      ctx.fail(what, " zero point has type ", dtype_name(zero_point->dtype()), ", expected ", dtype_name(t.dtype()));
    const int64_t expected = per_row ? rows : cols;
    if (zero_point->numel() != 1 && zero_point->numel() != expected)
      ctx.fail(what, " zero point must have 1 or ", expected, " elements, got ", zero_point->numel());
    for (int64_t i = 0; i < zero_point->numel(); ++i) zp.push_back(static_cast<int32_t>(zero_point->value_as_double(i)));
  }
  dispatch_dtype<MatMulQuantTypes>(t.dtype(), ctx, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    const Q* p = t.data<Q>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      int32_t z = 0;
      if (zp.size() == 1) z = zp[0];
      else if (!zp.empty()) z = zp[per_row ? (i / cols) % rows : i % cols];
      out[i] = static_cast<int32_t>(p[i]) - z;
    }
  });
  return out;
}

/// Batched int32 product with numpy.matmul shape rules; returns the int32 result and its shape.
std::vector<int32_t> int_matmul(const KernelContext& ctx, const Tensor& a, const std::vector<int32_t>& av,
                                const Tensor& b, const std::vector<int32_t>& bv, Shape& out_shape) {
  if (a.rank() == 0 || b.rank() == 0) ctx.fail("inputs must have rank >= 1");
  const MatMulShapes s = matmul_shapes(ctx, a.shape(), b.shape());
  const int64_t m = s.m, k = s.k, n = s.n;
  out_shape = s.out;
  std::vector<int32_t> out(static_cast<size_t>(shape_numel(out_shape)), 0);
  for_each_broadcast(s.batch, std::array<Shape, 2>{s.batch_a, s.batch_b}, [&](int64_t bi, const std::array<int64_t, 2>& off) {
    const int32_t* pa = av.data() + off[0] * m * k;
    const int32_t* pb = bv.data() + off[1] * k * n;
    int32_t* po = out.data() + bi * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) po[i * n + j] = wrap_add(po[i * n + j], wrap_mul(pa[i * k + p], pb[p * n + j]));
  });
  return out;
}

class MatMulIntegerKernel final : public Kernel {
 public:
  explicit MatMulIntegerKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const auto av = centered(ctx, a, ctx.has_input(2) ? &ctx.input(2) : nullptr, true, "A");
    const auto bv = centered(ctx, b, ctx.has_input(3) ? &ctx.input(3) : nullptr, false, "B");
    Shape shape;
    const auto result = int_matmul(ctx, a, av, b, bv, shape);
    Tensor& y = ctx.allocate_output(0, DType::kInt32, shape);
    std::copy(result.begin(), result.end(), y.data<int32_t>());
  }
};

double scalar_scale(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.numel() != 1) ctx.fail(what, " must be a scalar, got shape ", shape_to_string(t.shape()));
  return t.value_as_double(0);
}

class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    const Tensor& y_zp = ctx.input(7);
    const auto av = centered(ctx, a, &ctx.input(2), true, "A");
    const auto bv = centered(ctx, b, &ctx.input(5), false, "B");
    Shape shape;
    const auto acc = int_matmul(ctx, a, av, b, bv, shape);
    // Products are rescaled in float32, as the spec's reference does.
    const float a_scale = static_cast<float>(scalar_scale(ctx, ctx.input(1), "a_scale"));
    const float b_scale = static_cast<float>(scalar_scale(ctx, ctx.input(4), "b_scale"));
    const float y_scale = static_cast<float>(scalar_scale(ctx, ctx.input(6), "y_scale"));
    const float multiplier = a_scale * b_scale / y_scale;
    const double zero = scalar_scale(ctx, y_zp, "y_zero_point");
    dispatch_dtype<MatMulQuantTypes>(y_zp.dtype(), ctx, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Tensor& y = ctx.allocate_output(0, y_zp.dtype(), shape);
      Q* out = y.data<Q>();
      for (size_t i = 0; i < acc.size(); ++i) {
        double v = std::nearbyint(static_cast<double>(static_cast<float>(acc[i]) * multiplier)) + zero;
        // NaN (a zero y_scale over a zero product) has no integer value: 0, as QuantizeLinear gives.
        v = std::isnan(v) ? 0.0 : std::clamp<double>(v, std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
        out[i] = static_cast<Q>(v);
      }
    });
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "MatMulInteger", 10, MatMulIntegerKernel);
PARITY_REGISTER_KERNEL("", "QLinearMatMul", 10, QLinearMatMulKernel);

}  // namespace parity::runtime::ops
