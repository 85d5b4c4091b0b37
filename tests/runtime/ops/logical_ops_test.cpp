#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(Logical, AndOrXorNotBroadcast) {
  OpTester("And", 7)
      .input<bool>({2, 2}, {true, true, false, false})
      .input<bool>({2}, {true, false})
      .output<bool>({2, 2}, {true, false, false, false})
      .run();
  OpTester("Or", 7).input<bool>({2}, {true, false}).input<bool>({2}, {false, false}).output<bool>({2}, {true, false}).run();
  OpTester("Xor", 7).input<bool>({2}, {true, false}).input<bool>({}, {true}).output<bool>({2}, {false, true}).run();
  OpTester("Not", 1).input<bool>({2}, {true, false}).output<bool>({2}, {false, true}).run();
  OpTester("And", 7).input<int32_t>({1}, {1}).input<int32_t>({1}, {1}).run_expect_error(ErrorCode::kUnsupported);
}

TEST(Logical, Comparisons) {
  OpTester("Equal", 13).input<int32_t>({3}, {1, 2, 3}).input<int32_t>({}, {2}).output<bool>({3}, {false, true, false}).run();
  OpTester("Equal", 13).input<float>({2}, {kNaN, 1}).input<float>({2}, {kNaN, 1}).output<bool>({2}, {false, true}).run();
  OpTester("Greater", 13).input<float>({3}, {1, 2, 3}).input<float>({1}, {2}).output<bool>({3}, {false, false, true}).run();
  OpTester("GreaterOrEqual", 16).input<int64_t>({3}, {1, 2, 3}).input<int64_t>({1}, {2}).output<bool>({3}, {false, true, true}).run();
  OpTester("Less", 13).input<uint8_t>({2}, {1, 200}).input<uint8_t>({2}, {2, 100}).output<bool>({2}, {true, false}).run();
  OpTester("LessOrEqual", 16).input<float>({2}, {1, kNaN}).input<float>({2}, {1, 1}).output<bool>({2}, {true, false}).run();
  Tensor a = Tensor::from_vector<std::string>({2}, {"x", "y"});
  Tensor b = Tensor::from_vector<std::string>({2}, {"x", "z"});
  OpTester("Equal", 19).input(a).input(b).output<bool>({2}, {true, false}).run();
}

TEST(Logical, IsNaNIsInf) {
  OpTester("IsNaN", 13).input<float>({3}, {kNaN, 1, kInf}).output<bool>({3}, {true, false, false}).run();
  OpTester("IsInf", 10).input<float>({4}, {kNaN, kInf, -kInf, 1}).output<bool>({4}, {false, true, true, false}).run();
  OpTester("IsInf", 10)
      .attr("detect_negative", 0)
      .input<float>({3}, {kInf, -kInf, 1})
      .output<bool>({3}, {true, false, false})
      .run();
  OpTester("IsInf", 10)
      .attr("detect_positive", 0)
      .input<double>({3}, {kInf, -kInf, 1})
      .output<bool>({3}, {false, true, false})
      .run();
}

TEST(Logical, WhereThreeWayBroadcast) {
  OpTester("Where", 16)
      .input<bool>({2, 1}, {true, false})
      .input<int64_t>({3}, {1, 2, 3})
      .input<int64_t>({}, {-1})
      .output<int64_t>({2, 3}, {1, 2, 3, -1, -1, -1})
      .run();
  Tensor x = Tensor::from_vector<std::string>({2}, {"a", "b"});
  Tensor y = Tensor::from_vector<std::string>({2}, {"c", "d"});
  OpTester("Where", 16)
      .input<bool>({2}, {false, true})
      .input(x)
      .input(y)
      .output(Tensor::from_vector<std::string>({2}, {"c", "b"}))
      .run();
}

}  // namespace
}  // namespace parity::testing
