#include "runtime/ops/common/axis.h"

namespace parity::runtime::ops {

int64_t shape_product(const Shape& shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

namespace {
template <typename Where>
std::vector<int64_t> read_ints(const Where& where, const Tensor& t, const char* what) {
  if (!is_integer(t.dtype()))
    where.fail("input '", what, "' must be an integer tensor, got ", dtype_name(t.dtype()));
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  visit_numeric_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
    }
  });
  return out;
}
}  // namespace

std::vector<int64_t> read_int_values(const KernelContext& ctx, const Tensor& tensor, const char* what) {
  return read_ints(ctx, tensor, what);
}
std::vector<int64_t> read_int_values(const KernelInit& init, const Tensor& tensor, const char* what) {
  return read_ints(init, tensor, what);
}

int64_t read_int_scalar(const KernelContext& ctx, const Tensor& tensor, const char* what) {
  if (tensor.numel() != 1)
    ctx.fail("input '", what, "' must hold one value, got shape ", shape_to_string(tensor.shape()));
  return read_ints(ctx, tensor, what)[0];
}

double read_double_scalar(const KernelContext& ctx, const Tensor& tensor, const char* what) {
  if (tensor.numel() != 1)
    ctx.fail("input '", what, "' must hold one value, got shape ", shape_to_string(tensor.shape()));
  if (tensor.dtype() == DType::kString || is_complex(tensor.dtype()))
    ctx.fail("input '", what, "' must be numeric, got ", dtype_name(tensor.dtype()));
  return tensor.value_as_double(0);
}

}  // namespace parity::runtime::ops
