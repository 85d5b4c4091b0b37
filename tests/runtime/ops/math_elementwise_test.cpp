#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(MathUnary, FloatFunctions) {
  OpTester("Abs", 13).input<float>({3}, {-1.5f, 0.0f, 2.0f}).output<float>({3}, {1.5f, 0.0f, 2.0f}).run();
  OpTester("Neg", 13).input<float>({2}, {-1.5f, 2.0f}).output<float>({2}, {1.5f, -2.0f}).run();
  OpTester("Sqrt", 13).input<float>({2}, {4.0f, -1.0f}).output<float>({2}, {2.0f, kNaN}).run();
  OpTester("Exp", 13).input<float>({2}, {0.0f, 1.0f}).output<float>({2}, {1.0f, std::exp(1.0f)}).run();
  OpTester("Log", 13).input<float>({2}, {1.0f, 0.0f}).output<float>({2}, {0.0f, -kInf}).run();
  OpTester("Reciprocal", 13).input<float>({2}, {2.0f, 0.0f}).output<float>({2}, {0.5f, kInf}).run();
  OpTester("Floor", 13).input<float>({3}, {-1.5f, 1.5f, kNaN}).output<float>({3}, {-2.0f, 1.0f, kNaN}).run();
  OpTester("Ceil", 13).input<float>({2}, {-1.5f, 1.2f}).output<float>({2}, {-1.0f, 2.0f}).run();
  OpTester("Atanh", 9).input<float>({2}, {0.0f, 0.5f}).output<float>({2}, {0.0f, std::atanh(0.5f)}).run();
  OpTester("Erf", 13).input<float>({2}, {0.0f, 1.0f}).output<float>({2}, {0.0f, std::erf(1.0f)}).run();
}

TEST(MathUnary, RoundHalfToEven) {
  OpTester("Round", 11)
      .input<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, 2.6f, -2.6f})
      .output<float>({8}, {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, 3.0f, -3.0f})
      .run();
}

TEST(MathUnary, IntegerAbsNegWrapAround) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  OpTester("Abs", 13).input<int32_t>({3}, {-3, 4, kMin}).output<int32_t>({3}, {3, 4, kMin}).run();
  OpTester("Neg", 13).input<int8_t>({3}, {-3, 4, -128}).output<int8_t>({3}, {3, -4, -128}).run();
  OpTester("Abs", 13).input<uint8_t>({2}, {0, 255}).output<uint8_t>({2}, {0, 255}).run();
  OpTester("Neg", 13).input<uint8_t>({1}, {1}).run_expect_error(ErrorCode::kUnsupported);
}

TEST(MathUnary, SignIncludingNaNAndInts) {
  OpTester("Sign", 13).input<float>({4}, {-2.0f, 0.0f, 3.0f, kNaN}).output<float>({4}, {-1.0f, 0.0f, 1.0f, kNaN}).run();
  OpTester("Sign", 13).input<int64_t>({3}, {-7, 0, 9}).output<int64_t>({3}, {-1, 0, 1}).run();
}

TEST(MathUnary, Float16ComputesThroughFloat) {
  Tensor x = Tensor::from_vector<Float16>({2}, {Float16(4.0f), Float16(2.0f)});
  Tensor y = Tensor::from_vector<Float16>({2}, {Float16(2.0f), Float16(std::sqrt(2.0f))});
  OpTester("Sqrt", 13).input(x).output(y).tolerance(0, 0).run();
}

TEST(MathUnary, EmptyTensorAndFp64) {
  OpTester("Exp", 13).input<float>({0, 3}, {}).output<float>({0, 3}, {}).run();
  OpTester("Sin", 7)
      .precision(runtime::Precision::kFloat64)
      .input<double>({1}, {1.0})
      .output<double>({1}, {std::sin(1.0)})
      .tolerance(0, 0)
      .run();
  OpTester("Sqrt", 13).input<int32_t>({1}, {4}).run_expect_error(ErrorCode::kUnsupported);
}

TEST(MathBinary, BroadcastAdd) {
  OpTester("Add", 14)
      .input<float>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<float>({3}, {10, 20, 30})
      .output<float>({2, 3}, {11, 22, 33, 14, 25, 36})
      .run();
  OpTester("Add", 14)
      .input<float>({2, 1}, {1, 2})
      .input<float>({1, 3}, {10, 20, 30})
      .output<float>({2, 3}, {11, 21, 31, 12, 22, 32})
      .run();
  OpTester("Add", 14).input<float>({}, {1}).input<float>({2}, {1, 2}).output<float>({2}, {2, 3}).run();
  OpTester("Add", 14).input<float>({0, 2}, {}).input<float>({1, 2}, {1, 2}).output<float>({0, 2}, {}).run();
}

TEST(MathBinary, ShapeAndTypeMismatchFail) {
  OpTester("Add", 14).input<float>({2}, {1, 2}).input<float>({3}, {1, 2, 3}).run_expect_error(ErrorCode::kRuntime);
  OpTester("Add", 14).input<float>({2}, {1, 2}).input<int32_t>({2}, {1, 2}).run_expect_error(ErrorCode::kRuntime);
}

TEST(MathBinary, IntegerWrapAround) {
  OpTester("Add", 14).input<uint8_t>({2}, {250, 1}).input<uint8_t>({2}, {10, 1}).output<uint8_t>({2}, {4, 2}).run();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  OpTester("Add", 14).input<int64_t>({1}, {kMax}).input<int64_t>({1}, {1}).output<int64_t>({1}, {kMin}).run();
  OpTester("Mul", 14).input<int32_t>({1}, {65536}).input<int32_t>({1}, {65536}).output<int32_t>({1}, {0}).run();
  OpTester("Mul", 14).input<uint16_t>({1}, {65535}).input<uint16_t>({1}, {65535}).output<uint16_t>({1}, {1}).run();
  OpTester("Sub", 14).input<uint8_t>({1}, {0}).input<uint8_t>({1}, {1}).output<uint8_t>({1}, {255}).run();
}

TEST(MathBinary, IntegerDivisionTruncates) {
  OpTester("Div", 14)
      .input<int32_t>({5}, {7, -7, 7, -7, 5})
      .input<int32_t>({5}, {2, 2, -2, -2, 0})
      .output<int32_t>({5}, {3, -3, -3, 3, 0})
      .run();
  OpTester("Div", 14).input<float>({2}, {1, -1}).input<float>({2}, {0, 0}).output<float>({2}, {kInf, -kInf}).run();
}

TEST(MathBinary, Mod) {
  OpTester("Mod", 13)
      .input<int32_t>({4}, {-4, 7, 5, -5})
      .input<int32_t>({4}, {3, -3, 0, 2})
      .output<int32_t>({4}, {2, -2, 0, 1})
      .run();
  OpTester("Mod", 13)
      .attr("fmod", 1)
      .input<int32_t>({3}, {-4, 7, -5})
      .input<int32_t>({3}, {3, -3, 2})
      .output<int32_t>({3}, {-1, 1, -1})
      .run();
  OpTester("Mod", 13)
      .attr("fmod", 1)
      .input<float>({2}, {-4.5f, 7.5f})
      .input<float>({2}, {2.0f, -2.0f})
      .output<float>({2}, {-0.5f, 1.5f})
      .run();
}

TEST(MathBinary, PowMixedTypes) {
  OpTester("Pow", 15).input<float>({3}, {2, 3, 4}).input<int64_t>({3}, {2, 0, -1}).output<float>({3}, {4, 1, 0.25f}).run();
  OpTester("Pow", 15).input<int32_t>({3}, {2, 3, -2}).input<int32_t>({3}, {10, 2, 3}).output<int32_t>({3}, {1024, 9, -8}).run();
  OpTester("Pow", 15).input<int64_t>({2}, {2, 3}).input<float>({2}, {0.5f, 2.0f}).output<int64_t>({2}, {1, 9}).run();
  OpTester("Pow", 15).input<float>({2}, {-8, 4}).input<float>({}, {0.5f}).output<float>({2}, {kNaN, 2}).run();
}

TEST(MathBinary, BitShift) {
  OpTester("BitShift", 11)
      .attr("direction", "LEFT")
      .input<uint8_t>({3}, {1, 2, 255})
      .input<uint8_t>({3}, {1, 7, 9})
      .output<uint8_t>({3}, {2, 0, 0})
      .run();
  OpTester("BitShift", 11)
      .attr("direction", "RIGHT")
      .input<uint64_t>({2}, {16, 1})
      .input<uint64_t>({2}, {2, 64})
      .output<uint64_t>({2}, {4, 0})
      .run();
  OpTester("BitShift", 11).attr("direction", "UP").input<uint8_t>({1}, {1}).input<uint8_t>({1}, {1}).run_expect_error(
      ErrorCode::kInvalidModel);
}

TEST(MathBinary, LegacyBroadcastAxis) {
  OpTester("Add", 6)
      .attr("broadcast", 1)
      .attr("axis", 0)
      .input<float>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<float>({2}, {10, 20})
      .output<float>({2, 3}, {11, 12, 13, 24, 25, 26})
      .run();
}

TEST(MathVariadic, MaxMinSumMean) {
  OpTester("Max", 13)
      .input<float>({3}, {1, kNaN, 3})
      .input<float>({3}, {2, 1, kNaN})
      .input<float>({}, {0})
      .output<float>({3}, {2, kNaN, kNaN})
      .run();
  OpTester("Min", 13).input<uint8_t>({2}, {3, 200}).input<uint8_t>({1}, {100}).output<uint8_t>({2}, {3, 100}).run();
  OpTester("Sum", 13)
      .input<float>({2, 1}, {1, 2})
      .input<float>({3}, {10, 20, 30})
      .output<float>({2, 3}, {11, 21, 31, 12, 22, 32})
      .run();
  OpTester("Mean", 13).input<float>({2}, {1, 2}).input<float>({2}, {3, 6}).output<float>({2}, {2, 4}).run();
  OpTester("Sum", 13).input<float>({2}, {1, 2}).output<float>({2}, {1, 2}).run();
}

}  // namespace
}  // namespace parity::testing
