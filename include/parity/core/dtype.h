/// \file
/// Element types (DType): names, sizes, numpy spellings, and the mapping to and from C++ types.
// Element types. Numeric values match ONNX TensorProto.DataType so conversion is trivial.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/float16.h"

namespace parity {

/// Element type of a tensor; the values are ONNX TensorProto.DataType's, so conversion is a cast.
enum class DType : int {
  kUndefined = 0,  ///< No type (an undefined tensor).
  kFloat32 = 1,  ///< IEEE binary32.
  kUInt8 = 2,  ///< 8-bit unsigned integer.
  kInt8 = 3,  ///< 8-bit signed integer.
  kUInt16 = 4,  ///< 16-bit unsigned integer.
  kInt16 = 5,  ///< 16-bit signed integer.
  kInt32 = 6,  ///< 32-bit signed integer.
  kInt64 = 7,  ///< 64-bit signed integer.
  kString = 8,  ///< std::string elements.
  kBool = 9,  ///< bool (one byte per element).
  kFloat16 = 10,  ///< IEEE binary16 (Float16).
  kFloat64 = 11,  ///< IEEE binary64.
  kUInt32 = 12,  ///< 32-bit unsigned integer.
  kUInt64 = 13,  ///< 64-bit unsigned integer.
  kComplex64 = 14,  ///< std::complex<float>.
  kComplex128 = 15,  ///< std::complex<double>.
  kBFloat16 = 16,  ///< bfloat16 (BFloat16).
};

/// Canonical lower-case name as Polygraphy/numpy print it ("float32", "int64", "bool", ...).
std::string_view dtype_name(DType dtype);
/// Parses names like "float32", "fp16", "int64", "bool", "bfloat16" (case-insensitive).
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element (0 for kUndefined; sizeof(std::string) for kString).
size_t dtype_size(DType dtype);
bool is_floating(DType dtype);  ///< float16, bfloat16, float32, float64
bool is_integer(DType dtype);   ///< signed or unsigned integers (not bool)
bool is_signed_integer(DType dtype);  ///< True for int8, int16, int32 and int64.
bool is_unsigned_integer(DType dtype);  ///< True for uint8, uint16, uint32 and uint64.
bool is_complex(DType dtype);  ///< True for complex64 and complex128.
/// True for every dtype parity stores in a tensor (everything except kUndefined).
bool is_valid_dtype(DType dtype);

/// numpy descr as numpy.save records it ("<f4", "|b1"; ml_dtypes' "<V2", "<f1", "<V1"); nullopt for strings.
std::optional<std::string> numpy_descr(DType dtype);
/// Parses a numpy descr ("<f4", "|u1"; ml_dtypes' "<V2" bfloat16, "<f1" float8e5m2, "<V1" kNumpyVoid1).
std::optional<DType> dtype_from_numpy_descr(std::string_view descr);

/// Compile-time mapping from C++ type to DType.
template <typename T> struct DTypeOf;
/// Defines DTypeOf<CppType>::value as DType::Value.
#define PARITY_DTYPE_OF(CppType, Value) \
  template <> struct DTypeOf<CppType> { static constexpr DType value = DType::Value; };
PARITY_DTYPE_OF(float, kFloat32)
PARITY_DTYPE_OF(double, kFloat64)
PARITY_DTYPE_OF(Float16, kFloat16)
PARITY_DTYPE_OF(BFloat16, kBFloat16)
PARITY_DTYPE_OF(int8_t, kInt8)
PARITY_DTYPE_OF(int16_t, kInt16)
PARITY_DTYPE_OF(int32_t, kInt32)
PARITY_DTYPE_OF(int64_t, kInt64)
PARITY_DTYPE_OF(uint8_t, kUInt8)
PARITY_DTYPE_OF(uint16_t, kUInt16)
PARITY_DTYPE_OF(uint32_t, kUInt32)
PARITY_DTYPE_OF(uint64_t, kUInt64)
PARITY_DTYPE_OF(bool, kBool)
PARITY_DTYPE_OF(std::string, kString)
PARITY_DTYPE_OF(std::complex<float>, kComplex64)
PARITY_DTYPE_OF(std::complex<double>, kComplex128)
#undef PARITY_DTYPE_OF

/// The DType of the C++ type T (cv-qualifiers ignored); ill-formed for types parity does not store.
template <typename T>
inline constexpr DType dtype_of_v = DTypeOf<std::remove_cv_t<T>>::value;

/// The C++ type visit_dtype() hands its function (as TypeTag<T>{}).
template <typename T> struct TypeTag { using type = T; };
/// \typedef parity::TypeTag::type
/// T itself.

/// Calls fn(TypeTag<T>{}) with the C++ type of dtype. Throws kUnsupported for kUndefined.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn);

/// Throws kUnsupported naming `dtype` and `where` (the operation that cannot take it).
[[noreturn]] void throw_unsupported_dtype(DType dtype, const char* where);

namespace detail {
/// The switch both visitors share: fn(TypeTag<T>{}) for the real numeric types and bool,
/// otherwise(): the caller's answer for every other dtype.
template <typename Fn, typename Otherwise>
decltype(auto) visit_real_dtype(DType dtype, Fn&& fn, Otherwise&& otherwise) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kFloat16: return fn(TypeTag<Float16>{});
    case DType::kBFloat16: return fn(TypeTag<BFloat16>{});
    case DType::kInt8: return fn(TypeTag<int8_t>{});
    case DType::kInt16: return fn(TypeTag<int16_t>{});
    case DType::kInt32: return fn(TypeTag<int32_t>{});
    case DType::kInt64: return fn(TypeTag<int64_t>{});
    case DType::kUInt8: return fn(TypeTag<uint8_t>{});
    case DType::kUInt16: return fn(TypeTag<uint16_t>{});
    case DType::kUInt32: return fn(TypeTag<uint32_t>{});
    case DType::kUInt64: return fn(TypeTag<uint64_t>{});
    case DType::kBool: return fn(TypeTag<bool>{});
    default: return otherwise();
  }
}
}  // namespace detail

template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  return detail::visit_real_dtype(dtype, fn, [&]() -> decltype(auto) {
    switch (dtype) {
      case DType::kString: return fn(TypeTag<std::string>{});
      case DType::kComplex64: return fn(TypeTag<std::complex<float>>{});
      case DType::kComplex128: return fn(TypeTag<std::complex<double>>{});
      default: throw_unsupported_dtype(dtype, "visit_dtype");
    }
  });
}

/// Like visit_dtype but only for numeric real types (no string/complex): those throw kUnsupported.
template <typename Fn>
decltype(auto) visit_numeric_dtype(DType dtype, Fn&& fn) {
  return detail::visit_real_dtype(dtype, fn, [&]() -> decltype(fn(TypeTag<float>{})) {
    throw_unsupported_dtype(dtype, "numeric operation");
  });
}

namespace detail {
/// Float to integer as x86's truncating conversions (what compilers emit there for a C++ cast,
/// and so what ONNX Runtime's Cast gives on this hardware): through int32 for types of 32 bits or
/// less except uint32, through int64 otherwise, with NaN and values outside the intermediate type
/// giving its minimum ("integer indefinite"), which the narrowing then wraps. uint64 takes
/// [2^63, 2^64) directly and gives 0 above. Spelled out because in C++ those conversions are
/// undefined behaviour.
template <typename To, typename From>
inline To float_to_integer(From v) {
  const double d = static_cast<double>(v);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (d >= 0x1p64) return 0;
    if (d >= 0x1p63) return static_cast<uint64_t>(d);
  }
  if constexpr (sizeof(To) < 4 || std::is_same_v<To, int32_t>) {
    const int32_t wide = d > -0x1p31 - 1 && d < 0x1p31 ? static_cast<int32_t>(d) : std::numeric_limits<int32_t>::min();
    return static_cast<To>(wide);
  } else {
    const int64_t wide = d >= -0x1p63 && d < 0x1p63 ? static_cast<int64_t>(d) : std::numeric_limits<int64_t>::min();
    return static_cast<To>(wide);
  }
}
}  // namespace detail

/// Converts between element types with C++/numpy semantics (float->int truncates toward zero,
/// fp16/bf16 round to nearest even; NaN and out-of-range floats as detail::float_to_integer says).
/// Used by Cast and by the data loaders.
template <typename To, typename From>
inline To convert_scalar(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>)
      return To(static_cast<float>(v));
    else if constexpr (std::is_same_v<From, bool>)
      return To(v ? 1.0f : 0.0f);
    else
      return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>) {
    return convert_scalar<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return detail::float_to_integer<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace parity
