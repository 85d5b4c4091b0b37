// Spec: none (parity's "ai.parity" RoundToReducedFloat: Cast's rounding to float16 / bfloat16,
// kept in float32)
// The rounded values are those of a Cast to the narrow type and back (core's scalar conversions,
// not the kernel's F16C path): ties to even, overflow to +-inf, subnormals kept, NaN kept; inputs
// of other types are converted first, and a `to` that is not float16/bfloat16 is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

Tensor rounded_through(DType narrow, const Tensor& x) { return x.cast(narrow).cast(DType::kFloat32); }

std::vector<float> edge_values() {
  std::vector<float> v = {1.0f, 1.00048828125f /* a float16 tie: rounds to even 1.0 */, 1.0014648f, -2.5e-3f,
                          65504.0f, 65520.0f /* rounds past float16's largest: inf */, 70000.0f, -1e6f,
                          6e-8f, 3e-8f /* float16 subnormals */, 1e-40f, 0.0f, -0.0f, NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 40; ++i) v.push_back(std::sin(0.37f * i) * std::pow(10.0f, static_cast<float>(i % 9 - 4)));
  return v;
}

TEST(RoundToReducedFloat, RoundsAsCastDoesAndStaysFloat32) {
  const std::vector<float> values = edge_values();
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  for (DType narrow : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor expected = rounded_through(narrow, x);
    ASSERT_NE(expected.data<float>()[2], values[2]);  // the case rounds at all
    OpTester("RoundToReducedFloat", 1, "ai.parity")
        .attr("to", static_cast<int64_t>(narrow))
        .input(x)
        .output(expected)
        .tolerance(0, 0)
        .run();
  }
  EXPECT_TRUE(std::isinf(rounded_through(DType::kFloat16, x).data<float>()[5]));
}

TEST(RoundToReducedFloat, ConvertsOtherInputTypesFirst) {
  OpTester("RoundToReducedFloat", 1, "ai.parity")
      .attr("to", static_cast<int64_t>(DType::kFloat16))
      .input(Tensor::from_vector<int64_t>({3}, {2049, -4097, 7}))
      .output(Tensor::from_vector<float>({3}, {2048, -4096, 7}))
      .tolerance(0, 0)
      .run();
  OpTester("RoundToReducedFloat", 1, "ai.parity")
      .attr("to", static_cast<int64_t>(DType::kBFloat16))
      .input(Tensor::from_vector<double>({2}, {1.00390625, 257.0}))
      .output(Tensor::from_vector<float>({2}, {1.0f, 256.0f}))
      .tolerance(0, 0)
      .run();
}

TEST(RoundToReducedFloat, RefusesATargetThatIsNotFloat16OrBfloat16) {
  OpTester("RoundToReducedFloat", 1, "ai.parity")
      .attr("to", static_cast<int64_t>(DType::kFloat32))
      .input(Tensor::from_vector<float>({1}, {1.0f}))
      .run_expect_error(ErrorCode::kInvalidModel);
}

}  // namespace
}  // namespace parity::testing
