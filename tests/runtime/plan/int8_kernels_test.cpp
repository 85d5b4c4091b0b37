// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html, onnx__ConvTranspose.html, onnx__MatMul.html, onnx__Gemm.html,
//       onnx__QLinearConv.html, onnx__QLinearMatMul.html,
//       onnx__MatMulInteger.html, onnx__ConvInteger.html
// int8 layers of a plan on oneDNN's int8 kernels (runtime/reduced_precision.h, NativeInt8Kernel)
// against the reference kernels on the same fake-quantized operands (the oracle): random and
// edge shapes (groups, depthwise, strides, padding, 1x1, batch), saturation beyond the
// calibrated range, per-channel weight scales that differ by orders of magnitude, fused tails,
// and plans that save and reload the int8 layers bit-identically; QLinearConv and QLinearMatMul
// on oneDNN bit for bit against their reference kernels; QDQ convolutions and products of int8
// plans fused into them. On a CPU without VNNI oneDNN's int8 sums saturate, so the same tests check
// that every layer takes the exact fallback instead (CTest also runs them so, under
// ONEDNN_MAX_CPU_ISA=AVX2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <tuple>
#include <type_traits>

#include "support/model_builder.h"
#include "runtime/dnnl/int8_inputs.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/quantization/int8_gemm.h"
#include "runtime/plan/plan_file.h"
#include "runtime/reduced_precision.h"
#include "runtime/reduced_storage.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/test_support.h"

namespace parity {
namespace {

using runtime::Session;

/// Whether int8 layers and nodes run on oneDNN's int8 kernels here (runtime/dnnl/int8_inputs.h):
/// elsewhere they take the exact fallbacks, which these tests then check instead.
bool native_int8_here() { return runtime::dnnl_support::int8_sums_exactly(); }

/// Whether int8 MatMul/Gemm layers with constant weights run natively here: on oneDNN where it
/// sums exactly, else on parity's exact s8 x s8 kernel from AVX2 up (ops/quantization/int8_gemm.h).
bool native_int8_products_here() {
  return native_int8_here() || runtime::ops::int8_gemm::pays_on(runtime::min_isa(runtime::cpu_kernel_isa(), testing::test_kernel_isa()));
}

/// Whether an int8 1x1 convolution (stride 1, no padding, group 1) of a signed source runs
/// parity's s8 x s8 product here (ops/nn/conv_int8_pointwise.h): where oneDNN's int8 sums are not
/// exact, from the tier the kernel pays on.
bool pointwise_s8s8_here() {
  return !native_int8_here() &&
         runtime::ops::int8_gemm::pays_on(runtime::min_isa(runtime::cpu_kernel_isa(), testing::test_kernel_isa()));
}

/// An int8 ONNX node's tactic: `optimized` where oneDNN sums exactly, else a reference kernel.
void expect_int8_node_tactic(const std::string& tactic, const std::string& optimized) {
  if (native_int8_here()) EXPECT_EQ(tactic, optimized);
  else EXPECT_EQ(tactic.rfind("reference:", 0), 0u) << tactic;
}

/// oneDNN fast-path runs that `runs` int8 node runs add here.
uint64_t expected_fast_runs(uint64_t runs) { return native_int8_here() ? runs : 0; }

Tensor uniform(const Shape& shape, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return t;
}

using testing::add_ints_attr;
struct ConvCase {
  std::string name;
  Shape x;                  // N, C, H, W
  int64_t out_channels = 8;
  int64_t kernel = 3;
  int64_t group = 1;
  int64_t stride = 1;
  int64_t pad = 1;
  bool bias = true;
  bool relu = false;        // a fused Relu tail
  bool residual = false;    // a fused residual Add (needs the output shape of x)
  float x_range = 1.0f;     // the calibrated |max| of x; inputs reach 1.5x that (saturation)
  bool wide_channel_scales = false;  // output channels' weights differ by up to 1000x
  bool zero_channel = false;         // output channel 1's weights are all zero (pruned): bias only
};

/// x -> Conv "conv" [-> Relu] [-> Add(x)] -> y, with seeded weights.
onnx::ModelProto conv_case_model(const ConvCase& c) {
  testing::ModelBuilder b;
  auto out_size = [&](int64_t in) { return (in + 2 * c.pad - c.kernel) / c.stride + 1; };
  b.input("x", DType::kFloat32, c.x).output("y", DType::kFloat32, {c.x[0], c.out_channels, out_size(c.x[2]), out_size(c.x[3])});
  const Shape w_shape{c.out_channels, c.x[1] / c.group, c.kernel, c.kernel};
  Tensor w = uniform(w_shape, 101, -0.5f, 0.5f);
  if (c.wide_channel_scales) {
    const int64_t per_channel = w.numel() / c.out_channels;
    for (int64_t o = 0; o < c.out_channels; ++o)
      for (int64_t k = 0; k < per_channel; ++k) w.data<float>()[o * per_channel + k] *= std::pow(10.0f, float(o % 4) - 2);
  }
  if (c.zero_channel) {
    const int64_t per_channel = w.numel() / c.out_channels;
    std::fill(w.data<float>() + per_channel, w.data<float>() + 2 * per_channel, 0.0f);
  }
  b.initializer("w", w);
  if (c.bias) b.initializer("b", uniform({c.out_channels}, 102, -1.0f, 1.0f));
  std::string out = c.relu || c.residual ? "h" : "y";
  auto& conv = c.bias ? b.node("Conv", {"x", "w", "b"}, {out}, "conv") : b.node("Conv", {"x", "w"}, {out}, "conv");
  add_ints_attr(conv, "pads", {c.pad, c.pad, c.pad, c.pad});
  add_ints_attr(conv, "strides", {c.stride, c.stride});
  testing::add_int_attr(conv, "group", c.group);
  if (c.relu) {
    const std::string next = c.residual ? "r" : "y";
    b.node("Relu", {out}, {next}, "relu");
    out = next;
  }
  if (c.residual) b.node("Add", {out, "x"}, {"y"}, "add");
  return b.model();
}

Session build(const onnx::ModelProto& model, const std::map<std::string, float>& scales, runtime::KernelTier kernels) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.reduced_precision.int8 = true;
  options.reduced_precision.int8_scales = scales;
  options.kernels = kernels;
  return Session::create(model, options).value();
}

/// The int8 layer's output against the reference kernels': the reference sums the fake-quantized
/// products in fp32, oneDNN the integers in int32, so they differ by the fp32 rounding of a sum
/// (relative to the sum of the products' magnitudes, bounded here by `bound`).
void expect_int8_matches_reference(const ConvCase& c) {
  SCOPED_TRACE(c.name);
  const auto model = conv_case_model(c);
  const std::map<std::string, float> scales = {{"x", c.x_range / 127.0f}};
  Session optimized = build(model, scales, runtime::KernelTier::kOptimized);
  Session reference = build(model, scales, runtime::KernelTier::kReference);
  const auto& node = optimized.plan().nodes_.at(0);
  ASSERT_EQ(node.precision, DType::kInt8);
  EXPECT_EQ(node.tactic, "optimized:conv_dnnl");
  const bool pointwise = c.kernel == 1 && c.stride == 1 && c.pad == 0 && c.group == 1 && pointwise_s8s8_here();
  EXPECT_EQ(runtime::runs_native_int8(*node.kernel), native_int8_here() || pointwise) << "the conv's int8 path";
  EXPECT_EQ(runtime::int8_engine(*node.kernel), pointwise ? "parity s8s8 avx2" : "");
  EXPECT_FALSE(runtime::runs_native_int8(*reference.plan().nodes_.at(0).kernel));
  const Tensor x = uniform(c.x, 7, -1.5f * c.x_range, 1.5f * c.x_range);
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor a = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "the int8 conv left oneDNN";
  const Tensor want = reference.run({{"x", x}}).at("y");
  ASSERT_EQ(a.shape(), want.shape());
  double max_abs = 0;
  for (float v : want.values<float>()) max_abs = std::max(max_abs, double(std::fabs(v)));
  ASSERT_GT(max_abs, 0.0);
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = std::fabs(double(a.data<float>()[i]) - want.data<float>()[i]);
    worst = std::max(worst, d);
    ASSERT_LE(d, 2e-5 * max_abs + 1e-6) << "element " << i << ": " << a.data<float>()[i] << " vs "
                                        << want.data<float>()[i];
  }
  // And it is int8 arithmetic, not fp32: against the unquantized fp32 model it differs.
  const Tensor fp32 = Session::create(model).value().run({{"x", x}}).at("y");
  double vs_fp32 = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    vs_fp32 = std::max(vs_fp32, double(std::fabs(a.data<float>()[i] - fp32.data<float>()[i])));
  EXPECT_GT(vs_fp32, 10 * worst + 1e-6);
}

TEST(Int8Kernels, ConvAgreesWithReferenceOnFakeQuantizedOperands) {
  const std::vector<ConvCase> cases = {
      {.name = "3x3 pad 1 bias", .x = {1, 16, 12, 12}, .out_channels = 32},
      {.name = "1x1 no bias batch 3", .x = {3, 24, 7, 9}, .out_channels = 40, .kernel = 1, .pad = 0, .bias = false},
      {.name = "stride 2 odd size", .x = {2, 8, 13, 11}, .out_channels = 16, .stride = 2},
      {.name = "depthwise", .x = {1, 32, 10, 10}, .out_channels = 32, .group = 32},
      {.name = "grouped", .x = {1, 16, 9, 9}, .out_channels = 24, .group = 4},
      {.name = "5x5 pad 2, few channels", .x = {1, 3, 17, 17}, .out_channels = 5, .kernel = 5, .pad = 2},
      {.name = "fused relu + residual", .x = {1, 16, 10, 10}, .out_channels = 16, .relu = true, .residual = true},
      {.name = "saturation: small range", .x = {1, 8, 8, 8}, .out_channels = 8, .x_range = 0.05f},
      {.name = "per-channel scales 1e-2..10", .x = {1, 16, 8, 8}, .out_channels = 12, .wide_channel_scales = true},
      {.name = "large rows split over threads", .x = {1, 32, 64, 64}, .out_channels = 64, .relu = true},
      {.name = "a pruned channel keeps its bias", .x = {1, 8, 6, 6}, .out_channels = 4, .zero_channel = true},
  };
  for (const ConvCase& c : cases) expect_int8_matches_reference(c);
}

/// Compares `model`'s int8 plan on the optimized kernels with the reference kernels on `x`
/// (input "x", output "y"); `layer` is the node that must run int8 natively.
void expect_products_match(const onnx::ModelProto& model, const Tensor& x, float x_range, size_t layer) {
  const std::map<std::string, float> scales = {{"x", x_range / 127.0f}};
  Session optimized = build(model, scales, runtime::KernelTier::kOptimized);
  Session reference = build(model, scales, runtime::KernelTier::kReference);
  const auto& node = optimized.plan().nodes_.at(layer);
  ASSERT_EQ(node.precision, DType::kInt8);
  const bool product = node.spec.op_type == "MatMul" || node.spec.op_type == "Gemm";
  const bool parity_kernel = product && !native_int8_here() && native_int8_products_here();
  EXPECT_EQ(runtime::runs_native_int8(*node.kernel), product ? native_int8_products_here() : native_int8_here())
      << node.spec.op_type << "'s int8 path";
  EXPECT_EQ(runtime::int8_engine(*node.kernel), parity_kernel ? "parity s8s8 avx2" : "") << node.spec.op_type;
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor a = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "the int8 product left oneDNN";
  const Tensor want = reference.run({{"x", x}}).at("y");
  ASSERT_EQ(a.shape(), want.shape());
  double max_abs = 0;
  for (float v : want.values<float>()) max_abs = std::max(max_abs, double(std::fabs(v)));
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.data<float>()[i], want.data<float>()[i], 2e-5 * max_abs + 1e-6) << "element " << i;
}

TEST(Int8Kernels, MatMulAndGemmAgreeWithReferenceOnFakeQuantizedOperands) {
  {
    SCOPED_TRACE("MatMul [2,5,48] x [48,40] + bias Add + Relu");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {2, 5, 48}).output("y", DType::kFloat32, {2, 5, 40});
    Tensor w = uniform({48, 40}, 61, -0.5f, 0.5f);
    for (int64_t k = 0; k < 48; ++k)  // per-column ranges from 1e-2 to 10
      for (int64_t j = 0; j < 40; ++j) w.data<float>()[k * 40 + j] *= std::pow(10.0f, float(j % 4) - 2);
    b.initializer("W", w).initializer("bias", uniform({40}, 62, -1, 1));
    b.node("MatMul", {"x", "W"}, {"h"}, "mm");
    b.node("Add", {"h", "bias"}, {"r"}, "add");
    b.node("Relu", {"r"}, {"y"}, "relu");
    expect_products_match(b.model(), uniform({2, 5, 48}, 63, -1.5f, 1.5f), 1.0f, 0);
  }
  {
    SCOPED_TRACE("MatMul 2-D, 300 rows split over threads, saturating source");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {300, 64}).output("y", DType::kFloat32, {300, 96});
    b.initializer("W", uniform({64, 96}, 64, -1, 1));
    b.node("MatMul", {"x", "W"}, {"y"}, "mm");
    expect_products_match(b.model(), uniform({300, 64}, 65, -2, 2), 0.5f, 0);
  }
  {
    SCOPED_TRACE("Gemm transB (nn.Linear) with C, alpha and beta");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {7, 33}).output("y", DType::kFloat32, {7, 20});
    b.initializer("W", uniform({20, 33}, 66, -1, 1)).initializer("C", uniform({20}, 67, -1, 1));
    auto& gemm = b.node("Gemm", {"x", "W", "C"}, {"y"}, "gemm");
    testing::add_int_attr(gemm, "transB", 1);
    auto* alpha = gemm.add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.75f);
    auto* beta = gemm.add_attribute();
    beta->set_name("beta");
    beta->set_type(onnx::AttributeProto::FLOAT);
    beta->set_f(2.0f);
    expect_products_match(b.model(), uniform({7, 33}, 68, -1, 1), 1.0f, 0);
  }
  {
    SCOPED_TRACE("MatMul [1,1,512] x [512,1000] + bias, signed source (a decoder step's head)");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {1, 1, 512}).output("y", DType::kFloat32, {1, 1, 1000});
    b.initializer("W", uniform({512, 1000}, 72, -0.2f, 0.2f)).initializer("bias", uniform({1000}, 73, -1, 1));
    b.node("MatMul", {"x", "W"}, {"h"}, "mm");
    b.node("Add", {"h", "bias"}, {"y"}, "add");
    expect_products_match(b.model(), uniform({1, 1, 512}, 74, -2, 2), 2.0f, 0);
  }
  {
    SCOPED_TRACE("MatMul [1,67,257] x [257,35] * scalar -> Tanh (odd K, tails of rows and columns)");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {1, 67, 257}).output("y", DType::kFloat32, {1, 67, 35});
    b.initializer("W", uniform({257, 35}, 75, -0.3f, 0.3f)).initializer("s", Tensor::from_vector<float>({}, {0.125f}));
    b.node("MatMul", {"x", "W"}, {"h"}, "mm");
    b.node("Mul", {"h", "s"}, {"t"}, "scale");
    b.node("Tanh", {"t"}, {"y"}, "tanh");
    expect_products_match(b.model(), uniform({1, 67, 257}, 76, -1, 1), 1.0f, 0);
  }
  {
    SCOPED_TRACE("MatMul [1,40,64] x [64,96] + bias -> Gelu (a transformer's MLP, the GELU fused)");
    testing::ModelBuilder b(20);
    b.input("x", DType::kFloat32, {1, 40, 64}).output("y", DType::kFloat32, {1, 40, 96});
    b.initializer("W", uniform({64, 96}, 77, -0.3f, 0.3f)).initializer("bias", uniform({96}, 78, -1, 1));
    b.node("MatMul", {"x", "W"}, {"h"}, "mm");
    b.node("Add", {"h", "bias"}, {"g"}, "add");
    b.node("Gelu", {"g"}, {"y"}, "gelu");
    expect_products_match(b.model(), uniform({1, 40, 64}, 79, -1, 1), 1.0f, 0);
  }
  {
    SCOPED_TRACE("Gemm [1,1280] x [1280,100] (a classifier at batch 1)");
    testing::ModelBuilder b;
    b.input("x", DType::kFloat32, {1, 1280}).output("y", DType::kFloat32, {1, 100});
    Tensor w = uniform({1280, 100}, 69, -0.1f, 0.1f);
    for (int64_t k = 0; k < 1280; ++k) w.data<float>()[k * 100 + 3] = 0.0f;  // a pruned column keeps its bias
    b.initializer("W", w).initializer("C", uniform({1, 100}, 70, -1, 1));
    b.node("Gemm", {"x", "W", "C"}, {"y"}, "gemm");
    expect_products_match(b.model(), uniform({1, 1280}, 71, 0, 3), 3.0f, 0);
  }
}

template <typename Q>
Tensor random_quantized(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  Tensor t(std::is_same_v<Q, uint8_t> ? DType::kUInt8 : DType::kInt8, shape);
  for (Q& v : t.values<Q>()) v = static_cast<Q>(dist(gen));
  return t;
}

struct QConvCase {
  std::string name;
  Shape x;
  int64_t out_channels = 8, kernel = 3, group = 1, stride = 1, pad = 1;
  bool uint8_input = true, uint8_output = true, bias = true, per_channel = true;
  float x_zero_point = 128, y_zero_point = 120;
};

/// QLinearConv with constant weights, scales and zero points: the optimized kernel must equal
/// the reference bit for bit (it shares the requantization; oneDNN computes the exact integers).
void expect_qlinear_conv_matches_reference(const QConvCase& c) {
  SCOPED_TRACE(c.name);
  testing::ModelBuilder b(13);
  const DType x_type = c.uint8_input ? DType::kUInt8 : DType::kInt8;
  const DType y_type = c.uint8_output ? DType::kUInt8 : DType::kInt8;
  b.input("x", x_type, c.x).output("y", y_type, {});
  const Shape w_shape{c.out_channels, c.x[1] / c.group, c.kernel, c.kernel};
  b.initializer("x_scale", Tensor::from_vector<float>({}, {0.02f}));
  b.initializer("x_zp", c.uint8_input ? Tensor::from_vector<uint8_t>({}, {static_cast<uint8_t>(c.x_zero_point)})
                                      : Tensor::from_vector<int8_t>({}, {static_cast<int8_t>(c.x_zero_point)}));
  b.initializer("w", random_quantized<int8_t>(w_shape, 81));
  std::vector<float> w_scales;
  for (int64_t o = 0; o < (c.per_channel ? c.out_channels : 1); ++o) w_scales.push_back(0.001f * float(1 + o % 5));
  b.initializer("w_scale", Tensor::from_vector<float>({static_cast<int64_t>(w_scales.size())}, w_scales));
  b.initializer("w_zp", Tensor::from_vector<int8_t>({}, {0}));
  b.initializer("y_scale", Tensor::from_vector<float>({}, {0.05f}));
  b.initializer("y_zp", c.uint8_output ? Tensor::from_vector<uint8_t>({}, {static_cast<uint8_t>(c.y_zero_point)})
                                       : Tensor::from_vector<int8_t>({}, {static_cast<int8_t>(c.y_zero_point)}));
  std::vector<int32_t> bias(c.out_channels);
  for (int64_t o = 0; o < c.out_channels; ++o) bias[o] = static_cast<int32_t>(o * 997 % 4001) - 2000;
  b.initializer("bias", Tensor::from_vector<int32_t>({c.out_channels}, bias));
  auto& node = c.bias ? b.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
                               {"y"}, "qconv")
                      : b.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"},
                               {"y"}, "qconv");
  add_ints_attr(node, "pads", {c.pad, c.pad, c.pad, c.pad});
  add_ints_attr(node, "strides", {c.stride, c.stride});
  testing::add_int_attr(node, "group", c.group);
  const auto model = b.model();
  runtime::SessionOptions optimized_options, reference_options;
  reference_options.kernels = runtime::KernelTier::kReference;
  Session optimized = Session::create(model, optimized_options).value();
  Session reference = Session::create(model, reference_options).value();
  expect_int8_node_tactic(optimized.plan().nodes_.at(0).tactic, "optimized:quantized_conv_dnnl");
  const Tensor x = c.uint8_input ? random_quantized<uint8_t>(c.x, 82) : random_quantized<int8_t>(c.x, 82);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const Tensor got = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before + expected_fast_runs(1)) << "the QLinearConv's kernel";
  const Tensor want = reference.run({{"x", x}}).at("y");
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  int64_t saturated = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double w = want.value_as_double(i);
    saturated += w == (c.uint8_output ? 0 : -128) || w == (c.uint8_output ? 255 : 127);
    ASSERT_EQ(got.value_as_double(i), w) << "element " << i;
  }
  EXPECT_LT(saturated, got.numel());  // not everything clamped
}

TEST(Int8Kernels, QLinearConvOnOneDnnEqualsTheReferenceBitForBit) {
  const std::vector<QConvCase> cases = {
      {.name = "u8 -> u8, 3x3 pad 1, per-channel scales, bias", .x = {1, 16, 12, 12}, .out_channels = 32},
      {.name = "s8 -> s8, stride 2, per-tensor scale", .x = {2, 8, 11, 13}, .out_channels = 16, .stride = 2,
       .uint8_input = false, .uint8_output = false, .per_channel = false, .x_zero_point = -3, .y_zero_point = 5},
      {.name = "depthwise, no bias", .x = {1, 24, 9, 9}, .out_channels = 24, .group = 24, .bias = false},
      {.name = "grouped 1x1 no pad", .x = {1, 16, 7, 7}, .out_channels = 8, .kernel = 1, .group = 4, .pad = 0},
      {.name = "u8 -> s8, zero point 0, 5x5 pad 2", .x = {1, 3, 15, 15}, .out_channels = 6, .kernel = 5, .pad = 2,
       .uint8_output = false, .x_zero_point = 0, .y_zero_point = 0},
  };
  for (const QConvCase& c : cases) expect_qlinear_conv_matches_reference(c);
}

/// x -> QuantizeLinear -> DequantizeLinear -> Conv(DequantizeLinear(int8 w, per channel),
/// DequantizeLinear(int32 bias)) -> QuantizeLinear -> DequantizeLinear -> y: the QDQ form of a
/// quantized convolution as exporters write it.
onnx::ModelProto qdq_conv_model() {
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {1, 8, 10, 10}).output("y", DType::kFloat32, {1, 16, 10, 10});
  const float x_scale = 0.02f;
  b.initializer("x_scale", Tensor::from_vector<float>({}, {x_scale}));
  b.initializer("x_zp", Tensor::from_vector<uint8_t>({}, {128}));
  b.initializer("w", random_quantized<int8_t>({16, 8, 3, 3}, 91));
  std::vector<float> w_scales, b_scales;
  std::vector<int32_t> bias;
  for (int o = 0; o < 16; ++o) {
    w_scales.push_back(0.002f * float(1 + o % 3));
    b_scales.push_back(x_scale * w_scales.back());
    bias.push_back(o * 331 % 2001 - 1000);
  }
  b.initializer("w_scale", Tensor::from_vector<float>({16}, w_scales));
  b.initializer("w_zp", Tensor(DType::kInt8, {16}));
  b.initializer("b", Tensor::from_vector<int32_t>({16}, bias));
  b.initializer("b_scale", Tensor::from_vector<float>({16}, b_scales));
  b.initializer("y_scale", Tensor::from_vector<float>({}, {0.05f}));
  b.initializer("y_zp", Tensor::from_vector<uint8_t>({}, {120}));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, "quantize_x");
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xd"}, "dequantize_x");
  testing::add_int_attr(b.node("DequantizeLinear", {"w", "w_scale", "w_zp"}, {"wd"}, "dequantize_w"), "axis", 0);
  testing::add_int_attr(b.node("DequantizeLinear", {"b", "b_scale"}, {"bd"}, "dequantize_b"), "axis", 0);
  add_ints_attr(b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.node("QuantizeLinear", {"c", "y_scale", "y_zp"}, {"yq"}, "quantize_y");
  b.node("DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"y"}, "dequantize_y");
  return b.model();
}

TEST(Int8Kernels, QdqConvolutionRunsAsQLinearConvOnInt8KernelsInInt8Plans) {
  const auto model = qdq_conv_model();
  runtime::SessionOptions int8_options;
  int8_options.kernel_options.isa_cap = testing::test_kernel_isa();
  int8_options.reduced_precision.int8 = true;
  Session int8 = Session::create(model, int8_options).value();
  Session fp32 = Session::create(model).value();
  int qlinear = 0;
  for (const auto& node : int8.plan().nodes_) {
    if (node.spec.op_type == "Conv") ADD_FAILURE() << "the QDQ convolution was not fused: " << node.label;
    if (node.spec.op_type != "QLinearConv") continue;
    ++qlinear;
    expect_int8_node_tactic(node.tactic, "optimized:quantized_conv_dnnl");
    EXPECT_EQ(node.precision, DType::kInt8);
    EXPECT_EQ(runtime::runs_native_int8(*node.kernel), native_int8_here());
  }
  EXPECT_EQ(qlinear, 1);
  EXPECT_EQ(int8.plan().nodes_.size(), 3u);  // QuantizeLinear(x), QLinearConv, DequantizeLinear(y)
  // Without --int8 the graph runs as written.
  bool has_conv = false;
  for (const auto& node : fp32.plan().nodes_) has_conv |= node.spec.op_type == "Conv";
  EXPECT_TRUE(has_conv);
  const Tensor x = uniform({1, 8, 10, 10}, 92, -2.5f, 2.5f);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const Tensor got = int8.run({{"x", x}}).at("y");
  if (native_int8_here()) EXPECT_GT(runtime::nn::dnnl_fast_path_runs(), before) << "the QLinearConv left oneDNN";
  else EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before);
  const Tensor want = fp32.run({{"x", x}}).at("y");
  // The fused node sums integers exactly, the QDQ graph rounds an fp32 sum: at most one step apart.
  int64_t moved = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float d = std::fabs(got.data<float>()[i] - want.data<float>()[i]);
    ASSERT_LE(d, 0.05f * 1.001f) << "element " << i;
    moved += d > 0;
  }
  EXPECT_LE(moved, got.numel() / 100) << "more than 1% of the outputs moved by a step";
  // And a plan keeps it.
  testing::TempDir dir;
  runtime::plan::save_plan(int8, dir / "qdq.plan", "qdq.onnx");
  Session loaded = runtime::plan::load_plan(dir / "qdq.plan").value();
  const Tensor again = loaded.run({{"x", x}}).at("y");
  EXPECT_EQ(0, std::memcmp(again.raw_data(), got.raw_data(), got.size_bytes()));
  const auto summary = runtime::plan::summarize_plan(dir / "qdq.plan");
  bool shown = false;
  for (const auto& layer : summary.layers) {
    if (layer.op != "QLinearConv" || layer.precision != "int8") continue;
    shown = true;
    EXPECT_EQ(layer.int8_kernel, native_int8_here());
  }
  EXPECT_TRUE(shown);
}

TEST(Int8Kernels, QLinearMatMulOnOneDnnEqualsTheReferenceBitForBit) {
  for (const bool uint8 : {true, false}) {
    SCOPED_TRACE(uint8 ? "u8 A, u8 Y" : "s8 A, s8 Y");
    testing::ModelBuilder b(13);
    const DType type = uint8 ? DType::kUInt8 : DType::kInt8;
    b.input("a", type, {2, 37, 64}).output("y", type, {2, 37, 48});
    b.initializer("a_scale", Tensor::from_vector<float>({}, {0.03f}));
    b.initializer("a_zp", uint8 ? Tensor::from_vector<uint8_t>({}, {131}) : Tensor::from_vector<int8_t>({}, {-7}));
    b.initializer("b", random_quantized<int8_t>({64, 48}, 93));
    b.initializer("b_scale", Tensor::from_vector<float>({}, {0.004f}));
    b.initializer("b_zp", Tensor::from_vector<int8_t>({}, {0}));
    b.initializer("y_scale", Tensor::from_vector<float>({}, {0.07f}));
    b.initializer("y_zp", uint8 ? Tensor::from_vector<uint8_t>({}, {125}) : Tensor::from_vector<int8_t>({}, {3}));
    b.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"}, {"y"}, "qmm");
    runtime::SessionOptions reference_options;
    reference_options.kernel_options.isa_cap = testing::test_kernel_isa();
    reference_options.kernels = runtime::KernelTier::kReference;
    Session optimized = Session::create(b.model()).value();
    Session reference = Session::create(b.model(), reference_options).value();
    expect_int8_node_tactic(optimized.plan().nodes_.at(0).tactic, "optimized:quantized_matmul_dnnl");
    const Tensor a = uint8 ? random_quantized<uint8_t>({2, 37, 64}, 94) : random_quantized<int8_t>({2, 37, 64}, 94);
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const Tensor got = optimized.run({{"a", a}}).at("y");
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before + expected_fast_runs(1)) << "the QLinearMatMul's kernel";
    const Tensor want = reference.run({{"a", a}}).at("y");
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(0, std::memcmp(got.raw_data(), want.raw_data(), got.size_bytes()));
    std::set<double> distinct;
    for (int64_t i = 0; i < got.numel(); ++i) distinct.insert(got.value_as_double(i));
    EXPECT_GT(distinct.size(), 20u);  // not all saturated
  }
}

TEST(Int8Kernels, MatMulIntegerOnOneDnnEqualsTheReferenceIncludingARunTimeZeroPoint) {
  // Dynamic quantization's form: DynamicQuantizeLinear(x) -> MatMulInteger(xq, constant int8 W,
  // x_zero_point) -> int32, the zero point made at run time.
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {4, 9, 96}).output("y", DType::kInt32, {4, 9, 40});
  b.initializer("w", random_quantized<int8_t>({96, 40}, 97));
  b.initializer("w_zp", Tensor::from_vector<int8_t>({}, {0}));
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "x_scale", "x_zp"}, "dynamic_quantize");
  b.node("MatMulInteger", {"xq", "w", "x_zp", "w_zp"}, {"y"}, "mmi");
  runtime::SessionOptions reference_options;
  reference_options.kernel_options.isa_cap = testing::test_kernel_isa();
  reference_options.kernels = runtime::KernelTier::kReference;
  Session optimized = Session::create(b.model()).value();
  Session reference = Session::create(b.model(), reference_options).value();
  expect_int8_node_tactic(optimized.plan().nodes_.at(1).tactic, "optimized:quantized_matmul_dnnl");
  for (const auto& [seed, lo, hi] : {std::tuple{98u, -1.0f, 3.0f}, std::tuple{99u, 0.5f, 2.0f}}) {
    const Tensor x = uniform({4, 9, 96}, seed, lo, hi);  // zero points differ (and one is 0)
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const Tensor got = optimized.run({{"x", x}}).at("y");
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before + expected_fast_runs(1)) << "the MatMulInteger's kernel";
    const Tensor want = reference.run({{"x", x}}).at("y");
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), DType::kInt32);
    EXPECT_EQ(0, std::memcmp(got.raw_data(), want.raw_data(), got.size_bytes()));
  }
}

TEST(Int8Kernels, ConvIntegerOnOneDnnEqualsTheReferenceIncludingARunTimeZeroPoint) {
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {1, 12, 11, 11}).output("y", DType::kInt32, {1, 20, 11, 11});
  b.initializer("w", random_quantized<int8_t>({20, 12, 3, 3}, 101));
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "x_scale", "x_zp"}, "dynamic_quantize");
  add_ints_attr(b.node("ConvInteger", {"xq", "w", "x_zp"}, {"y"}, "conv_integer"), "pads", {1, 1, 1, 1});
  runtime::SessionOptions reference_options;
  reference_options.kernel_options.isa_cap = testing::test_kernel_isa();
  reference_options.kernels = runtime::KernelTier::kReference;
  Session optimized = Session::create(b.model()).value();
  Session reference = Session::create(b.model(), reference_options).value();
  expect_int8_node_tactic(optimized.plan().nodes_.at(1).tactic, "optimized:quantized_conv_dnnl");
  for (const auto& [seed, lo, hi] : {std::tuple{102u, -1.0f, 3.0f}, std::tuple{103u, 0.5f, 2.0f}}) {
    const Tensor x = uniform({1, 12, 11, 11}, seed, lo, hi);  // zero points differ (and one is 0)
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const Tensor got = optimized.run({{"x", x}}).at("y");
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before + expected_fast_runs(1)) << "the ConvInteger's kernel";
    const Tensor want = reference.run({{"x", x}}).at("y");
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), DType::kInt32);
    EXPECT_EQ(0, std::memcmp(got.raw_data(), want.raw_data(), got.size_bytes()));
  }
}

TEST(Int8Kernels, QdqMatMulRunsAsQLinearMatMulInInt8Plans) {
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {3, 5, 64}).output("y", DType::kFloat32, {3, 5, 32});
  b.initializer("x_scale", Tensor::from_vector<float>({}, {0.02f}));
  b.initializer("x_zp", Tensor::from_vector<int8_t>({}, {0}));
  b.initializer("w", random_quantized<int8_t>({64, 32}, 95));
  b.initializer("w_scale", Tensor::from_vector<float>({}, {0.003f}));
  b.initializer("y_scale", Tensor::from_vector<float>({}, {0.04f}));
  b.initializer("y_zp", Tensor::from_vector<int8_t>({}, {0}));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, "quantize_x");
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xd"}, "dequantize_x");
  b.node("DequantizeLinear", {"w", "w_scale"}, {"wd"}, "dequantize_w");
  b.node("MatMul", {"xd", "wd"}, {"m"}, "matmul");
  b.node("QuantizeLinear", {"m", "y_scale", "y_zp"}, {"yq"}, "quantize_y");
  b.node("DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"y"}, "dequantize_y");
  runtime::SessionOptions int8_options;
  int8_options.kernel_options.isa_cap = testing::test_kernel_isa();
  int8_options.reduced_precision.int8 = true;
  Session int8 = Session::create(b.model(), int8_options).value();
  Session fp32 = Session::create(b.model()).value();
  ASSERT_EQ(int8.plan().nodes_.size(), 3u);  // QuantizeLinear(x), QLinearMatMul, DequantizeLinear(y)
  const auto& fused = int8.plan().nodes_.at(1);
  EXPECT_EQ(fused.spec.op_type, "QLinearMatMul");
  expect_int8_node_tactic(fused.tactic, "optimized:quantized_matmul_dnnl");
  EXPECT_EQ(fused.precision, DType::kInt8);
  EXPECT_EQ(runtime::runs_native_int8(*fused.kernel), native_int8_here());
  const Tensor x = uniform({3, 5, 64}, 96, -2.5f, 2.5f);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const Tensor got = int8.run({{"x", x}}).at("y");
  if (native_int8_here()) EXPECT_GT(runtime::nn::dnnl_fast_path_runs(), before) << "the QLinearMatMul left oneDNN";
  else EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before);
  const Tensor want = fp32.run({{"x", x}}).at("y");
  int64_t moved = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float d = std::fabs(got.data<float>()[i] - want.data<float>()[i]);
    ASSERT_LE(d, 0.04f * 1.001f) << "element " << i;
    moved += d > 0;
  }
  EXPECT_LE(moved, got.numel() / 50) << "more than 2% of the outputs moved by a step";
}

TEST(Int8Kernels, ConsecutiveInt8ConvolutionsHandOverChannelsLast) {
  // x -> Conv "c1" (3x3) -> Relu -> Conv "c2" (1x1) -> y: c1 writes channels-last for c2, whose
  // int8 source is then quantized in that order.
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 16, 14, 14}).output("y", DType::kFloat32, {1, 24, 14, 14});
  b.initializer("w1", uniform({32, 16, 3, 3}, 71, -0.3f, 0.3f)).initializer("b1", uniform({32}, 72, -0.5f, 0.5f));
  b.initializer("w2", uniform({24, 32, 1, 1}, 73, -0.3f, 0.3f));
  add_ints_attr(b.node("Conv", {"x", "w1", "b1"}, {"h"}, "c1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"h"}, {"a"}, "relu");
  b.node("Conv", {"a", "w2"}, {"y"}, "c2");
  const auto model = b.model();
  const Tensor x = uniform({1, 16, 14, 14}, 74, -1, 1);
  const float a_amax = 3.0f;  // the Relu output's calibrated range
  const std::map<std::string, float> scales = {{"x", 1.0f / 127}, {"a", a_amax / 127}};
  Session optimized = build(model, scales, runtime::KernelTier::kOptimized);
  Session reference = build(model, scales, runtime::KernelTier::kReference);
  EXPECT_GT(optimized.plan().channels_last_values_, 0);
  // Without VNNI, c2 still runs int8: its source (after the Relu) quantizes to u8, which the AVX2
  // kernels sum exactly.
  // (c2 is a 1x1 convolution: its source known >= 0, it leaves parity's s8 x s8 product for
  // oneDNN's u8 kernel.)
  for (const auto& node : optimized.plan().nodes_) {
    EXPECT_EQ(runtime::runs_native_int8(*node.kernel), native_int8_here() || node.spec.name == "c2") << node.label;
    EXPECT_EQ(runtime::int8_engine(*node.kernel), "") << node.label;
  }
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor got = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks);
  const Tensor want = reference.run({{"x", x}}).at("y");
  double max_abs = 0;
  for (float v : want.values<float>()) max_abs = std::max(max_abs, double(std::fabs(v)));
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 2e-5 * max_abs + 1e-6) << "element " << i;
}

/// x -> c1 (3x3) -> Relu -> a -> c2 (3x3, 2 groups) -> Clip(0, 6) -> b -> c3 (1x1) -> h -> c4 (1x1) -> y;
/// `observed` also makes a, b and h graph outputs.
onnx::ModelProto int8_chain_model(bool observed) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 16, 14, 14}).output("y", DType::kFloat32, {1, 8, 14, 14});
  if (observed) {
    b.output("a", DType::kFloat32, {1, 32, 14, 14}).output("b", DType::kFloat32, {1, 32, 14, 14});
    b.output("h", DType::kFloat32, {1, 24, 14, 14});
  }
  b.initializer("w1", uniform({32, 16, 3, 3}, 81, -0.3f, 0.3f)).initializer("b1", uniform({32}, 82, -0.5f, 0.5f));
  b.initializer("w2", uniform({32, 16, 3, 3}, 83, -0.3f, 0.3f)).initializer("b2", uniform({32}, 84, -0.5f, 0.5f));
  b.initializer("w3", uniform({24, 32, 1, 1}, 85, -0.3f, 0.3f));
  b.initializer("w4", uniform({8, 24, 1, 1}, 86, -0.3f, 0.3f)).initializer("b4", uniform({8}, 87, -0.5f, 0.5f));
  add_ints_attr(b.node("Conv", {"x", "w1", "b1"}, {"h1"}, "c1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"h1"}, {"a"}, "relu");
  auto& c2 = b.node("Conv", {"a", "w2", "b2"}, {"h2"}, "c2");
  add_ints_attr(c2, "pads", {1, 1, 1, 1});
  testing::add_int_attr(c2, "group", 2);
  b.initializer("lo", Tensor::scalar(0.0f)).initializer("hi", Tensor::scalar(6.0f));
  b.node("Clip", {"h2", "lo", "hi"}, {"b"}, "clip");
  b.node("Conv", {"b", "w3"}, {"h"}, "c3");
  b.node("Conv", {"h", "w4", "b4"}, {"y"}, "c4");
  return b.model();
}

TEST(Int8Kernels, Int8StorageBetweenConvolutionsComputesTheSameIntegers) {
  // The int8 values that c1-c3 write in their epilogues (u8 after the Relu and the Clip, s8 for h)
  // are those the next layer would quantize from a dequantized fp32 hand-off: the outputs of a
  // plan that stores them equal those of one whose graph outputs keep every value fp32 (exact
  // integer sums either way; CTest runs this under ONEDNN_MAX_CPU_ISA=AVX2 too).
  const std::map<std::string, float> scales = {
      {"x", 1.0f / 127}, {"a", 2.5f / 127}, {"b", 4.0f / 127}, {"h", 6.0f / 127}};
  Session stored = build(int8_chain_model(false), scales, runtime::KernelTier::kOptimized);
  Session observed = build(int8_chain_model(true), scales, runtime::KernelTier::kOptimized);
  std::map<std::string, DType> storage;
  for (const auto& node : stored.plan().nodes_) {
    const auto* k = dynamic_cast<const runtime::Int8StorageKernel*>(node.kernel.get());
    storage[node.spec.name] = k ? k->int8_output_dtype() : DType::kUndefined;
  }
  for (const auto& node : observed.plan().nodes_) {
    const auto* k = dynamic_cast<const runtime::Int8StorageKernel*>(node.kernel.get());
    EXPECT_EQ(k ? k->int8_output_dtype() : DType::kUndefined, DType::kUndefined) << "observed " << node.label;
  }
  // Without VNNI only layers with a non-negative source run int8 (c2, c3: take_non_negative_source),
  // and only u8 values are stored (c2's).
  const DType none = DType::kUndefined;
  EXPECT_EQ(storage["c1"], native_int8_here() ? DType::kUInt8 : none);
  EXPECT_EQ(storage["c2"], DType::kUInt8);
  EXPECT_EQ(storage["c3"], native_int8_here() ? DType::kInt8 : none);
  EXPECT_EQ(storage["c4"], none) << "the graph output stays fp32";
  // Inputs beyond the calibrated ranges saturate the stored values as the quantization clamps.
  for (uint32_t seed : {91u, 92u}) {
    const Tensor x = uniform({1, 16, 14, 14}, seed, -1.5f, 1.5f);
    const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
    const Tensor got = stored.run({{"x", x}}).at("y");
    EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "a layer left oneDNN";
    const Tensor want = observed.run({{"x", x}}).at("y");
    ASSERT_EQ(got.shape(), want.shape());
    int64_t differing = 0;
    for (int64_t i = 0; i < got.numel(); ++i) differing += got.data<float>()[i] != want.data<float>()[i];
    EXPECT_EQ(differing, 0) << "of " << got.numel() << " outputs (seed " << seed << ")";
  }
}

/// x -> c1 (1x1) -> h -> c2 (3x3 depthwise) -> d -> c3 (1x1) -> y: signed sources throughout;
/// `observed` also makes h a graph output.
onnx::ModelProto signed_depthwise_model(bool observed) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 16, 14, 14}).output("y", DType::kFloat32, {1, 8, 14, 14});
  if (observed) b.output("h", DType::kFloat32, {1, 32, 14, 14});
  b.initializer("w1", uniform({32, 16, 1, 1}, 111, -0.3f, 0.3f)).initializer("b1", uniform({32}, 112, -0.5f, 0.5f));
  b.initializer("w2", uniform({32, 1, 3, 3}, 113, -0.5f, 0.5f)).initializer("b2", uniform({32}, 114, -0.5f, 0.5f));
  b.initializer("w3", uniform({8, 32, 1, 1}, 115, -0.3f, 0.3f));
  b.node("Conv", {"x", "w1", "b1"}, {"h"}, "c1");
  auto& c2 = b.node("Conv", {"h", "w2", "b2"}, {"d"}, "c2");
  add_ints_attr(c2, "pads", {1, 1, 1, 1});
  testing::add_int_attr(c2, "group", 32);
  b.node("Conv", {"d", "w3"}, {"y"}, "c3");
  return b.model();
}

TEST(Int8Kernels, QuantizedHandOffIntoALayerOnQuantizedValuesKeepsItsNumbers) {
  // Without VNNI the depthwise c2 computes in fp32 on its quantized signed source; c1 (parity's
  // s8 x s8 product) then rounds its output to c2's grid in its epilogue and c2 skips its own
  // quantization pass. Rounding twice gives the same grid values, so the numbers are those of the
  // plain hand-off (a plan where h is observed) up to the fp32 sums' order.
  const std::map<std::string, float> scales = {{"x", 1.0f / 127}, {"h", 2.0f / 127}, {"d", 3.0f / 127}};
  Session handed = build(signed_depthwise_model(false), scales, runtime::KernelTier::kOptimized);
  Session observed = build(signed_depthwise_model(true), scales, runtime::KernelTier::kOptimized);
  Session reference = build(signed_depthwise_model(false), scales, runtime::KernelTier::kReference);
  auto hand_off_scale = [](const Session& s, const std::string& name) {
    for (const auto& node : s.plan().nodes_)
      if (node.spec.name == name)
        if (const auto* k = dynamic_cast<const runtime::QuantizedOutputKernel*>(node.kernel.get()))
          return k->quantized_output_scale();
    return 0.0f;
  };
  EXPECT_EQ(hand_off_scale(handed, "c1"), pointwise_s8s8_here() ? scales.at("h") : 0.0f);
  EXPECT_EQ(hand_off_scale(observed, "c1"), 0.0f) << "an observed value stays as computed";
  EXPECT_EQ(hand_off_scale(handed, "c2"), 0.0f);
  for (uint32_t seed : {121u, 122u}) {
    const Tensor x = uniform({1, 16, 14, 14}, seed, -1.5f, 1.5f);
    const Tensor got = handed.run({{"x", x}}).at("y");
    const Tensor plain = observed.run({{"x", x}}).at("y");
    const Tensor want = reference.run({{"x", x}}).at("y");
    ASSERT_EQ(got.shape(), want.shape());
    double max_abs = 0;
    for (float v : want.values<float>()) max_abs = std::max(max_abs, double(std::fabs(v)));
    for (int64_t i = 0; i < got.numel(); ++i) {
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 2e-5 * max_abs + 1e-6) << "element " << i;
      ASSERT_NEAR(got.data<float>()[i], plain.data<float>()[i], 2e-5 * max_abs + 1e-6) << "element " << i;
    }
  }
}

TEST(Int8Kernels, FakeQuantizingTwiceGivesTheSameValues) {
  // What the quantized hand-off relies on: q * s quantizes back to q, exactly, for every scale,
  // including the ties and the clamped values of the first rounding.
  std::mt19937 gen(131);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::uniform_real_distribution<float> exponent(-20.0f, 10.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const float scale = std::pow(2.0f, exponent(gen)) * (1.0f + value(gen) * value(gen) / 9.0f);
    std::vector<float> v(257);
    for (size_t i = 0; i < v.size(); ++i) v[i] = value(gen) * 127.0f * scale;
    v[0] = 0.5f * scale;  // ties
    v[1] = -2.5f * scale;
    v[2] = 1000.0f * scale;  // clamped
    std::vector<float> once = v;
    runtime::fake_quantize_int8(once.data(), static_cast<int64_t>(once.size()), scale);
    std::vector<float> twice = once;
    runtime::fake_quantize_int8(twice.data(), static_cast<int64_t>(twice.size()), scale);
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(once[i], twice[i]) << "scale " << scale << ", value " << v[i];
  }
}

TEST(Int8Kernels, ConvTransposeAgreesWithReferenceOnFakeQuantizedOperands) {
  struct Case {
    std::string name;
    int64_t in_channels, out_per_group, group, kernel, stride, pad, output_padding;
  };
  const std::vector<Case> cases = {
      {"2x2 stride 2 (PP-OCR det's upsampling)", 24, 24, 1, 2, 2, 0, 0},
      {"3x3 stride 2 pad 1 output_padding 1", 16, 8, 1, 3, 2, 1, 1},
      {"grouped 4x4 stride 2 pad 1", 16, 4, 4, 4, 2, 1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::ModelBuilder b;
    const int64_t h = 9, out = (h - 1) * c.stride - 2 * c.pad + c.kernel + c.output_padding;
    b.input("x", DType::kFloat32, {1, c.in_channels, h, h})
        .output("y", DType::kFloat32, {1, c.out_per_group * c.group, out, out});
    Tensor w = uniform({c.in_channels, c.out_per_group, c.kernel, c.kernel}, 111, -0.5f, 0.5f);
    const int64_t per = c.kernel * c.kernel;
    for (int64_t i = 0; i < c.in_channels; ++i)  // per output channel ranges 1e-2..10
      for (int64_t o = 0; o < c.out_per_group; ++o)
        for (int64_t k = 0; k < per; ++k) w.data<float>()[(i * c.out_per_group + o) * per + k] *= std::pow(10.0f, float(o % 4) - 2);
    b.initializer("w", w).initializer("b", uniform({c.out_per_group * c.group}, 112, -1, 1));
    auto& node = b.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "deconv");
    add_ints_attr(node, "kernel_shape", {c.kernel, c.kernel});
    add_ints_attr(node, "strides", {c.stride, c.stride});
    add_ints_attr(node, "pads", {c.pad, c.pad, c.pad, c.pad});
    if (c.output_padding) add_ints_attr(node, "output_padding", {c.output_padding, c.output_padding});
    testing::add_int_attr(node, "group", c.group);
    expect_products_match(b.model(), uniform({1, c.in_channels, h, h}, 113, -1.5f, 1.5f), 1.0f, 0);
  }
}

TEST(Int8Kernels, ConvWithoutAUsableScaleComputesOnFakeQuantizedOperands) {
  // A zero range (a tensor that was all zeros in calibration): the layer stays int8 but the
  // conv declines the native path; the wrapper's fake quantization maps the input to zeros.
  const ConvCase c{.name = "zero range", .x = {1, 4, 6, 6}, .out_channels = 4};
  const auto model = conv_case_model(c);
  Session session = build(model, {{"x", 0.0f}}, runtime::KernelTier::kOptimized);
  EXPECT_FALSE(runtime::runs_native_int8(*session.plan().nodes_.at(0).kernel));
  const Tensor y = session.run({{"x", uniform(c.x, 3, -1, 1)}}).at("y");
  Session reference = build(model, {{"x", 0.0f}}, runtime::KernelTier::kReference);
  const Tensor want = reference.run({{"x", uniform(c.x, 3, -1, 1)}}).at("y");
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], want.data<float>()[i], 1e-6);
}

TEST(Int8Kernels, QuantizeInt8MatchesFakeQuantizeIncludingTiesAndClamping) {
  std::vector<float> v = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f, 127.4f, 300.0f, -300.0f, -127.5f, 0.0f, -0.0f};
  for (int i = 0; i < 100; ++i) v.push_back(float(i) * 0.37f - 20.0f);
  std::vector<int8_t> q(v.size());
  runtime::quantize_int8(v.data(), q.data(), static_cast<int64_t>(v.size()), 1.0f);
  std::vector<float> fake = v;
  runtime::fake_quantize_int8(fake.data(), static_cast<int64_t>(fake.size()), 1.0f);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(float(q[i]), fake[i]) << v[i];
  EXPECT_EQ(q[0], 0);   // ties to even
  EXPECT_EQ(q[1], 2);
  EXPECT_EQ(q[2], 2);
  EXPECT_EQ(q[7], 127);  // clamped to the symmetric range
  EXPECT_EQ(q[8], -127);
  EXPECT_EQ(q[9], -127);
}

TEST(Int8Kernels, QuantizationWithASubnormalScaleKeepsZerosZero) {
  // A channel of subnormal weights has a scale whose reciprocal overflows: x * (1 / scale) would
  // turn its zeros into NaN and then -127 (subnormal fake-quantized weights, and very slow fp32
  // convolutions); such scales divide instead.
  std::vector<float> w = {0.0f, 0.0f, 1e-40f, -1e-40f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const float scale = 1e-40f / 127;
  std::vector<int8_t> q(w.size());
  runtime::quantize_int8(w.data(), q.data(), static_cast<int64_t>(w.size()), scale);
  std::vector<float> fake = w;
  runtime::fake_quantize_int8(fake.data(), static_cast<int64_t>(fake.size()), scale);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[2], 127);
  EXPECT_EQ(q[3], -127);
  for (size_t i = 4; i < w.size(); ++i) {
    EXPECT_EQ(q[i], 0) << i;
    EXPECT_EQ(fake[i], 0.0f) << i;
  }
}

TEST(Int8Kernels, QuantizedWeightsOfFakeQuantizedWeightsAreExact) {
  const Tensor w = uniform({6, 5, 3, 3}, 44, -2.0f, 2.0f);
  const runtime::QuantizedWeights first = runtime::quantize_weights_int8(w, 0);
  ASSERT_EQ(first.scales.size(), 6u);
  Tensor fake = w.clone();
  const int64_t inner = 5 * 9;
  for (int64_t i = 0; i < fake.numel(); ++i)
    fake.data<float>()[i] = float(first.values.data<int8_t>()[i]) * first.scales[i / inner];
  const runtime::QuantizedWeights again = runtime::quantize_weights_int8(fake, 0);
  EXPECT_EQ(0, std::memcmp(first.values.raw_data(), again.values.raw_data(), first.values.size_bytes()));
  for (size_t c = 0; c < 6; ++c) EXPECT_NEAR(again.scales[c], first.scales[c], first.scales[c] * 1e-6);
}

/// x -> [Conv "c0" 3x3 ->] s -> Conv "pw" 1x1 [+ bias] -> tail -> y: the 1x1 convolution reads a
/// signed source, the graph input (NCHW) or c0's output (channels-last, without a Relu). c0's
/// operands are dyadic (x quantized with kDyadicScale, weights k / 1024 with a full-range value
/// per channel), so its fp32 sums are exact in any order and pw reads the same source on the
/// optimized and the reference kernels.
struct PointwiseCase {
  std::string name;
  Shape x;  // N, C, H, W
  int64_t out_channels = 8;
  bool channels_last_source = false;  // c0 first: pw reads a convolution's output
  bool bias = true;
  std::string tail;  // "", "relu", "swish" (Sigmoid + Mul) or "residual" (Add of s; out == C)
  int threads = 1;
};

constexpr float kDyadicScale = 1.0f / 64;

onnx::ModelProto pointwise_case_model(const PointwiseCase& c, bool source_only = false) {
  testing::ModelBuilder b;
  const int64_t channels = c.x[1];
  b.input("x", DType::kFloat32, c.x);
  if (source_only) b.output("s", DType::kFloat32, c.x);
  else b.output("y", DType::kFloat32, {c.x[0], c.out_channels, c.x[2], c.x[3]});
  std::string source = "x";
  if (c.channels_last_source) {
    Tensor w0 = uniform({channels, channels, 3, 3}, 121, -127.0f, 127.0f);
    const int64_t per_channel = channels * 9;
    for (int64_t i = 0; i < w0.numel(); ++i)
      w0.data<float>()[i] = (i % per_channel == 0 ? 127.0f : std::nearbyint(w0.data<float>()[i])) / 1024;
    b.initializer("w0", w0);
    add_ints_attr(b.node("Conv", {"x", "w0"}, {"s"}, "c0"), "pads", {1, 1, 1, 1});
    source = "s";
  }
  if (source_only) return b.model();
  b.initializer("w", uniform({c.out_channels, channels, 1, 1}, 122, -0.5f, 0.5f));
  const std::string out = c.tail.empty() ? "y" : "h";
  if (c.bias) {
    b.initializer("b", uniform({c.out_channels}, 123, -1.0f, 1.0f));
    b.node("Conv", {source, "w", "b"}, {out}, "pw");
  } else {
    b.node("Conv", {source, "w"}, {out}, "pw");
  }
  if (c.tail == "relu") b.node("Relu", {"h"}, {"y"}, "relu");
  if (c.tail == "swish") {
    b.node("Sigmoid", {"h"}, {"g"}, "sigmoid");
    b.node("Mul", {"h", "g"}, {"y"}, "swish");
  }
  if (c.tail == "residual") b.node("Add", {"h", source}, {"y"}, "add");
  return b.model();
}

/// Calibrated scales for `c` on input `x`: x's the dyadic one (its range 2), s's its largest
/// magnitude over 127 (the fp32 model's).
std::map<std::string, float> pointwise_case_scales(const PointwiseCase& c, const Tensor& x) {
  std::map<std::string, float> scales = {{"x", kDyadicScale}};
  if (!c.channels_last_source) return scales;
  const Tensor s = Session::create(pointwise_case_model(c, true)).value().run({{"x", x}}).at("s");
  float amax = 0;
  for (float v : s.values<float>()) amax = std::max(amax, std::fabs(v));
  scales["s"] = amax / 127;
  return scales;
}

/// The 1x1 layer of `c`'s int8 plan against the reference kernels on the same fake-quantized
/// operands: the same integers summed exactly, so only float rounding differs (the sums' and a
/// Swish's approximation).
void expect_pointwise_matches_reference(const PointwiseCase& c) {
  SCOPED_TRACE(c.name + " threads=" + std::to_string(c.threads));
  const auto model = pointwise_case_model(c);
  const Tensor x = uniform(c.x, 131, -1.5f, 1.5f);
  const std::map<std::string, float> scales = pointwise_case_scales(c, x);
  auto session = [&](runtime::KernelTier kernels) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = testing::test_kernel_isa();
    options.reduced_precision.int8 = true;
    options.reduced_precision.int8_scales = scales;
    options.kernels = kernels;
    options.threads = c.threads;
    return Session::create(model, options).value();
  };
  Session optimized = session(runtime::KernelTier::kOptimized);
  Session reference = session(runtime::KernelTier::kReference);
  const runtime::PlannedNode* pw = nullptr;
  for (const auto& node : optimized.plan().nodes_)
    if (node.spec.name == "pw") pw = &node;
  ASSERT_NE(pw, nullptr);
  ASSERT_EQ(pw->precision, DType::kInt8);
  EXPECT_EQ(pw->tails.size(), c.tail == "swish" ? 1u : c.tail.empty() ? 0u : 1u) << "the tail is fused";
  EXPECT_EQ(runtime::runs_native_int8(*pw->kernel), native_int8_here() || pointwise_s8s8_here());
  EXPECT_EQ(runtime::int8_engine(*pw->kernel), pointwise_s8s8_here() ? "parity s8s8 avx2" : "");
  if (c.channels_last_source) EXPECT_GT(optimized.plan().channels_last_values_, 0);
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  const Tensor got = optimized.run({{"x", x}}).at("y");
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks) << "a layer took the reference kernels";
  const Tensor want = reference.run({{"x", x}}).at("y");
  ASSERT_EQ(got.shape(), want.shape());
  double max_abs = 0;
  for (float v : want.values<float>()) max_abs = std::max(max_abs, double(std::fabs(v)));
  ASSERT_GT(max_abs, 0.0);
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 2e-5 * max_abs + 1e-6) << "element " << i;
}

TEST(Int8Kernels, PointwiseConvOfASignedSourceAgreesWithReferenceOnFakeQuantizedOperands) {
  // Without VNNI these run parity's s8 x s8 product (channel counts around its 16-column blocks,
  // odd reductions), with VNNI oneDNN's int8 convolution: the same integers either way.
  const std::vector<PointwiseCase> cases = {
      {.name = "NCHW source, bias", .x = {1, 33, 9, 11}, .out_channels = 17},
      {.name = "NCHW source, no bias, batch 2", .x = {2, 45, 7, 7}, .out_channels = 37, .bias = false},
      {.name = "channels-last source + Relu", .x = {1, 31, 12, 12}, .out_channels = 33, .channels_last_source = true,
       .tail = "relu"},
      {.name = "channels-last source + Swish", .x = {1, 24, 14, 14}, .out_channels = 40, .channels_last_source = true,
       .tail = "swish"},
      {.name = "channels-last source + residual Add", .x = {1, 19, 10, 10}, .out_channels = 19,
       .channels_last_source = true, .bias = false, .tail = "residual"},
      {.name = "NCHW source + residual Add", .x = {1, 16, 8, 8}, .out_channels = 16, .tail = "residual"},
      {.name = "one pixel (squeeze-excitation)", .x = {1, 96, 1, 1}, .out_channels = 23, .tail = "swish"},
      {.name = "large map, rows split", .x = {1, 48, 40, 40}, .out_channels = 72, .channels_last_source = true,
       .tail = "swish"},
      {.name = "7x7 map, column blocks split", .x = {1, 160, 7, 7}, .out_channels = 480, .channels_last_source = true},
  };
  for (int threads : {1, 2})
    for (PointwiseCase c : cases) {
      c.threads = threads;
      expect_pointwise_matches_reference(c);
    }
}

TEST(Int8Kernels, PointwiseConvPlanNamesTheS8S8ProductSavesAndReloads) {
  // A residual block's 1x1 expansion reads the block's signed input: its int8 plan runs it on
  // parity's s8 x s8 product without VNNI (inspect names it), stays close to fp32, and a saved
  // plan replays the same path bit for bit.
  const PointwiseCase c{.name = "plan", .x = {1, 40, 14, 14}, .out_channels = 40, .channels_last_source = true,
                        .tail = "residual"};
  const auto model = pointwise_case_model(c);
  const Tensor x = uniform(c.x, 141, -1, 1);
  Session built = build(model, pointwise_case_scales(c, x), runtime::KernelTier::kOptimized);
  testing::TempDir dir;
  runtime::plan::save_plan(built, dir / "int8.plan", "pointwise.onnx");
  Session loaded = runtime::plan::load_plan(dir / "int8.plan").value();
  for (const auto& node : loaded.plan().nodes_)
    if (node.spec.name == "pw") {
      EXPECT_EQ(runtime::runs_native_int8(*node.kernel), native_int8_here() || pointwise_s8s8_here());
      EXPECT_EQ(runtime::int8_engine(*node.kernel), pointwise_s8s8_here() ? "parity s8s8 avx2" : "");
    }
  const Tensor want = built.run({{"x", x}}).at("y");
  const Tensor got = loaded.run({{"x", x}}).at("y");
  EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes()));
  const Tensor fp32 = Session::create(model).value().run({{"x", x}}).at("y");
  double max_abs = 0, worst = 0;
  for (int64_t i = 0; i < fp32.numel(); ++i) {
    max_abs = std::max(max_abs, double(std::fabs(fp32.data<float>()[i])));
    worst = std::max(worst, double(std::fabs(got.data<float>()[i] - fp32.data<float>()[i])));
  }
  EXPECT_LT(worst, 0.03 * max_abs) << "int8 against fp32";
  const auto summary = runtime::plan::summarize_plan(dir / "int8.plan");
  bool found = false;
  for (const auto& layer : summary.layers) {
    if (layer.name != "pw") continue;
    found = true;
    EXPECT_EQ(layer.precision, "int8");
    if (pointwise_s8s8_here()) EXPECT_EQ(layer.int8_dataflow, "s8 x s8 -> s32 -> fp32, parity s8s8 avx2");
    else if (native_int8_here()) EXPECT_NE(layer.int8_dataflow.find("oneDNN"), std::string::npos) << layer.int8_dataflow;
  }
  EXPECT_TRUE(found);
}

TEST(Int8Kernels, Int8ConvPlanSavesAndReloadsBitIdentically) {
  const ConvCase c{.name = "plan", .x = {1, 16, 12, 12}, .out_channels = 16, .relu = true, .residual = true};
  const auto model = conv_case_model(c);
  Session built = build(model, {{"x", 1.0f / 127}}, runtime::KernelTier::kOptimized);
  testing::TempDir dir;
  runtime::plan::save_plan(built, dir / "int8.plan", "conv.onnx");
  Session loaded = runtime::plan::load_plan(dir / "int8.plan").value();
  EXPECT_EQ(runtime::runs_native_int8(*loaded.plan().nodes_.at(0).kernel), native_int8_here());
  const Tensor x = uniform(c.x, 5, -1, 1);
  const Tensor want = built.run({{"x", x}}).at("y");
  const Tensor got = loaded.run({{"x", x}}).at("y");
  EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes()));
  const auto summary = runtime::plan::summarize_plan(dir / "int8.plan");
  ASSERT_FALSE(summary.layers.empty());
  EXPECT_EQ(summary.layers.front().precision, "int8");
  EXPECT_EQ(summary.layers.front().tactic, "optimized:conv_dnnl");
}

}  // namespace
}  // namespace parity
