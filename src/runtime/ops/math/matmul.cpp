// Spec: https://onnx.ai/onnx/operators/onnx__MatMul.html, onnx__Gemm.html
// MatMul (numpy.matmul semantics: 1-D operands promoted and the added dim removed again, batch
// dims broadcast) and Gemm (transA/transB, alpha, beta, optional C broadcast to (M, N)).
//
// Floating products accumulate in double; integers in 64 bits (wrapping to the output type).
#include <array>
#include <type_traits>
#include <vector>

#include "runtime/ops/common/broadcast.h"
#include "runtime/ops/math/matmul_shapes.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

using MatMulTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <typename T>
using dot_t = std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

/// out(M, N) = op(A)(M, K) * op(B)(K, N) with element (i, k) of op(A) at a[i * a_row + k * a_col].
template <typename T>
void matmul_block(const T* a, int64_t a_row, int64_t a_col, const T* b, int64_t b_row, int64_t b_col, int64_t m,
                  int64_t n, int64_t k, std::vector<dot_t<T>>& acc) {
  using D = dot_t<T>;
  acc.assign(static_cast<size_t>(m * n), D(0));
  for (int64_t i = 0; i < m; ++i) {
    D* row = acc.data() + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const D av = static_cast<D>(to_compute(a[i * a_row + p * a_col]));
      const T* bp = b + p * b_row;
      for (int64_t j = 0; j < n; ++j) row[j] = wrap_add(row[j], wrap_mul(av, static_cast<D>(to_compute(bp[j * b_col]))));
    }
  }
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype())
      ctx.fail("inputs have different types ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    if (a.rank() == 0 || b.rank() == 0) ctx.fail("MatMul inputs must have rank >= 1");
    const MatMulShapes s = matmul_shapes(ctx, a.shape(), b.shape());
    const int64_t m = s.m, k = s.k, n = s.n;
    dispatch_dtype<MatMulTypes>(a.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, a.dtype(), s.out);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      std::vector<dot_t<T>> acc;
      for_each_broadcast(s.batch, std::array<Shape, 2>{s.batch_a, s.batch_b},
                         [&](int64_t bi, const std::array<int64_t, 2>& off) {
                           matmul_block(pa + off[0] * m * k, k, 1, pb + off[1] * k * n, n, 1, m, n, k, acc);
                           T* dst = po + bi * m * n;
                           for (int64_t i = 0; i < m * n; ++i) dst[i] = convert_scalar<T>(acc[i]);
                         });
    });
  }
};

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const KernelInit& init)
      : trans_a_(init.attr_int("transA", 0) != 0),
        trans_b_(init.attr_int("transB", 0) != 0),
        alpha_(init.attr_float("alpha", 1.0f)),
        beta_(init.attr_float("beta", 1.0f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.rank() != 2 || b.rank() != 2)
      ctx.fail("A and B must be 2-D, got ", shape_to_string(a.shape()), " and ", shape_to_string(b.shape()));
    if (a.dtype() != b.dtype())
      ctx.fail("inputs have different types ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != kb) ctx.fail("inner dimensions do not match: op(A) is ", m, "x", k, ", op(B) is ", kb, "x", n);
    const bool has_c = ctx.has_input(2);
    if (has_c) {
      const Tensor& c = ctx.input(2);
      if (c.dtype() != a.dtype()) ctx.fail("C has type ", dtype_name(c.dtype()), ", expected ", dtype_name(a.dtype()));
      if (!broadcasts_to(c.shape(), {m, n}))
        ctx.fail("C of shape ", shape_to_string(c.shape()), " does not broadcast to (", m, ", ", n, ")");
    }
    dispatch_dtype<MatMulTypes>(a.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using D = dot_t<T>;
      Tensor& out = ctx.allocate_output(0, a.dtype(), {m, n});
      std::vector<D> acc;
      matmul_block(a.data<T>(), trans_a_ ? 1 : k, trans_a_ ? m : 1, b.data<T>(), trans_b_ ? 1 : n, trans_b_ ? k : 1, m,
                   n, k, acc);
      T* po = out.data<T>();
      const D alpha = static_cast<D>(alpha_), beta = static_cast<D>(beta_);
      for (int64_t i = 0; i < m * n; ++i) po[i] = convert_scalar<T>(wrap_mul(alpha, acc[i]));
      if (has_c) {
        const Tensor& c = ctx.input(2);
        const T* pc = c.data<T>();
        for_each_broadcast(Shape{m, n}, std::array<Shape, 1>{c.shape()},
                           [&](int64_t i, const std::array<int64_t, 1>& off) {
                             po[i] = convert_scalar<T>(wrap_add(wrap_mul(alpha, acc[i]),
                                                                wrap_mul(beta, static_cast<D>(to_compute(pc[off[0]])))));
                           });
      }
    });
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "MatMul", (1, 9, 13), MatMulKernel);
PARITY_REGISTER_KERNEL("", "Gemm", (1, 6, 7, 9, 11, 13), GemmKernel);

}  // namespace parity::runtime::ops
