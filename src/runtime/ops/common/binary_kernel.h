// Kernel templates for element-wise binary ops with numpy broadcasting.
//
//   struct AddOp : NoAttrs {
//     using NoAttrs::NoAttrs;
//     using Types = NumericTypes;
//     template <typename T> T operator()(T a, T b) const { ... }          // storage types
//   };
//   PARITY_REGISTER_KERNEL("", "Add", 7, BinaryKernel<AddOp>);
//
// BinaryKernel's output has the inputs' dtype; CompareKernel's output is bool. Both also accept
// the opset-1..6 'broadcast'/'axis' attributes (B aligned to A starting at 'axis').
#pragma once

#include <type_traits>

#include <optional>

#include "runtime/kernel.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"
#include "runtime/ops/common/unary_kernel.h"

namespace parity::runtime::ops {

/// Pre-opset-7 broadcasting: with broadcast=1 and an 'axis', B's dims line up with A's from
/// 'axis' on; without 'axis' they are suffix-aligned, which numpy broadcasting already does.
class LegacyBroadcast {
 public:
  explicit LegacyBroadcast(const KernelInit& init) {
    if (init.spec().since_version < 7 && init.attr_int("broadcast", 0) != 0 && init.has_attr("axis"))
      axis_ = init.attr_int("axis");
  }
  /// B reshaped so that numpy broadcasting reproduces the legacy rule.
  Tensor align(const KernelContext& ctx, const Tensor& a, const Tensor& b) const {
    if (!axis_) return b;
    const int64_t rank_a = a.rank();
    int64_t axis = *axis_ < 0 ? *axis_ + rank_a : *axis_;
    if (axis < 0 || axis + b.rank() > rank_a)
      ctx.fail("legacy broadcast axis ", *axis_, " does not fit B of shape ", shape_to_string(b.shape()),
               " into A of shape ", shape_to_string(a.shape()));
    Shape shape = b.shape();
    shape.resize(rank_a - axis, 1);
    return b.reshaped(shape);
  }

 private:
  std::optional<int64_t> axis_;
};

/// Elementwise two-input kernel with numpy (or legacy axis) broadcasting; the result has the
/// inputs' dtype, or bool for comparisons.
template <typename Op, bool kBoolResult>
class BroadcastBinaryKernel final : public Kernel {
 public:
  explicit BroadcastBinaryKernel(const KernelInit& init) : op_(init), legacy_(init) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor b = legacy_.align(ctx, a, ctx.input(1));
    if (a.dtype() != b.dtype())
      ctx.fail("inputs have different types ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
    dispatch_dtype<typename Op::Types>(a.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Result = std::conditional_t<kBoolResult, bool, T>;
      broadcast_binary<T, T, Result>(ctx, a, b, [this](const T& x, const T& y) { return op_(x, y); });
    });
  }

 private:
  Op op_;
  LegacyBroadcast legacy_;
};

template <typename Op>
using BinaryKernel = BroadcastBinaryKernel<Op, false>;
template <typename Op>
using CompareKernel = BroadcastBinaryKernel<Op, true>;

}  // namespace parity::runtime::ops
