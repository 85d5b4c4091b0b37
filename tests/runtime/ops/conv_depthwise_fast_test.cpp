// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html (group = channels)
// The direct loop for depthwise convolutions between channels-last maps
// (runtime/ops/nn/conv_depthwise_fast.h): the loop against a double-precision convolution over odd
// channel counts (vector remainders), kernels 1x1 to 5x5, strides 1 and 2, asymmetric and
// oversized paddings, maps narrower than the kernel, every activation and Swish, on every tier and
// on the AVX-512 tier's 16-lane schedule emulated on AVX2; and sessions
// (batch 2, 1 and 2 threads) against the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/conv_depthwise_fast.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/ops/direct_conv_test_util.h"
#include "runtime/session_test_util.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

using runtime::nn::PointwiseEpilogue;
using Activation = PointwiseEpilogue::Activation;

TEST(OptimizedConvDepthwise, RowsMatchDoubleConvolution) {
  for (const DirectLoopVariant& loop : direct_loop_variants()) {
    SCOPED_TRACE("isa " + loop.name());
    const std::vector<WindowCase> geometries = {
        {9, 13, 3, 1, 1, 1, 1, 1},  {9, 13, 3, 2, 1, 1, 1, 1},  {20, 21, 3, 2, 0, 1, 1, 0}, {7, 7, 5, 1, 2, 2, 2, 2},
        {11, 10, 5, 2, 1, 2, 2, 1}, {2, 3, 3, 1, 1, 1, 1, 1},   {1, 1, 3, 1, 1, 1, 1, 1},   {6, 17, 1, 1, 0, 0, 0, 0},
        {5, 4, 3, 1, 2, 3, 2, 3},   {30, 30, 3, 1, 1, 1, 1, 1}, {3, 29, 3, 1, 0, 1, 0, 1},  {4, 37, 3, 2, 1, 1, 1, 1},
    };
    uint32_t seed = 1;
    for (const WindowCase& geo : geometries)
      // Around the tails of 8 and 16 lanes, and past 8 vectors of 16 (one-pixel blocks take 8
      // vectors at once) and the 5x5 kernel's group of 160 channels.
      for (int64_t channels : {1, 7, 8, 9, 15, 16, 17, 24, 31, 33, 48, 65, 72, 130, 161})
        for (int variant = 0; variant < 6; ++variant) {
          SCOPED_TRACE("h=" + std::to_string(geo.h) + " w=" + std::to_string(geo.w) + " k=" + std::to_string(geo.k) +
                       " stride=" + std::to_string(geo.stride) + " channels=" + std::to_string(channels) +
                       " variant=" + std::to_string(variant));
          const runtime::nn::DepthwiseGeometry g = row_loop_geometry(geo);
          const std::vector<float> w = random_values(static_cast<size_t>(channels * geo.k * geo.k), ++seed);
          const std::vector<float> bias = random_values(static_cast<size_t>(channels), ++seed);
          const std::vector<float> x = random_values(static_cast<size_t>(geo.h * geo.w * channels), ++seed);
          const bool with_bias = variant != 1;
          const runtime::nn::DepthwiseWeights packed = loop.on_schedule(runtime::nn::pack_depthwise_weights(
              w.data(), channels, geo.k, geo.k, with_bias ? bias.data() : nullptr, loop.isa));
          PointwiseEpilogue e;
          e.activation = static_cast<Activation>(variant % 4);  // none, Relu, Clip, HardSwish
          e.lo = -0.3f;
          e.hi = 0.4f;
          const float alpha = 1.f;
          const bool swish = variant >= 4;
          if (swish) e.activation = Activation::kNone;
          // A guard value past the end: stores must stop at the last pixel's last channel.
          std::vector<float> y(static_cast<size_t>(g.out_h * g.out_w * channels + 1), 12345.f);
          // Rows in two calls, as two threads would run them.
          const int64_t split = g.out_h / 2;
          runtime::nn::depthwise_rows(x.data(), packed, g, 0, split, y.data(), e, swish ? &alpha : nullptr);
          runtime::nn::depthwise_rows(x.data(), packed, g, split, g.out_h, y.data(), e, swish ? &alpha : nullptr);
          for (int64_t oy = 0; oy < g.out_h; ++oy)
            for (int64_t ox = 0; ox < g.out_w; ++ox)
              for (int64_t c = 0; c < channels; ++c) {
                double want = with_bias ? bias[c] : 0.0;
                for (int64_t ky = 0; ky < geo.k; ++ky)
                  for (int64_t kx = 0; kx < geo.k; ++kx) {
                    const int64_t iy = oy * geo.stride - geo.pad_top + ky, ix = ox * geo.stride - geo.pad_left + kx;
                    if (iy < 0 || iy >= geo.h || ix < 0 || ix >= geo.w) continue;
                    want += static_cast<double>(x[(iy * geo.w + ix) * channels + c]) * w[(c * geo.k + ky) * geo.k + kx];
                  }
                want = finish(want, e.activation, e.lo, e.hi, swish);
                ASSERT_NEAR(y[(oy * g.out_w + ox) * channels + c], want, 1e-5 * (1 + std::abs(want)) * geo.k)
                    << "pixel " << oy << "," << ox << " channel " << c;
              }
          EXPECT_EQ(y.back(), 12345.f);
        }
  }
}

TEST(OptimizedConvDepthwise, HasAvx512AndAvx2Variants) {
  // Both vector tiers run the loop (each tested above where the CPU has it); baseline does not.
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_TRUE(runtime::nn::depthwise_direct_available(runtime::KernelIsa::kAvx512));
  EXPECT_TRUE(runtime::nn::depthwise_direct_available(runtime::KernelIsa::kAvx2));
#endif
  EXPECT_FALSE(runtime::nn::depthwise_direct_available(runtime::KernelIsa::kBaseline));
}

#if PARITY_HAVE_DNNL  // the convolution kernel that calls the loop runs on oneDNN builds

/// x -> Conv 3x3 (c -> c) -> depthwise Conv (k x k, stride, pads) -> `tail` -> Conv 1x1 (c -> 5)
/// -> y: the depthwise conv between two convolutions reads and writes channels-last. Tails:
/// "Relu", "Clip" (0, 6), "HardSwish", "Swish" (Sigmoid + Mul), "" (none), "Elu" (not a
/// direct-loop tail: stays on oneDNN).
ModelBuilder depthwise_between_convs(const Shape& x, int64_t k, int64_t stride, const std::vector<int64_t>& pads,
                                     const std::string& tail, uint32_t seed) {
  const int64_t c = x[1];
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, x);
  m.initializer("w0", conv_weights({c, c, 3, 3}, seed)).initializer("b0", nn::random_tensor({c}, seed + 1));
  m.initializer("w1", conv_weights({c, 1, k, k}, seed + 2)).initializer("b1", nn::random_tensor({c}, seed + 3));
  m.initializer("w2", conv_weights({5, c, 1, 1}, seed + 4));
  m.initializer("lo", Tensor::scalar<float>(0.f)).initializer("hi", Tensor::scalar<float>(6.f));
  add_ints_attr(m.node("Conv", {"x", "w0", "b0"}, {"a"}, "conv0"), "pads", {1, 1, 1, 1});
  auto& dw = m.node("Conv", {"a", "w1", "b1"}, {"d"}, "depthwise");
  add_int_attr(dw, "group", c);
  add_ints_attr(dw, "strides", {stride, stride});
  add_ints_attr(dw, "pads", pads);
  const std::string last = append_tail(m, "d", tail);
  m.node("Conv", {last, "w2"}, {"y"}, "project");
  m.output("y", DType::kFloat32, {});
  return m;
}

TEST(OptimizedConvDepthwise, SessionsMatchReferenceKernels) {
  struct Case {
    Shape x;
    int64_t k, stride;
    std::vector<int64_t> pads;
    std::string tail;
    bool direct;
  };
  const std::vector<Case> cases = {
      {{1, 32, 24, 20}, 3, 1, {1, 1, 1, 1}, "Swish", true},   {{2, 13, 11, 9}, 3, 2, {1, 1, 1, 1}, "Relu", true},
      {{1, 72, 14, 15}, 3, 1, {1, 1, 1, 1}, "Clip", true},    {{2, 24, 10, 10}, 3, 2, {0, 0, 1, 1}, "HardSwish", true},
      {{1, 17, 7, 6}, 3, 1, {1, 1, 1, 1}, "", true},          {{1, 40, 12, 12}, 5, 1, {2, 2, 2, 2}, "Swish", false},
      {{1, 16, 8, 8}, 3, 1, {1, 1, 1, 1}, "Elu", false},
  };
  uint32_t seed = 700;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " " + c.tail);
    const ModelBuilder m = depthwise_between_convs(c.x, c.k, c.stride, c.pads, c.tail, seed += 10);
    const TensorMap feed{{"x", nn::random_tensor(c.x, seed + 7)}};
    expect_direct_sessions_match_reference(m.model(), feed, runtime::nn::depthwise_direct_calls,
                                           runtime::nn::depthwise_direct_available(test_kernel_isa()),
                                           c.direct && direct_loops_take_tail(c.tail));
  }
}

#endif  // PARITY_HAVE_DNNL

}  // namespace
}  // namespace parity::testing
