// Unit tests for the layout kernels: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
// Split, Slice, Gather, Expand, Tile, Range, Pad.
#include <limits>

#include "runtime/ops/tensor_test_util.h"

namespace parity::testing {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// ---- Reshape ---------------------------------------------------------------------------------
TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  OpTester("Reshape", 13).input(iota_f32({2, 3, 4})).input(i64({3}, {0, -1, 2})).output(iota_f32({2, 6, 2})).run();
}

TEST(Reshape, SharesTheInputBuffer) {
  Tensor x = iota_f32({2, 3});
  auto outs = OpTester("Reshape", 14).input(x).input(i64({1}, {6})).output(iota_f32({6})).run_outputs();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape(), Shape({6}));
  EXPECT_EQ(outs[0].raw_data(), x.raw_data());
}

TEST(Reshape, AllowZeroKeepsZeroAsADimension) {
  OpTester("Reshape", 14).attr("allowzero", 1).input(f32({0, 3}, {})).input(i64({3}, {3, 0, 4}))
      .output(f32({3, 0, 4}, {})).run();
  // Without allowzero the 0 copies the input dimension.
  OpTester("Reshape", 14).input(f32({0, 3}, {})).input(i64({2}, {0, 3})).output(f32({0, 3}, {})).run();
}

TEST(Reshape, WorksForStringsAndBool) {
  OpTester("Reshape", 13).input(str({2, 2}, {"a", "b", "c", "d"})).input(i64({1}, {-1}))
      .output(str({4}, {"a", "b", "c", "d"})).run();
  OpTester("Reshape", 13).input(boolean({4}, {true, false, false, true})).input(i64({2}, {2, 2}))
      .output(boolean({2, 2}, {true, false, false, true})).run();
}

// Found by fuzz_plan_graph: the product of the requested dims overflowed int64 (UB) before the
// element counts were compared. It is one error now, and a 0 dim still makes huge ones fine.
TEST(Reshape, DimsWhoseProductOverflowsAreOneError) {
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({6})).input(i64({3}, {int64_t{1} << 40, int64_t{1} << 40, 6})),
                    ErrorCode::kRuntime, "more elements than a 64-bit count can hold");
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({6})).input(i64({3}, {int64_t{1} << 32, int64_t{1} << 32, -1})),
                    ErrorCode::kRuntime, "more elements than a 64-bit count can hold");  // wraps to exactly 0
  OpTester("Reshape", 14).attr("allowzero", 1).input(f32({0}, {})).input(i64({3}, {int64_t{1} << 40, int64_t{1} << 40, 0}))
      .output(f32({int64_t{1} << 40, int64_t{1} << 40, 0}, {})).run();
}

TEST(Reshape, AttributeVersion) {
  OpTester("Reshape", 1).attr_ints("shape", std::vector<int64_t>{3, 2}).input(iota_f32({6})).output(iota_f32({3, 2})).run();
}

TEST(Reshape, IncompatibleShapesFail) {
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({2, 3})).input(i64({2}, {4, 2})), ErrorCode::kRuntime, "cannot reshape");
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({2, 3})).input(i64({2}, {-1, 4})), ErrorCode::kRuntime, "cannot reshape");
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({2, 3})).input(i64({2}, {-1, -1})), ErrorCode::kRuntime, "more than one -1");
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({6})).input(i64({2}, {3, -2})), ErrorCode::kRuntime, "invalid dimension");
  expect_node_error(OpTester("Reshape", 13).input(iota_f32({6})).input(i64({2}, {6, 0})), ErrorCode::kRuntime, "rank");
  expect_node_error(OpTester("Reshape", 14).attr("allowzero", 1).input(f32({0}, {})).input(i64({2}, {0, -1})) , ErrorCode::kRuntime, "cannot infer");
}

// ---- Flatten / Squeeze / Unsqueeze -----------------------------------------------------------
TEST(Flatten, AxesIncludingZeroRankAndNegative) {
  OpTester("Flatten", 13).attr("axis", 0).input(iota_f32({2, 3})).output(iota_f32({1, 6})).run();
  OpTester("Flatten", 13).attr("axis", 2).input(iota_f32({2, 3})).output(iota_f32({6, 1})).run();
  OpTester("Flatten", 13).attr("axis", -1).input(iota_f32({2, 3, 4})).output(iota_f32({6, 4})).run();
  OpTester("Flatten", 13).input(str({1, 2, 1}, {"x", "y"})).output(str({1, 2}, {"x", "y"})).run();
  expect_node_error(OpTester("Flatten", 13).attr("axis", 3).input(iota_f32({2, 3})), ErrorCode::kRuntime, "out of range");
}

TEST(Squeeze, AttributeInputAndAllOnes) {
  OpTester("Squeeze", 11).attr_ints("axes", std::vector<int64_t>{-1}).input(iota_f32({3, 1, 1}))
      .output(iota_f32({3, 1})).run();
  OpTester("Squeeze", 13).input(iota_f32({1, 3, 1})).input(i64({1}, {0})).output(iota_f32({3, 1})).run();
  OpTester("Squeeze", 13).input(iota_f32({1, 3, 1})).output(iota_f32({3})).run();
  OpTester("Squeeze", 13).input(iota_f32({1, 1})).output(iota_f32({})).run();
  OpTester("Squeeze", 13).input(f32({1, 0}, {})).input(i64({1}, {0})).output(f32({0}, {})).run();
}

TEST(Squeeze, NonUnitAxisFails) {
  expect_node_error(OpTester("Squeeze", 13).input(iota_f32({2, 3})).input(i64({1}, {1})), ErrorCode::kRuntime, "not 1");
  expect_node_error(OpTester("Squeeze", 13).input(iota_f32({1, 3})).input(i64({1}, {2})), ErrorCode::kRuntime, "out of range");
}

TEST(Unsqueeze, AxesIndexTheOutput) {
  OpTester("Unsqueeze", 11).attr_ints("axes", std::vector<int64_t>{0, 3}).input(iota_f32({2, 3}))
      .output(iota_f32({1, 2, 3, 1})).run();
  OpTester("Unsqueeze", 13).input(iota_f32({2, 3})).input(i64({2}, {-1, 1})).output(iota_f32({2, 1, 3, 1})).run();
  OpTester("Unsqueeze", 13).input(str({}, {"s"})).input(i64({1}, {0})).output(str({1}, {"s"})).run();
  expect_node_error(OpTester("Unsqueeze", 13).input(iota_f32({2})).input(i64({2}, {0, -3})), ErrorCode::kRuntime, "repeated");
  expect_node_error(OpTester("Unsqueeze", 13).input(iota_f32({2})).input(i64({1}, {2})), ErrorCode::kRuntime, "out of range");
}

// ---- Transpose --------------------------------------------------------------------------------
TEST(Transpose, DefaultReversesAndPermWorks) {
  OpTester("Transpose", 13).input(iota_f32({2, 3})).output(f32({3, 2}, {0, 3, 1, 4, 2, 5})).run();
  OpTester("Transpose", 13).attr_ints("perm", std::vector<int64_t>{1, 2, 0}).input(iota_f32({2, 2, 2}))
      .output(f32({2, 2, 2}, {0, 4, 1, 5, 2, 6, 3, 7})).run();
  OpTester("Transpose", 13).input(str({2, 2}, {"a", "b", "c", "d"})).output(str({2, 2}, {"a", "c", "b", "d"})).run();
  OpTester("Transpose", 13).input(i64({2, 0, 3}, {})).output(i64({3, 0, 2}, {})).run();
  OpTester("Transpose", 13).input(f64({}, {4.5})).output(f64({}, {4.5})).run();
}

TEST(Transpose, BadPermFails) {
  expect_node_error(OpTester("Transpose", 13).attr_ints("perm", std::vector<int64_t>{0, 0}).input(iota_f32({2, 2})) , ErrorCode::kRuntime, "not a permutation");
  expect_node_error(OpTester("Transpose", 13).attr_ints("perm", std::vector<int64_t>{0}).input(iota_f32({2, 2})) , ErrorCode::kRuntime, "entries");
}

// ---- Concat / Split ---------------------------------------------------------------------------
TEST(Concat, NegativeAxisStringsAndEmptyInputs) {
  OpTester("Concat", 13).attr("axis", -1).input(iota_f32({2, 1})).input(f32({2, 2}, {7, 8, 9, 10}))
      .output(f32({2, 3}, {0, 7, 8, 1, 9, 10})).run();
  OpTester("Concat", 13).attr("axis", 0).input(str({1}, {"a"})).input(str({0}, {})).input(str({2}, {"b", "c"}))
      .output(str({3}, {"a", "b", "c"})).run();
}

TEST(Concat, MismatchedInputsFail) {
  expect_node_error(OpTester("Concat", 13).attr("axis", 0).input(iota_f32({2, 2})).input(iota_f32({2, 3})) , ErrorCode::kRuntime, "does not match");
  expect_node_error(OpTester("Concat", 13).attr("axis", 0).input(iota_f32({2})).input(i64({1}, {1})), ErrorCode::kRuntime, "dtype");
  expect_node_error(OpTester("Concat", 13).attr("axis", 2).input(iota_f32({2})), ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("Concat", 13).input(iota_f32({2})), ErrorCode::kInvalidModel, "axis");
}

TEST(Split, EqualAttributeAndInputSizes) {
  OpTester("Split", 13).attr("axis", 1).input(iota_f32({2, 4})).output(f32({2, 2}, {0, 1, 4, 5}))
      .output(f32({2, 2}, {2, 3, 6, 7})).run();
  OpTester("Split", 11).attr_ints("split", std::vector<int64_t>{1, 3}).input(str({4}, {"a", "b", "c", "d"}))
      .output(str({1}, {"a"})).output(str({3}, {"b", "c", "d"})).run();
  OpTester("Split", 13).attr("axis", -1).input(iota_f32({4})).input(i64({3}, {0, 4, 0})).output(f32({0}, {}))
      .output(iota_f32({4})).output(f32({0}, {})).run();
  OpTester("Split", 18).attr("num_outputs", 3).input(iota_f32({5})).output(f32({2}, {0, 1})).output(f32({2}, {2, 3}))
      .output(f32({1}, {4})).run();
}

TEST(Split, BadSizesFail) {
  expect_node_error(OpTester("Split", 13).input(iota_f32({5})).missing_output().missing_output(), ErrorCode::kRuntime, "equally");
  expect_node_error(OpTester("Split", 13).input(iota_f32({5})).input(i64({2}, {2, 2})).missing_output().missing_output() , ErrorCode::kRuntime, "sum to 4");
  expect_node_error(OpTester("Split", 13).input(iota_f32({5})).input(i64({1}, {5})).missing_output().missing_output() , ErrorCode::kRuntime, "outputs");
}

// ---- Slice --------------------------------------------------------------------------------------
TEST(Slice, AttributeVersion) {
  OpTester("Slice", 1).attr_ints("starts", std::vector<int64_t>{1}).attr_ints("ends", std::vector<int64_t>{kInt64Max})
      .attr_ints("axes", std::vector<int64_t>{1}).input(iota_f32({2, 3})).output(f32({2, 2}, {1, 2, 4, 5})).run();
}

TEST(Slice, NegativeStepsClampingAndHugeEnds) {
  // Reverse everything: end = INT64_MIN clamps to -1 for negative steps.
  OpTester("Slice", 13).input(iota_f32({5})).input(i64({1}, {-1})).input(i64({1}, {kInt64Min}))
      .input(i64({1}, {0})).input(i64({1}, {-2})).output(f32({3}, {4, 2, 0})).run();
  OpTester("Slice", 13).input(iota_f32({2, 4})).input(i64({2}, {0, 10})).input(i64({2}, {kInt64Max, -kInt64Max}))
      .missing_input().input(i64({2}, {1, -3})).output(f32({2, 2}, {3, 0, 7, 4})).run();
  // Start past the end gives an empty axis.
  OpTester("Slice", 13).input(iota_f32({2, 3})).input(i32({1}, {5})).input(i32({1}, {9})).input(i32({1}, {-1}))
      .output(f32({2, 0}, {})).run();
  // Huge steps select a single element.
  OpTester("Slice", 13).input(iota_f32({4})).input(i64({1}, {1})).input(i64({1}, {4})).input(i64({1}, {0}))
      .input(i64({1}, {kInt64Max})).output(f32({1}, {1})).run();
  OpTester("Slice", 13).input(iota_f32({4})).input(i64({1}, {3})).input(i64({1}, {kInt64Min}))
      .input(i64({1}, {0})).input(i64({1}, {kInt64Min})).output(f32({1}, {3})).run();
}

TEST(Slice, StringsAndEmptyAxes) {
  OpTester("Slice", 13).input(str({3}, {"a", "b", "c"})).input(i64({1}, {1})).input(i64({1}, {3}))
      .output(str({2}, {"b", "c"})).run();
  OpTester("Slice", 13).input(f32({0, 2}, {})).input(i64({1}, {-1})).input(i64({1}, {kInt64Min}))
      .input(i64({1}, {0})).input(i64({1}, {-1})).output(f32({0, 2}, {})).run();
}

TEST(Slice, BadArgumentsFail) {
  expect_node_error(OpTester("Slice", 13).input(iota_f32({4})).input(i64({1}, {0})).input(i64({1}, {4})).input(i64({1}, {0})) .input(i64({1}, {0})), ErrorCode::kRuntime, "steps must not be 0");
  expect_node_error(OpTester("Slice", 13).input(iota_f32({4})).input(i64({2}, {0, 0})).input(i64({1}, {4})) , ErrorCode::kRuntime, "entries");
  expect_node_error(OpTester("Slice", 13).input(iota_f32({4})).input(i64({1}, {0})).input(i64({1}, {4})).input(i64({1}, {1})) , ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("Slice", 13).input(iota_f32({4})).input(f32({1}, {0})).input(i64({1}, {4})) , ErrorCode::kRuntime, "integer");
}

// ---- Gather -----------------------------------------------------------------------------------
TEST(Gather, AxesNegativeIndicesAndScalars) {
  OpTester("Gather", 13).attr("axis", 1).input(iota_f32({2, 3})).input(i64({2, 2}, {2, 0, -1, 1}))
      .output(f32({2, 2, 2}, {2, 0, 2, 1, 5, 3, 5, 4})).run();
  OpTester("Gather", 13).input(str({3}, {"a", "b", "c"})).input(i32({}, {-3})).output(str({}, {"a"})).run();
  OpTester("Gather", 13).input(iota_f32({3, 2})).input(i64({0}, {})).output(f32({0, 2}, {})).run();
}

TEST(Gather, OutOfRangeIndexFails) {
  expect_node_error(OpTester("Gather", 13).input(iota_f32({3})).input(i64({1}, {3})), ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("Gather", 13).input(iota_f32({3})).input(i64({1}, {-4})), ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("Gather", 13).input(f32({0}, {})).input(i64({1}, {0})), ErrorCode::kRuntime, "out of range");
}

// ---- Expand / Tile / Range ----------------------------------------------------------------------
TEST(Expand, BroadcastsBothWays) {
  OpTester("Expand", 13).input(f32({3, 1}, {1, 2, 3})).input(i64({3}, {2, 1, 2}))
      .output(f32({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3})).run();
  OpTester("Expand", 13).input(str({2}, {"a", "b"})).input(i64({1}, {1})).output(str({2}, {"a", "b"})).run();
  OpTester("Expand", 13).input(iota_f32({1})).input(i64({2}, {0, 3})).output(f32({0, 3}, {})).run();
  expect_node_error(OpTester("Expand", 13).input(iota_f32({3})).input(i64({1}, {2})), ErrorCode::kRuntime, "broadcast");
}

TEST(Tile, RepeatsEveryAxis) {
  OpTester("Tile", 13).input(f32({2, 2}, {1, 2, 3, 4})).input(i64({2}, {1, 2}))
      .output(f32({2, 4}, {1, 2, 1, 2, 3, 4, 3, 4})).run();
  OpTester("Tile", 13).input(str({2}, {"a", "b"})).input(i64({1}, {2})).output(str({4}, {"a", "b", "a", "b"})).run();
  OpTester("Tile", 13).input(iota_f32({2})).input(i64({1}, {0})).output(f32({0}, {})).run();
  expect_node_error(OpTester("Tile", 13).input(iota_f32({2})).input(i64({2}, {1, 1})), ErrorCode::kRuntime, "entries");
  expect_node_error(OpTester("Tile", 13).input(iota_f32({2})).input(i64({1}, {-1})), ErrorCode::kRuntime, "negative");
}

TEST(Range, FloatIntAndEmpty) {
  OpTester("Range", 11).input(f32({}, {1})).input(f32({}, {2})).input(f32({}, {0.25f}))
      .output(f32({4}, {1, 1.25f, 1.5f, 1.75f})).run();
  OpTester("Range", 11).input(i32({}, {10})).input(i32({}, {6})).input(i32({}, {-3})).output(i32({2}, {10, 7})).run();
  OpTester("Range", 11).input(i64({}, {5})).input(i64({}, {1})).input(i64({}, {2})).output(i64({0}, {})).run();
  expect_node_error(OpTester("Range", 11).input(i64({}, {0})).input(i64({}, {5})).input(i64({}, {0})), ErrorCode::kRuntime, "delta");
  expect_node_error(OpTester("Range", 11).input(i64({}, {0})).input(i32({}, {5})).input(i64({}, {1})), ErrorCode::kRuntime, "dtype");
}

// ---- Pad -------------------------------------------------------------------------------------------
TEST(Pad, ConstantWithValueAndCropping) {
  OpTester("Pad", 13).input(f32({2, 2}, {1, 2, 3, 4})).input(i64({4}, {0, 1, 1, -1})).input(f32({}, {9}))
      .output(f32({3, 2}, {9, 1, 9, 3, 9, 9})).run();
  OpTester("Pad", 2).attr_ints("pads", std::vector<int64_t>{1, 0}).attr("value", 1.5f).input(f32({1}, {7}))
      .output(f32({2}, {1.5f, 7})).run();
  OpTester("Pad", 11).input(str({1}, {"x"})).input(i64({2}, {1, 1})).output(str({3}, {"", "x", ""})).run();
}

TEST(Pad, ReflectAndEdge) {
  OpTester("Pad", 13).attr("mode", "reflect").input(f32({3}, {1, 2, 3})).input(i64({2}, {2, 2}))
      .output(f32({7}, {3, 2, 1, 2, 3, 2, 1})).run();
  OpTester("Pad", 13).attr("mode", "edge").input(f32({2}, {1, 2})).input(i64({2}, {2, 1}))
      .output(f32({5}, {1, 1, 1, 2, 2})).run();
  // A size-1 axis reflects onto itself (numpy semantics).
  OpTester("Pad", 13).attr("mode", "reflect").input(f32({1}, {5})).input(i64({2}, {1, 1})).output(f32({3}, {5, 5, 5})).run();
}

TEST(Pad, BadArgumentsFail) {
  expect_node_error(OpTester("Pad", 13).input(iota_f32({2})).input(i64({1}, {1})), ErrorCode::kRuntime, "pads has 1");
  expect_node_error(OpTester("Pad", 13).input(iota_f32({2})).input(i64({2}, {-2, -1})), ErrorCode::kRuntime, "remove more");
  expect_node_error(OpTester("Pad", 13).attr("mode", "edge").input(f32({0}, {})).input(i64({2}, {1, 0})) , ErrorCode::kRuntime, "empty axis");
  expect_node_error(OpTester("Pad", 13).attr("mode", "mirror").input(iota_f32({2})).input(i64({2}, {1, 0})) , ErrorCode::kInvalidModel, "mode");
}

}  // namespace
}  // namespace parity::testing
