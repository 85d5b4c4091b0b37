// A kernel template for element-wise unary ops whose output has the input's dtype and shape.
//
//   struct SqrtOp : NoAttrs {
//     using NoAttrs::NoAttrs;
//     using Types = FloatTypes;
//     template <typename C> C operator()(C x) const { return std::sqrt(x); }
//   };
//   PARITY_REGISTER_KERNEL("", "Sqrt", 1, UnaryKernel<SqrtOp>);
//
// Op is built once from the KernelInit (attributes), and is called with compute_t<T> values
// (float for float16/bfloat16), so float16 math runs in float and rounds once at the end.
#pragma once

#include "runtime/kernel.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {

/// Base for ops without attributes.
struct NoAttrs {
  explicit NoAttrs(const KernelInit&) {}
};

template <typename Op>
class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(const KernelInit& init) : op_(init) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<typename Op::Types>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
      map_unary<T, T>(ctx, x, y, [this](T v) { return from_compute<T>(op_(to_compute(v))); });
    });
  }

 private:
  Op op_;
};

}  // namespace parity::runtime::ops
