// The optimized RoiAlign (runtime/ops/object_detection/roi_align_fast.cpp) against the reference
// kernel: both modes, both coordinate conventions, fixed and adaptive sampling, channel counts
// around its 16- and 64-channel blocks, regions inside, across and outside the map, several
// images, 1 and 2 threads; and the same one-line errors for bad regions and batch indices.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

struct RoiCase {
  Shape x;  // N, C, H, W
  int opset = 16;
  std::string mode = "avg";
  std::string coordinates = "half_pixel";  // opset 16 only
  int64_t out_h = 7, out_w = 7, sampling_ratio = 2;
  float spatial_scale = 0.25f;
};

onnx::ModelProto roi_align_model(const RoiCase& c, int64_t num_rois) {
  ModelBuilder builder(c.opset);
  builder.input("x", DType::kFloat32, c.x).input("rois", DType::kFloat32, {num_rois, 4});
  builder.input("batch", DType::kInt64, {num_rois}).untyped_output("y");
  onnx::NodeProto& node = builder.node("RoiAlign", {"x", "rois", "batch"}, {"y"});
  add_string_attr(node, "mode", c.mode);
  if (c.opset >= 16) add_string_attr(node, "coordinate_transformation_mode", c.coordinates);
  add_int_attr(node, "output_height", c.out_h);
  add_int_attr(node, "output_width", c.out_w);
  add_int_attr(node, "sampling_ratio", c.sampling_ratio);
  add_float_attr(node, "spatial_scale", c.spatial_scale);
  return builder.model();
}

/// Regions in input coordinates (before spatial_scale): random ones inside the map, ones
/// crossing every edge, a point, one wholly outside, and an inverted one.
Tensor regions(const RoiCase& c, int64_t random_count, uint32_t seed) {
  const float width = static_cast<float>(c.x[3]) / c.spatial_scale, height = static_cast<float>(c.x[2]) / c.spatial_scale;
  std::vector<float> values;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int64_t i = 0; i < random_count; ++i) {
    const float x1 = unit(gen) * width * 0.8f, y1 = unit(gen) * height * 0.8f;
    values.insert(values.end(), {x1, y1, x1 + unit(gen) * width * 0.6f + 1.0f, y1 + unit(gen) * height * 0.6f + 1.0f});
  }
  values.insert(values.end(), {-0.3f * width, -0.2f * height, 0.4f * width, 0.5f * height});
  values.insert(values.end(), {0.5f * width, 0.6f * height, 1.3f * width, 1.2f * height});
  values.insert(values.end(), {0.5f * width, 0.5f * height, 0.5f * width, 0.5f * height});
  values.insert(values.end(), {2.0f * width, 2.0f * height, 3.0f * width, 3.0f * height});
  values.insert(values.end(), {0.7f * width, 0.7f * height, 0.2f * width, 0.3f * height});
  const int64_t count = static_cast<int64_t>(values.size() / 4);
  return Tensor::from_vector<float>({count, 4}, values);
}

TensorMap feed_for(const RoiCase& c, int64_t random_rois, uint32_t seed) {
  const Tensor rois = regions(c, random_rois, seed);
  std::vector<int64_t> batch(static_cast<size_t>(rois.dim(0)));
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<int64_t>(i) % c.x[0];
  return {{"x", random_tensor(c.x, seed + 1)}, {"rois", rois}, {"batch", Tensor::from_vector<int64_t>({rois.dim(0)}, batch)}};
}

Tensor optimized_output(const onnx::ModelProto& model, const TensorMap& feed, int threads) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = threads;
  auto session = runtime::Session::create(model, options);
  if (!session) throw session.error();
  return session.value().run(feed).at("y");
}

TEST(OptimizedRoiAlign, MatchesTheReferenceKernelAcrossModesSamplingAndChannelBlocks) {
  std::vector<RoiCase> cases;
  for (int64_t channels : {1, 5, 16, 17, 64, 100})
    for (const char* mode : {"avg", "max"}) {
      RoiCase c;
      c.x = {2, channels, 9, 11};
      c.mode = mode;
      cases.push_back(c);
    }
  RoiCase adaptive;  // sampling_ratio 0: the grid follows each region's size
  adaptive.x = {1, 33, 12, 10};
  adaptive.sampling_ratio = 0;
  adaptive.out_h = 3;
  adaptive.out_w = 4;
  cases.push_back(adaptive);
  RoiCase opset10;  // output_half_pixel, and regions below one pixel grown to one
  opset10.x = {1, 20, 6, 7};
  opset10.opset = 10;
  opset10.spatial_scale = 1.0f;
  opset10.out_h = 2;
  opset10.out_w = 5;
  cases.push_back(opset10);
  RoiCase single_pixel_map;
  single_pixel_map.x = {1, 40, 1, 1};
  single_pixel_map.mode = "max";
  cases.push_back(single_pixel_map);
  uint32_t seed = 100;
  for (const RoiCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " " + c.mode + " opset " + std::to_string(c.opset) + " sampling " +
                 std::to_string(c.sampling_ratio));
    const TensorMap feed = feed_for(c, 12, seed += 10);
    const onnx::ModelProto model = roi_align_model(c, feed.at("rois").dim(0));
    const Tensor want = reference_output(model, feed);
    for (int threads : {1, 2}) {
      const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
      const Tensor got = optimized_output(model, feed, threads);
      EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "the fast path did not run";
      EXPECT_TRUE(tensors_close(got, want, 1e-5, 1e-5)) << threads << " threads";
    }
  }
}

TEST(OptimizedRoiAlign, BadRegionsAndBatchIndicesAreTheReferencesOneLineErrors) {
  RoiCase c;
  c.x = {2, 8, 6, 6};
  c.sampling_ratio = 0;
  const onnx::ModelProto model = roi_align_model(c, 1);
  const Tensor x = random_tensor(c.x, 7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Bad {
    std::vector<float> roi;
    int64_t batch;
    std::string expected;
  };
  const std::vector<Bad> bad = {
      {{0, 0, nan, 4}, 0, "roi 0 (0, 0, nan, 4) has no usable sampling grid"},
      {{0, 0, 1e30f, 4}, 0, "has no usable sampling grid"},
      {{0, 0, 4, 4}, 2, "batch index 2 is out of range [0, 2)"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.expected);
    const TensorMap feed{{"x", x}, {"rois", Tensor::from_vector<float>({1, 4}, b.roi)},
                         {"batch", Tensor::from_vector<int64_t>({1}, {b.batch})}};
    const std::string optimized = user_error_of([&] { optimized_output(model, feed, 1); });
    const std::string reference = user_error_of([&] { reference_output(model, feed); });
    EXPECT_NE(optimized.find(b.expected), std::string::npos) << optimized;
    EXPECT_NE(reference.find(b.expected), std::string::npos) << reference;
  }
}

}  // namespace
}  // namespace parity::testing
