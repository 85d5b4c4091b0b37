// Dtype dispatch over a chosen set of element types, with node-named errors, and the type
// arithmetic runs in (float16/bfloat16 compute through float).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/status.h"

namespace parity::runtime::ops {

template <typename... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
/// Every real numeric type except bool.
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>;
/// Floats and signed integers (ops like Neg, Abs-with-sign, Sign).
using SignedNumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using NumericAndBoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                     uint16_t, uint32_t, uint64_t, bool>;

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
/// True for float, double, Float16, BFloat16.
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

/// The type arithmetic on T is done in: float for Float16/BFloat16, T otherwise.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T, typename List>
struct InTypeList;
template <typename T, typename... Ts>
struct InTypeList<T, TypeList<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};

/// Calls fn(TypeTag<T>{}) when dtype's C++ type is in List; otherwise throws kUnsupported naming the
/// node (`where` is a KernelInit or KernelContext) and the dtype. fn must return void.
template <typename List, typename Where, typename Fn>
void dispatch_dtype(DType dtype, const Where& where, Fn&& fn) {
  bool handled = false;
  if (dtype != DType::kString && dtype != DType::kUndefined && !is_complex(dtype)) {
    visit_numeric_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (InTypeList<T, List>::value) {
        handled = true;
        fn(tag);
      }
    });
  } else if (dtype == DType::kString) {
    if constexpr (InTypeList<std::string, List>::value) {
      handled = true;
      fn(TypeTag<std::string>{});
    }
  }
  if (!handled)
    ::parity::fail_at({.node = where.node_error_name()}, ErrorCode::kUnsupported, where.node_label(), ": element type ", dtype_name(dtype),
                   " is not supported");
}

}  // namespace parity::runtime::ops
