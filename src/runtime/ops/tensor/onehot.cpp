// Spec: https://onnx.ai/onnx/operators/onnx__OneHot.html
// OneHot.
#include <cmath>

#include "runtime/ops/common/float_index.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

/// Values of a numeric tensor as int64 (floating values are truncated, as a cast would).
std::vector<int64_t> numeric_as_int64(const Tensor& t, const KernelContext& ctx, const char* what) {
  if (is_integer(t.dtype())) return ops::read_int_values(ctx, t, what);
  if (!is_floating(t.dtype())) ctx.fail(what, " must be numeric, got ", dtype_name(t.dtype()));
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.value_as_double(i);
    if (!fits_int64(v)) ctx.fail(what, " holds ", v, ", which is not an int64 value");
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const KernelInit& init) : axis_(init.attr_int("axis", -1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& indices_t = ctx.input(0);
    const Tensor& depth_t = ctx.input(1);
    const Tensor& values = ctx.input(2);
    if (depth_t.numel() != 1) ctx.fail("depth must hold one value, got shape ", shape_to_string(depth_t.shape()));
    const int64_t depth = numeric_as_int64(depth_t, ctx, "depth")[0];
    if (depth <= 0) ctx.fail("depth must be positive, got ", depth);
    if (values.numel() != 2) ctx.fail("values must hold [off_value, on_value], got shape ", shape_to_string(values.shape()));
    const int64_t out_rank = indices_t.rank() + 1;
    const int64_t axis = ops::normalize_axis(axis_, out_rank, ctx);
    std::vector<int64_t> indices = numeric_as_int64(indices_t, ctx, "indices");
    for (int64_t& i : indices)
      if (i < 0) i += depth;  // still out of range (all off) if below -depth

    Shape out_shape = indices_t.shape();
    out_shape.insert(out_shape.begin() + axis, depth);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= indices_t.shape()[d];
    const int64_t inner = indices_t.numel() / std::max<int64_t>(outer, 1);
    Tensor& out = ctx.allocate_output(0, values.dtype(), out_shape);
    if (out.numel() == 0) return;
    tensor_ops::visit_storage_type(values.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S& off = tensor_ops::elements<S>(values)[0];
      const S& on = tensor_ops::elements<S>(values)[1];
      S* dst = tensor_ops::elements<S>(out);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t d = 0; d < depth; ++d)
          for (int64_t i = 0; i < inner; ++i) *dst++ = indices[o * inner + i] == d ? on : off;
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "OneHot", (9, 11), OneHotKernel);

}  // namespace parity::runtime
