#include <gtest/gtest.h>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(Quantize, PerTensorRoundsHalfToEvenAndSaturates) {
  OpTester("QuantizeLinear", 13)
      .input<float>({6}, {0, 1, 3, -3, 1000, -1000})
      .input<float>({}, {2})
      .input<uint8_t>({}, {128})
      .output<uint8_t>({6}, {128, 128, 130, 126, 255, 0})
      .run();
  OpTester("QuantizeLinear", 10)
      .input<float>({3}, {5, -5, 300})
      .input<float>({}, {1})
      .input<int8_t>({}, {0})
      .output<int8_t>({3}, {5, -5, 127})
      .run();
  // 0.5 / float32(5/255) is exactly 25.5 in float32 (25.4999... in double): rounds to even 26.
  OpTester("QuantizeLinear", 13)
      .input<float>({1}, {0.5f})
      .input<float>({}, {5.0f / 255.0f})
      .input<uint8_t>({}, {153})
      .output<uint8_t>({1}, {179})
      .run();
  // Without zero point the output is uint8.
  OpTester("QuantizeLinear", 13).input<float>({2}, {2.5f, 3.5f}).input<float>({}, {1}).output<uint8_t>({2}, {2, 4}).run();
}

TEST(Quantize, PerAxis) {
  OpTester("QuantizeLinear", 13)
      .attr("axis", 1)
      .input<float>({1, 2, 2}, {2, 4, 30, 60})
      .input<float>({2}, {2, 10})
      .input<uint8_t>({2}, {0, 1})
      .output<uint8_t>({1, 2, 2}, {1, 2, 4, 7})
      .run();
  OpTester("DequantizeLinear", 13)
      .attr("axis", 0)
      .input<int8_t>({2, 2}, {1, 2, 3, 4})
      .input<float>({2}, {1, 0.5f})
      .input<int8_t>({2}, {1, 0})
      .output<float>({2, 2}, {0, 1, 1.5f, 2})
      .run();
  OpTester("QuantizeLinear", 13)
      .input<float>({1, 3}, {1, 2, 3})
      .input<float>({2}, {1, 1})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(Quantize, DequantizeInt32AndDynamic) {
  OpTester("DequantizeLinear", 10).input<int32_t>({2}, {-4, 6}).input<float>({}, {0.5f}).output<float>({2}, {-2, 3}).run();
  // Range [0, 2.55] -> scale 0.01, zero point 0.
  OpTester("DynamicQuantizeLinear", 11)
      .input<float>({3}, {0, 1.28f, 2.55f})
      .output<uint8_t>({3}, {0, 128, 255})
      .output<float>({}, {0.01f})
      .output<uint8_t>({}, {0})
      .run();
  OpTester("DynamicQuantizeLinear", 11)
      .input<float>({2}, {-1, 3})
      .output<uint8_t>({2}, {0, 255})
      .output<float>({}, {4.0f / 255})
      .output<uint8_t>({}, {64})
      .run();
}

TEST(Quantize, MatMulIntegerAndQLinearMatMul) {
  OpTester("MatMulInteger", 10)
      .input<uint8_t>({2, 2}, {11, 12, 13, 14})
      .input<uint8_t>({2, 1}, {2, 3})
      .input<uint8_t>({}, {10})
      .input<uint8_t>({}, {1})
      .output<int32_t>({2, 1}, {1 * 1 + 2 * 2, 3 * 1 + 4 * 2})
      .run();
  OpTester("MatMulInteger", 10)
      .input<int8_t>({1, 2}, {-1, 2})
      .input<int8_t>({2, 2}, {1, 2, 3, 4})
      .output<int32_t>({1, 2}, {5, 6})
      .run();
  // (a - 1) * (b - 0) = [[2]] * scales 0.5 * 1 / 0.25 = 4, + zero point 10.
  OpTester("QLinearMatMul", 10)
      .input<uint8_t>({1, 1}, {3})
      .input<float>({}, {0.5f})
      .input<uint8_t>({}, {1})
      .input<uint8_t>({1, 1}, {1})
      .input<float>({}, {1})
      .input<uint8_t>({}, {0})
      .input<float>({}, {0.25f})
      .input<uint8_t>({}, {10})
      .output<uint8_t>({1, 1}, {14})
      .run();
}

}  // namespace
}  // namespace parity::testing
