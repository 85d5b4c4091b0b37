// Unit tests for the ai.onnx.ml kernels, with expectations computed by hand from the
// ONNX-ML operator descriptions (ONNX Runtime's choices where the spec is silent).
#include <cmath>

#include "runtime/ops/tensor_test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

TEST(ArrayFeatureExtractor, SelectsLastAxisEntries) {
  OpTester("ArrayFeatureExtractor", 1, kMl).input(iota_f32({2, 3})).input(i64({2}, {2, 0}))
      .output(f32({2, 2}, {2, 0, 5, 3})).run();
  OpTester("ArrayFeatureExtractor", 1, kMl).input(str({3}, {"a", "b", "c"})).input(i64({1}, {1}))
      .output(str({1, 1}, {"b"})).run();
  expect_node_error(OpTester("ArrayFeatureExtractor", 1, kMl).input(iota_f32({2, 3})).input(i64({1}, {3})),
                    ErrorCode::kRuntime, "out of range");
}

TEST(Binarizer, ThresholdKeepsType) {
  OpTester("Binarizer", 1, kMl).attr("threshold", 0.5f).input(f32({3}, {-1, 0.5f, 2})).output(f32({3}, {0, 0, 1})).run();
  OpTester("Binarizer", 1, kMl).input(i64({2}, {-3, 4})).output(i64({2}, {0, 1})).run();
}

TEST(Normalizer, MaxL1L2PerRow) {
  OpTester("Normalizer", 1, kMl).attr("norm", "MAX").input(f32({1, 3}, {1, 2, 4})).output(f32({1, 3}, {0.25f, 0.5f, 1})).run();
  OpTester("Normalizer", 1, kMl).attr("norm", "L1").input(i64({2, 2}, {1, -3, 0, 0}))
      .output(f32({2, 2}, {0.25f, -0.75f, 0, 0})).run();
  OpTester("Normalizer", 1, kMl).attr("norm", "L2").input(f64({2}, {3, 4})).output(f32({2}, {0.6f, 0.8f})).run();
  expect_node_error(OpTester("Normalizer", 1, kMl).attr("norm", "L3").input(f32({1}, {1})), ErrorCode::kInvalidModel, "norm");
}

TEST(Scaler, OffsetAndScalePerFeature) {
  OpTester("Scaler", 1, kMl).attr_floats("offset", {1, 2}).attr_floats("scale", {2}).input(f32({2, 2}, {1, 4, 3, 2}))
      .output(f32({2, 2}, {0, 4, 4, 0})).run();
  expect_node_error(OpTester("Scaler", 1, kMl).attr_floats("offset", {1, 2, 3}).input(f32({1, 2}, {1, 2})),
                    ErrorCode::kRuntime, "features");
}

TEST(OneHotEncoder, IntAndStringCategories) {
  OpTester("OneHotEncoder", 1, kMl).attr_ints("cats_int64s", {3, 7}).input(i64({2}, {7, 5}))
      .output(f32({2, 2}, {0, 1, 0, 0})).run();
  OpTester("OneHotEncoder", 1, kMl).attr_strings("cats_strings", {"x", "y", "z"}).input(str({1, 2}, {"z", "x"}))
      .output(f32({1, 2, 3}, {0, 0, 1, 1, 0, 0})).run();
  expect_node_error(OpTester("OneHotEncoder", 1, kMl).attr_ints("cats_int64s", {3}).attr("zeros", 0).input(i64({1}, {4})),
                    ErrorCode::kRuntime, "not in the list");
}

TEST(LabelEncoder, Version1And2) {
  OpTester("LabelEncoder", 1, kMl).attr_strings("classes_strings", {"a", "b"}).input(str({3}, {"b", "a", "q"}))
      .output(i64({3}, {1, 0, -1})).run();
  OpTester("LabelEncoder", 1, kMl).attr_strings("classes_strings", {"a", "b"}).attr("default_string", "?")
      .input(i64({2}, {1, 5})).output(str({2}, {"b", "?"})).run();
  OpTester("LabelEncoder", 2, kMl).attr_strings("keys_strings", {"x", "y"}).attr_ints("values_int64s", {10, 20})
      .input(str({2}, {"y", "z"})).output(i64({2}, {20, -1})).run();
  OpTester("LabelEncoder", 2, kMl).attr_ints("keys_int64s", {1, 2}).attr_floats("values_floats", {0.5f, 1.5f})
      .attr("default_float", 9.0f).input(i64({3}, {2, 1, 3})).output(f32({3}, {1.5f, 0.5f, 9})).run();
  expect_node_error(OpTester("LabelEncoder", 2, kMl).attr_ints("keys_int64s", {1, 2}).attr_ints("values_int64s", {1})
                        .input(i64({1}, {1})),
                    ErrorCode::kInvalidModel, "keys");
}

TEST(LinearClassifier, MulticlassWithSoftmax) {
  // scores = [1*1 + 2*0 + 0.5, 1*0 + 2*1 - 1, 1*1 + 2*1 + 0] = [1.5, 1, 3] -> class 2
  const double e0 = std::exp(1.5 - 3), e1 = std::exp(1.0 - 3), e2 = 1.0, sum = e0 + e1 + e2;
  OpTester("LinearClassifier", 1, kMl).attr_floats("coefficients", {1, 0, 0, 1, 1, 1})
      .attr_floats("intercepts", {0.5f, -1, 0}).attr_ints("classlabels_ints", {7, 8, 9}).attr("post_transform", "SOFTMAX")
      .input(f32({1, 2}, {1, 2}))
      .output(i64({1}, {9}))
      .output(f32({1, 3}, {static_cast<float>(e0 / sum), static_cast<float>(e1 / sum), static_cast<float>(e2 / sum)}))
      .run();
}

TEST(LinearClassifier, BinaryScoresGetTwoColumns) {
  OpTester("LinearClassifier", 1, kMl).attr_floats("coefficients", {1, -1}).attr_floats("intercepts", {0.5f})
      .attr_strings("classlabels_strings", {"no", "yes"}).input(f32({2, 2}, {2, 1, 0, 1}))
      .output(str({2}, {"yes", "no"})).output(f32({2, 2}, {-0.5f, 1.5f, 1.5f, -0.5f})).run();
  expect_node_error(OpTester("LinearClassifier", 1, kMl).attr_floats("coefficients", {1, -1, 2})
                        .attr_floats("intercepts", {0.5f}).attr_ints("classlabels_ints", {0, 1}).input(f32({1, 2}, {1, 1})),
                    ErrorCode::kRuntime, "coefficients");
}

TEST(LinearRegressor, TargetsAndIntercepts) {
  OpTester("LinearRegressor", 1, kMl).attr_floats("coefficients", {1, 2}).attr_floats("intercepts", {1})
      .input(f32({2, 2}, {1, 1, 0, 1})).output(f32({2, 1}, {4, 3})).run();
  OpTester("LinearRegressor", 1, kMl).attr("targets", 2).attr_floats("coefficients", {1, 0, 0, 1})
      .input(i32({1, 2}, {3, -1})).output(f32({1, 2}, {3, -1})).run();
}

}  // namespace
}  // namespace parity::testing

namespace parity::testing {
namespace {

/// Two stumps: tree 0 splits feature 0 at 0.5 (leaves 1 / 2), tree 1 splits feature 1 at 0
/// with BRANCH_LT (leaves 10 / 20); NaN in feature 0 goes to the true branch.
OpTester two_stump_regressor() {
  OpTester t("TreeEnsembleRegressor", 1, kMl);
  t.attr_ints("nodes_treeids", {0, 0, 0, 1, 1, 1}).attr_ints("nodes_nodeids", {0, 1, 2, 0, 1, 2})
      .attr_ints("nodes_featureids", {0, 0, 0, 1, 0, 0}).attr_floats("nodes_values", {0.5f, 0, 0, 0, 0, 0})
      .attr_strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"})
      .attr_ints("nodes_truenodeids", {1, 0, 0, 1, 0, 0}).attr_ints("nodes_falsenodeids", {2, 0, 0, 2, 0, 0})
      .attr_ints("nodes_missing_value_tracks_true", {1, 0, 0, 0, 0, 0})
      .attr_ints("target_treeids", {0, 0, 1, 1}).attr_ints("target_nodeids", {1, 2, 1, 2})
      .attr_ints("target_ids", {0, 0, 0, 0}).attr_floats("target_weights", {1, 2, 10, 20});
  return t;
}

TEST(TreeEnsembleRegressor, AggregatesAndMissingValues) {
  const float nan = std::nanf("");
  two_stump_regressor().input(f32({3, 2}, {0, -1, 1, 1, nan, 1})).output(f32({3, 1}, {11, 22, 21})).run();
  two_stump_regressor().attr("aggregate_function", "AVERAGE").attr_floats("base_values", {100})
      .input(f32({1, 2}, {0, -1})).output(f32({1, 1}, {105.5f})).run();
  two_stump_regressor().attr("aggregate_function", "MIN").input(f32({1, 2}, {1, 1})).output(f32({1, 1}, {2})).run();
  expect_node_error(two_stump_regressor().input(f32({1, 1}, {0})), ErrorCode::kRuntime, "feature 1");
}

OpTester stump_classifier(const std::vector<int64_t>& class_ids, const std::vector<float>& weights,
                          const std::vector<int64_t>& weight_nodes) {
  OpTester t("TreeEnsembleClassifier", 1, kMl);
  t.attr_ints("nodes_treeids", {0, 0, 0}).attr_ints("nodes_nodeids", {0, 1, 2}).attr_ints("nodes_featureids", {0, 0, 0})
      .attr_floats("nodes_values", {0.5f, 0, 0}).attr_strings("nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF"})
      .attr_ints("nodes_truenodeids", {1, 0, 0}).attr_ints("nodes_falsenodeids", {2, 0, 0})
      .attr_ints("class_treeids", std::vector<int64_t>(class_ids.size(), 0)).attr_ints("class_nodeids", weight_nodes)
      .attr_ints("class_ids", class_ids).attr_floats("class_weights", weights);
  return t;
}

TEST(TreeEnsembleClassifier, MulticlassArgmax) {
  stump_classifier({0, 2, 1}, {1, 1, 0.5f}, {1, 2, 2}).attr_ints("classlabels_int64s", {5, 6, 7})
      .input(f32({2, 1}, {0, 1})).output(i64({2}, {5, 7})).output(f32({2, 3}, {1, 0, 0, 0, 0.5f, 1})).run();
}

TEST(TreeEnsembleClassifier, BinaryWithPositiveWeights) {
  stump_classifier({1, 1}, {0.2f, 0.9f}, {1, 2}).attr_strings("classlabels_strings", {"a", "b"})
      .input(f32({2, 1}, {0, 1})).output(str({2}, {"a", "b"})).output(f32({2, 2}, {0.8f, 0.2f, 0.1f, 0.9f})).run();
  expect_node_error(stump_classifier({3}, {1}, {1}).attr_ints("classlabels_int64s", {0, 1}).input(f32({1, 1}, {0})),
                    ErrorCode::kInvalidModel, "class ids");
}

}  // namespace
}  // namespace parity::testing
