// Spec: https://onnx.ai/onnx/operators/onnx__Trilu.html, onnx__EyeLike.html
// Trilu and EyeLike (diagonal-structured outputs).
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const KernelInit& init) : upper_(init.attr_int("upper", 1) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape ", shape_to_string(x.shape()));
    const int64_t k = ctx.has_input(1) ? ops::read_int_scalar(ctx, ctx.input(1), "k") : 0;
    const int64_t rows = x.shape()[x.rank() - 2];
    const int64_t cols = x.shape()[x.rank() - 1];
    const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());  // zero (or "") filled
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(x);
      S* dst = tensor_ops::elements<S>(out);
      for (int64_t m = 0; m < matrices; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            // Kept: j - i >= k (upper) or j - i <= k (lower); compared without overflow for huge k.
            const bool keep = upper_ ? (j - i) >= k : (j - i) <= k;
            const int64_t at = (m * rows + i) * cols + j;
            if (keep) dst[at] = src[at];
          }
    });
  }

 private:
  bool upper_;
};

class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const KernelInit& init) : k_(init.attr_int("k", 0)) {
    if (init.has_attr("dtype")) {
      const int64_t code = init.attr_int("dtype");
      const DType d = static_cast<DType>(code);
      if (!is_valid_dtype(d) || d == DType::kString || is_complex(d)) init.fail("unsupported dtype ", code);
      dtype_ = compute_dtype(d, init.precision());
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 2) ctx.fail("input must be 2-D, got shape ", shape_to_string(x.shape()));
    const DType dtype = dtype_.value_or(x.dtype());
    Tensor& out = ctx.allocate_output(0, dtype, x.shape());
    const int64_t rows = x.shape()[0];
    const int64_t cols = x.shape()[1];
    visit_numeric_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        if (k_ < -i || k_ >= cols - i) continue;
        dst[i * cols + i + k_] = convert_scalar<T>(1);
      }
    });
  }

 private:
  int64_t k_;
  std::optional<DType> dtype_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Trilu", 14, TriluKernel);
PARITY_REGISTER_KERNEL("", "EyeLike", 9, EyeLikeKernel);

}  // namespace parity::runtime
