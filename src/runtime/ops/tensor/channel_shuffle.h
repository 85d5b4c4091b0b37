// ai.parity ChannelShuffle (see channel_shuffle.cpp): the reference kernel, which the optimized
// one (channel_shuffle_fast.cpp) extends with channels-last input and output.
#pragma once

#include <algorithm>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime::tensor_ops {

/// The reference kernel; the optimized one (channel_shuffle_fast.cpp) adds channels-last values.
class ChannelShuffle : public Kernel {
 public:
  explicit ChannelShuffle(const KernelInit& init) : groups_(init.attr_int("groups")), shape_(init.attr_ints("shape")) {
    if (shape_.size() < 3 || groups_ < 1 || shape_[1] % groups_ != 0)
      init.fail("groups ", groups_, " does not divide the channels of shape ", shape_to_string(shape_));
    int64_t elements = 1;
    for (int64_t d : shape_)
      if (d < 0 || __builtin_mul_overflow(elements, d, &elements))
        init.fail("shape ", shape_to_string(shape_), " has a negative dimension or too many elements");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_elements(x, ctx);
    Tensor& out = allocate(ctx, x.dtype());
    shuffle_planes(x, out);
  }

 protected:
  void check_elements(const Tensor& x, const KernelContext& ctx) const {
    if (x.numel() != shape_numel(shape_))
      ctx.fail("cannot reshape ", shape_to_string(x.shape()), " (", x.numel(), " elements) to ", shape_to_string(shape_),
               " (", shape_numel(shape_), " elements)");
  }

  Tensor& allocate(KernelContext& ctx, DType dtype) const {
    return dtype == DType::kString ? ctx.allocate_output(0, dtype, shape_)
                                   : ctx.allocate_output_uninitialized(0, dtype, shape_);
  }

  /// NCHW order: `x`'s elements as [N, G, C/G, plane] moved to [N, C/G, G, plane] in `out`.
  void shuffle_planes(const Tensor& x, Tensor& out) const {
    const int64_t batch = shape_[0], per_group = shape_[1] / groups_;
    const int64_t plane = shape_[1] == 0 || batch == 0 ? 0 : shape_numel(shape_) / (batch * shape_[1]);
    visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(x);
      S* dst = elements<S>(out);
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t g = 0; g < groups_; ++g)
          for (int64_t k = 0; k < per_group; ++k) {
            const S* from = src + ((n * groups_ + g) * per_group + k) * plane;
            std::copy(from, from + plane, dst + ((n * per_group + k) * groups_ + g) * plane);
          }
    });
  }

  int64_t groups_;
  Shape shape_;
};

}  // namespace parity::runtime::tensor_ops
