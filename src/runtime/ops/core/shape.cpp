// Spec: https://onnx.ai/onnx/operators/onnx__Shape.html, onnx__Size.html
// Shape and Size.
#include <algorithm>

#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

class ShapeOp : public Kernel {
 public:
  explicit ShapeOp(const KernelInit& init) {
    start_ = init.attr_int("start", 0);
    end_ = init.has_attr("end") ? std::optional<int64_t>(init.attr_int("end")) : std::nullopt;
  }
  void compute(KernelContext& ctx) const override {
    const Shape& shape = ctx.input(0).shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    auto clamp_axis = [rank](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank); };
    const int64_t begin = clamp_axis(start_);
    const int64_t end = end_ ? clamp_axis(*end_) : rank;
    std::vector<int64_t> dims;
    for (int64_t i = begin; i < end; ++i) dims.push_back(shape[i]);
    ctx.set_output(0, Value(Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims)));
  }

 private:
  int64_t start_ = 0;
  std::optional<int64_t> end_;
};

class Size : public Kernel {
 public:
  explicit Size(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    ctx.set_output(0, Value(Tensor::scalar<int64_t>(ctx.input(0).numel())));
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Shape", (1, 13, 15), ShapeOp);
PARITY_REGISTER_KERNEL("", "Size", (1, 13), Size);

}  // namespace parity::runtime
