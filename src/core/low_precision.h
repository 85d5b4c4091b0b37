// Conversions for ONNX's low-precision element types: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
// e8m0), float4e2m1, int4/uint4 and int2/uint2. Specs: https://onnx.ai/onnx/technical/float8.html,
// https://onnx.ai/onnx/technical/float4.html, https://onnx.ai/onnx/technical/int4.html and the
// Cast operator's conversion table (https://onnx.ai/onnx/operators/onnx__Cast.html).
//
// In memory parity holds one element per byte (the byte is the element's bit pattern, sign-
// extended for int4/int2), exactly as numpy with ml_dtypes holds them (itemsize 1). The packed
// layout (ceil(n * bits / 8) bytes, element 0 in the lowest bits of byte 0) exists only at the
// borders where ONNX and ONNX Runtime store it: TensorProto int32_data/raw_data and ORT tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace parity {

// ONNX TensorProto.DataType values of the low-precision types. They are DType values (every
// dtype function and Tensor accept them) declared here rather than in the enum in core/dtype.h,
// which nearly every file includes, so that adding them did not rebuild the whole project.
inline constexpr DType kFloat8E4M3FN = static_cast<DType>(17);
inline constexpr DType kFloat8E4M3FNUZ = static_cast<DType>(18);
inline constexpr DType kFloat8E5M2 = static_cast<DType>(19);
inline constexpr DType kFloat8E5M2FNUZ = static_cast<DType>(20);
inline constexpr DType kUInt4 = static_cast<DType>(21);
inline constexpr DType kInt4 = static_cast<DType>(22);
inline constexpr DType kFloat4E2M1 = static_cast<DType>(23);
inline constexpr DType kFloat8E8M0 = static_cast<DType>(24);
inline constexpr DType kUInt2 = static_cast<DType>(25);
inline constexpr DType kInt2 = static_cast<DType>(26);

/// numpy's unstructured 1-byte void type ('|V1', named "V1"): what .npy/.npz/Polygraphy JSON
/// files hold for the 1-byte ml_dtypes types (every float8 but e5m2, float4_e2m1fn, int4, uint4,
/// int2, uint2). ml_dtypes registers them all with kind 'V', so numpy.save records '<V1' and not
/// which type the bytes are; a tensor read with this dtype holds the file's bytes unchanged and
/// becomes the expected type where one is known (resolve_numpy_void). Not an ONNX type: its value
/// is outside TensorProto.DataType's range.
inline constexpr DType kNumpyVoid1 = static_cast<DType>(1001);

/// True for the float8/float4/int4/uint4/int2/uint2 types (one byte per element in memory).
bool is_low_precision(DType dtype);
/// True for int4/uint4/int2/uint2.
bool is_low_precision_integer(DType dtype);

/// Bits per element as ONNX stores the type (8 for float8, 4 for int4/uint4/float4e2m1, 2 for
/// int2/uint2); dtype_size() * 8 for every other dtype.
size_t dtype_bits(DType dtype);
/// True for int4/uint4/int2/uint2/float4e2m1: ONNX packs several elements per byte.
bool is_sub_byte(DType dtype);
/// Bytes ONNX uses for n elements of dtype: ceil(n * bits / 8).
size_t packed_size_bytes(DType dtype, int64_t n);

/// How a float that is not exactly representable is rounded (FLOAT8E8M0 only honours all three;
/// every other type rounds to nearest even).
enum class RoundMode { kNearestEven, kUp, kDown };

/// The value of one element's bit pattern (NaN for NaN encodings, +-inf for e5m2's infinities).
/// For int4/int2 the byte holds the sign-extended value, for uint4/uint2 the value.
double low_precision_to_double(DType dtype, uint8_t bits);
/// Converts a value to dtype's bit pattern with ONNX Cast semantics. Floats: saturate clamps
/// out-of-range values and infinities to the largest finite value (NaN stays NaN); without it
/// they become infinity where the type has one (e5m2) and NaN otherwise. float4e2m1 has no NaN or
/// infinity and always saturates (NaN becomes the largest value with the input's sign, as ONNX does).
/// Integers: the value is rounded to nearest even and clamped to the type's range when saturate
/// (QuantizeLinear), or wrapped modulo 2^bits like C++ integer casts otherwise (Cast).
uint8_t low_precision_from_double(DType dtype, double value, bool saturate = true,
                                  RoundMode round = RoundMode::kNearestEven);

/// Element-wise conversion where the source or the target is a low-precision type (numeric
/// dtypes only). saturate and round apply to float targets as Cast's attributes do; integer
/// targets (int4/uint4/int2/uint2) wrap like every integer Cast. Used by Tensor::cast and Cast.
Tensor cast_low_precision(const Tensor& in, DType to, bool saturate = true,
                          RoundMode round = RoundMode::kUp);

/// The byte numpy with ml_dtypes holds for one element of dtype (a 1-byte low-precision type):
/// ml_dtypes keeps int4/int2 in the low bits with the upper bits zero, parity sign-extends them.
uint8_t to_ml_dtypes_byte(DType dtype, uint8_t element);
/// The element parity holds for a byte that numpy with ml_dtypes wrote (upper bits ignored for
/// the sub-byte types, as ml_dtypes ignores them).
uint8_t from_ml_dtypes_byte(DType dtype, uint8_t byte);

/// A tensor read as kNumpyVoid1 converted to `expected` when that is a 1-byte low-precision type
/// (the bytes are taken as ml_dtypes wrote them); every other tensor is returned unchanged.
Tensor resolve_numpy_void(const Tensor& tensor, DType expected);

/// Packs n one-byte elements into ONNX's layout (low bits first). Sub-byte types only.
std::vector<uint8_t> pack_sub_byte(DType dtype, const uint8_t* elements, int64_t n);
/// Unpacks n elements from ONNX's layout into one byte each (sign-extended for int4/int2).
void unpack_sub_byte(DType dtype, const uint8_t* packed, int64_t n, uint8_t* elements);

}  // namespace parity
