#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime::tensor_ops {
namespace {

template <typename Reporter>
std::vector<int64_t> int_values(const Tensor& t, const Reporter& reporter, const char* what) {
  if (!is_integer(t.dtype()))
    reporter.fail(what, " must be an integer tensor, got ", dtype_name(t.dtype()));
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

std::vector<int64_t> read_int_values(const Tensor& t, const KernelContext& ctx, const char* what) {
  return int_values(t, ctx, what);
}

std::vector<int64_t> read_int_values(const Tensor& t, const KernelInit& init, const char* what) {
  return int_values(t, init, what);
}

int64_t read_int_scalar(const Tensor& t, const KernelContext& ctx, const char* what) {
  if (t.numel() != 1)
    ctx.fail(what, " must hold exactly one value, got shape ", shape_to_string(t.shape()));
  return int_values(t, ctx, what)[0];
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const KernelContext& ctx) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      ctx.fail("shapes ", shape_to_string(a), " and ", shape_to_string(b), " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace parity::runtime::tensor_ops
