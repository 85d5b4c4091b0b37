// Unit tests for the indexing/selection kernels: GatherElements, GatherND, Scatter*,
// NonZero, Compress, OneHot, TopK, Unique, Trilu, EyeLike, ReverseSequence.
#include <cmath>
#include <limits>

#include "runtime/ops/tensor_test_util.h"

namespace parity::testing {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- GatherElements / GatherND -----------------------------------------------------------------
TEST(GatherElements, AxisNegativeIndicesAndSmallerIndices) {
  OpTester("GatherElements", 13).attr("axis", 1).input(f32({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(i64({2, 2}, {2, -3, 1, 1})).output(f32({2, 2}, {3, 1, 5, 5})).run();
  OpTester("GatherElements", 13).input(str({3}, {"a", "b", "c"})).input(i32({2}, {2, 0})).output(str({2}, {"c", "a"})).run();
}

TEST(GatherElements, BadIndicesFail) {
  expect_node_error(OpTester("GatherElements", 13).input(iota_f32({2, 2})).input(i64({1, 1}, {2})),
                    ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("GatherElements", 13).input(iota_f32({2, 2})).input(i64({2}, {0, 0})),
                    ErrorCode::kRuntime, "rank");
  expect_node_error(OpTester("GatherElements", 13).input(iota_f32({2, 2})).input(i64({1, 3}, {0, 0, 0})),
                    ErrorCode::kRuntime, "exceed");
}

TEST(GatherND, SlicesTuplesAndBatchDims) {
  OpTester("GatherND", 13).input(iota_f32({2, 2})).input(i64({2, 1}, {1, 0})).output(f32({2, 2}, {2, 3, 0, 1})).run();
  OpTester("GatherND", 13).input(iota_f32({2, 2})).input(i64({2, 2}, {0, 0, -1, 1})).output(f32({2}, {0, 3})).run();
  OpTester("GatherND", 13).attr("batch_dims", 1).input(iota_f32({2, 2, 2})).input(i64({2, 1}, {1, 0}))
      .output(f32({2, 2}, {2, 3, 4, 5})).run();
  OpTester("GatherND", 13).input(str({2}, {"x", "y"})).input(i64({1, 1}, {1})).output(str({1}, {"y"})).run();
  expect_node_error(OpTester("GatherND", 13).input(iota_f32({2, 2})).input(i64({1, 3}, {0, 0, 0})),
                    ErrorCode::kRuntime, "last dimension");
  expect_node_error(OpTester("GatherND", 13).input(iota_f32({2, 2})).input(i64({1, 2}, {0, 2})),
                    ErrorCode::kRuntime, "out of range");
}

// ---- Scatter family -------------------------------------------------------------------------------
TEST(ScatterElements, NoneAddMulAndNegativeIndices) {
  OpTester("ScatterElements", 13).attr("axis", 1).input(f32({1, 5}, {1, 2, 3, 4, 5})).input(i64({1, 2}, {1, -2}))
      .input(f32({1, 2}, {1.1f, 2.1f})).output(f32({1, 5}, {1, 1.1f, 3, 2.1f, 5})).run();
  OpTester("ScatterElements", 16).attr("reduction", "add").input(f32({3}, {1, 1, 1})).input(i64({3}, {0, 0, 2}))
      .input(f32({3}, {1, 2, 3})).output(f32({3}, {4, 1, 4})).run();
  OpTester("ScatterElements", 16).attr("reduction", "mul").input(i32({2}, {2, 3})).input(i64({2}, {1, 1}))
      .input(i32({2}, {4, 5})).output(i32({2}, {2, 60})).run();
  OpTester("ScatterElements", 18).attr("reduction", "max").input(f32({2}, {2, 3})).input(i64({2}, {0, 1}))
      .input(f32({2}, {4, 1})).output(f32({2}, {4, 3})).run();
  OpTester("Scatter", 10).input(str({3}, {"a", "b", "c"})).input(i64({1}, {1})).input(str({1}, {"z"}))
      .output(str({3}, {"a", "z", "c"})).run();
}

TEST(ScatterElements, BadInputsFail) {
  expect_node_error(OpTester("ScatterElements", 13).input(iota_f32({3})).input(i64({1}, {3})).input(f32({1}, {0})),
                    ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("ScatterElements", 13).input(iota_f32({3})).input(i64({2}, {0, 1})).input(f32({1}, {0})),
                    ErrorCode::kRuntime, "same shape");
  expect_node_error(OpTester("ScatterElements", 16).attr("reduction", "add").input(str({1}, {"a"}))
                        .input(i64({1}, {0})).input(str({1}, {"b"})),
                    ErrorCode::kUnsupported, "string");
  expect_node_error(OpTester("ScatterElements", 16).attr("reduction", "max").input(iota_f32({1})).input(i64({1}, {0}))
                        .input(f32({1}, {0})),
                    ErrorCode::kInvalidModel, "reduction");
}

TEST(ScatterND, SlicesAndReductions) {
  OpTester("ScatterND", 13).input(iota_f32({2, 2})).input(i64({1, 1}, {1})).input(f32({1, 2}, {9, 8}))
      .output(f32({2, 2}, {0, 1, 9, 8})).run();
  OpTester("ScatterND", 16).attr("reduction", "add").input(iota_f32({4})).input(i64({2, 1}, {1, 1}))
      .input(f32({2}, {10, 20})).output(f32({4}, {0, 31, 2, 3})).run();
  OpTester("ScatterND", 16).attr("reduction", "mul").input(iota_f32({2, 2})).input(i64({1, 2}, {-1, -1}))
      .input(f32({1}, {5})).output(f32({2, 2}, {0, 1, 2, 15})).run();
  OpTester("ScatterND", 13).input(str({2}, {"a", "b"})).input(i64({1, 1}, {0})).input(str({1}, {"q"}))
      .output(str({2}, {"q", "b"})).run();
  expect_node_error(OpTester("ScatterND", 13).input(iota_f32({2, 2})).input(i64({1, 1}, {1})).input(f32({2}, {9, 8})),
                    ErrorCode::kRuntime, "updates have shape");
  expect_node_error(OpTester("ScatterND", 13).input(iota_f32({2})).input(i64({1, 1}, {-3})).input(f32({1}, {9})),
                    ErrorCode::kRuntime, "out of range");
}

// ---- NonZero / Compress -------------------------------------------------------------------------------
TEST(NonZero, CoordinatesInRowMajorOrder) {
  OpTester("NonZero", 13).input(f32({2, 2}, {1, 0, kNaN, 3})).output(i64({2, 3}, {0, 1, 1, 0, 0, 1})).run();
  OpTester("NonZero", 13).input(boolean({3}, {false, false, false})).output(i64({1, 0}, {})).run();
  OpTester("NonZero", 13).input(i32({}, {7})).output(i64({1, 1}, {0})).run();
  OpTester("NonZero", 13).input(str({2}, {"", "x"})).output(i64({1, 1}, {1})).run();
}

TEST(Compress, FlattenedAxisAndErrors) {
  OpTester("Compress", 11).input(iota_f32({2, 2})).input(boolean({3}, {false, true, true}))
      .output(f32({2}, {1, 2})).run();
  OpTester("Compress", 11).attr("axis", -1).input(iota_f32({2, 3})).input(boolean({2}, {true, false}))
      .output(f32({2, 1}, {0, 3})).run();
  OpTester("Compress", 11).attr("axis", 0).input(str({2}, {"a", "b"})).input(boolean({2}, {false, false}))
      .output(str({0}, {})).run();
  expect_node_error(OpTester("Compress", 11).attr("axis", 0).input(iota_f32({2})).input(boolean({3}, {false, false, true})),
                    ErrorCode::kRuntime, "selects index 2");
  expect_node_error(OpTester("Compress", 11).input(iota_f32({2})).input(i64({2}, {1, 0})), ErrorCode::kRuntime, "bool");
}

// ---- OneHot ----------------------------------------------------------------------------------------------
TEST(OneHot, AxesNegativeAndOutOfRangeIndices) {
  OpTester("OneHot", 11).input(i64({3}, {0, -1, 5})).input(f32({}, {3})).input(f32({2}, {0, 1}))
      .output(f32({3, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 0})).run();
  OpTester("OneHot", 11).attr("axis", 0).input(f32({2}, {1.7f, 0})).input(i64({1}, {2})).input(str({2}, {"off", "on"}))
      .output(str({2, 2}, {"off", "on", "on", "off"})).run();
  expect_node_error(OpTester("OneHot", 11).input(i64({1}, {0})).input(i64({}, {0})).input(f32({2}, {0, 1})),
                    ErrorCode::kRuntime, "depth must be positive");
  expect_node_error(OpTester("OneHot", 11).input(i64({1}, {0})).input(i64({}, {2})).input(f32({3}, {0, 1, 2})),
                    ErrorCode::kRuntime, "values");
  expect_node_error(OpTester("OneHot", 11).attr("axis", 2).input(i64({1}, {0})).input(i64({}, {2})).input(f32({2}, {0, 1})),
                    ErrorCode::kRuntime, "out of range");
}

// ---- TopK --------------------------------------------------------------------------------------------------
TEST(TopK, LargestSmallestTiesAndNaN) {
  OpTester("TopK", 11).input(f32({5}, {3, 1, 3, 2, 1})).input(i64({1}, {3}))
      .output(f32({3}, {3, 3, 2})).output(i64({3}, {0, 2, 3})).run();
  OpTester("TopK", 11).attr("largest", 0).input(f32({5}, {3, 1, 3, 2, 1})).input(i64({1}, {2}))
      .output(f32({2}, {1, 1})).output(i64({2}, {1, 4})).run();
  OpTester("TopK", 11).input(f32({3}, {1, kNaN, 2})).input(i64({1}, {2}))
      .output(f32({2}, {kNaN, 2})).output(i64({2}, {1, 2})).run();
  OpTester("TopK", 1).attr("k", 1).attr("axis", 0).input(i32({2, 2}, {1, 5, 4, 2}))
      .output(i32({1, 2}, {4, 5})).output(i64({1, 2}, {1, 0})).run();
  OpTester("TopK", 11).input(iota_f32({2, 3})).input(i64({1}, {0})).output(f32({2, 0}, {})).output(i64({2, 0}, {})).run();
}

TEST(TopK, KOutOfRangeFails) {
  expect_node_error(OpTester("TopK", 11).input(iota_f32({2})).input(i64({1}, {3})).missing_output().missing_output(),
                    ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("TopK", 11).input(iota_f32({2})).input(i64({1}, {-1})).missing_output().missing_output(),
                    ErrorCode::kRuntime, "out of range");
}

// ---- Unique ---------------------------------------------------------------------------------------------------
TEST(Unique, SortedUnsortedAndAllOutputs) {
  OpTester("Unique", 11).input(f32({6}, {2, 1, 1, 3, 4, 3}))
      .output(f32({4}, {1, 2, 3, 4})).output(i64({4}, {1, 0, 3, 4})).output(i64({6}, {1, 0, 0, 2, 3, 2}))
      .output(i64({4}, {2, 1, 2, 1})).run();
  OpTester("Unique", 11).attr("sorted", 0).input(f32({6}, {2, 1, 1, 3, 4, 3}))
      .output(f32({4}, {2, 1, 3, 4})).output(i64({4}, {0, 1, 3, 4})).output(i64({6}, {0, 1, 1, 2, 3, 2}))
      .output(i64({4}, {1, 2, 2, 1})).run();
  OpTester("Unique", 11).input(str({4}, {"b", "a", "b", ""})).output(str({3}, {"", "a", "b"})).missing_output()
      .output(i64({4}, {2, 1, 2, 0})).run();
}

TEST(Unique, AlongAnAxis) {
  OpTester("Unique", 11).attr("axis", -1).input(f32({2, 3}, {1, 0, 1, 2, 5, 2}))
      .output(f32({2, 2}, {0, 1, 5, 2})).output(i64({2}, {1, 0})).output(i64({3}, {1, 0, 1})).output(i64({2}, {1, 2}))
      .run();
  expect_node_error(OpTester("Unique", 11).attr("axis", 1).input(iota_f32({2})), ErrorCode::kRuntime, "out of range");
}

// ---- Trilu / EyeLike / ReverseSequence --------------------------------------------------------------------
TEST(Trilu, UpperLowerWithK) {
  OpTester("Trilu", 14).input(iota_f32({3, 3})).output(f32({3, 3}, {0, 1, 2, 0, 4, 5, 0, 0, 8})).run();
  OpTester("Trilu", 14).attr("upper", 0).input(iota_f32({2, 3})).input(i64({}, {-1}))
      .output(f32({2, 3}, {0, 0, 0, 3, 0, 0})).run();
  OpTester("Trilu", 14).input(iota_f32({2, 1, 2})).input(i64({}, {1})).output(f32({2, 1, 2}, {0, 1, 0, 3})).run();
  OpTester("Trilu", 14).attr("upper", 0).input(str({2, 2}, {"a", "b", "c", "d"})).output(str({2, 2}, {"a", "", "c", "d"})).run();
  OpTester("Trilu", 14).input(iota_f32({2, 2})).input(i64({}, {std::numeric_limits<int64_t>::min()}))
      .output(iota_f32({2, 2})).run();
  expect_node_error(OpTester("Trilu", 14).input(iota_f32({3})), ErrorCode::kRuntime, "rank >= 2");
}

TEST(EyeLike, DtypeAndOffDiagonal) {
  OpTester("EyeLike", 9).attr("k", -1).input(iota_f32({3, 2})).output(f32({3, 2}, {0, 0, 1, 0, 0, 1})).run();
  OpTester("EyeLike", 9).attr("dtype", static_cast<int64_t>(DType::kInt32)).attr("k", 5).input(iota_f32({2, 2}))
      .output(i32({2, 2}, {0, 0, 0, 0})).run();
  // The fp64 oracle keeps floating dtypes in double.
  OpTester("EyeLike", 9).attr("dtype", static_cast<int64_t>(DType::kFloat16)).precision(runtime::Precision::kFloat64)
      .input(f64({1, 1}, {0})).output(f64({1, 1}, {1})).run();
  expect_node_error(OpTester("EyeLike", 9).attr("dtype", static_cast<int64_t>(DType::kString)).input(iota_f32({1, 1})),
                    ErrorCode::kInvalidModel, "dtype");
}

TEST(ReverseSequence, TimeAndBatchMajor) {
  OpTester("ReverseSequence", 10).input(iota_f32({3, 2})).input(i64({2}, {3, 1}))
      .output(f32({3, 2}, {4, 1, 2, 3, 0, 5})).run();
  OpTester("ReverseSequence", 10).attr("batch_axis", 0).attr("time_axis", 1).input(str({2, 2}, {"a", "b", "c", "d"}))
      .input(i64({2}, {2, 0})).output(str({2, 2}, {"b", "a", "c", "d"})).run();
  expect_node_error(OpTester("ReverseSequence", 10).input(iota_f32({3, 2})).input(i64({2}, {4, 1})),
                    ErrorCode::kRuntime, "out of range");
  expect_node_error(OpTester("ReverseSequence", 10).attr("batch_axis", 1).attr("time_axis", 1).input(iota_f32({3, 2}))
                        .input(i64({2}, {1, 1})),
                    ErrorCode::kInvalidModel, "batch_axis");
}

}  // namespace
}  // namespace parity::testing
