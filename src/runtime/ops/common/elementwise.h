// Element-wise loops shared by unary/binary/ternary kernels: linear fast paths for equal shapes and
// scalar operands, numpy broadcasting otherwise. Element types are raw storage types; callers
// convert to compute_t<T> inside fn where arithmetic needs it.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "core/tensor.h"
#include "runtime/kernel.h"
#include "runtime/ops/common/broadcast.h"
#include "runtime/ops/common/dispatch.h"

namespace parity::runtime::ops {

/// Below this many elements loops run serially (thread start-up would dominate).
inline constexpr int64_t kParallelGrain = 1 << 16;

/// out[i] = fn(in[i]); out must already have in's element count.
template <typename In, typename Out, typename Fn>
void map_unary(KernelContext& ctx, const Tensor& in, Tensor& out, Fn&& fn) {
  const In* src = in.data<In>();
  Out* dst = out.data<Out>();
  const int64_t n = in.numel();
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = fn(src[i]);
  };
  if (n >= kParallelGrain) {
    ctx.parallel_for(n, body);
  } else {
    body(0, n);
  }
}

/// out = fn(a, b) with numpy broadcasting; out must have the broadcast shape of a and b.
template <typename A, typename B, typename Out, typename Fn>
void map_binary(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out, Fn&& fn) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* po = out.data<Out>();
  const int64_t n = out.numel();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = fn(pa[i], pb[i]);
    };
    if (n >= kParallelGrain) ctx.parallel_for(n, body); else body(0, n);
  } else if (a.shape() == out.shape() && b.numel() == 1) {
    const B s = pb[0];
    for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], s);
  } else if (b.shape() == out.shape() && a.numel() == 1) {
    const A s = pa[0];
    for (int64_t i = 0; i < n; ++i) po[i] = fn(s, pb[i]);
  } else {
    for_each_broadcast(out.shape(), std::array<Shape, 2>{a.shape(), b.shape()},
                       [&](int64_t i, const std::array<int64_t, 2>& off) { po[i] = fn(pa[off[0]], pb[off[1]]); });
  }
}

/// Broadcasts a and b, allocates output 0 with out_dtype, and fills it with fn(a, b).
template <typename A, typename B, typename Out, typename Fn>
Tensor& broadcast_binary(KernelContext& ctx, const Tensor& a, const Tensor& b, Fn&& fn) {
  const Shape shape = broadcast_shapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.allocate_output(0, dtype_of_v<Out>, shape);
  map_binary<A, B, Out>(ctx, a, b, out, fn);
  return out;
}

/// Converts a storage value to the type arithmetic runs in (float for float16/bfloat16).
template <typename T>
inline compute_t<T> to_compute(const T& v) {
  return static_cast<compute_t<T>>(v);
}
/// Converts a computed value back to storage type T (round-to-nearest-even for float16/bfloat16).
template <typename T, typename C>
inline T from_compute(const C& v) {
  return convert_scalar<T>(v);
}

/// Integer arithmetic that wraps around like numpy (two's complement) instead of overflowing (UB).
template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    // uint16 * uint16 promotes to (signed) int and could overflow: multiply in at least 32 bits unsigned.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

}  // namespace parity::runtime::ops
