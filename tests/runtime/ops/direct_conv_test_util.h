// What the direct convolution loops' tests (conv_pointwise/depthwise/stem_fast_test.cpp) share:
// random weights, the epilogue in double for their oracles, and the whole-session check against
// the reference kernels.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <string>

#include "runtime/ops/nn/conv_depthwise_fast.h"
#include "runtime/ops/nn/conv_pointwise_fast.h"
#include "runtime/ops/nn/swish_fast.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session_test_util.h"
#include "support/model_builder.h"

namespace parity::testing {

/// Whether the direct loops take the activation tail `tail` (as append_tail names it) at the
/// tested tier: a Swish needs the vector Swish loop (swish_fast.h), which not every tier has.
inline bool direct_loops_take_tail(const std::string& tail) {
  return tail != "Swish" || runtime::nn::fast_swish_available(test_kernel_isa());
}

/// One way the direct loops' own tests run a loop: weights packed for `isa`, run on `schedule`.
struct DirectLoopVariant {
  runtime::KernelIsa isa;
  runtime::nn::DirectLoopSchedule schedule;
  std::string name() const {
    return runtime::kernel_isa_name(isa) +
           (schedule == runtime::nn::DirectLoopSchedule::kEmulated16Lanes ? " (16-lane schedule emulated)" : "");
  }
  /// `w` (any of the loops' packed weights) set to run on this variant's schedule.
  template <typename Weights>
  Weights on_schedule(Weights w) const {
    w.schedule = schedule;
    return w;
  }
};

/// Every tier up to test_kernel_isa() on its own schedule, then, where that reaches AVX2, the
/// AVX-512 tier's 16-lane schedule emulated on AVX2: its blocking is checked on every AVX2 CPU,
/// not only on those with AVX-512.
inline std::vector<DirectLoopVariant> direct_loop_variants() {
  std::vector<DirectLoopVariant> variants;
  for (const runtime::KernelIsa isa : tested_kernel_isas())
    variants.push_back({isa, runtime::nn::DirectLoopSchedule::kTier});
  if (test_kernel_isa() >= runtime::KernelIsa::kAvx2)
    variants.push_back({runtime::KernelIsa::kAvx2, runtime::nn::DirectLoopSchedule::kEmulated16Lanes});
  return variants;
}

/// n float values uniform in [-1, 1) from `seed`.
inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// A square kernel of side k over an h x w map: its stride and four paddings.
struct WindowCase {
  int64_t h, w, k, stride, pad_top, pad_left, pad_bottom, pad_right;
};

/// The direct row loops' geometry of `c`.
inline runtime::nn::DepthwiseGeometry row_loop_geometry(const WindowCase& c) {
  runtime::nn::DepthwiseGeometry g;
  g.in_h = c.h;
  g.in_w = c.w;
  g.out_h = (c.h + c.pad_top + c.pad_bottom - c.k) / c.stride + 1;
  g.out_w = (c.w + c.pad_left + c.pad_right - c.k) / c.stride + 1;
  g.stride_h = g.stride_w = c.stride;
  g.pad_top = c.pad_top;
  g.pad_left = c.pad_left;
  return g;
}

/// Convolution weights of `shape` from `seed`, scaled by 1/sqrt(fan-in) so that chained layers
/// keep values of order one.
inline Tensor conv_weights(const Shape& shape, uint32_t seed) {
  Tensor w = nn::random_tensor(shape, seed);
  const float scale = 1.f / std::sqrt(static_cast<float>(w.numel() / shape[0]));
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] *= scale;
  return w;
}

/// Appends `tail` after value `value` and returns the last value (`out`): "Swish" (Sigmoid +
/// Mul), "Clip" (reading initializers "lo" and "hi"), "" (none: `value` itself), or any unary op
/// by name ("Relu", "HardSwish", "Elu").
inline std::string append_tail(ModelBuilder& m, const std::string& value, const std::string& tail,
                               const std::string& out = "t") {
  if (tail.empty()) return value;
  if (tail == "Swish") {
    m.node("Sigmoid", {value}, {value + "_sigmoid"});
    m.node("Mul", {value, value + "_sigmoid"}, {out});
  } else if (tail == "Clip") {
    m.node("Clip", {value, "lo", "hi"}, {out});
  } else {
    m.node(tail, {value}, {out});
  }
  return out;
}

/// The epilogue's activation in double, then a Swish when `swish`.
inline double finish(double v, runtime::nn::PointwiseEpilogue::Activation a, double lo, double hi, bool swish) {
  using Activation = runtime::nn::PointwiseEpilogue::Activation;
  switch (a) {
    case Activation::kRelu: v = std::max(v, 0.0); break;
    case Activation::kClip: v = std::min(std::max(v, lo), hi); break;
    case Activation::kHardSwish: v = v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5)); break;
    default: break;
  }
  return swish ? v / (1.0 + std::exp(-v)) : v;
}

/// `model` on the optimized kernels at 1 and 2 threads agrees with the reference kernels within
/// `tolerance`, and the direct loop counted by `counter` ran exactly when `available` and
/// `expected`.
inline void expect_direct_sessions_match_reference(const onnx::ModelProto& model, const TensorMap& feed,
                                                   uint64_t (*counter)(), bool available, bool expected,
                                                   double tolerance = 2e-4) {
  const Tensor want = reference_output(model, feed);
  for (int threads : {1, 2}) {
    const CountedRun run = optimized_run_counting(model, feed, threads, counter);
    expect_direct_path(run, available, expected, threads);
    EXPECT_TRUE(tensors_close(run.output, want, tolerance, tolerance)) << threads << " threads";
  }
}

}  // namespace parity::testing
