#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace parity {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                  DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16,
                  DType::kUInt32, DType::kUInt64, DType::kBool, DType::kString}) {
    auto parsed = dtype_from_name(dtype_name(d));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(dtype_from_name("fp16"), DType::kFloat16);
  EXPECT_EQ(dtype_from_name("FLOAT"), DType::kFloat32);
  EXPECT_FALSE(dtype_from_name("float17").has_value());
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kComplex128), 16u);
}

TEST(DType, NumpyDescr) {
  EXPECT_EQ(numpy_descr(DType::kFloat32), "<f4");
  EXPECT_EQ(numpy_descr(DType::kBool), "|b1");
  EXPECT_EQ(numpy_descr(DType::kUInt8), "|u1");
  EXPECT_EQ(numpy_descr(DType::kBFloat16), "<V2");  // as numpy.save records ml_dtypes.bfloat16
  EXPECT_EQ(dtype_from_numpy_descr("<i8"), DType::kInt64);
  EXPECT_EQ(dtype_from_numpy_descr("|b1"), DType::kBool);
  EXPECT_EQ(dtype_from_numpy_descr("<f2"), DType::kFloat16);
  EXPECT_FALSE(dtype_from_numpy_descr(">f4").has_value());  // big-endian not supported
  EXPECT_FALSE(dtype_from_numpy_descr("<U5").has_value());
}

// What a C++ cast compiles to on x86-64 (and so ONNX Runtime's Cast there), without the undefined
// behaviour: checked against a plain static_cast built for generic x86-64.
TEST(ConvertScalar, NanAndOutOfRangeFloatsBecomeX86sIntegerIndefinite) {
  const float nan = std::nanf("");
  EXPECT_EQ(convert_scalar<int32_t>(nan), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(convert_scalar<int64_t>(3e38f), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert_scalar<int8_t>(300.0f), 44);
  EXPECT_EQ(convert_scalar<uint8_t>(-1.5f), 255);
  EXPECT_EQ(convert_scalar<int32_t>(1e10), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(convert_scalar<int16_t>(1e10), 0);
  EXPECT_EQ(convert_scalar<uint32_t>(1e10), 1410065408u);
  EXPECT_EQ(convert_scalar<uint64_t>(1.8e19), 18000000000000000000ull);
  EXPECT_EQ(convert_scalar<uint64_t>(1e20), 0u);
  EXPECT_EQ(convert_scalar<uint64_t>(static_cast<double>(nan)), uint64_t{1} << 63);
  // In range: truncation toward zero, as before.
  EXPECT_EQ(convert_scalar<int32_t>(-2.9f), -2);
  EXPECT_EQ(convert_scalar<int64_t>(-0x1p63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert_scalar<uint16_t>(65535.9), 65535);
  EXPECT_EQ(convert_scalar<int32_t>(Float16(-7.5f)), -7);
}

TEST(Float16, ExactValuesAndRounding) {
  EXPECT_EQ(Float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(Float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16(65520.0f).bits, 0x7c00);  // rounds to inf
  EXPECT_EQ(Float16(65519.0f).bits, 0x7bff);
  EXPECT_EQ(Float16(5.9604645e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Float16(2.9802322e-08f).bits, 0x0000);  // exactly half: ties to even (0)
  EXPECT_EQ(Float16(8.940697e-08f).bits, 0x0002);   // 1.5 * smallest: ties to even (2)
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
  EXPECT_EQ(Float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(Float16(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(std::numeric_limits<float>::infinity()))));
}

TEST(Float16, AllBitPatternsRoundTrip) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Float16 h = Float16::from_bits(static_cast<uint16_t>(b));
    float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Float16(f).bits, b) << std::hex << b;
  }
}

TEST(BFloat16, Rounding) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even -> 1.
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = BFloat16::from_bits(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(BFloat16(f).bits, b);
    }
  }
}

TEST(ConvertScalar, NumpySemantics) {
  EXPECT_EQ((convert_scalar<int32_t>(-2.7f)), -2);
  EXPECT_EQ((convert_scalar<bool>(0.5)), true);
  EXPECT_EQ((convert_scalar<float>(true)), 1.0f);
  EXPECT_EQ((convert_scalar<Float16>(1.5)).bits, 0x3e00);
  EXPECT_EQ((convert_scalar<int64_t>(Float16(3.0f))), 3);
}

}  // namespace
}  // namespace parity
