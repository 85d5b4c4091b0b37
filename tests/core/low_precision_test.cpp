#include "core/low_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace parity {
namespace {

constexpr DType kFloat8Types[] = {kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ, kFloat8E8M0};

uint8_t enc(DType d, double v, bool saturate = true, RoundMode r = RoundMode::kNearestEven) {
  return low_precision_from_double(d, v, saturate, r);
}

TEST(LowPrecision, EveryEightBitPatternRoundTrips) {
  for (DType d : kFloat8Types) {
    int nans = 0;
    for (int b = 0; b < 256; ++b) {
      const auto bits = static_cast<uint8_t>(b);
      const double v = low_precision_to_double(d, bits);
      if (std::isnan(v)) {
        ++nans;
        EXPECT_TRUE(std::isnan(low_precision_to_double(d, enc(d, v)))) << dtype_name(d) << " " << b;
        continue;
      }
      // Infinities survive only without saturation; every finite value is exact.
      EXPECT_EQ(enc(d, v, /*saturate=*/false), bits) << dtype_name(d) << " pattern " << b << " value " << v;
      if (std::isfinite(v)) EXPECT_EQ(enc(d, v, true), bits) << dtype_name(d) << " pattern " << b;
    }
    // NaN encodings per type: e4m3fn S.1111.111 (2), fnuz only 0x80 (1), e5m2 S.11111.xx with
    // xx != 0 (6), e8m0 0xFF (1).
    const int expected = d == kFloat8E4M3FN ? 2 : d == kFloat8E5M2 ? 6 : 1;
    EXPECT_EQ(nans, expected) << dtype_name(d);
  }
}

TEST(LowPrecision, SpecialValuesAndLimits) {
  EXPECT_EQ(low_precision_to_double(kFloat8E4M3FN, 0x7E), 448.0);
  EXPECT_EQ(low_precision_to_double(kFloat8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(low_precision_to_double(kFloat8E4M3FNUZ, 0x7F), 240.0);
  EXPECT_EQ(low_precision_to_double(kFloat8E4M3FNUZ, 0x01), std::ldexp(1.0, -10));
  EXPECT_EQ(low_precision_to_double(kFloat8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(low_precision_to_double(kFloat8E5M2, 0x7C), INFINITY);
  EXPECT_EQ(low_precision_to_double(kFloat8E5M2, 0xFC), -INFINITY);
  EXPECT_EQ(low_precision_to_double(kFloat8E5M2FNUZ, 0x7F), 57344.0);
  EXPECT_EQ(low_precision_to_double(kFloat8E5M2FNUZ, 0x01), std::ldexp(1.0, -17));
  EXPECT_EQ(low_precision_to_double(kFloat8E8M0, 0x7F), 1.0);
  EXPECT_EQ(low_precision_to_double(kFloat8E8M0, 0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::signbit(low_precision_to_double(kFloat8E4M3FN, 0x80)));
}

TEST(LowPrecision, SaturationPerType) {
  // saturate: out of range and infinities clamp to the largest finite value.
  EXPECT_EQ(enc(kFloat8E4M3FN, 1e6), 0x7E);
  EXPECT_EQ(enc(kFloat8E4M3FN, -INFINITY), 0xFE);
  EXPECT_EQ(enc(kFloat8E4M3FNUZ, INFINITY), 0x7F);
  EXPECT_EQ(enc(kFloat8E5M2, INFINITY), 0x7B);
  EXPECT_EQ(enc(kFloat8E5M2FNUZ, -1e9), 0xFF);
  // Without: infinity where the type has one, NaN otherwise.
  EXPECT_EQ(enc(kFloat8E4M3FN, 1e6, false), 0x7F);
  EXPECT_EQ(enc(kFloat8E4M3FN, -INFINITY, false), 0xFF);
  EXPECT_EQ(enc(kFloat8E4M3FNUZ, 1e6, false), 0x80);
  EXPECT_EQ(enc(kFloat8E5M2, 1e6, false), 0x7C);
  EXPECT_EQ(enc(kFloat8E5M2, -INFINITY, false), 0xFC);
  EXPECT_EQ(enc(kFloat8E5M2FNUZ, INFINITY, false), 0x80);
  // fnuz types have no negative zero; NaN is 0x80.
  EXPECT_EQ(enc(kFloat8E4M3FNUZ, -0.0), 0x00);
  EXPECT_EQ(enc(kFloat8E5M2FNUZ, -1e-30), 0x00);
  EXPECT_EQ(enc(kFloat8E4M3FN, -1e-30), 0x80);
  EXPECT_EQ(enc(kFloat8E4M3FNUZ, NAN), 0x80);
}

TEST(LowPrecision, RoundsToNearestEven) {
  // e4m3fn: 1.0 = 0x38, 1.125 = 0x39, 1.25 = 0x3A.
  EXPECT_EQ(enc(kFloat8E4M3FN, 1.0625), 0x38);
  EXPECT_EQ(enc(kFloat8E4M3FN, 1.1875), 0x3A);
  EXPECT_EQ(enc(kFloat8E4M3FN, 1.07), 0x39);
  // 464 is halfway between 448 (even mantissa) and 480 (beyond the range): rounds to 448.
  EXPECT_EQ(enc(kFloat8E4M3FN, 464.0, false), 0x7E);
  EXPECT_EQ(enc(kFloat8E4M3FN, 470.0, false), 0x7F);
  // Subnormals: half the smallest subnormal rounds to zero, 1.5 of it to 2 of it.
  EXPECT_EQ(enc(kFloat8E4M3FN, std::ldexp(1.0, -10)), 0x00);
  EXPECT_EQ(enc(kFloat8E4M3FN, std::ldexp(3.0, -10)), 0x02);
  EXPECT_EQ(enc(kFloat8E4M3FN, 0.4789254665374756), 0x2F);  // ONNX 1.23 test data
  EXPECT_EQ(enc(kFloat8E4M3FNUZ, 0.4789254665374756), 0x37);
}

TEST(LowPrecision, Float8E8M0RoundModes) {
  EXPECT_EQ(enc(kFloat8E8M0, 0.124, true, RoundMode::kUp), 0x7C);
  EXPECT_EQ(enc(kFloat8E8M0, 0.124, true, RoundMode::kDown), 0x7B);
  EXPECT_EQ(enc(kFloat8E8M0, 0.124, true, RoundMode::kNearestEven), 0x7C);
  EXPECT_EQ(enc(kFloat8E8M0, 1.1, true, RoundMode::kUp), 0x80);
  EXPECT_EQ(enc(kFloat8E8M0, 1.1, true, RoundMode::kNearestEven), 0x7F);
  EXPECT_EQ(enc(kFloat8E8M0, 0.0, true, RoundMode::kUp), 0x00);
  EXPECT_EQ(enc(kFloat8E8M0, INFINITY), 0xFF);
  EXPECT_EQ(enc(kFloat8E8M0, 3e38, true, RoundMode::kUp), 0xFE);   // saturates at 2^127
  EXPECT_EQ(enc(kFloat8E8M0, 3e38, false, RoundMode::kUp), 0xFF);  // else NaN
}

TEST(LowPrecision, Float4E2M1) {
  const double values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int b = 0; b < 16; ++b) {
    const double v = low_precision_to_double(kFloat4E2M1, static_cast<uint8_t>(b));
    EXPECT_EQ(std::fabs(v), values[b & 7]);
    EXPECT_EQ(enc(kFloat4E2M1, v), b);
  }
  EXPECT_EQ(enc(kFloat4E2M1, 0.25), 0x0);  // halfway 0 / 0.5: even
  EXPECT_EQ(enc(kFloat4E2M1, 0.75), 0x2);  // halfway 0.5 / 1.0: even
  EXPECT_EQ(enc(kFloat4E2M1, -3.5), 0xE);
  EXPECT_EQ(enc(kFloat4E2M1, 1e6, false), 0x7);  // no infinity: always saturates
  EXPECT_EQ(enc(kFloat4E2M1, -INFINITY), 0xF);
  EXPECT_EQ(enc(kFloat4E2M1, NAN), 0x8);  // as ONNX writes it
}

TEST(LowPrecision, IntegersWrapInCastAndClampInQuantize) {
  for (int v = -8; v <= 7; ++v) EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, v, false)), v);
  for (int v = 0; v <= 15; ++v) EXPECT_EQ(low_precision_to_double(kUInt4, enc(kUInt4, v, false)), v);
  for (int v = -2; v <= 1; ++v) EXPECT_EQ(low_precision_to_double(kInt2, enc(kInt2, v, false)), v);
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, 8, false)), -8);
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, -9, false)), 7);
  EXPECT_EQ(low_precision_to_double(kUInt2, enc(kUInt2, -3, false)), 1);
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, 2.7, false)), 2);  // truncates
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, 9.6, true)), 7);
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, -20, true)), -8);
  EXPECT_EQ(low_precision_to_double(kInt4, enc(kInt4, 2.5, true)), 2);
  EXPECT_EQ(low_precision_to_double(kUInt2, enc(kUInt2, 7, true)), 3);
}

TEST(LowPrecision, PackingLowBitsFirstWithOddCounts) {
  // ONNX 1.23's test_cast_FLOAT_to_INT4 output: -9..15 wrapped, packed.
  std::vector<uint8_t> elements;
  for (int v = -9; v <= 15; ++v) elements.push_back(enc(kInt4, v, false));
  const auto packed = pack_sub_byte(kInt4, elements.data(), static_cast<int64_t>(elements.size()));
  const std::vector<uint8_t> expected = {0x87, 0xa9, 0xcb, 0xed, 0x0f, 0x21, 0x43, 0x65, 0x87, 0xa9, 0xcb, 0xed, 0x0f};
  EXPECT_EQ(packed, expected);
  std::vector<uint8_t> back(elements.size());
  unpack_sub_byte(kInt4, packed.data(), static_cast<int64_t>(back.size()), back.data());
  EXPECT_EQ(back, elements);
  // 2-bit: every count 1..9, values sign-extended on unpack.
  for (int64_t n = 1; n <= 9; ++n) {
    std::vector<uint8_t> in;
    for (int64_t i = 0; i < n; ++i) in.push_back(enc(kInt2, static_cast<double>(i % 4) - 2, false));
    const auto p = pack_sub_byte(kInt2, in.data(), n);
    EXPECT_EQ(p.size(), static_cast<size_t>((n + 3) / 4));
    std::vector<uint8_t> out(static_cast<size_t>(n));
    unpack_sub_byte(kInt2, p.data(), n, out.data());
    EXPECT_EQ(out, in) << n;
  }
  EXPECT_EQ(packed_size_bytes(kUInt4, 5), 3u);
  EXPECT_EQ(packed_size_bytes(kFloat8E5M2, 5), 5u);
}

TEST(LowPrecision, TensorCastAndNames) {
  Tensor f = Tensor::from_vector<float>({4}, {0.5f, -3.5f, 1e6f, NAN});
  Tensor q = f.cast(kFloat8E4M3FN);
  EXPECT_EQ(q.dtype(), kFloat8E4M3FN);
  EXPECT_EQ(q.size_bytes(), 4u);
  EXPECT_EQ(q.value_as_double(0), 0.5);
  EXPECT_EQ(q.value_as_double(1), -3.5);
  EXPECT_EQ(q.value_as_double(2), 448.0);
  EXPECT_TRUE(std::isnan(q.value_as_double(3)));
  Tensor back = q.cast(DType::kFloat16);
  EXPECT_EQ(static_cast<float>(back.data<Float16>()[2]), 448.0f);
  EXPECT_EQ(dtype_name(kFloat8E4M3FNUZ), "float8e4m3fnuz");
  EXPECT_EQ(dtype_from_name("float8_e5m2"), kFloat8E5M2);
  EXPECT_EQ(dtype_from_name("int4"), kInt4);
  EXPECT_TRUE(is_valid_dtype(kInt2));
  EXPECT_FALSE(is_floating(kFloat8E4M3FN));
  EXPECT_EQ(dtype_bits(kUInt2), 2u);
}

}  // namespace
}  // namespace parity
