// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html (1x1 kernel, stride 1, no padding)
// The direct loop for narrow 1x1 convolutions between channels-last maps
// (runtime/ops/nn/conv_pointwise_fast.h): the loop itself against a double-precision product over
// odd channel counts, vector remainders and pixel tails with every epilogue (every tier, and the
// AVX-512 tier's 16-lane schedule emulated on AVX2), and whole sessions
// (Swish and residual tails, batch 2, 1 and 2 threads) against the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/conv_pointwise_fast.h"
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

TEST(OptimizedConvPointwise, RowsMatchDoubleProductWithEveryEpilogue) {
  for (const DirectLoopVariant& loop : direct_loop_variants()) {
    SCOPED_TRACE("isa " + loop.name());
    uint32_t seed = 1;
    for (int64_t in : {1, 3, 16, 17, 24, 64})
      // Every group of 1 to 4 vectors of 16 (8) lanes, full and with a tail; row counts leave
      // each pixel remainder (blocks of 16, 12, 8 or 6 pixels, then 8, 4, 2, 1).
      for (int64_t out : {1, 5, 8, 9, 15, 16, 17, 24, 31, 33, 48, 64, 65, 80, 96, 113, 130})
        for (int64_t rows : {1, 5, 7, 15, 23, 31, 100})
          for (int variant = 0; variant < 5; ++variant) {
            SCOPED_TRACE("in=" + std::to_string(in) + " out=" + std::to_string(out) + " rows=" + std::to_string(rows) +
                         " variant=" + std::to_string(variant));
            const std::vector<float> w = random_values(static_cast<size_t>(in * out), ++seed);
            const std::vector<float> bias = random_values(static_cast<size_t>(out), ++seed);
            const std::vector<float> x = random_values(static_cast<size_t>(rows * in), ++seed);
            const std::vector<float> residual = random_values(static_cast<size_t>(rows * out), ++seed);
            const bool with_bias = variant % 2 == 0;
            const runtime::nn::PointwiseWeights packed = loop.on_schedule(
                runtime::nn::pack_pointwise_weights(w.data(), out, in, with_bias ? bias.data() : nullptr, loop.isa));
            PointwiseEpilogue e;
            e.activation = static_cast<Activation>(variant % 4);  // none, Relu, Clip, HardSwish
            e.lo = -0.3f;
            e.hi = 0.4f;
            if (variant >= 3) e.residual = residual.data();
            // A guard value past the end: stores must stop at the last row's last channel.
            std::vector<float> y(static_cast<size_t>(rows * out + 1), 12345.f);
            runtime::nn::pointwise_rows(x.data(), rows, packed, y.data(), e);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t o = 0; o < out; ++o) {
                double want = with_bias ? bias[o] : 0.0;
                for (int64_t i = 0; i < in; ++i) want += static_cast<double>(x[r * in + i]) * w[o * in + i];
                if (e.residual) want += residual[r * out + o];
                want = finish(want, e.activation, e.lo, e.hi, false);
                ASSERT_NEAR(y[r * out + o], want, 1e-5 * (1 + std::abs(want)) * std::sqrt(static_cast<double>(in)))
                    << "row " << r << " channel " << o;
              }
            EXPECT_EQ(y.back(), 12345.f);
          }
  }
}

TEST(OptimizedConvPointwise, HasAvx512AndAvx2Variants) {
  // Both vector tiers run the loop (each tested above where the CPU has it); baseline does not.
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_TRUE(runtime::nn::pointwise_direct_available(runtime::KernelIsa::kAvx512));
  EXPECT_TRUE(runtime::nn::pointwise_direct_available(runtime::KernelIsa::kAvx2));
#endif
  EXPECT_FALSE(runtime::nn::pointwise_direct_available(runtime::KernelIsa::kBaseline));
}

#if PARITY_HAVE_DNNL  // the convolution kernel that calls the loop runs on oneDNN builds

/// x -> Conv 3x3 (c -> c) -> Conv 1x1 (c -> e) -> `tail` -> Conv 3x3 (e -> c) -> y, the 1x1 conv
/// between two convolutions so that it reads and writes channels-last. Tails: "Swish" (Sigmoid +
/// Mul, which the planner fuses as one Swish), "Residual" (Add of the first conv's output; e = c),
/// "ResidualRelu" (that Add, then Relu), "Relu" (not a direct-loop case: stays on oneDNN).
ModelBuilder pointwise_between_convs(const Shape& x, int64_t e, const std::string& tail, uint32_t seed) {
  const int64_t c = x[1];
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, x);
  m.initializer("w0", conv_weights({c, c, 3, 3}, seed)).initializer("b0", nn::random_tensor({c}, seed + 1));
  m.initializer("w1", conv_weights({e, c, 1, 1}, seed + 2)).initializer("b1", nn::random_tensor({e}, seed + 3));
  m.initializer("w2", conv_weights({c, e, 3, 3}, seed + 4));
  add_ints_attr(m.node("Conv", {"x", "w0", "b0"}, {"a"}, "conv0"), "pads", {1, 1, 1, 1});
  m.node("Conv", {"a", "w1", "b1"}, {"p"}, "pointwise");
  std::string last = "p";
  if (tail == "Swish") {
    m.node("Sigmoid", {"p"}, {"p_sigmoid"});
    m.node("Mul", {"p", "p_sigmoid"}, {"t"});
    last = "t";
  } else if (tail == "Residual" || tail == "ResidualRelu") {
    m.node("Add", {"p", "a"}, {"t"});
    last = "t";
    if (tail == "ResidualRelu") {
      m.node("Relu", {"t"}, {"t2"});
      last = "t2";
    }
  } else if (tail == "Relu") {
    m.node("Relu", {"p"}, {"t"});
    last = "t";
  }
  add_ints_attr(m.node("Conv", {last, "w2"}, {"y"}, "conv2"), "pads", {1, 1, 1, 1});
  m.output("y", DType::kFloat32, {});
  return m;
}

TEST(OptimizedConvPointwise, SessionsMatchReferenceKernels) {
  struct Case {
    Shape x;
    int64_t expanded;
    std::string tail;
    bool direct;  // whether the 1x1 conv takes the direct loop
  };
  const std::vector<Case> cases = {
      {{1, 16, 19, 23}, 96, "Swish", true},     {{2, 13, 9, 11}, 37, "Swish", true},
      {{1, 17, 5, 7}, 17, "Residual", true},    {{2, 24, 12, 9}, 24, "ResidualRelu", true},
      {{1, 64, 6, 6}, 130, "Swish", true},      {{1, 16, 40, 41}, 16, "Residual", true},  // several tiles
      {{1, 8, 30, 30}, 24, "Swish", true},      {{1, 16, 8, 8}, 48, "Relu", false},
      {{1, 72, 6, 5}, 40, "Swish", false},  // more input channels than the loop takes
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " -> " + std::to_string(c.expanded) + " " + c.tail);
    const ModelBuilder m = pointwise_between_convs(c.x, c.expanded, c.tail, seed += 10);
    const TensorMap feed{{"x", nn::random_tensor(c.x, seed + 7)}};
    expect_direct_sessions_match_reference(m.model(), feed, runtime::nn::pointwise_direct_calls,
                                           runtime::nn::pointwise_direct_available(test_kernel_isa()),
                                           c.direct && direct_loops_take_tail(c.tail));
  }
}

#endif  // PARITY_HAVE_DNNL

}  // namespace
}  // namespace parity::testing
