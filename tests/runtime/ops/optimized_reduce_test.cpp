// The optimized fp32 ReduceMean / ReduceSum (one contiguous block of axes) against the reference
// kernels: bit-identical results on random inputs with fixed seeds, edge shapes, and the cases it
// declines or hands to the reference kernel at run time.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

using nn::random_tensor;
using runtime::KernelTier;

/// op over `axes` (attribute before opset 18 for Mean / 13 for Sum, else a constant input).
void compare_reduce(const std::string& op, int opset, const Shape& shape, const std::optional<std::vector<int64_t>>& axes,
                    bool keepdims, uint32_t seed, bool expect_optimized = true) {
  SCOPED_TRACE(op + " opset " + std::to_string(opset) + " " + shape_to_string(shape) +
               " keepdims=" + std::to_string(keepdims));
  OpTester t(op, opset);
  t.attr("keepdims", keepdims ? 1 : 0);
  t.input(random_tensor(shape, seed));
  const bool axes_input = op == "ReduceMean" ? opset >= 18 : opset >= 13;
  if (axes) {
    if (axes_input) t.constant_input(Tensor::from_vector<int64_t>({static_cast<int64_t>(axes->size())}, *axes));
    else t.attr_ints("axes", *axes);
  }
  t.output_shape_only(DType::kFloat32, {}).tolerance(0, 0);
  t.compare_tiers(expect_optimized);
}

TEST(OptimizedReduce, LastAxisAndTrailingBlocksMatchBitForBit) {
  uint32_t seed = 900;
  for (const std::string op : {"ReduceMean", "ReduceSum"})
    for (int opset : {11, 13, 18})
      for (bool keepdims : {true, false}) {
        compare_reduce(op, opset, {1, 32}, std::vector<int64_t>{-1}, keepdims, seed++);  // LayerNorm's mean
        compare_reduce(op, opset, {1, 1}, std::vector<int64_t>{1}, keepdims, seed++);
        compare_reduce(op, opset, {3, 7, 5}, std::vector<int64_t>{1, 2}, keepdims, seed++);
        compare_reduce(op, opset, {3, 7, 5}, std::vector<int64_t>{2, 1}, keepdims, seed++);  // order does not matter
      }
}

TEST(OptimizedReduce, LeadingAndMiddleBlocksAndAllAxes) {
  uint32_t seed = 950;
  for (bool keepdims : {true, false}) {
    compare_reduce("ReduceMean", 13, {2, 6, 4, 5}, std::vector<int64_t>{2, 3}, keepdims, seed++);  // spatial mean
    compare_reduce("ReduceMean", 13, {2, 6, 4, 5}, std::vector<int64_t>{1}, keepdims, seed++);     // channels
    compare_reduce("ReduceMean", 13, {2, 6, 4, 5}, std::vector<int64_t>{0}, keepdims, seed++);
    compare_reduce("ReduceMean", 13, {2, 6, 4, 5}, std::nullopt, keepdims, seed++);  // every axis
    compare_reduce("ReduceSum", 13, {2, 6, 4, 5}, std::nullopt, keepdims, seed++);
    compare_reduce("ReduceSum", 13, {9}, std::vector<int64_t>{0}, keepdims, seed++);
    compare_reduce("ReduceMean", 13, {64, 300, 5}, std::vector<int64_t>{1}, keepdims, seed++);  // parallel split
  }
}

TEST(OptimizedReduce, ScatteredAxesEmptyTensorsAndBadAxesUseTheReference) {
  compare_reduce("ReduceMean", 13, {2, 3, 4}, std::vector<int64_t>{0, 2}, true, 990);  // two blocks
  compare_reduce("ReduceMean", 13, {2, 0, 4}, std::vector<int64_t>{2}, true, 991);     // empty input
  compare_reduce("ReduceMean", 13, {2, 0, 4}, std::vector<int64_t>{1}, false, 992);    // mean of nothing
  OpTester bad("ReduceMean", 13);
  bad.attr_ints("axes", {3}).input(random_tensor({2, 3}, 993)).kernels(KernelTier::kOptimized);
  bad.run_expect_error(ErrorCode::kRuntime);  // as the reference reports it
  // Axes fed at run time, noop_with_empty_axes and other dtypes are declined at plan time.
  OpTester fed("ReduceSum", 13);
  fed.input(random_tensor({2, 3}, 994)).input(Tensor::from_vector<int64_t>({1}, {1}));
  fed.output_shape_only(DType::kFloat32, {});
  fed.compare_tiers(false);
  bool used = true;
  fed.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  OpTester noop("ReduceSum", 13);
  noop.attr("noop_with_empty_axes", 1).input(random_tensor({2, 3}, 995)).output_shape_only(DType::kFloat32, {});
  noop.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  OpTester ints("ReduceMean", 13);
  ints.attr_ints("axes", {1}).input(Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4})).output_shape_only(DType::kInt32, {});
  ints.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
}

}  // namespace
}  // namespace parity::testing
