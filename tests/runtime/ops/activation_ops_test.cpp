#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(Activation, ReluFamily) {
  OpTester("Relu", 14).input<float>({3}, {-1, 0, 2}).output<float>({3}, {0, 0, 2}).run();
  OpTester("Relu", 14).input<int8_t>({3}, {-1, 0, 2}).output<int8_t>({3}, {0, 0, 2}).run();
  OpTester("LeakyRelu", 16).input<float>({2}, {-1, 2}).output<float>({2}, {-0.01f, 2}).run();
  OpTester("LeakyRelu", 16).attr("alpha", 0.5f).input<float>({2}, {-1, 2}).output<float>({2}, {-0.5f, 2}).run();
  OpTester("ThresholdedRelu", 10).attr("alpha", 2.0f).input<float>({3}, {1, 2, 3}).output<float>({3}, {0, 0, 3}).run();
}

TEST(Activation, Shrink) {
  OpTester("Shrink", 9)
      .attr("lambd", 1.5f)
      .attr("bias", 1.5f)
      .input<float>({5}, {-2, -1.5f, 0, 1.5f, 2})
      .output<float>({5}, {-0.5f, 0, 0, 0, 0.5f})
      .run();
  // Default lambd 0.5, bias 0: hard shrink; integers keep their dtype.
  OpTester("Shrink", 9).input<int32_t>({3}, {-1, 0, 3}).output<int32_t>({3}, {-1, 0, 3}).run();
  OpTester("Shrink", 9).attr("bias", 1.0f).input<int8_t>({3}, {-3, 0, 3}).output<int8_t>({3}, {-2, 0, 2}).run();
}

TEST(Activation, ExponentialFamily) {
  const float e = std::exp(-1.0f);
  OpTester("Elu", 6).attr("alpha", 2.0f).input<float>({2}, {-1, 1}).output<float>({2}, {2 * (e - 1), 1}).run();
  OpTester("Selu", 6)
      .attr("alpha", 2.0f)
      .attr("gamma", 3.0f)
      .input<float>({2}, {-1, 1})
      .output<float>({2}, {3 * (2 * e - 2), 3})
      .run();
  OpTester("Celu", 12).attr("alpha", 2.0f).input<float>({2}, {-1, 1}).output<float>({2}, {2 * (std::exp(-0.5f) - 1), 1}).run();
  OpTester("Sigmoid", 13)
      .input<float>({3}, {0, -1000, 1000})
      .output<float>({3}, {0.5f, 0, 1})
      .run();
  OpTester("Softplus", 1)
      .input<float>({3}, {0, 1000, -1000})
      .output<float>({3}, {std::log(2.0f), 1000, 0})
      .run();
  OpTester("Softsign", 1).input<float>({2}, {-1, 3}).output<float>({2}, {-0.5f, 0.75f}).run();
  OpTester("Mish", 18).input<float>({1}, {1}).output<float>({1}, {std::tanh(std::log1p(std::exp(1.0f)))}).run();
}

TEST(Activation, HardFamily) {
  OpTester("HardSigmoid", 6).input<float>({3}, {-10, 0, 10}).output<float>({3}, {0, 0.5f, 1}).run();
  OpTester("HardSwish", 14).input<float>({3}, {-4, 0, 1}).output<float>({3}, {0, 0, 1 * (1 / 6.0f + 0.5f)}).run();
}

TEST(Activation, ClipVersions) {
  OpTester("Clip", 6).attr("min", -1.0f).attr("max", 1.0f).input<float>({3}, {-2, 0.5f, 2}).output<float>({3}, {-1, 0.5f, 1}).run();
  OpTester("Clip", 13)
      .input<float>({3}, {-2, 0.5f, 2})
      .input<float>({}, {-1})
      .input<float>({}, {1})
      .output<float>({3}, {-1, 0.5f, 1})
      .run();
  OpTester("Clip", 13)
      .input<int8_t>({3}, {-128, 0, 127})
      .missing_input()
      .input<int8_t>({}, {5})
      .output<int8_t>({3}, {-128, 0, 5})
      .run();
  // min > max: everything becomes max.
  OpTester("Clip", 13)
      .input<float>({2}, {-2, 2})
      .input<float>({}, {1})
      .input<float>({}, {0})
      .output<float>({2}, {0, 0})
      .run();
  OpTester("Clip", 13).input<float>({1}, {1}).input<float>({2}, {0, 1}).run_expect_error(ErrorCode::kRuntime);
}

TEST(Activation, PReluBroadcastSlope) {
  OpTester("PRelu", 16)
      .input<float>({2, 2}, {-1, -1, 1, -2})
      .input<float>({2}, {0.5f, 2})
      .output<float>({2, 2}, {-0.5f, -2, 1, -4})
      .run();
  // Opset 6: a length-C slope applies per channel.
  OpTester("PRelu", 6)
      .input<float>({1, 2, 2}, {-1, -1, -1, -1})
      .input<float>({2}, {0.5f, 2})
      .output<float>({1, 2, 2}, {-0.5f, -0.5f, -2, -2})
      .run();
  OpTester("PRelu", 16).input<float>({2}, {1, 1}).input<float>({3}, {1, 1, 1}).run_expect_error(ErrorCode::kRuntime);
}

}  // namespace
}  // namespace parity::testing
