// Spec: https://onnx.ai/onnx/operators/onnx__Softmax.html, onnx__Attention.html
// float16 / bfloat16 Softmax and bfloat16 Attention round every intermediate step as the spec's
// reference implementation does (numpy on arrays of that dtype), not once at the end. The
// expected values were computed with that reference's steps; each case is one where rounding
// once at the end gives a different result (listed as `rounded_once`, to show the test can fail).
#include <gtest/gtest.h>

#include <vector>

#include "op_tester.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

template <typename T>
Tensor half_tensor(DType dtype, const Shape& shape, const std::vector<float>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = T(values[i]);
  return t;
}

Tensor bf16(const Shape& shape, const std::vector<float>& values) {
  return half_tensor<BFloat16>(DType::kBFloat16, shape, values);
}
Tensor fp16(const Shape& shape, const std::vector<float>& values) {
  return half_tensor<Float16>(DType::kFloat16, shape, values);
}

TEST(HalfRounding, Bfloat16SoftmaxRoundsEachStepAndEachAddition) {
  const std::vector<float> x = {0.3046875f, 1.25f, -1.2578125f, 0.06494140625f, 2.359375f, 2.375f, -2.25f, -1.7578125f};
  const std::vector<float> stepwise = {0.048828125f, 0.125f, 0.01025390625f, 0.038330078125f,
                                       0.37890625f, 0.384765625f, 0.0037841796875f, 0.0062255859375f};
  const std::vector<float> rounded_once = {0.048828125f, 0.1259765625f, 0.01019287109375f, 0.038330078125f,
                                           0.380859375f, 0.38671875f, 0.0037841796875f, 0.006195068359375f};
  OpTester("Softmax", 13).input(bf16({1, 8}, x)).output(bf16({1, 8}, stepwise)).tolerance(0, 0).run();
  ASSERT_NE(stepwise, rounded_once);
  // Along a non-last axis the same steps apply.
  std::vector<float> column(16);
  for (size_t i = 0; i < 8; ++i) column[2 * i] = column[2 * i + 1] = x[i];
  std::vector<float> column_expected(16);
  for (size_t i = 0; i < 8; ++i) column_expected[2 * i] = column_expected[2 * i + 1] = stepwise[i];
  OpTester("Softmax", 13).attr("axis", 0).input(bf16({8, 2}, column)).output(bf16({8, 2}, column_expected)).tolerance(0, 0).run();
}

TEST(HalfRounding, Float16SoftmaxRoundsEachStepAndTheFloatSumOnce) {
  const std::vector<float> x = {-2.69140625f, -0.355224609375f, -2.8203125f, -0.259033203125f, 0.89501953125f,
                                -1.3291015625f};
  const std::vector<float> stepwise = {0.0157318115234375f, 0.1627197265625f, 0.013824462890625f,
                                       0.178955078125f,     0.56787109375f,    0.061370849609375f};
  const std::vector<float> rounded_once = {0.015716552734375f, 0.16259765625f, 0.01381683349609375f,
                                           0.178955078125f,    0.5673828125f,   0.0614013671875f};
  OpTester("Softmax", 13).input(fp16({6}, x)).output(fp16({6}, stepwise)).tolerance(0, 0).run();
  ASSERT_NE(stepwise, rounded_once);
}

TEST(HalfRounding, Bfloat16AttentionRoundsLikeTheSpecReference) {
  // Causal, Q [1, 1, 3, 4], K [1, 1, 5, 4], V [1, 1, 5, 2], default scale.
  const Tensor q = bf16({1, 1, 3, 4}, {-0.640625f, -0.9609375f, -0.07373046875f, 0.44921875f, -0.1591796875f,
                                       -0.0291748046875f, -0.97265625f, -0.0252685546875f, 0.8828125f, 0.703125f,
                                       0.458984375f, -0.78125f});
  const Tensor k = bf16({1, 1, 5, 4}, {0.7890625f, 0.71484375f, -0.66796875f, 0.265625f, -0.9609375f, -0.765625f,
                                       -0.3671875f, -0.68359375f, 0.51953125f, 0.63671875f, -0.310546875f,
                                       -0.36328125f, -0.77734375f, -0.83203125f, 0.42578125f, 0.19921875f,
                                       -0.88671875f, -0.04052734375f, -0.1962890625f, 0.6953125f});
  const Tensor v = bf16({1, 1, 5, 2}, {0.435546875f, 0.2041015625f, 0.10498046875f, 0.8984375f, 0.97265625f,
                                       -0.32421875f, -0.51953125f, 0.59375f, -0.87109375f, -0.271484375f});
  const std::vector<float> stepwise = {0.435546875f, 0.2041015625f, 0.267578125f, 0.55859375f, 0.62890625f,
                                       0.07470703125f};
  const std::vector<float> rounded_once = {0.435546875f, 0.2041015625f, 0.267578125f, 0.5546875f, 0.62890625f,
                                           0.07568359375f};
  ASSERT_NE(stepwise, rounded_once);
  for (KernelTier tier : {KernelTier::kReference, KernelTier::kOptimized}) {
    OpTester t("Attention", 23);
    t.attr("is_causal", 1).input(q).input(k).input(v).output(bf16({1, 1, 3, 2}, stepwise)).tolerance(0, 0);
    t.kernels(tier).run();  // the optimized tier leaves bfloat16 to the reference kernel
  }
}

}  // namespace
}  // namespace parity::runtime
