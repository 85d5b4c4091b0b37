// verify_same_outputs: a rewritten model equal to the original passes; one whose weights changed
// is named with the output, iteration and error.
#include "tools/verify.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"

namespace parity::tools {
namespace {

model::Model relu_model(const std::vector<float>& w) {
  return model::Model(std::make_unique<onnx::ModelProto>(testing::add_relu_model(w)));
}

TEST(Verify, EqualModelsPassAndChangedWeightsAreNamed) {
  const auto same = verify_same_outputs(relu_model({1.f, -2.f, 3.f, -4.f}), relu_model({1.f, -2.f, 3.f, -4.f}), 3);
  EXPECT_FALSE(same.mismatch.has_value());
  EXPECT_EQ(same.iterations, 3);
  EXPECT_EQ(same.outputs_compared, 1u);
  const auto changed = verify_same_outputs(relu_model({1.f, -2.f, 3.f, -4.f}), relu_model({1.f, -2.f, 3.5f, -4.f}), 2);
  ASSERT_TRUE(changed.mismatch.has_value());
  EXPECT_EQ(changed.mismatch->rfind("output 'y', iteration 0: max abs err 0.5", 0), 0u) << *changed.mismatch;
}

}  // namespace
}  // namespace parity::tools
