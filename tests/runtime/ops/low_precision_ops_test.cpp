// Kernels on the low-precision element types (float8, float4e2m1, int4/uint4, int2/uint2): Cast's
// saturate/round_mode, blocked Quantize/DequantizeLinear, and the shape/copy operators, which move
// one byte per element.
#include <gtest/gtest.h>

#include <cmath>

#include "core/low_precision.h"
#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

Tensor as(DType d, const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(shape, values).cast(d);
}

TEST(LowPrecisionOps, CastSaturateAndRoundMode) {
  OpTester("Cast", 21)
      .attr("to", static_cast<int64_t>(kFloat8E4M3FN))
      .attr("saturate", 0)
      .input<float>({3}, {1e6f, 0.5f, -500.0f})
      .output(Tensor::from_bytes(kFloat8E4M3FN, {3}, "\x7f\x30\xff", 3))
      .run();
  OpTester("Cast", 21)
      .attr("to", static_cast<int64_t>(kFloat8E5M2))
      .input<float>({2}, {1e6f, -INFINITY})
      .output(Tensor::from_bytes(kFloat8E5M2, {2}, "\x7b\xfb", 2))
      .run();
  OpTester("Cast", 24)
      .attr("to", static_cast<int64_t>(kFloat8E8M0))
      .attr("round_mode", "down")
      .input<float>({2}, {0.124f, 3.0f})
      .output(Tensor::from_bytes(kFloat8E8M0, {2}, "\x7b\x80", 2))
      .run();
  OpTester("Cast", 24)
      .attr("to", static_cast<int64_t>(kFloat8E8M0))
      .attr("round_mode", "sideways")
      .input<float>({1}, {1.0f})
      .run_expect_error(ErrorCode::kInvalidModel);
  // Integers wrap like every integer Cast.
  OpTester("Cast", 21)
      .attr("to", static_cast<int64_t>(kInt4))
      .input<float>({3}, {8, -9, 7})
      .output(as(kInt4, {3}, {-8, 7, 7}))
      .run();
  OpTester("Cast", 21)
      .attr("to", static_cast<int64_t>(DType::kInt8))
      .input(as(kUInt4, {2}, {15, 3}))
      .output<int8_t>({2}, {15, 3})
      .run();
}

TEST(LowPrecisionOps, QuantizeBlockedInt4AndDequantize) {
  // Blocks of 2 along axis 1; int4 saturates at [-8, 7] and rounds half to even.
  OpTester("QuantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 2)
      .input<float>({1, 4}, {2.5f, 100.0f, -3.0f, -100.0f})
      .input<float>({1, 2}, {1.0f, 0.5f})
      .input(as(kInt4, {1, 2}, {0, 1}))
      .output(as(kInt4, {1, 4}, {2, 7, -5, -8}))
      .run();
  OpTester("DequantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 2)
      .input(as(kInt4, {1, 4}, {2, 7, -5, -8}))
      .input<float>({1, 2}, {1.0f, 0.5f})
      .input(as(kInt4, {1, 2}, {0, 1}))
      .output<float>({1, 4}, {2.0f, 7.0f, -3.0f, -4.5f})
      .run();
  // float8: x / scale converted with Cast's rounding, saturating by default.
  OpTester("QuantizeLinear", 21)
      .input<float>({3}, {1.0f, 1000.0f, -0.3f})
      .input<float>({}, {2.0f})
      .input(as(kFloat8E4M3FN, {}, {0.0f}))
      .output(as(kFloat8E4M3FN, {3}, {0.5f, 448.0f, -0.15f}))
      .run();
  OpTester("DequantizeLinear", 21)
      .input(as(kFloat8E5M2, {2}, {3.0f, -0.5f}))
      .input<float>({}, {4.0f})
      .output<float>({2}, {12.0f, -2.0f})
      .run();
  OpTester("QuantizeLinear", 25)
      .attr("output_dtype", static_cast<int64_t>(kUInt2))
      .input<float>({4}, {-1.0f, 0.4f, 2.0f, 9.0f})
      .input<float>({}, {1.0f})
      .output(as(kUInt2, {4}, {0, 0, 2, 3}))
      .run();
}

TEST(LowPrecisionOps, ShapeAndCopyOpsMoveElements) {
  const Tensor x = as(kInt4, {2, 3}, {-8, -1, 0, 1, 5, 7});
  OpTester("Identity", 21).input(x).output(x).run();
  OpTester("Reshape", 21)
      .input(x)
      .constant_input<int64_t>({2}, {3, 2})
      .output(as(kInt4, {3, 2}, {-8, -1, 0, 1, 5, 7}))
      .run();
  OpTester("Transpose", 21)
      .attr_ints("perm", {1, 0})
      .input(x)
      .output(as(kInt4, {3, 2}, {-8, 1, -1, 5, 0, 7}))
      .run();
  const Tensor f = as(kFloat8E4M3FNUZ, {4}, {1.0f, -2.0f, 0.25f, 240.0f});
  OpTester("Flatten", 21).attr("axis", 0).input(f).output(as(kFloat8E4M3FNUZ, {1, 4}, {1.0f, -2.0f, 0.25f, 240.0f})).run();
  OpTester("Squeeze", 21)
      .input(as(kFloat4E2M1, {1, 2}, {6.0f, -0.5f}))
      .constant_input<int64_t>({1}, {0})
      .output(as(kFloat4E2M1, {2}, {6.0f, -0.5f}))
      .run();
}

}  // namespace
}  // namespace parity::testing
