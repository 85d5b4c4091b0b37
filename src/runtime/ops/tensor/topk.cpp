// Spec: https://onnx.ai/onnx/operators/onnx__TopK.html
// TopK.
// Ties keep the lower index first; NaN ranks above every number (as in numpy's sort order).
// With sorted=0 the order is unspecified by the spec; the sorted order is returned.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const KernelInit& init)
      : k_from_attr_(init.opset() < 10),
        axis_(init.attr_int("axis", -1)),
        largest_(init.attr_int("largest", 1) != 0) {
    if (k_from_attr_) attr_k_ = init.attr_int("k");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() == 0) ctx.fail("input must have rank >= 1");
    const int64_t axis = ops::normalize_axis(axis_, x.rank(), ctx);
    int64_t k = attr_k_;
    if (!k_from_attr_) {
      const Tensor& k_t = ctx.input(1);
      if (k_t.numel() != 1) ctx.fail("K must hold one value, got shape ", shape_to_string(k_t.shape()));
      k = ops::read_int_values(ctx, k_t, "K")[0];
    }
    const int64_t dim = x.shape()[axis];
    if (k < 0 || k > dim) ctx.fail("k = ", k, " is out of range for axis ", axis, " of size ", dim);
    Shape out_shape = x.shape();
    out_shape[axis] = k;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];

    Tensor& values = ctx.allocate_output(0, x.dtype(), out_shape);
    Tensor indices_out(DType::kInt64, out_shape);
    ops::dispatch_dtype<ops::NumericTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ops::compute_t<T>;
      const T* src = x.data<T>();
      T* dst = values.data<T>();
      int64_t* idx_dst = indices_out.data<int64_t>();
      std::vector<int64_t> order(static_cast<size_t>(dim));
      std::vector<C> slice(static_cast<size_t>(dim));
      const bool largest = largest_;
      auto before = [&](int64_t a, int64_t b) {
        const C va = slice[a];
        const C vb = slice[b];
        const bool na = is_nan(va);
        const bool nb = is_nan(vb);
        if (na || nb) {
          if (na && nb) return a < b;
          return largest ? na : nb;
        }
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * dim * inner + i;
          for (int64_t j = 0; j < dim; ++j) slice[j] = static_cast<C>(src[base + j * inner]);
          std::iota(order.begin(), order.end(), 0);
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          const int64_t out_base = o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            dst[out_base + j * inner] = src[base + order[j] * inner];
            idx_dst[out_base + j * inner] = order[j];
          }
        }
      }
    });
    if (ctx.has_output(1)) ctx.set_output(1, std::move(indices_out));
  }

 private:
  bool k_from_attr_;
  int64_t axis_;
  bool largest_;
  int64_t attr_k_ = 0;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "TopK", (1, 10, 11), TopKKernel);

}  // namespace parity::runtime
