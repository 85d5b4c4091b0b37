// Spec: https://onnx.ai/onnx/operators/onnx__NonZero.html, onnx__Compress.html
// NonZero and Compress (element selection).
#include <algorithm>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

template <typename T>
bool is_nonzero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return !v.empty();
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return v != T(0);
  } else {
    return convert_scalar<double>(v) != 0.0;  // NaN counts as non-zero, as in numpy
  }
}

class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const KernelInit&) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    // A scalar is treated as a 1-D tensor of one element (as numpy and ONNX Runtime do).
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> hits;
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i)
        if (is_nonzero(p[i])) hits.push_back(i);
    });
    const int64_t count = static_cast<int64_t>(hits.size());
    Tensor& out = ctx.allocate_output(0, DType::kInt64, {rank, count});
    int64_t* dst = out.data<int64_t>();
    const std::vector<int64_t> strides = shape_strides(shape);
    for (int64_t j = 0; j < count; ++j)
      for (int64_t d = 0; d < rank; ++d) dst[d * count + j] = (hits[j] / strides[d]) % shape[d];
  }
};

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const KernelInit& init) {
    if (init.has_attr("axis")) axis_ = init.attr_int("axis");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& condition = ctx.input(1);
    if (condition.rank() != 1) ctx.fail("condition must be 1-D, got shape ", shape_to_string(condition.shape()));
    if (condition.dtype() != DType::kBool) ctx.fail("condition must be bool, got ", dtype_name(condition.dtype()));
    // Without an axis the input is flattened.
    const Shape shape = axis_ ? input.shape() : Shape{input.numel()};
    const int64_t axis = axis_ ? ops::normalize_axis(*axis_, input.rank(), ctx) : 0;
    const int64_t dim = shape[axis];
    std::vector<int64_t> selected;
    for (int64_t i = 0; i < condition.numel(); ++i) {
      if (!condition.data<bool>()[i]) continue;
      if (i >= dim) ctx.fail("condition selects index ", i, " but axis ", axis, " has size ", dim);
      selected.push_back(i);
    }
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    Shape out_shape = shape;
    out_shape[axis] = static_cast<int64_t>(selected.size());
    Tensor& out = ctx.allocate_output(0, input.dtype(), out_shape);
    tensor_ops::visit_storage_type(input.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(input);
      S* dst = tensor_ops::elements<S>(out);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i : selected) {
          const S* block = src + (o * dim + i) * inner;
          dst = std::copy(block, block + inner, dst);
        }
    });
  }

 private:
  std::optional<int64_t> axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "NonZero", 9, NonZeroKernel);
PARITY_REGISTER_KERNEL("", "Compress", (9, 11), CompressKernel);

}  // namespace parity::runtime
