// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html (a 1x1 Conv, then a Conv with group =
// channels reading its output)
// The row-by-row expand + depthwise loop (runtime/ops/nn/conv_expand_depthwise.h): the loop
// against two double-precision convolutions over odd channel counts, kernels 1x1 to 3x3, strides
// 1 and 2, asymmetric paddings, maps narrower than the kernel, every activation and Swish on
// both stages, bands computed separately as threads do (every tier, and the AVX-512 tier's 16-lane
// schedule emulated on AVX2); and sessions (batch 2, 1 and 2 threads)
// against the reference kernels: which pairs fuse, which tails join, the reference chain when
// the layouts are not channels-last.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ops/direct_conv_test_util.h"
#include "runtime/ops/nn/conv_expand_depthwise.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

using runtime::nn::PointwiseEpilogue;
using Activation = PointwiseEpilogue::Activation;

/// The expanded map in double: act(bias + w * x) per pixel, then a Swish when `swish`.
std::vector<double> expanded_map(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                                 int64_t pixels, int64_t in, int64_t out, const PointwiseEpilogue& e, bool swish) {
  std::vector<double> map(static_cast<size_t>(pixels * out));
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t o = 0; o < out; ++o) {
      double v = b[o];
      for (int64_t i = 0; i < in; ++i) v += static_cast<double>(x[p * in + i]) * w[o * in + i];
      map[p * out + o] = finish(v, e.activation, e.lo, e.hi, swish);
    }
  return map;
}

TEST(ExpandDepthwise, RowsMatchTwoDoubleConvolutions) {
  for (const DirectLoopVariant& loop : direct_loop_variants()) {
    SCOPED_TRACE("isa " + loop.name());
    const std::vector<WindowCase> geometries = {
        {9, 13, 3, 1, 1, 1, 1, 1}, {9, 13, 3, 2, 1, 1, 1, 1}, {20, 21, 3, 2, 0, 1, 1, 0}, {2, 3, 3, 1, 1, 1, 1, 1},
        {1, 1, 3, 1, 1, 1, 1, 1},  {6, 17, 1, 1, 0, 0, 0, 0}, {5, 4, 3, 1, 2, 3, 2, 3},  {16, 56, 3, 1, 1, 1, 1, 1},
        {12, 11, 2, 2, 0, 0, 1, 1},
    };
    uint32_t seed = 1;
    for (const WindowCase& geo : geometries)
      for (const auto& [in, channels] : std::vector<std::pair<int64_t, int64_t>>{{3, 7}, {16, 17}, {16, 64}, {24, 72}, {5, 100}})
        for (int variant = 0; variant < 6; ++variant) {
          SCOPED_TRACE("h=" + std::to_string(geo.h) + " w=" + std::to_string(geo.w) + " k=" + std::to_string(geo.k) +
                       " stride=" + std::to_string(geo.stride) + " in=" + std::to_string(in) +
                       " channels=" + std::to_string(channels) + " variant=" + std::to_string(variant));
          const runtime::nn::DepthwiseGeometry g = row_loop_geometry(geo);
          const std::vector<float> we = random_values(static_cast<size_t>(channels * in), ++seed);
          const std::vector<float> be = random_values(static_cast<size_t>(channels), ++seed);
          const std::vector<float> wd = random_values(static_cast<size_t>(channels * geo.k * geo.k), ++seed);
          const std::vector<float> bd = random_values(static_cast<size_t>(channels), ++seed);
          const std::vector<float> x = random_values(static_cast<size_t>(geo.h * geo.w * in), ++seed);
          const auto expand =
              loop.on_schedule(runtime::nn::pack_pointwise_weights(we.data(), channels, in, be.data(), loop.isa));
          const auto depthwise = loop.on_schedule(
              runtime::nn::pack_depthwise_weights(wd.data(), channels, geo.k, geo.k, bd.data(), loop.isa));
          // Stage activations: none, Relu, Clip, HardSwish on either side; Swish on one or both.
          PointwiseEpilogue ee, de;
          ee.activation = static_cast<Activation>(variant % 4);
          de.activation = static_cast<Activation>((variant + 1) % 4);
          ee.lo = de.lo = -0.3f;
          ee.hi = de.hi = 0.4f;
          const float alpha = 1.f;
          const bool expand_swish = variant == 4 || variant == 5, depthwise_swish = variant == 5;
          if (expand_swish) ee.activation = Activation::kNone;
          if (depthwise_swish) de.activation = Activation::kNone;
          const runtime::nn::RowFinish expand_finish{ee, expand_swish ? &alpha : nullptr};
          const runtime::nn::RowFinish depthwise_finish{de, depthwise_swish ? &alpha : nullptr};
          // A guard value past the end: stores must stop at the last pixel's last channel.
          std::vector<float> y(static_cast<size_t>(g.out_h * g.out_w * channels + 1), 12345.f);
          // Two bands, each with a ring of its own filled with garbage, as two threads run them.
          const int64_t split = g.out_h / 2;
          for (const auto& [first, last] : std::vector<std::pair<int64_t, int64_t>>{{0, split}, {split, g.out_h}}) {
            std::vector<float> ring(static_cast<size_t>(runtime::nn::expand_depthwise_scratch(depthwise, g)), 777.f);
            runtime::nn::expand_depthwise_rows(x.data(), expand, expand_finish, depthwise, g, first, last, y.data(),
                                               depthwise_finish, ring.data());
          }
          const std::vector<double> map = expanded_map(x, we, be, geo.h * geo.w, in, channels, ee, expand_swish);
          for (int64_t oy = 0; oy < g.out_h; ++oy)
            for (int64_t ox = 0; ox < g.out_w; ++ox)
              for (int64_t c = 0; c < channels; ++c) {
                double want = bd[c];
                for (int64_t ky = 0; ky < geo.k; ++ky)
                  for (int64_t kx = 0; kx < geo.k; ++kx) {
                    const int64_t iy = oy * geo.stride - geo.pad_top + ky, ix = ox * geo.stride - geo.pad_left + kx;
                    if (iy < 0 || iy >= geo.h || ix < 0 || ix >= geo.w) continue;
                    want += map[(iy * geo.w + ix) * channels + c] * wd[(c * geo.k + ky) * geo.k + kx];
                  }
                want = finish(want, de.activation, de.lo, de.hi, depthwise_swish);
                ASSERT_NEAR(y[(oy * g.out_w + ox) * channels + c], want, 2e-5 * (1 + std::abs(want)) * geo.k * std::sqrt(in))
                    << "pixel " << oy << "," << ox << " channel " << c;
              }
          EXPECT_EQ(y.back(), 12345.f);
        }
  }
}

#if PARITY_HAVE_DNNL  // the convolution kernel that runs the loop is the oneDNN one

struct PairCase {
  Shape x;        // the block's input: [N, in, H, W]
  int64_t channels, k, stride;
  std::vector<int64_t> pads;
  std::string expand_tail, depthwise_tail;
  bool producer;  // a 3x3 Conv before the pair and a 1x1 after it (channels-last on both sides)
};

/// [Conv 3x3 (in -> in)] -> Conv 1x1 (in -> channels) -> expand_tail -> depthwise Conv (k x k,
/// stride, pads) -> depthwise_tail [-> Conv 1x1 (channels -> 5)] -> y.
ModelBuilder expand_depthwise_block(const PairCase& c, uint32_t seed) {
  const int64_t in = c.x[1];
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, c.x);
  m.initializer("w0", conv_weights({in, in, 3, 3}, seed)).initializer("b0", nn::random_tensor({in}, seed + 1));
  m.initializer("we", conv_weights({c.channels, in, 1, 1}, seed + 2)).initializer("be", nn::random_tensor({c.channels}, seed + 3));
  m.initializer("wd", conv_weights({c.channels, 1, c.k, c.k}, seed + 4)).initializer("bd", nn::random_tensor({c.channels}, seed + 5));
  m.initializer("wp", conv_weights({5, c.channels, 1, 1}, seed + 6));
  m.initializer("lo", Tensor::scalar<float>(0.f)).initializer("hi", Tensor::scalar<float>(6.f));
  std::string value = "x";
  if (c.producer) {
    add_ints_attr(m.node("Conv", {"x", "w0", "b0"}, {"a"}, "conv0"), "pads", {1, 1, 1, 1});
    value = "a";
  }
  m.node("Conv", {value, "we", "be"}, {"e"}, "expand");
  value = append_tail(m, "e", c.expand_tail, "et");
  // Without a projection after it, the pair's last value is the graph output y.
  const std::string depthwise_out = c.producer || !c.depthwise_tail.empty() ? "d" : "y";
  auto& dw = m.node("Conv", {value, "wd", "bd"}, {depthwise_out}, "depthwise");
  add_int_attr(dw, "group", c.channels);
  add_ints_attr(dw, "strides", {c.stride, c.stride});
  add_ints_attr(dw, "pads", c.pads);
  value = append_tail(m, depthwise_out, c.depthwise_tail, c.producer ? "dt" : "y");
  if (c.producer) m.node("Conv", {value, "wp"}, {"y"}, "project");
  m.output("y", DType::kFloat32, {});
  return m;
}

/// Runs `body` with the ring forced on (threshold 0) and off (threshold beyond any map), then
/// restores the machine's threshold.
template <typename Body>
void with_ring_and_two_passes(const Body& body) {
  for (const bool ring : {true, false}) {
    SCOPED_TRACE(ring ? "ring" : "two passes");
    runtime::nn::set_expand_depthwise_ring_bytes_for_testing(ring ? 0 : int64_t{1} << 40);
    body(ring);
  }
  runtime::nn::set_expand_depthwise_ring_bytes_for_testing(std::nullopt);
}

TEST(ExpandDepthwise, SessionsMatchReferenceKernels) {
  // Expanded maps of 2 MiB and more fuse (64 x 96 x 96 floats: 2.25 MiB); 8 channels on the
  // same map (288 KiB) and a 5x5 depthwise kernel keep two layers. An Elu after the expand keeps
  // them apart; an Elu after the depthwise layer runs on its own after the fused pair (which then
  // writes NCHW for it). The counter counts ring runs: two-pass runs of a fused pair count none.
  const std::vector<PairCase> cases = {
      {{1, 16, 96, 96}, 64, 3, 2, {1, 1, 1, 1}, "Relu", "Relu", true},
      {{2, 16, 96, 97}, 64, 3, 1, {1, 1, 1, 1}, "Clip", "Clip", true},
      {{1, 24, 96, 96}, 72, 3, 2, {0, 0, 1, 1}, "HardSwish", "", true},
      {{1, 16, 97, 96}, 65, 3, 2, {1, 1, 1, 1}, "Swish", "Swish", true},
      {{1, 16, 96, 96}, 64, 3, 2, {1, 1, 1, 1}, "Swish", "Relu", true},
      {{1, 16, 96, 96}, 64, 3, 2, {1, 1, 1, 1}, "Relu", "Swish", true},
      {{1, 5, 100, 90}, 70, 2, 1, {0, 1, 1, 0}, "", "HardSwish", true},
      {{1, 16, 96, 96}, 64, 3, 1, {1, 1, 1, 1}, "Relu", "Elu", true},
      {{1, 16, 96, 96}, 64, 3, 1, {1, 1, 1, 1}, "Elu", "Relu", true},
      {{1, 16, 96, 96}, 8, 3, 1, {1, 1, 1, 1}, "Relu", "Relu", true},
      {{1, 16, 96, 96}, 64, 5, 1, {2, 2, 2, 2}, "Relu", "Relu", true},
  };
  uint32_t seed = 900;
  for (const PairCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " -> " + std::to_string(c.channels) + " k" + std::to_string(c.k) + " s" +
                 std::to_string(c.stride) + " " + c.expand_tail + "/" + c.depthwise_tail);
    const bool fused = c.expand_tail != "Elu" && direct_loops_take_tail(c.expand_tail) && c.k <= 3 && c.channels >= 64;
    const ModelBuilder m = expand_depthwise_block(c, seed += 10);
    const TensorMap feed{{"x", nn::random_tensor(c.x, seed + 7)}};
    with_ring_and_two_passes([&](bool ring) {
      expect_direct_sessions_match_reference(m.model(), feed, runtime::nn::expand_depthwise_calls,
                                             runtime::nn::depthwise_direct_available(test_kernel_isa()), fused && ring,
                                             5e-4);
    });
  }
}

TEST(ExpandDepthwise, PairBetweenGraphInputAndOutputConvertsLayouts) {
  // No convolution on either side: the pair reads and writes NCHW, which the fused loops convert
  // to and from channels-last (batch 2: the conversions cover every image).
  const PairCase c{{2, 16, 96, 96}, 64, 3, 2, {1, 1, 1, 1}, "Relu", "Relu", false};
  const ModelBuilder m = expand_depthwise_block(c, 77);
  const TensorMap feed{{"x", nn::random_tensor(c.x, 78)}};
  with_ring_and_two_passes([&](bool ring) {
    expect_direct_sessions_match_reference(m.model(), feed, runtime::nn::expand_depthwise_calls,
                                           runtime::nn::depthwise_direct_available(test_kernel_isa()), ring, 5e-4);
  });
}

TEST(ExpandDepthwise, TwoPassRunsStillTakeTheDirectLoops) {
  // Below the ring threshold a fused pair runs the pointwise and depthwise loops over the whole
  // map, not the reference chain.
  const PairCase c{{1, 16, 96, 96}, 64, 3, 2, {1, 1, 1, 1}, "Relu", "Relu", true};
  const ModelBuilder m = expand_depthwise_block(c, 55);
  const TensorMap feed{{"x", nn::random_tensor(c.x, 56)}};
  runtime::nn::set_expand_depthwise_ring_bytes_for_testing(int64_t{1} << 40);
  const CountedRun run = optimized_run_counting(m.model(), feed, 1, runtime::nn::depthwise_direct_calls);
  const std::vector<std::string> labels =
      executed_node_labels(session_with_kernels(m.model(), runtime::KernelTier::kOptimized), feed);
  runtime::nn::set_expand_depthwise_ring_bytes_for_testing(std::nullopt);
  expect_direct_path(run, runtime::nn::depthwise_direct_available(test_kernel_isa()), true, 1);
  if (runtime::nn::depthwise_direct_available(test_kernel_isa())) {
    EXPECT_TRUE(any_label_contains(labels, "fused with Conv node 'depthwise'")) << "the pair did not fuse";
  }
  EXPECT_TRUE(tensors_close(run.output, reference_output(m.model(), feed), 5e-4, 5e-4));
}

#endif  // PARITY_HAVE_DNNL

}  // namespace
}  // namespace parity::testing
