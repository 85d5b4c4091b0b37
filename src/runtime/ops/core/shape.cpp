// Spec: https://onnx.ai/onnx/operators/onnx__Shape.html, onnx__Size.html
// Shape and Size. Both read only the input's shape, so they take a value handed off channels-last
// (runtime/channels_last.h: the tensor keeps its NCHW shape): ShuffleNetV2 reads the shape of every
// block's input to split it, and would otherwise keep that input in NCHW order.
#include <algorithm>

#include "runtime/channels_last.h"
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

/// Reads input 0's shape only: any layout will do.
class ShapeOnlyReader : public ChannelsLastKernel {
 public:
  bool can_write_channels_last() const override { return false; }
  void write_channels_last() override {}
  bool can_read_channels_last(size_t input) const override { return input == 0; }
  void read_channels_last(size_t) override {}
};

class ShapeOp : public Kernel, public ShapeOnlyReader {
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

class Size : public Kernel, public ShapeOnlyReader {
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
