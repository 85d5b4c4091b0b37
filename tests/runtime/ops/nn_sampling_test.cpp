// GridSample, RoiAlign and NonMaxSuppression against hand-computed values.
#include <gtest/gtest.h>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

// 1x1x2x3 image with values = 10*y + x.
const Tensor kImage = ft({1, 1, 2, 3}, {0, 1, 2, 10, 11, 12});

TEST(GridSample, AlignCornersHitsPixelCentres) {
  NodeBuilder node("GridSample", 16);
  node.i("align_corners", 1);
  // (-1,-1) -> (0,0); (1,1) -> (2,1); (0,0) -> (1, 0.5)
  const Tensor grid = ft({1, 1, 3, 2}, {-1, -1, 1, 1, 0, 0});
  EXPECT_EQ(node.run({kImage, grid})[0].to_vector<float>(), (std::vector<float>{0, 12, 6}));
}

TEST(GridSample, PaddingModesOutsideTheImage) {
  const Tensor grid = ft({1, 1, 1, 2}, {2, -1});  // x far right, top row
  NodeBuilder zeros("GridSample", 16);
  zeros.i("align_corners", 1);
  EXPECT_EQ(zeros.run({kImage, grid})[0].to_vector<float>(), (std::vector<float>{0}));
  NodeBuilder border("GridSample", 16);
  border.i("align_corners", 1).s("padding_mode", "border");
  EXPECT_EQ(border.run({kImage, grid})[0].to_vector<float>(), (std::vector<float>{2}));
  // x = 2 maps to pixel 3 with align_corners; reflecting about the last pixel (2) gives 1.
  NodeBuilder refl("GridSample", 16);
  refl.i("align_corners", 1).s("padding_mode", "reflection");
  EXPECT_EQ(refl.run({kImage, grid})[0].to_vector<float>(), (std::vector<float>{1}));
}

TEST(GridSample, NearestAndBicubicOnPixelCentres) {
  const Tensor grid = ft({1, 1, 2, 2}, {0, 1, 0.2f, -0.9f});
  NodeBuilder nearest("GridSample", 16);
  nearest.i("align_corners", 1).s("mode", "nearest");
  EXPECT_EQ(nearest.run({kImage, grid})[0].to_vector<float>(), (std::vector<float>{11, 1}));
  // Bicubic at exact pixel centres reproduces the pixel.
  NodeBuilder cubic("GridSample", 16);
  cubic.i("align_corners", 1).s("mode", "bicubic").s("padding_mode", "border");
  const Tensor centre = ft({1, 1, 1, 2}, {0, 1});
  EXPECT_NEAR(cubic.run({kImage, centre})[0].to_vector<float>()[0], 11.0f, 1e-5);
  EXPECT_THROW(cubic.run({kImage, ft({1, 1, 1, 3}, {0, 0, 0})}), Error);
}

TEST(RoiAlign, AveragesBilinearSamples) {
  // 4x4 image with value = x; an ROI covering [0, 4) x [0, 4) pooled to 1x2 with one sample per
  // bin: samples at x = 1 and 3 (half_pixel shifts by -0.5 -> 0.5 and 2.5).
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i % 4);
  const Tensor x = ft({1, 1, 4, 4}, v);
  const Tensor rois = ft({1, 4}, {0, 0, 4, 4});
  const Tensor idx = Tensor::from_vector<int64_t>({1}, {0});
  NodeBuilder v16("RoiAlign", 16);
  v16.i("output_height", 1).i("output_width", 2).i("sampling_ratio", 1);
  EXPECT_EQ(v16.run({x, rois, idx})[0].to_vector<float>(), (std::vector<float>{0.5f, 2.5f}));
  NodeBuilder v10("RoiAlign", 10);
  v10.i("output_height", 1).i("output_width", 2).i("sampling_ratio", 1);
  EXPECT_EQ(v10.run({x, rois, idx})[0].to_vector<float>(), (std::vector<float>{1, 3}));
  EXPECT_THROW(v10.run({x, rois, Tensor::from_vector<int64_t>({1}, {3})}), Error);
}

TEST(NonMaxSuppression, SuppressesOverlapsPerClass) {
  // Boxes 0 and 1 overlap heavily (IoU 0.81); box 2 is apart.
  const Tensor boxes = ft({1, 3, 4}, {0, 0, 10, 10, 1, 1, 10, 10, 20, 20, 30, 30});
  const Tensor scores = ft({1, 1, 3}, {0.9f, 0.95f, 0.5f});
  NodeBuilder node("NonMaxSuppression", 11);
  const auto max_out = Tensor::from_vector<int64_t>({1}, {10});
  const auto y = node.run({boxes, scores, max_out, ft({1}, {0.5f})})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // Score threshold drops box 2; max_output 1 keeps only the best.
  EXPECT_EQ(node.run({boxes, scores, max_out, ft({1}, {0.5f}), ft({1}, {0.6f})})[0].numel(), 3);
  EXPECT_EQ(node.run({boxes, scores, Tensor::from_vector<int64_t>({1}, {1})})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1}));
  // No max_output_boxes_per_class: nothing is selected.
  EXPECT_EQ(node.run({boxes, scores})[0].shape(), (Shape{0, 3}));
  // Centre-point format: (xc, yc, w, h).
  NodeBuilder centre("NonMaxSuppression", 11);
  centre.i("center_point_box", 1);
  const Tensor cboxes = ft({1, 2, 4}, {5, 5, 10, 10, 5.5f, 5.5f, 9, 9});
  EXPECT_EQ(centre.run({cboxes, ft({1, 1, 2}, {0.1f, 0.2f}), max_out, ft({1}, {0.5f})})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1}));
}

}  // namespace
}  // namespace parity::testing::nn
