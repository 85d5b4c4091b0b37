// Reduced-precision plans (runtime/reduced_precision.h): the rounding and quantization helpers
// against core's scalar conversions, a layer's numbers against a hand computation of what fp16,
// bf16 and int8 hardware gives, the oneDNN bf16 convolution against the reference kernels on the
// same rounded operands, per-layer precisions and constraints, and plans that keep all of it.
#include "runtime/reduced_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/float16.h"
#include "support/model_builder.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/test_support.h"

namespace parity {
namespace {

using runtime::Session;
using runtime::SessionOptions;

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return t;
}

float round16(float v) { return detail::half_bits_to_float(detail::float_to_half_bits(v)); }
float round_bf16(float v) { return detail::bfloat16_bits_to_float(detail::float_to_bfloat16_bits(v)); }

TEST(ReducedPrecision, RoundingMatchesCoreConversionsIncludingOverflowAndSubnormals) {
  std::vector<float> values = {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 70000.0f, -1e9f, 6e-8f, 3e-8f, 1e-7f,
                               1.0009765625f, 1.00048828125f, 3.14159f, -2.71828f, INFINITY, -INFINITY};
  std::mt19937 gen(3);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 4000; ++i) {
    float v;
    const uint32_t b = bits(gen);
    std::memcpy(&v, &b, 4);
    if (!std::isnan(v)) values.push_back(v);
  }
  std::vector<float> half = values, bf = values;
  runtime::round_floats_to(DType::kFloat16, half.data(), static_cast<int64_t>(half.size()));
  runtime::round_floats_to(DType::kBFloat16, bf.data(), static_cast<int64_t>(bf.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(half[i]), std::bit_cast<uint32_t>(round16(values[i]))) << values[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(bf[i]), std::bit_cast<uint32_t>(round_bf16(values[i]))) << values[i];
  }
  EXPECT_TRUE(std::isinf(half[5]));  // 70000 overflows float16
  std::vector<float> nan = {NAN};
  runtime::round_floats_to(DType::kBFloat16, nan.data(), 1);
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST(ReducedPrecision, FakeQuantizeRoundsToEvenAndClamps) {
  std::vector<float> v = {0.5f, 1.5f, 2.5f, -0.5f, 300.0f, -300.0f, 0.26f};
  runtime::fake_quantize_int8(v.data(), static_cast<int64_t>(v.size()), 1.0f);
  EXPECT_EQ(v, (std::vector<float>{0.0f, 2.0f, 2.0f, -0.0f, 127.0f, -127.0f, 0.0f}));
  std::vector<float> w = {0.1f, 0.26f};
  runtime::fake_quantize_int8(w.data(), 2, 0.25f);
  EXPECT_FLOAT_EQ(w[0], 0.0f);
  EXPECT_FLOAT_EQ(w[1], 0.25f);
}

/// x[2,32] -> MatMul(W[32,16]) "mm" -> y.
testing::ModelBuilder matmul_model() {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 32}).output("y", DType::kFloat32, {2, 16});
  b.initializer("W", random_tensor({32, 16}, 11));
  b.node("MatMul", {"x", "W"}, {"y"}, "mm");
  return b;
}

Session build(const onnx::ModelProto& model, runtime::ReducedPrecisionConfig config,
              runtime::KernelTier kernels = runtime::KernelTier::kOptimized) {
  SessionOptions options;
  options.reduced_precision = std::move(config);
  options.kernels = kernels;
  return Session::create(model, options).value();
}

/// y = x @ W in double from operands already reduced, then `finish` on each result.
std::vector<double> product(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t k, int64_t n) {
  std::vector<double> y(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) y[i * n + j] += static_cast<double>(x[i * k + p]) * w[p * n + j];
  return y;
}

TEST(ReducedPrecision, Fp16AndBf16LayersComputeOnRoundedOperandsAndRoundTheirOutput) {
  const auto model = matmul_model().model();
  const Tensor x = random_tensor({2, 32}, 5);
  const Tensor w = random_tensor({32, 16}, 11);
  const Tensor fp32 = Session::create(model).value().run({{"x", x}}).at("y");
  for (DType type : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(runtime::precision_name(type));
    runtime::ReducedPrecisionConfig config;
    (type == DType::kFloat16 ? config.fp16 : config.bf16) = true;
    Session session = build(model, config);
    ASSERT_EQ(session.plan().nodes_.at(0).precision, type);
    const Tensor y = session.run({{"x", x}}).at("y");
    auto round = [&](float v) { return type == DType::kFloat16 ? round16(v) : round_bf16(v); };
    std::vector<float> xr(x.values<float>().begin(), x.values<float>().end());
    std::vector<float> wr(w.values<float>().begin(), w.values<float>().end());
    for (float& v : xr) v = round(v);
    for (float& v : wr) v = round(v);
    const std::vector<double> want = product(xr, wr, 2, 32, 16);
    const double ulp = type == DType::kFloat16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    double max_vs_fp32 = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float got = y.data<float>()[i];
      EXPECT_EQ(got, round(got)) << "output " << i << " is not a value of the type";
      EXPECT_NEAR(got, want[i], ulp * std::fabs(want[i]) + 1e-6) << i;
      max_vs_fp32 = std::max(max_vs_fp32, std::fabs(double(got) - fp32.data<float>()[i]));
    }
    EXPECT_GT(max_vs_fp32, 0.0);    // reduced precision is not fp32
    EXPECT_LT(max_vs_fp32, 0.05);   // nor garbage
  }
}

TEST(ReducedPrecision, Int8LayerQuantizesActivationsPerTensorAndWeightsPerChannel) {
  const auto model = matmul_model().model();
  const Tensor x = random_tensor({2, 32}, 5);
  const Tensor w = random_tensor({32, 16}, 11);
  runtime::ReducedPrecisionConfig config;
  config.int8 = true;
  const float x_scale = 1.0f / 127.0f;
  config.int8_scales["x"] = x_scale;
  Session session = build(model, config);
  ASSERT_EQ(session.plan().nodes_.at(0).precision, DType::kInt8);
  const Tensor y = session.run({{"x", x}}).at("y");
  std::vector<float> xq(x.values<float>().begin(), x.values<float>().end());
  runtime::fake_quantize_int8(xq.data(), static_cast<int64_t>(xq.size()), x_scale);
  std::vector<float> wq(w.values<float>().begin(), w.values<float>().end());
  for (int64_t j = 0; j < 16; ++j) {  // per output column
    float amax = 0;
    for (int64_t p = 0; p < 32; ++p) amax = std::max(amax, std::fabs(wq[p * 16 + j]));
    for (int64_t p = 0; p < 32; ++p) runtime::fake_quantize_int8(&wq[p * 16 + j], 1, amax / 127.0f);
  }
  const std::vector<double> want = product(xq, wq, 2, 32, 16);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], want[i], 1e-5) << i;
  // Without a calibrated range for x, the builder keeps the layer in fp32.
  config.int8_scales.clear();
  EXPECT_EQ(build(model, config).plan().nodes_.at(0).precision, DType::kFloat32);
}

/// x[1,8,10,10] -> Conv(3x3, 16, bias) "c1" -> Relu "r1" -> Conv(1x1, 8) "c2" -> Reshape "shape" -> y.
testing::ModelBuilder conv_model() {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 8, 10, 10}).output("y", DType::kFloat32, {1, 800});
  b.initializer("w1", random_tensor({16, 8, 3, 3}, 21, -0.3f, 0.3f));
  b.initializer("b1", random_tensor({16}, 22));
  b.initializer("w2", random_tensor({8, 16, 1, 1}, 23, -0.3f, 0.3f));
  b.initializer("shape", Tensor::from_vector<int64_t>({2}, {1, 800}));
  auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"h1"}, "c1");
  auto* pads = c1.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  b.node("Relu", {"h1"}, {"a1"}, "r1");
  b.node("Conv", {"a1", "w2"}, {"h2"}, "c2");
  b.node("Reshape", {"h2", "shape"}, {"y"}, "reshape");
  return b;
}

TEST(ReducedPrecision, OptimizedBf16ConvolutionAgreesWithReferenceKernelsOnRoundedOperands) {
  const auto model = conv_model().model();
  const Tensor x = random_tensor({1, 8, 10, 10}, 9);
  runtime::ReducedPrecisionConfig config;
  config.bf16 = true;
  Session optimized = build(model, config);
  Session reference = build(model, config, runtime::KernelTier::kReference);
  EXPECT_EQ(optimized.plan().nodes_.at(0).tactic, "optimized:conv_dnnl");
  EXPECT_EQ(reference.plan().nodes_.at(0).tactic, "reference:conv");
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor a = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "the bf16 convolution left oneDNN";
  const Tensor b = reference.run({{"x", x}}).at("y");
  const Tensor fp32 = Session::create(model).value().run({{"x", x}}).at("y");
  double max_diff = 0, max_vs_fp32 = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float u = a.data<float>()[i], v = b.data<float>()[i];
    EXPECT_EQ(u, round_bf16(u));
    // Summation order differs, so a result near a bf16 rounding boundary may land one step apart.
    EXPECT_NEAR(u, v, std::ldexp(std::fabs(v), -7) + 1e-6) << i;
    max_diff = std::max(max_diff, double(std::fabs(u - v)));
    max_vs_fp32 = std::max(max_vs_fp32, double(std::fabs(u - fp32.data<float>()[i])));
  }
  EXPECT_GT(max_vs_fp32, 0.0);
  EXPECT_LT(max_vs_fp32, 0.1);
}

TEST(ReducedPrecision, Bf16ValuesStoredBetweenNativeConvolutionsAreInvisibleToObservers) {
  // c1 (+ fused Relu) feeds only c2: a native bf16 pair hands a1 over as a bf16 tensor
  // (runtime/reduced_storage.h). Asking for a1 runs the unfused plan, where it is fp32.
  const auto model = conv_model().model();
  const Tensor x = random_tensor({1, 8, 10, 10}, 9);
  runtime::ReducedPrecisionConfig config;
  config.bf16 = true;
  Session session = build(model, config);
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor y = session.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "a bf16 source left oneDNN";
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  runtime::RunOptions observe;
  observe.outputs = {"a1", "y"};
  const TensorMap seen = session.run({{"x", x}}, observe);
  ASSERT_EQ(seen.at("a1").dtype(), DType::kFloat32);
  for (float v : seen.at("a1").values<float>()) ASSERT_EQ(v, round_bf16(v));
}

TEST(ReducedPrecision, OptimizedBf16MatMulAndGemmAgreeWithReferenceKernelsOnRoundedOperands) {
  testing::ModelBuilder builder;
  builder.input("x", DType::kFloat32, {16, 32}).output("y", DType::kFloat32, {16, 8});
  builder.initializer("W", random_tensor({32, 24}, 31));
  builder.initializer("G", random_tensor({8, 24}, 32));
  builder.initializer("c", random_tensor({8}, 33));
  builder.node("MatMul", {"x", "W"}, {"h"}, "mm");
  testing::add_int_attr(builder.node("Gemm", {"h", "G", "c"}, {"y"}, "gemm"), "transB", 1);
  const auto model = builder.model();
  const Tensor x = random_tensor({16, 32}, 34);
  runtime::ReducedPrecisionConfig config;
  config.bf16 = true;
  Session optimized = build(model, config);
  Session reference = build(model, config, runtime::KernelTier::kReference);
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor a = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "the bf16 product left oneDNN";
  const Tensor b = reference.run({{"x", x}}).at("y");
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float u = a.data<float>()[i], v = b.data<float>()[i];
    EXPECT_EQ(u, round_bf16(u));
    EXPECT_NEAR(u, v, std::ldexp(std::fabs(v), -7) + 1e-5) << i;
  }
}

TEST(ReducedPrecision, LayerPrecisionsAndConstraints) {
  const auto model = conv_model().model();
  runtime::ReducedPrecisionConfig config;
  config.fp16 = true;
  config.layer_precisions["c2"] = DType::kFloat32;
  Session session = build(model, config);
  std::map<std::string, DType> by_name;
  for (const auto& node : session.plan().nodes_) by_name[node.kernel_spec.name] = node.precision;
  EXPECT_EQ(by_name.at("c1"), DType::kFloat16);  // with its Relu fused
  EXPECT_EQ(by_name.at("c2"), DType::kFloat32);
  EXPECT_EQ(by_name.at("reshape"), DType::kFloat32);  // data movement keeps its input's values
  // none: the per-layer request is ignored.
  config.constraints = runtime::PrecisionConstraints::kNone;
  const Session unconstrained = build(model, config);  // named: a temporary would die before the loop
  for (const auto& node : unconstrained.plan().nodes_) {
    if (node.kernel_spec.name == "c2") {
      EXPECT_EQ(node.precision, DType::kFloat16);
    }
  }
  // A data-movement layer cannot run in fp16: prefer falls back, obey refuses with one line.
  config.layer_precisions = {{"reshape", DType::kFloat16}};
  config.constraints = runtime::PrecisionConstraints::kPrefer;
  EXPECT_TRUE(Session::create(model, SessionOptions{.reduced_precision = config}).is_ok());
  config.constraints = runtime::PrecisionConstraints::kObey;
  auto refused = Session::create(model, SessionOptions{.reduced_precision = config});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.error().what()).find("layer 'reshape' (Reshape) cannot run in fp16"), std::string::npos)
      << std::string(refused.error().what());
  // int8 requested without a calibrated range.
  config.layer_precisions = {{"c1", DType::kInt8}};
  refused = Session::create(model, SessionOptions{.reduced_precision = config});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.error().what()).find("no calibrated range"), std::string::npos);
}

TEST(ReducedPrecision, PlansKeepLayerPrecisionsAndReloadBitIdentically) {
  const auto model = conv_model().model();
  const Tensor x = random_tensor({1, 8, 10, 10}, 9);
  testing::TempDir dir;
  for (int variant = 0; variant < 3; ++variant) {
    runtime::ReducedPrecisionConfig config;
    if (variant == 0) config.fp16 = true;
    if (variant == 1) config.bf16 = true;
    if (variant == 2) {
      config.int8 = true;
      config.fp16 = true;
      config.int8_scales = {{"x", 1.0f / 127}, {"a1", 0.02f}};
    }
    Session built = build(model, config);
    runtime::plan::save_plan(built, dir / "p.plan", "conv.onnx");
    Session loaded = runtime::plan::load_plan(dir / "p.plan").value();
    ASSERT_EQ(loaded.plan().nodes_.size(), built.plan().nodes_.size());
    for (size_t i = 0; i < built.plan().nodes_.size(); ++i)
      EXPECT_EQ(loaded.plan().nodes_[i].precision, built.plan().nodes_[i].precision) << i;
    const Tensor want = built.run({{"x", x}}).at("y");
    const Tensor got = loaded.run({{"x", x}}).at("y");
    EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes())) << "variant " << variant;
    const auto summary = runtime::plan::summarize_plan(dir / "p.plan");
    ASSERT_FALSE(summary.layers.empty());
    const std::string first = variant == 0 ? "fp16" : variant == 1 ? "bf16" : "int8";
    EXPECT_EQ(summary.layers.front().precision, first);
  }
}

}  // namespace
}  // namespace parity
