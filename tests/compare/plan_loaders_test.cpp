// The plan loaders do the seed's first two API steps with a plan: build from ONNX and save, then
// load the saved bytes and run them; the outputs equal the ONNX model's bit for bit.
#include "compare/plan_loaders.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runners/ref/ref_runner.h"
#include "support/test_support.h"

namespace parity {
namespace {

using namespace compare::loaders;

TEST(PlanLoaders, BuildSaveLoadBytesAndRunMatchesTheOnnxModel) {
  const std::string model =
      (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx").string();
  testing::TempDir tmp;
  const std::string path = (tmp / "rec.plan").string();
  Plan built = SavePlan(PlanFromOnnx(OnnxFromPath(model)), path)();
  ASSERT_TRUE(std::filesystem::exists(path));

  Tensor x(DType::kFloat32, {1, 3, 48, 200});
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : x.values<float>()) v = dist(gen);
  TensorMap feed;
  feed.set("x", x);

  auto onnx_runner = RunnerFromOnnx("ref", OnnxFromPath(model));
  auto plan_runner = RunnerFromPlan(PlanFromBytes(BytesFromPath(path)));
  // At 2 threads a convolution may be split by output channels instead of rows (conv_split.h),
  // whose oneDNN kernels round differently from the whole one's: the path runner is compared
  // with the same plan at 2 threads from bytes, bit for bit, and with the model within 1e-5.
  auto path_runner = RunnerFromPlan(PlanFromPath(path, /*threads=*/2));
  auto two_thread_runner = RunnerFromPlan(PlanFromBytes(BytesFromPath(path), /*threads=*/2));
  runners::ActiveRunner a(*onnx_runner), b(*plan_runner), c(*path_runner), d(*two_thread_runner);
  auto expect_identical = [](const TensorMap& got, const TensorMap& want, const std::string& runner) {
    ASSERT_EQ(got.names(), want.names());
    for (const auto& name : want.names()) {
      ASSERT_EQ(got.at(name).shape(), want.at(name).shape());
      EXPECT_EQ(0, std::memcmp(got.at(name).raw_data(), want.at(name).raw_data(), want.at(name).size_bytes()))
          << runner << ": " << name;
    }
  };
  const TensorMap want = onnx_runner->infer(feed);
  expect_identical(plan_runner->infer(feed), want, plan_runner->name());
  const TensorMap two_threads = path_runner->infer(feed);
  expect_identical(two_threads, two_thread_runner->infer(feed), path_runner->name());
  for (const auto& name : want.names()) {
    const float* got = two_threads.at(name).data<float>();
    const float* expected = want.at(name).data<float>();
    for (int64_t i = 0; i < want.at(name).numel(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-5f) << name << " at " << i;
  }
  EXPECT_EQ(BytesFromPlan([built] { return built; })().size(), std::filesystem::file_size(path));
}

TEST(PlanLoaders, ProfilesBuiltThroughTheApiAndSelectedOnTheRunner) {
  const std::string model =
      (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx").string();
  testing::TempDir tmp;
  const std::string path = (tmp / "rec.plan").string();
  BuildConfig config;
  config.profiles = runtime::parse_profiles(
      {"x:[1,3,48,32],[1,3,48,64],[1,3,48,96]", "x:[1,3,48,96],[1,3,48,128],[1,3,48,160]"}, "profiles");
  SavePlan(PlanFromOnnx(OnnxFromPath(model), config), path)();
  auto runner = RunnerFromPlan(PlanFromPath(path));
  runners::ActiveRunner active(*runner);
  auto& ref = dynamic_cast<runners::RefRunner&>(*runner);
  ASSERT_EQ(ref.session().options().profiles.size(), 2u);
  TensorMap feed;
  feed.set("x", Tensor(DType::kFloat32, {1, 3, 48, 128}));
  EXPECT_EQ(runner->infer(feed).size(), 1u);  // the second profile fits
  ref.set_profile_index(0);
  try {
    runner->infer(feed);
    ADD_FAILURE() << "a shape outside the selected profile ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the selected profile 0"), std::string::npos) << e.what();
  }
}

TEST(PlanLoaders, DamagedBytesAreRefused) {
  try {
    plan_from_bytes("PARITYPL\x01");
    FAIL() << "a 9-byte plan loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is truncated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity
