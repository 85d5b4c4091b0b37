// Spec: https://onnx.ai/onnx/operators/onnx__Transpose.html, onnx__Concat.html
// Optimized Transpose (ops/tensor/transpose_fast.cpp) and Concat (ops/tensor/concat_fast.cpp)
// against the reference kernels: every perm of ranks 1-4, size-1 and empty dims, channel
// shuffle, each element size, negative axes, empty inputs, threads; and the cases they leave to
// the reference (strings, bad perms and shapes, which must still fail the same way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_tester.h"
#include "runtime/model_builder.h"
#include "runtime/session.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

Tensor random_tensor(const Shape& shape, uint32_t seed) { return testing::random_uniform(shape, seed, -3, 3); }

/// `t` cast to `dtype`: the values are small, and made non-negative for uint8 (a negative float
/// converted to an unsigned type is undefined behaviour, which UBSan reports).
Tensor as(const Tensor& t, DType dtype) {
  if (dtype != DType::kUInt8) return t.cast(dtype);
  Tensor magnitudes(DType::kFloat32, t.shape());
  const auto source = t.values<float>();
  auto target = magnitudes.values<float>();
  for (size_t i = 0; i < target.size(); ++i) target[i] = std::fabs(source[i]);
  return magnitudes.cast(dtype);
}

void compare_transpose(const Tensor& x, const std::optional<std::vector<int64_t>>& perm) {
  OpTester t = testing::one_output_node("Transpose", 13);
  if (perm) t.attr_ints("perm", *perm);
  t.input(x).tolerance(0, 0).compare_tiers();
}

TEST(OptimizedTranspose, EveryPermOfRanksOneToFour) {
  const std::vector<Shape> shapes = {{5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 5}, {1, 4, 1, 3}, {3, 2, 4, 5}};
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      SCOPED_TRACE(shape_to_string(shape) + " perm " + shape_to_string(perm));
      compare_transpose(random_tensor(shape, seed++), perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
    compare_transpose(random_tensor(shape, seed++), std::nullopt);  // default: reversed dims
  }
}

TEST(OptimizedTranspose, ChannelShuffleElementSizesAndEdgeShapes) {
  const Tensor shuffle = random_tensor({1, 2, 58, 28, 28}, 2);
  for (DType dtype : {DType::kFloat32, DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool, DType::kFloat64})
    compare_transpose(as(shuffle, dtype), std::vector<int64_t>{0, 2, 1, 3, 4});
  compare_transpose(random_tensor({2, 0, 3}, 3), std::vector<int64_t>{2, 0, 1});                   // empty
  compare_transpose(random_tensor({}, 4), std::vector<int64_t>{});                                 // scalar
  compare_transpose(random_tensor({1, 1, 1}, 5), std::vector<int64_t>{2, 1, 0});                   // all ones
  compare_transpose(random_tensor({2, 3, 4, 5, 6, 2}, 6), std::vector<int64_t>{5, 3, 1, 0, 2, 4});  // rank 6
  compare_transpose(random_tensor({300, 257}, 7), std::vector<int64_t>{1, 0});                     // large 2-D
}

TEST(OptimizedTranspose, StringsAndBadPermsRunTheReference) {
  OpTester strings("Transpose", 13);
  strings.attr_ints("perm", {1, 0}).input(Tensor::from_vector<std::string>({2, 2}, {"a", "b", "c", "d"}));
  strings.output(Tensor::from_vector<std::string>({2, 2}, {"a", "c", "b", "d"})).kernels(KernelTier::kOptimized).run();
  OpTester bad = testing::one_output_node("Transpose", 13);
  bad.attr_ints("perm", {0, 0}).input(random_tensor({2, 2}, 8)).kernels(KernelTier::kOptimized);
  EXPECT_NE(bad.run_expect_error(ErrorCode::kRuntime).find("is not a permutation"), std::string::npos);
}

void compare_concat(const std::vector<Tensor>& inputs, int64_t axis, int opset = 13) {
  OpTester t = testing::one_output_node("Concat", opset);
  t.attr("axis", axis);
  for (const Tensor& x : inputs) t.input(x);
  t.tolerance(0, 0).compare_tiers();
}

TEST(OptimizedConcat, AxesDtypesAndEmptyInputs) {
  compare_concat({random_tensor({1, 3, 5, 5}, 1), random_tensor({1, 4, 5, 5}, 2)}, 1);
  compare_concat({random_tensor({2, 3, 4}, 3), random_tensor({2, 3, 1}, 4), random_tensor({2, 3, 2}, 5)}, -1);
  compare_concat({random_tensor({2, 3}, 6), random_tensor({5, 3}, 7)}, 0);
  compare_concat({random_tensor({2, 0, 3}, 8), random_tensor({2, 2, 3}, 9)}, 1);  // an empty input
  compare_concat({random_tensor({0, 2}, 10), random_tensor({0, 3}, 11)}, 1);      // an empty output
  compare_concat({random_tensor({7}, 12)}, 0, 4);                                // one input, Concat-4
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool})
    compare_concat({as(random_tensor({2, 3, 4}, 13), dtype), as(random_tensor({2, 5, 4}, 14), dtype)}, 1);
}

TEST(OptimizedConcat, MismatchesAndStringsRunTheReference) {
  OpTester bad = testing::one_output_node("Concat", 13);
  bad.attr("axis", int64_t{1}).input(random_tensor({2, 3}, 1)).input(random_tensor({3, 3}, 2));
  bad.kernels(KernelTier::kOptimized);
  EXPECT_NE(bad.run_expect_error(ErrorCode::kRuntime).find("does not match input 0"), std::string::npos);
  OpTester strings("Concat", 13);
  strings.attr("axis", int64_t{0}).input(Tensor::from_vector<std::string>({1}, {"a"})).input(Tensor::from_vector<std::string>({2}, {"b", "c"}));
  strings.output(Tensor::from_vector<std::string>({3}, {"a", "b", "c"})).kernels(KernelTier::kOptimized).run();
}

// Large tensors split over threads: a DenseNet-sized concat and a ShuffleNet-sized shuffle at 1,
// 2 and 3 threads give the reference's bytes.
TEST(OptimizedLayout, ThreadedCopiesMatchTheReference) {
  testing::ModelBuilder b(13);
  b.input("a", DType::kFloat32, {1, 96, 28, 28}).input("b", DType::kFloat32, {1, 32, 28, 28});
  b.output("y", DType::kFloat32, {1, 28, 2, 64, 28});
  auto& concat = b.node("Concat", {"a", "b"}, {"c"}, "concat");
  testing::add_int_attr(concat, "axis", 1);
  b.initializer("shape", Tensor::from_vector<int64_t>({5}, {1, 2, 64, 28, 28}));
  b.node("Reshape", {"c", "shape"}, {"r"}, "reshape");
  auto& transpose = b.node("Transpose", {"r"}, {"y"}, "shuffle");
  auto* perm = transpose.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {0, 3, 1, 2, 4}) perm->add_ints(p);
  TensorMap feed;
  feed.set("a", random_tensor({1, 96, 28, 28}, 1));
  feed.set("b", random_tensor({1, 32, 28, 28}, 2));
  auto run = [&](KernelTier tier, int threads) {
    SessionOptions options;
    options.kernels = tier;
    options.threads = threads;
    return Session::create(b.model(), options).value().run(feed).at("y");
  };
  const Tensor expected = run(KernelTier::kReference, 1);
  for (int threads : {1, 2, 3})
    EXPECT_TRUE(testing::tensors_close(run(KernelTier::kOptimized, threads), expected, 0, 0)) << threads;
}

}  // namespace
}  // namespace parity::runtime
