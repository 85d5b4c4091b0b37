// Spec: https://onnx.ai/onnx/operators/onnx__DepthToSpace.html, onnx__SpaceToDepth.html
// DepthToSpace and SpaceToDepth.
// Both are a reshape + transpose of NCHW data; they copy elements of any dtype.
#include <cstring>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

/// Copies element src_index[i] of x to element i of y (byte copies; strings by value).
void gather_elements(const Tensor& x, Tensor& y, const std::vector<int64_t>& src_index) {
  if (x.dtype() == DType::kString) {
    const std::string* s = x.data<std::string>();
    std::string* d = y.data<std::string>();
    for (size_t i = 0; i < src_index.size(); ++i) d[i] = s[src_index[i]];
    return;
  }
  const size_t es = dtype_size(x.dtype());
  const auto* s = static_cast<const std::byte*>(x.raw_data());
  auto* d = static_cast<std::byte*>(y.raw_data());
  for (size_t i = 0; i < src_index.size(); ++i) std::memcpy(d + i * es, s + src_index[i] * es, es);
}

class DepthToSpaceKernel : public Kernel {
 public:
  explicit DepthToSpaceKernel(const KernelInit& init)
      : block_(init.attr_int("blocksize")), crd_(init.attr_string("mode", "DCR") == "CRD") {
    const std::string mode = init.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") init.fail("unknown mode '", mode, "'");
    if (block_ <= 0) init.fail("blocksize must be positive");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 4) ctx.fail("input must be 4-D, got shape ", shape_to_string(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    if (c % (b * b) != 0) ctx.fail("channels ", c, " are not divisible by blocksize^2 = ", b * b);
    const int64_t oc = c / (b * b);
    const Shape out_shape{n, oc, h * b, w * b};
    std::vector<int64_t> src(static_cast<size_t>(x.numel()));
    size_t i = 0;
    for (int64_t in = 0; in < n; ++in)
      for (int64_t co = 0; co < oc; ++co)
        for (int64_t y = 0; y < h * b; ++y)
          for (int64_t xx = 0; xx < w * b; ++xx) {
            const int64_t bh = y % b, bw = xx % b;
            // DCR: channel = (bh * b + bw) * oc + co; CRD: channel = co * b * b + bh * b + bw.
            const int64_t ch = crd_ ? co * b * b + bh * b + bw : (bh * b + bw) * oc + co;
            src[i++] = ((in * c + ch) * h + y / b) * w + xx / b;
          }
    Tensor& out = ctx.allocate_output(0, x.dtype(), out_shape);
    gather_elements(x, out, src);
  }

 private:
  int64_t block_;
  bool crd_;
};

class SpaceToDepthKernel : public Kernel {
 public:
  /// The 'mode' attribute (DCR default, CRD) came to SpaceToDepth after opset 13; older models
  /// never carry it.
  explicit SpaceToDepthKernel(const KernelInit& init)
      : block_(init.attr_int("blocksize")), crd_(init.attr_string("mode", "DCR") == "CRD") {
    const std::string mode = init.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") init.fail("unknown mode '", mode, "'");
    if (block_ <= 0) init.fail("blocksize must be positive");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 4) ctx.fail("input must be 4-D, got shape ", shape_to_string(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = block_;
    if (h % b != 0 || w % b != 0) ctx.fail("spatial dims ", h, "x", w, " are not divisible by blocksize ", b);
    const int64_t oh = h / b, ow = w / b;
    const Shape out_shape{n, c * b * b, oh, ow};
    std::vector<int64_t> src(static_cast<size_t>(x.numel()));
    size_t i = 0;
    for (int64_t in = 0; in < n; ++in)
      for (int64_t ch = 0; ch < c * b * b; ++ch) {
        // DCR: ch = (bh * b + bw) * c + co; CRD: ch = co * b * b + bh * b + bw.
        const int64_t blk = crd_ ? ch % (b * b) : ch / c, co = crd_ ? ch / (b * b) : ch % c;
        const int64_t bh = blk / b, bw = blk % b;
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) src[i++] = ((in * c + co) * h + y * b + bh) * w + xx * b + bw;
      }
    Tensor& out = ctx.allocate_output(0, x.dtype(), out_shape);
    gather_elements(x, out, src);
  }

 private:
  int64_t block_;
  bool crd_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "DepthToSpace", (1, 11, 13), DepthToSpaceKernel);
PARITY_REGISTER_KERNEL("", "SpaceToDepth", (1, 13), SpaceToDepthKernel);

}  // namespace parity::runtime::nn
