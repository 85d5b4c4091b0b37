// Spec: https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html
// NonMaxSuppression (opset 10, 11).
// Per batch and class: candidates above score_threshold in descending score order (ties: lower
// box index first); a candidate is kept unless its IoU with a kept box exceeds iou_threshold.
#include <algorithm>
#include <numeric>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

struct Box {
  double y1, x1, y2, x2;
  double area() const { return (y2 - y1) * (x2 - x1); }
};

bool suppresses(const Box& a, const Box& b, double iou_threshold) {
  const double area_a = a.area(), area_b = b.area();
  if (area_a <= 0 || area_b <= 0) return false;
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const double inter = ih * iw;
  return inter / (area_a + area_b - inter) > iou_threshold;
}

class NonMaxSuppressionKernel : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInit& init) : center_point_(init.attr_int("center_point_box", 0)) {
    if (center_point_ != 0 && center_point_ != 1) init.fail("center_point_box must be 0 or 1");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& boxes_t = ctx.input(0);
    const Tensor& scores_t = ctx.input(1);
    if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4) ctx.fail("boxes must be (batches, boxes, 4), got ", shape_to_string(boxes_t.shape()));
    if (scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) || scores_t.dim(2) != boxes_t.dim(1))
      ctx.fail("scores must be (batches, classes, boxes) matching boxes, got ", shape_to_string(scores_t.shape()));
    const int64_t batches = boxes_t.dim(0), num_boxes = boxes_t.dim(1), classes = scores_t.dim(1);
    const int64_t max_out = ctx.has_input(2) && ctx.input(2).numel() > 0 ? scalar_int64(ctx, 2, "max_output_boxes_per_class") : 0;
    const double iou = ctx.has_input(3) && ctx.input(3).numel() > 0 ? scalar_double(ctx, 3, "iou_threshold") : 0.0;
    const bool has_score_threshold = ctx.has_input(4) && ctx.input(4).numel() > 0;
    const double score_threshold = has_score_threshold ? scalar_double(ctx, 4, "score_threshold") : 0.0;
    if (iou < 0 || iou > 1) ctx.fail("iou_threshold must be in [0, 1], got ", iou);
    const std::vector<double> bv = load_as<double>(boxes_t), sv = load_as<double>(scores_t);
    std::vector<Box> boxes(static_cast<size_t>(batches * num_boxes));
    for (size_t i = 0; i < boxes.size(); ++i) {
      const double* p = bv.data() + i * 4;
      if (center_point_ == 1) {
        boxes[i] = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
      } else {
        boxes[i] = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
      }
    }
    std::vector<int64_t> selected;
    for (int64_t b = 0; b < batches && max_out > 0; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        const double* sc = sv.data() + (b * classes + c) * num_boxes;
        std::vector<int64_t> order;
        for (int64_t i = 0; i < num_boxes; ++i)
          if (!has_score_threshold || sc[i] > score_threshold) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          const Box& cand = boxes[b * num_boxes + i];
          bool keep = true;
          for (int64_t k : kept)
            if (suppresses(boxes[b * num_boxes + k], cand, iou)) {
              keep = false;
              break;
            }
          if (keep) kept.push_back(i);
        }
        for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
      }
    Tensor& out = ctx.allocate_output(0, DType::kInt64, Shape{static_cast<int64_t>(selected.size() / 3), 3});
    std::copy(selected.begin(), selected.end(), out.data<int64_t>());
  }

 private:
  int64_t center_point_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "NonMaxSuppression", (10, 11), NonMaxSuppressionKernel);

}  // namespace parity::runtime::nn
