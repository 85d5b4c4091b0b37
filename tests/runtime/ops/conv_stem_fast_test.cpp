// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html
// The direct loop for 3x3 stem convolutions of few input channels
// (runtime/ops/nn/conv_stem_fast.h): the loop against a double-precision convolution over odd
// output channel counts (vector remainders), 1 to 4 input channels, strides 1 and 2, asymmetric
// and oversized paddings, tiny maps, both layouts in and out, every activation and Swish, on every
// tier and on the AVX-512 tier's 16-lane schedule emulated on AVX2; and
// sessions (batch 2, 1 and 2 threads) against the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/conv_stem_fast.h"
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

TEST(OptimizedConvStem, RowsMatchDoubleConvolution) {
  for (const DirectLoopVariant& loop : direct_loop_variants()) {
    SCOPED_TRACE("isa " + loop.name());
    // 3x3 kernels; output widths leave each remainder of the pixel blocks.
    const std::vector<WindowCase> geometries = {
        {9, 13, 3, 1, 1, 1, 1, 1},  {9, 13, 3, 2, 1, 1, 1, 1}, {20, 21, 3, 2, 0, 1, 1, 0}, {23, 23, 3, 2, 0, 0, 0, 0},
        {11, 10, 3, 2, 2, 3, 1, 0}, {2, 3, 3, 1, 1, 1, 1, 1},  {1, 1, 3, 1, 1, 1, 1, 1},   {1, 1, 3, 2, 1, 1, 1, 1},
        {5, 4, 3, 1, 2, 3, 2, 3},   {8, 70, 3, 2, 1, 1, 1, 1}, {6, 50, 3, 1, 1, 1, 1, 1},  {10, 11, 3, 3, 1, 1, 1, 1},
        {7, 40, 3, 2, 0, 2, 2, 1},  {5, 57, 3, 2, 1, 1, 1, 1}, {3, 97, 3, 1, 1, 1, 1, 1},
    };
    struct Channels {
      int64_t in, out;
    };
    // Channels-last: groups of 1 to 4 vectors of 16 (8) lanes, full and with tails; NCHW: blocks
    // of 8 (6) output channels, then 4, 2, 1.
    const std::vector<Channels> channel_counts = {{3, 5},  {3, 17}, {3, 64}, {1, 16}, {4, 33}, {2, 8},  {3, 77}, {3, 9},
                                                  {3, 24}, {3, 15}, {3, 31}, {3, 48}, {3, 65}, {4, 56}, {3, 128}};
    uint32_t seed = 1;
    for (const WindowCase& geo : geometries)
      for (const Channels& ch : channel_counts)
        for (int variant = 0; variant < 8; ++variant) {
          // Each pair of layouts in and out, with an activation (0-3) and then with a Swish (4-7).
          const bool x_channels_last = variant % 2 == 1, y_channels_last = variant / 2 % 2 == 1;
          SCOPED_TRACE("h=" + std::to_string(geo.h) + " w=" + std::to_string(geo.w) + " stride=" +
                       std::to_string(geo.stride) + " in=" + std::to_string(ch.in) + " out=" + std::to_string(ch.out) +
                       " variant=" + std::to_string(variant));
          const int64_t k = geo.k;
          const runtime::nn::DepthwiseGeometry g = row_loop_geometry(geo);
          if (g.out_h <= 0 || g.out_w <= 0) continue;
          const std::vector<float> w = random_values(static_cast<size_t>(ch.out * ch.in * k * k), ++seed);
          const std::vector<float> bias = random_values(static_cast<size_t>(ch.out), ++seed);
          const std::vector<float> x = random_values(static_cast<size_t>(geo.h * geo.w * ch.in), ++seed);
          const bool with_bias = variant != 1;
          const runtime::nn::StemWeights packed = loop.on_schedule(runtime::nn::pack_stem_weights(
              w.data(), ch.out, ch.in, k, k, with_bias ? bias.data() : nullptr, loop.isa));
          PointwiseEpilogue e;
          // None, Relu, Clip or HardSwish, varying with the case.
          e.activation = static_cast<Activation>((variant + seed) % 4);
          e.lo = -0.3f;
          e.hi = 0.4f;
          const float alpha = 1.f;
          const bool swish = variant >= 4;
          if (swish) e.activation = Activation::kNone;
          // A guard value past the end: stores must stop at the last pixel's last channel.
          const int64_t plane = g.out_h * g.out_w;
          std::vector<float> y(static_cast<size_t>(plane * ch.out + 1), 12345.f);
          // Rows in two calls, as two threads would run them.
          const int64_t split = g.out_h / 2;
          runtime::nn::stem_rows(x.data(), x_channels_last, packed, g, 0, split, y.data(), y_channels_last, e,
                                 swish ? &alpha : nullptr);
          runtime::nn::stem_rows(x.data(), x_channels_last, packed, g, split, g.out_h, y.data(), y_channels_last, e,
                                 swish ? &alpha : nullptr);
          for (int64_t oy = 0; oy < g.out_h; ++oy)
            for (int64_t ox = 0; ox < g.out_w; ++ox)
              for (int64_t o = 0; o < ch.out; ++o) {
                double want = with_bias ? bias[o] : 0.0;
                for (int64_t c = 0; c < ch.in; ++c)
                  for (int64_t ky = 0; ky < k; ++ky)
                    for (int64_t kx = 0; kx < k; ++kx) {
                      const int64_t iy = oy * geo.stride - geo.pad_top + ky, ix = ox * geo.stride - geo.pad_left + kx;
                      if (iy < 0 || iy >= geo.h || ix < 0 || ix >= geo.w) continue;
                      const float v = x_channels_last ? x[(iy * geo.w + ix) * ch.in + c] : x[(c * geo.h + iy) * geo.w + ix];
                      want += static_cast<double>(v) * w[((o * ch.in + c) * k + ky) * k + kx];
                    }
                want = finish(want, e.activation, e.lo, e.hi, swish);
                const float got = y_channels_last ? y[(oy * g.out_w + ox) * ch.out + o] : y[o * plane + oy * g.out_w + ox];
                ASSERT_NEAR(got, want, 1e-5 * (1 + std::abs(want)) * 3) << "pixel " << oy << "," << ox << " channel " << o;
              }
          EXPECT_EQ(y.back(), 12345.f);
        }
  }
}

TEST(OptimizedConvStem, HasAvx512AndAvx2Variants) {
  // Both vector tiers run the loop (each tested above where the CPU has it); baseline does not.
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_TRUE(runtime::nn::stem_direct_available(runtime::KernelIsa::kAvx512));
  EXPECT_TRUE(runtime::nn::stem_direct_available(runtime::KernelIsa::kAvx2));
#endif
  EXPECT_FALSE(runtime::nn::stem_direct_available(runtime::KernelIsa::kBaseline));
}

#if PARITY_HAVE_DNNL  // the convolution kernel that calls the loop runs on oneDNN builds

/// [before: Conv 1x1 (c -> c), so the stem reads channels-last] -> stem Conv 3x3 (c -> out,
/// stride, pads) -> `tail` -> [after: Conv 1x1 (out -> 5), so the stem writes channels-last] -> y.
/// Tails: "Relu", "Clip" (0, 6), "HardSwish", "Swish" (Sigmoid + Mul), "" (none), "Elu" (not a
/// direct-loop tail: stays on oneDNN).
ModelBuilder stem_model(const Shape& x, int64_t out, int64_t stride, const std::vector<int64_t>& pads,
                        const std::string& tail, bool before, bool after, uint32_t seed) {
  const int64_t c = x[1];
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, x);
  m.initializer("w0", conv_weights({c, c, 1, 1}, seed));
  m.initializer("w1", conv_weights({out, c, 3, 3}, seed + 2)).initializer("b1", nn::random_tensor({out}, seed + 3));
  m.initializer("w2", conv_weights({5, out, 1, 1}, seed + 4));
  m.initializer("lo", Tensor::scalar<float>(0.f)).initializer("hi", Tensor::scalar<float>(6.f));
  std::string first = "x";
  if (before) {
    m.node("Conv", {"x", "w0"}, {"a"}, "before");
    first = "a";
  }
  auto& stem = m.node("Conv", {first, "w1", "b1"}, {"d"}, "stem");
  add_ints_attr(stem, "strides", {stride, stride});
  add_ints_attr(stem, "pads", pads);
  const std::string last = append_tail(m, "d", tail);
  if (after) m.node("Conv", {last, "w2"}, {"y"}, "after");
  else m.node("Identity", {last}, {"y"});
  m.output("y", DType::kFloat32, {});
  return m;
}

TEST(OptimizedConvStem, SessionsMatchReferenceKernels) {
  struct Case {
    Shape x;
    int64_t out, stride;
    std::vector<int64_t> pads;
    std::string tail;
    bool before, after, direct;
  };
  const std::vector<Case> cases = {
      {{2, 3, 24, 20}, 32, 2, {1, 1, 1, 1}, "Swish", false, true, true},
      {{2, 3, 23, 23}, 64, 2, {0, 0, 0, 0}, "Relu", false, false, true},
      {{1, 3, 17, 30}, 16, 2, {1, 1, 1, 1}, "HardSwish", false, true, true},
      {{2, 3, 14, 15}, 17, 1, {1, 1, 1, 1}, "Clip", true, true, true},
      {{1, 4, 10, 10}, 33, 2, {0, 1, 1, 0}, "", true, false, true},
      {{2, 1, 9, 7}, 5, 1, {2, 0, 1, 2}, "Swish", false, false, true},
      {{2, 3, 2, 3}, 16, 2, {1, 1, 1, 1}, "Relu", false, true, true},
      {{1, 3, 12, 12}, 16, 2, {1, 1, 1, 1}, "Elu", false, true, false},
      {{1, 8, 12, 12}, 16, 2, {1, 1, 1, 1}, "Relu", false, true, false},  // too many input channels
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " -> " + std::to_string(c.out) + " s" + std::to_string(c.stride) + " " +
                 c.tail + (c.before ? " before" : "") + (c.after ? " after" : ""));
    const ModelBuilder m = stem_model(c.x, c.out, c.stride, c.pads, c.tail, c.before, c.after, seed += 10);
    const TensorMap feed{{"x", nn::random_tensor(c.x, seed + 7)}};
    expect_direct_sessions_match_reference(m.model(), feed, runtime::nn::stem_direct_calls,
                                           runtime::nn::stem_direct_available(test_kernel_isa()),
                                           c.direct && direct_loops_take_tail(c.tail));
  }
}

/// The session's KernelOptions decide: switched off, or capped below AVX2 (the loop's lowest
/// vector form), the stem runs on oneDNN and still matches the reference.
TEST(OptimizedConvStem, SwitchOrIsaCapKeepsTheStemOnOneDnn) {
  const Shape x{1, 3, 24, 20};
  const ModelBuilder m = stem_model(x, 32, 2, {1, 1, 1, 1}, "Relu", false, true, 77);
  const TensorMap feed{{"x", nn::random_tensor(x, 78)}};
  const Tensor want = reference_output(m.model(), feed);
  auto run = [&](const runtime::KernelOptions& kernel_options) {
    runtime::SessionOptions options;
    options.kernel_options = kernel_options;
    runtime::Session session = runtime::Session::create(m.model(), options).value();
    const uint64_t before = runtime::nn::stem_direct_calls();
    EXPECT_TRUE(tensors_close(session.run(feed).at("y"), want, 2e-4, 2e-4));
    return runtime::nn::stem_direct_calls() - before;
  };
  runtime::KernelOptions off;
  off.conv_stem_direct = false;
  EXPECT_EQ(run(off), 0u);
  runtime::KernelOptions baseline;
  baseline.isa_cap = runtime::KernelIsa::kBaseline;
  EXPECT_EQ(run(baseline), 0u);
  if (runtime::nn::stem_direct_available(runtime::cpu_kernel_isa())) {
    EXPECT_GT(run({}), 0u);
  }
}

#endif  // PARITY_HAVE_DNNL

}  // namespace
}  // namespace parity::testing
