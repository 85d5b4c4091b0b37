// Helpers shared by the neural-network, signal and object-detection kernels: float dtype
// dispatch (half types compute through float), tensor <-> accumulator buffers, and the window
// geometry (kernel/strides/dilations/pads/auto_pad) that Conv, ConvTranspose and the pools share.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernel.h"

namespace parity::runtime::nn {

/// Calls fn(TypeTag<A>{}) with the accumulation type for a floating dtype: double for float64,
/// float for float32/float16/bfloat16. Other dtypes fail naming the node.
template <typename Fn>
decltype(auto) visit_float_compute(DType dtype, const KernelContext& ctx, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16: return fn(TypeTag<float>{});
    default: ctx.fail("unsupported input dtype ", dtype_name(dtype), " (expected a floating type)");
  }
}

/// The tensor's values converted to A (any numeric dtype).
template <typename A>
std::vector<A> load_as(const Tensor& t) {
  std::vector<A> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == dtype_of_v<A>) {
    const A* p = t.data<A>();
    std::copy(p, p + t.numel(), out.begin());
    return out;
  }
  visit_numeric_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = convert_scalar<A>(p[i]);
  });
  return out;
}

/// Writes values (converted from A) into an allocated tensor of any numeric dtype.
template <typename A>
void store_to(Tensor& t, const std::vector<A>& values) {
  PARITY_ASSERT(static_cast<int64_t>(values.size()) == t.numel(), "store_to size mismatch");
  visit_numeric_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = convert_scalar<T>(values[i]);
  });
}

/// Allocates output i with dtype and shape and fills it from values.
template <typename A>
void emit_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape, const std::vector<A>& values) {
  if (!ctx.has_output(i)) return;
  Tensor& t = ctx.allocate_output(i, dtype, shape);
  store_to(t, values);
}

/// Read-only A-typed view of a tensor: points into the tensor when its dtype is A, else owns a
/// converted copy.
template <typename A>
class AccInput {
 public:
  explicit AccInput(const Tensor& t) {
    if (t.dtype() == dtype_of_v<A>) {
      ptr_ = t.data<A>();
    } else {
      owned_ = load_as<A>(t);
      ptr_ = owned_.data();
    }
  }
  const A* data() const { return ptr_; }
  const A& operator[](int64_t i) const { return ptr_[i]; }

 private:
  std::vector<A> owned_;
  const A* ptr_ = nullptr;
};

/// A-typed writable output: writes straight into the output tensor when its dtype is A, else
/// into a buffer that finish() converts into the tensor.
template <typename A>
class AccOutput {
 public:
  AccOutput(KernelContext& ctx, size_t index, DType dtype, const Shape& shape)
      : tensor_(&ctx.allocate_output(index, dtype, shape)) {
    if (dtype == dtype_of_v<A>) {
      ptr_ = tensor_->data<A>();
    } else {
      owned_.assign(static_cast<size_t>(tensor_->numel()), A(0));
      ptr_ = owned_.data();
    }
  }
  A* data() { return ptr_; }
  A& operator[](int64_t i) { return ptr_[i]; }
  int64_t numel() const { return tensor_->numel(); }
  void finish() {
    if (!owned_.empty()) store_to(*tensor_, owned_);
  }

 private:
  Tensor* tensor_;
  std::vector<A> owned_;
  A* ptr_ = nullptr;
};

/// Integer tensor (int32/int64, or any integer dtype) as int64 values.
std::vector<int64_t> read_int64s(const Tensor& t);
/// Numeric tensor as double values.
std::vector<double> read_doubles(const Tensor& t);
/// The single value of input i (a scalar or one-element tensor); fails naming `what` otherwise.
double scalar_double(const KernelContext& ctx, size_t i, const char* what);
int64_t scalar_int64(const KernelContext& ctx, size_t i, const char* what);

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
AutoPad parse_auto_pad(const KernelInit& init);

/// Kernel/stride/dilation/pad attributes of a windowed op, parsed once at plan time.
struct WindowAttrs {
  std::vector<int64_t> kernel_shape;  // may be empty (Conv infers it from W)
  std::vector<int64_t> strides;       // empty = all 1
  std::vector<int64_t> dilations;     // empty = all 1
  std::vector<int64_t> pads;          // empty = all 0; [begin..., end...]
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;

  static WindowAttrs parse(const KernelInit& init, bool has_dilations, bool has_ceil_mode);
};

/// Resolved geometry for one run: per spatial dim input/output size and begin pad.
struct WindowGeometry {
  int64_t rank = 0;  // number of spatial dims
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;

  int64_t in_numel() const;
  int64_t out_numel() const;
  int64_t kernel_numel() const;
};

/// Resolves a forward window (Conv, pools): pads from auto_pad, output size with ceil_mode.
WindowGeometry resolve_window(const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                              const std::vector<int64_t>& kernel, const KernelContext& ctx);

/// Row-major odometer over a multi-index with the given extents.
inline bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& extents) {
  for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
    if (++idx[d] < extents[d]) return true;
    idx[d] = 0;
  }
  return false;
}

inline int64_t product(const std::vector<int64_t>& v, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < v.size() && i < end; ++i) p *= v[i];
  return p;
}

/// Floor division for possibly negative numerators (positive divisor).
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace parity::runtime::nn
