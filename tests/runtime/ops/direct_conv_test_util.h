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

#include "runtime/ops/nn/conv_pointwise_fast.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session_test_util.h"

namespace parity::testing {

/// n float values uniform in [-1, 1) from `seed`.
inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
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
