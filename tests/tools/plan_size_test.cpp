// Plan files hold each weight once, at its layer's precision (runtime/plan/weight_storage.h): an
// fp32 plan of MobileNetV2 is at most 1.05x the model's weights, an fp16 plan 0.55x, an int8 plan
// 0.30x; the loaded plans compute exactly what the built sessions compute; inspect's summary
// counts the weights by precision against the source model's.
#include <gtest/gtest.h>

#include <cstring>

#include "compare/data_loader.h"
#include "runtime/plan/plan_file.h"
#include "support/test_support.h"
#include "tools/plan_build.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

Tensor seeded_image(uint32_t seed) {
  Tensor t(DType::kFloat32, {1, 3, 224, 224});
  uint32_t state = seed;
  for (float& v : t.values<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  }
  return t;
}

struct Case {
  const char* precision;
  double max_ratio;
};

TEST(PlanSize, EachWeightIsStoredOnceAtItsLayersPrecision) {
  const fs::path source = testing::source_dir() / ".cache/bench-models/mobilenet_v2.onnx";
  const model::Model model = model::load_model(source).value();
  const TensorMap feed{{"input", seeded_image(11)}};
  testing::TempDir dir;
  for (const Case& c : {Case{"fp32", 1.05}, Case{"fp16", 0.55}, Case{"int8", 0.30}}) {
    tools::PlanBuildOptions options;
    options.precision.fp16 = std::string(c.precision) == "fp16";
    options.precision.int8 = std::string(c.precision) == "int8";
    options.calibration_feeds = [] {
      return std::make_unique<compare::FeedList>(std::vector<TensorMap>{TensorMap{{"input", seeded_image(5)}}});
    };
    const fs::path plan = dir / (std::string(c.precision) + ".plan");
    const tools::BuiltPlan built = tools::build_and_save_plan(model, source.parent_path(), options, plan, source.string());

    const runtime::plan::PlanSummary summary = runtime::plan::summarize_plan(plan);
    ASSERT_GT(summary.source_weights_bytes, 13'000'000) << c.precision;
    const double ratio = static_cast<double>(fs::file_size(plan)) / static_cast<double>(summary.source_weights_bytes);
    EXPECT_LE(ratio, c.max_ratio) << c.precision << " plan: " << fs::file_size(plan) << " bytes";
    EXPECT_EQ(summary.packed_weights_bytes, 0) << c.precision;
    ASSERT_TRUE(summary.weights_by_precision.count(c.precision)) << c.precision;
    const int64_t main_precision_bytes = summary.weights_by_precision.at(c.precision);
    EXPECT_GT(main_precision_bytes, summary.weights_bytes * 9 / 10) << c.precision;

    // Decoded on load to the values the layers compute with: the same outputs, bit for bit.
    runtime::Session loaded = runtime::plan::load_plan(plan).value();
    const Tensor want = built.session.run(feed).at("logits"), got = loaded.run(feed).at("logits");
    ASSERT_EQ(want.size_bytes(), got.size_bytes());
    EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes())) << c.precision;
  }
}

}  // namespace
}  // namespace parity
