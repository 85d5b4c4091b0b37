#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Reduce, SumAxesAttributeAndInput) {
  // opset 11: axes attribute.
  OpTester("ReduceSum", 11)
      .attr_ints("axes", {1})
      .attr("keepdims", 0)
      .input<float>({2, 3}, {1, 2, 3, 4, 5, 6})
      .output<float>({2}, {6, 15})
      .run();
  // opset 13: axes input, negative axis, keepdims.
  OpTester("ReduceSum", 13)
      .input<float>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<int64_t>({1}, {-2})
      .output<float>({1, 3}, {5, 7, 9})
      .run();
  // No axes: reduce everything.
  OpTester("ReduceSum", 13).input<float>({2, 2}, {1, 2, 3, 4}).output<float>({1, 1}, {10}).run();
  // Empty axes with noop_with_empty_axes: identity.
  OpTester("ReduceSum", 13)
      .attr("noop_with_empty_axes", 1)
      .input<float>({2}, {1, 2})
      .input<int64_t>({0}, {})
      .output<float>({2}, {1, 2})
      .run();
  OpTester("ReduceSum", 13)
      .input<float>({2}, {1, 2})
      .input<int64_t>({1}, {2})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(Reduce, OtherReductions) {
  const std::vector<float> x = {1, -2, 3, 4};
  auto run = [&](const char* op, float expected) {
    OpTester(op, 13).attr("keepdims", 0).input<float>({4}, x).output<float>({}, {expected}).tolerance(1e-5, 1e-5).run();
  };
  run("ReduceMean", 1.5f);
  run("ReduceMax", 4);
  run("ReduceMin", -2);
  run("ReduceProd", -24);
  run("ReduceL1", 10);
  run("ReduceL2", std::sqrt(30.0f));
  run("ReduceSumSquare", 30);
  OpTester("ReduceLogSum", 13).attr("keepdims", 0).input<float>({2}, {1, 2}).output<float>({}, {std::log(3.0f)}).run();
  OpTester("ReduceLogSumExp", 13)
      .attr("keepdims", 0)
      .input<float>({2}, {1000, 1000})
      .output<float>({}, {1000 + std::log(2.0f)})
      .run();
}

TEST(Reduce, EmptySetAndNaN) {
  OpTester("ReduceSum", 13).input<float>({2, 0}, {}).input<int64_t>({1}, {1}).output<float>({2, 1}, {0, 0}).run();
  OpTester("ReduceProd", 13).attr_ints("axes", {1}).input<float>({2, 0}, {}).output<float>({2, 1}, {1, 1}).run();
  OpTester("ReduceMax", 13).attr_ints("axes", {1}).input<float>({1, 0}, {}).output<float>({1, 1}, {-kInf}).run();
  OpTester("ReduceMin", 13).attr_ints("axes", {1}).input<int8_t>({1, 0}, {}).output<int8_t>({1, 1}, {127}).run();
  OpTester("ReduceMax", 13).input<float>({3}, {1, kNaN, 2}).output<float>({1}, {kNaN}).run();
}

TEST(Reduce, IntegerWrapAndMean) {
  OpTester("ReduceSum", 13).input<int32_t>({2}, {2147483647, 1}).output<int32_t>({1}, {-2147483647 - 1}).run();
  OpTester("ReduceMean", 13).input<int32_t>({2}, {1, 2}).output<int32_t>({1}, {1}).run();
}

TEST(ArgReduce, TiesAndKeepdims) {
  OpTester("ArgMax", 13)
      .attr("axis", 1)
      .input<float>({2, 3}, {1, 3, 3, 5, 2, 5})
      .output<int64_t>({2, 1}, {1, 0})
      .run();
  OpTester("ArgMax", 13)
      .attr("axis", 1)
      .attr("select_last_index", 1)
      .attr("keepdims", 0)
      .input<float>({2, 3}, {1, 3, 3, 5, 2, 5})
      .output<int64_t>({2}, {2, 2})
      .run();
  OpTester("ArgMin", 13).attr("axis", 0).input<int32_t>({3}, {4, -1, -1}).output<int64_t>({1}, {1}).run();
  OpTester("ArgMax", 13).input<float>({3}, {1, kNaN, 5}).output<int64_t>({1}, {1}).run();
  OpTester("ArgMax", 13).attr("axis", 2).input<float>({3}, {1, 2, 3}).run_expect_error(ErrorCode::kRuntime);
}

TEST(Softmax, AxisSemanticsByVersion) {
  const float a = std::exp(1.0f), b = std::exp(2.0f);
  // opset 13: softmax over the last axis only.
  OpTester("Softmax", 13)
      .input<float>({2, 2}, {1, 2, 1, 2})
      .output<float>({2, 2}, {a / (a + b), b / (a + b), a / (a + b), b / (a + b)})
      .run();
  // opset 11 with axis 0: the whole (flattened) tensor is normalized together.
  const float s = 2 * (a + b);
  OpTester("Softmax", 11)
      .attr("axis", 0)
      .input<float>({2, 2}, {1, 2, 1, 2})
      .output<float>({2, 2}, {a / s, b / s, a / s, b / s})
      .run();
  // opset 13 with axis 0: columns are normalized.
  OpTester("Softmax", 13).attr("axis", 0).input<float>({2, 1}, {1, 1}).output<float>({2, 1}, {0.5f, 0.5f}).run();
  OpTester("LogSoftmax", 13)
      .input<float>({2}, {1000, 1000})
      .output<float>({2}, {-std::log(2.0f), -std::log(2.0f)})
      .run();
  OpTester("Hardmax", 13).input<float>({2, 3}, {1, 3, 3, 0, 0, 0}).output<float>({2, 3}, {0, 1, 0, 1, 0, 0}).run();
}

}  // namespace
}  // namespace parity::testing
