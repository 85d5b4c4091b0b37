// Convolutions of a 1x1 kernel on 1x1 maps (MobileNetV3's squeeze-excitation layers) run the
// direct small-product loop (runtime/ops/math/matmul_fast.h) instead of oneDNN, with the bias and
// the fused tails applied by loops: checked against the reference kernels over odd channel
// counts, batch 2, 1 and 2 threads, every tail kind, and the cases that must stay on oneDNN.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/math/matmul_fast.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn/swish_fast.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "support/test_support.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

using nn::random_tensor;

struct Outcome {
  Tensor y;
  uint64_t direct_runs = 0;  // products that took the direct loop
};

Outcome run_session(const onnx::ModelProto& model, const TensorMap& feed, int threads) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = threads;
  const uint64_t before = runtime::ops::small_gemm::runs();
  Outcome out;
  out.y = runtime::Session::create(model, options).value().run(feed).at("y");
  out.direct_runs = runtime::ops::small_gemm::runs() - before;
  return out;
}

Tensor reference_output(const onnx::ModelProto& model, const TensorMap& feed) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.kernels = runtime::KernelTier::kReference;
  return runtime::Session::create(model, options).value().run(feed).at("y");
}

/// Runs `model` at 1 and 2 threads: each run's y matches the reference kernels and took
/// `direct_per_run` direct products (at least; 2 threads may split one into slices).
void expect_matches_reference(const onnx::ModelProto& model, const TensorMap& feed, uint64_t direct_per_run) {
  const Tensor want = reference_output(model, feed);
  for (int threads : {1, 2}) {
    const Outcome got = run_session(model, feed, threads);
    if (direct_per_run == 0) EXPECT_EQ(got.direct_runs, 0u) << threads << " threads";
    else EXPECT_GE(got.direct_runs, direct_per_run) << threads << " threads";
    EXPECT_TRUE(tensors_close(got.y, want, 2e-4, 2e-4)) << threads << " threads";
  }
}

/// Conv weights scaled by 1/sqrt(fan-in), as trained layers are, so that outputs stay near 1 and
/// HardSigmoid does not saturate (a saturated gate would hide a wrong bias).
Tensor conv_weights(const Shape& shape, uint32_t seed) {
  Tensor w = random_tensor(shape, seed);
  const float scale = 1.f / std::sqrt(static_cast<float>(w.numel() / shape[0]));
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] *= scale;
  return w;
}

/// A squeeze-excitation block: x -> Conv(kxk, pads) -> GlobalAveragePool -> Conv(1x1) -> Relu
///   -> Conv(1x1) -> HardSigmoid -> Mul(conv output, gate) -> y. The pool reads the first conv's
/// channels-last output; the gate multiplies it back.
ModelBuilder squeeze_excitation(int64_t batch, int64_t channels, int64_t squeezed, int64_t size, uint32_t seed) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {batch, channels, size, size});
  m.initializer("w0", conv_weights({channels, channels, 3, 3}, seed));
  m.initializer("w1", conv_weights({squeezed, channels, 1, 1}, seed + 1));
  m.initializer("b1", random_tensor({squeezed}, seed + 2));
  m.initializer("w2", conv_weights({channels, squeezed, 1, 1}, seed + 3));
  m.initializer("b2", random_tensor({channels}, seed + 4));
  add_ints_attr(m.node("Conv", {"x", "w0"}, {"features"}, "conv"), "pads", {1, 1, 1, 1});
  m.node("GlobalAveragePool", {"features"}, {"pooled"}, "pool");
  m.node("Conv", {"pooled", "w1", "b1"}, {"c1"}, "reduce");
  m.node("Relu", {"c1"}, {"r1"}, "relu");
  m.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "expand");
  m.node("HardSigmoid", {"c2"}, {"gate"}, "gate");
  m.node("Mul", {"features", "gate"}, {"y"}, "scale");
  m.output("y", DType::kFloat32, {batch, channels, size, size});
  return m;
}

TEST(ConvPointProduct, SqueezeExcitationBlocksMatchReference) {
  struct Case {
    int64_t batch, channels, squeezed, size;
  };
  // Odd channel counts (vector remainders), batch 2, and 512 -> 160 (82K weights: split between
  // threads).
  for (const Case c : {Case{1, 37, 9, 5}, Case{2, 24, 8, 3}, Case{1, 512, 160, 2}, Case{2, 72, 19, 4}}) {
    SCOPED_TRACE("batch=" + std::to_string(c.batch) + " channels=" + std::to_string(c.channels));
    const ModelBuilder m = squeeze_excitation(c.batch, c.channels, c.squeezed, c.size, 800);
    const TensorMap feed{{"x", random_tensor({c.batch, c.channels, c.size, c.size}, 801)}};
    expect_matches_reference(m.model(), feed, 2);
  }
}

/// One 1x1 conv on a [batch, 13, 1, 1] input followed by `tails`: "Residual" adds the run-time
/// input r, "PerChannel" multiplies by a [1, 11, 1, 1] constant, "Scale" and "Shift" are scalar
/// Mul and Sub, the others are activations.
ModelBuilder conv_with_tails(int64_t batch, const std::vector<std::string>& tails, bool bias, uint32_t seed) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {batch, 13, 1, 1});
  m.input("r", DType::kFloat32, {batch, 11, 1, 1});
  m.initializer("w", random_tensor({11, 13, 1, 1}, seed));
  m.initializer("b", random_tensor({11}, seed + 1));
  m.initializer("per_channel", random_tensor({1, 11, 1, 1}, seed + 2));
  m.initializer("three", Tensor::scalar<float>(3.f));
  m.initializer("lo", Tensor::scalar<float>(-0.5f)).initializer("hi", Tensor::scalar<float>(0.75f));
  if (bias) m.node("Conv", {"x", "w", "b"}, {"t0"});
  else m.node("Conv", {"x", "w"}, {"t0"});
  std::string last = "t0";
  for (size_t i = 0; i < tails.size(); ++i) {
    const std::string out = "t" + std::to_string(i + 1);
    if (tails[i] == "Residual") m.node("Add", {"r", last}, {out});
    else if (tails[i] == "PerChannel") m.node("Mul", {last, "per_channel"}, {out});
    else if (tails[i] == "Scale") m.node("Mul", {last, "three"}, {out});
    else if (tails[i] == "Shift") m.node("Sub", {last, "three"}, {out});
    else if (tails[i] == "Clip") m.node("Clip", {last, "lo", "hi"}, {out});
    else m.node(tails[i], {last}, {out});
    last = out;
  }
  m.node("Identity", {last}, {"y"});
  m.output("y", DType::kFloat32, {batch, 11, 1, 1});
  return m;
}

TEST(ConvPointProduct, FusedTailsRunInTheDirectLoop) {
  const std::vector<std::vector<std::string>> chains = {
      {"Relu"},      {"HardSigmoid"},           {"HardSwish"},       {"Sigmoid", "Scale"}, {"Tanh", "Shift"},
      {"LeakyRelu"}, {"Residual", "Clip"},      {"PerChannel", "Relu"}, {"Scale", "Shift", "HardSwish"}, {}};
  uint32_t seed = 820;
  for (int64_t batch : {1, 2})
    for (const auto& tails : chains) {
      SCOPED_TRACE("batch=" + std::to_string(batch) + " tails=" + std::to_string(tails.size()) +
                   (tails.empty() ? "" : " first=" + tails[0]));
      const ModelBuilder m = conv_with_tails(batch, tails, seed % 2 == 0, seed);
      const TensorMap feed{{"x", random_tensor({batch, 13, 1, 1}, seed + 5)},
                           {"r", random_tensor({batch, 11, 1, 1}, seed + 6)}};
      expect_matches_reference(m.model(), feed, 1);
      seed += 7;
    }
}

/// EfficientNet's squeeze-excitation reduce layer: Conv 1x1 on a 1x1 map -> SiLU (Sigmoid + Mul,
/// which the planner runs as one Swish): the Swish is one of the loop's tails (swish_fast.h) where
/// its vector loop runs (AVX-512); elsewhere oneDNN's post-op is faster and the layer stays there.
TEST(ConvPointProduct, SwishTailRunsInTheDirectLoop) {
  for (int64_t batch : {1, 2})
    for (bool residual_first : {false, true}) {
      SCOPED_TRACE("batch=" + std::to_string(batch) + " residual first=" + std::to_string(residual_first));
      ModelBuilder m(14);
      m.input("x", DType::kFloat32, {batch, 13, 1, 1});
      m.input("r", DType::kFloat32, {batch, 11, 1, 1});
      m.initializer("w", random_tensor({11, 13, 1, 1}, 880)).initializer("b", random_tensor({11}, 881));
      m.node("Conv", {"x", "w", "b"}, {"c"});
      std::string in = "c";
      if (residual_first) {
        m.node("Add", {"c", "r"}, {"a"});
        in = "a";
      }
      m.node("Sigmoid", {in}, {"s"});
      m.node("Mul", {in, "s"}, {"y"});
      m.output("y", DType::kFloat32, {batch, 11, 1, 1});
      const TensorMap feed{{"x", random_tensor({batch, 13, 1, 1}, 882)}, {"r", random_tensor({batch, 11, 1, 1}, 883)}};
      expect_matches_reference(m.model(), feed, runtime::nn::fast_swish_available(test_kernel_isa()) ? 1 : 0);
    }
}

TEST(ConvPointProduct, OtherConvolutionsStayOnOneDnn) {
  // A tail the loops do not implement.
  {
    const ModelBuilder m = conv_with_tails(1, {"Elu"}, true, 860);
    const TensorMap feed{{"x", random_tensor({1, 13, 1, 1}, 861)}, {"r", random_tensor({1, 11, 1, 1}, 862)}};
    expect_matches_reference(m.model(), feed, 0);
  }
  // More images than the direct path's rows.
  {
    const int64_t batch = runtime::ops::small_gemm::kMaxRows + 1;
    const ModelBuilder m = conv_with_tails(batch, {"Relu"}, true, 863);
    const TensorMap feed{{"x", random_tensor({batch, 13, 1, 1}, 864)},
                         {"r", random_tensor({batch, 11, 1, 1}, 865)}};
    expect_matches_reference(m.model(), feed, 0);
  }
  // Padding: a 1x1 map grows to 3x3 whose border reads only padding.
  {
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, {1, 13, 1, 1});
    m.initializer("w", random_tensor({11, 13, 1, 1}, 866)).initializer("b", random_tensor({11}, 867));
    add_ints_attr(m.node("Conv", {"x", "w", "b"}, {"y"}), "pads", {1, 1, 1, 1});
    m.output("y", DType::kFloat32, {1, 11, 3, 3});
    expect_matches_reference(m.model(), TensorMap{{"x", random_tensor({1, 13, 1, 1}, 868)}}, 0);
  }
  // Groups, and a 1x1 kernel over a larger map.
  {
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, {1, 12, 1, 1});
    m.initializer("w", random_tensor({12, 4, 1, 1}, 869));
    add_int_attr(m.node("Conv", {"x", "w"}, {"y"}), "group", 3);
    m.output("y", DType::kFloat32, {1, 12, 1, 1});
    expect_matches_reference(m.model(), TensorMap{{"x", random_tensor({1, 12, 1, 1}, 870)}}, 0);
  }
  {
    ModelBuilder wide(14);
    wide.input("x", DType::kFloat32, {1, 13, 2, 3});
    wide.initializer("w", random_tensor({11, 13, 1, 1}, 872));
    wide.node("Conv", {"x", "w"}, {"y"});
    wide.output("y", DType::kFloat32, {1, 11, 2, 3});
    expect_matches_reference(wide.model(), TensorMap{{"x", random_tensor({1, 13, 2, 3}, 873)}}, 0);
  }
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
