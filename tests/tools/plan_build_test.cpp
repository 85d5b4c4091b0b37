// The shared plan build (tools/plan_build.h) behind `parity convert -o X.plan` and the navigator's
// plan-* formats: precisions reach the plan's layers, int8 calibrates on the given feeds and
// writes the cache, a later build reads the cache without feeds, and no data at all is one error.
#include "tools/plan_build.h"

#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

model::Model matmul_relu_model() {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 4}).output("y", DType::kFloat32, {2, 3});
  b.initializer("w", Tensor::from_vector<float>({4, 3}, {0.5f, -1.0f, 0.25f, 2.0f, 0.1f, -0.3f, 1.5f, 0.7f, -2.0f,
                                                        0.2f, 0.9f, -0.4f}));
  b.node("MatMul", {"x", "w"}, {"h"}, "matmul");
  b.node("Relu", {"h"}, {"y"}, "relu");
  return model::Model(std::make_unique<onnx::ModelProto>(b.model()));
}

std::unique_ptr<compare::FeedSource> two_feeds() {
  return std::make_unique<compare::FeedList>(std::vector<TensorMap>{
      TensorMap{{"x", Tensor::from_vector<float>({2, 4}, {1.0f, -2.0f, 0.5f, 3.0f, 0.0f, 1.0f, -1.0f, 2.0f})}},
      TensorMap{{"x", Tensor::from_vector<float>({2, 4}, {-4.0f, 0.5f, 0.25f, 1.0f, 2.0f, -0.5f, 1.5f, 0.0f})}}});
}

TEST(PlanBuild, PrecisionsReachTheLayersAndInt8CalibratesThenReusesItsCache) {
  const model::Model model = matmul_relu_model();
  tools::PlanBuildOptions fp16;
  fp16.precision.fp16 = true;
  EXPECT_NE(tools::layer_precision_summary(tools::build_plan(model, {}, fp16).session).find("fp16"), std::string::npos);
  EXPECT_EQ(tools::layer_precision_summary(tools::build_plan(model, {}, {}).session).find("fp16"), std::string::npos);

  testing::TempDir dir;
  tools::PlanBuildOptions int8;
  int8.precision.int8 = true;
  int8.calibration_cache = dir / "calibration.cache";
  int calls = 0;
  int8.calibration_feeds = [&] {
    ++calls;
    return two_feeds();
  };
  const tools::BuiltPlan built = tools::build_and_save_plan(model, {}, int8, dir / "m.plan", "m.onnx");
  EXPECT_EQ(calls, 1);
  EXPECT_NE(tools::layer_precision_summary(built.session).find("1 int8"), std::string::npos)
      << tools::layer_precision_summary(built.session);
  ASSERT_TRUE(fs::is_regular_file(dir / "calibration.cache"));
  EXPECT_TRUE(fs::is_regular_file(dir / "m.plan"));

  // The cache now exists: no feeds are asked for, and the ranges are the calibrated ones.
  const auto scales = tools::calibration_scales(model, {}, int8);
  EXPECT_EQ(calls, 1);
  EXPECT_FLOAT_EQ(scales.at("x"), 4.0f / 127);

  tools::PlanBuildOptions no_data;
  no_data.precision.int8 = true;
  try {
    tools::build_plan(model, {}, no_data);
    ADD_FAILURE() << "an int8 plan was built without calibration data";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs calibration data or a calibration cache"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity
