// Optimized elementwise kernels (ops/math/elementwise_fast.cpp, ops/common/elementwise_fast*)
// against the reference kernels: every broadcast kind, special values, thread splits, declines,
// and fused chains through a Session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "support/model_builder.h"
#include "op_tester.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

OpTester node(const std::string& op, int opset) { return testing::one_output_node(op, opset); }

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  return testing::random_uniform(shape, seed, lo, hi);
}

/// -inf, -big, -1, -0.5, -0, 0, tiny, 0.5, 1, 3, 6, big, inf, NaN (and repeated to 32 values so
/// the vector loops and their scalar tails both see them).
Tensor special_values() {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> base = {-inf, -3e38f, -1.0f, -0.5f, -0.0f, 0.0f, 1e-40f, 0.5f,
                                   1.0f, 3.0f,   6.0f,  3e38f, inf,   nan,  -3.0f, 2.5f};
  std::vector<float> v;
  for (int k = 0; k < 2; ++k) v.insert(v.end(), base.begin(), base.end());
  v.push_back(-7.25f);  // odd length: a scalar tail after the vector loop
  return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
}

void compare_binary(const std::string& op, const Tensor& a, const Tensor& b, int opset = 14) {
  node(op, opset).input(a).input(b).tolerance(0, 0).compare_tiers();
}

const char* const kBinaryOps[] = {"Add", "Sub", "Mul", "Div"};

TEST(OptimizedBinary, EqualShapes) {
  for (const char* op : kBinaryOps) {
    compare_binary(op, random_tensor({2, 3, 4, 5}, 1), random_tensor({2, 3, 4, 5}, 2));
    compare_binary(op, random_tensor({7}, 3), random_tensor({7}, 4), 7);
    compare_binary(op, random_tensor({}, 5), random_tensor({}, 6), 13);
  }
}

TEST(OptimizedBinary, ScalarOperands) {
  for (const char* op : kBinaryOps) {
    compare_binary(op, random_tensor({3, 17}, 1), random_tensor({}, 2));
    compare_binary(op, random_tensor({1}, 3), random_tensor({3, 17}, 4));
    compare_binary(op, random_tensor({5, 1, 1}, 5), random_tensor({1, 1, 1, 1}, 6));  // rank grows
  }
}

TEST(OptimizedBinary, EveryBroadcastKind) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 8, 5, 6}, {1, 8, 1, 1}},  // per channel
      {{2, 8, 5, 6}, {8, 1, 1}},     // per channel, lower rank
      {{4, 9}, {9}},                 // bias over the last axis
      {{3, 4, 9}, {4, 9}},           // trailing block
      {{3, 4, 9}, {3, 1, 1}},        // leading block
      {{3, 1}, {1, 4}},              // outer product
      {{2, 1, 4}, {1, 3, 1}},        // both broadcast
      {{1, 8, 1, 1}, {2, 8, 5, 6}},  // per channel on the left
      {{2, 3, 1, 5}, {2, 1, 4, 5}},  // middle axes alternate
      {{6, 1, 33}, {6, 7, 33}},
  };
  uint32_t seed = 10;
  for (const auto& [sa, sb] : cases)
    for (const char* op : kBinaryOps) {
      const Tensor a = random_tensor(sa, seed++);
      compare_binary(op, a, random_tensor(sb, seed++));
    }
}

TEST(OptimizedBinary, PatternsBeyondFourGroupsDelegate) {
  // Five alternating dimension groups: the fast path hands the node to the reference kernel.
  for (const char* op : kBinaryOps)
    compare_binary(op, random_tensor({2, 1, 3, 1, 2}, 1), random_tensor({1, 3, 1, 2, 1}, 2));
}

TEST(OptimizedBinary, ZeroSizeAndSpecialValues) {
  for (const char* op : kBinaryOps) {
    compare_binary(op, random_tensor({0, 3}, 1), random_tensor({3}, 2));
    compare_binary(op, random_tensor({2, 0}, 1), random_tensor({1}, 2));
    const Tensor s = special_values();
    compare_binary(op, s, s);
    const Tensor flipped = Tensor::from_vector<float>(s.shape(), [&] {
      auto v = s.to_vector<float>();
      std::reverse(v.begin(), v.end());
      return v;
    }());
    compare_binary(op, s, flipped);
    compare_binary(op, s, Tensor::scalar<float>(0.0f));
    compare_binary(op, Tensor::scalar<float>(std::numeric_limits<float>::infinity()), s);
  }
}

TEST(OptimizedBinary, LargeTensorsSplitAcrossThreads) {
  // The tester context runs 3 "threads" with uneven chunks; sizes are not multiples of 16.
  for (const char* op : kBinaryOps) {
    compare_binary(op, random_tensor({3, 70001}, 1), random_tensor({3, 70001}, 2));
    compare_binary(op, random_tensor({5, 16, 2049}, 3), random_tensor({16, 1}, 4));
    compare_binary(op, random_tensor({1}, 5), random_tensor({200003}, 6));
  }
}

TEST(OptimizedBinary, DeclinesOtherDtypesAndLegacyBroadcast) {
  node("Add", 14)
      .input<int32_t>({3}, {1, 2, 3})
      .input<int32_t>({3}, {4, 5, 6})
      .compare_tiers(/*expect_optimized=*/false);
  bool used = true;
  node("Mul", 14).input<double>({2}, {1, 2}).input<double>({2}, {3, 4}).run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  // Opset 6 keeps its 'broadcast'/'axis' attributes with the reference kernel.
  node("Add", 6)
      .attr("broadcast", int64_t{1})
      .attr("axis", int64_t{1})
      .input(random_tensor({2, 3, 4}, 1))
      .input(random_tensor({3}, 2))
      .compare_tiers(false);
}

struct UnaryCase {
  const char* op;
  int opset;
};

TEST(OptimizedUnary, EveryOpOnSpecialAndRandomValues) {
  const UnaryCase cases[] = {{"Relu", 14},  {"Relu", 6},       {"LeakyRelu", 16}, {"HardSigmoid", 6}, {"HardSwish", 14},
                             {"Sigmoid", 13}, {"Tanh", 13},     {"Exp", 13},       {"Erf", 13},        {"Neg", 13},
                             {"Abs", 13},   {"Sqrt", 13},      {"Reciprocal", 13}, {"Clip", 6},        {"Clip", 13}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.op) + "-" + std::to_string(c.opset));
    // Sigmoid, Tanh and Exp use a vectorized exp (a few ulp from libm); the rest are exact.
    const std::string op = c.op;
    const double rtol = (op == "Sigmoid" || op == "Tanh" || op == "Exp") ? 1e-6 : 0.0;
    node(c.op, c.opset).input(special_values()).tolerance(0, rtol).compare_tiers();
    node(c.op, c.opset).input(random_tensor({2, 3, 5, 7}, 9)).tolerance(0, rtol).compare_tiers();
    node(c.op, c.opset).input(random_tensor({100003}, 11)).tolerance(0, rtol).compare_tiers();
    node(c.op, c.opset).input(random_tensor({0, 4}, 1)).compare_tiers();
  }
}

TEST(OptimizedUnary, VectorizedExpFamilyIsAccurateOverTheWholeRange) {
  // Every 1/64 from -110 to 110: overflow, underflow into denormals, and Tanh's switch at 0.625.
  std::vector<float> xs;
  for (int i = -110 * 64; i <= 110 * 64; ++i) xs.push_back(static_cast<float>(i) / 64.0f);
  const Tensor x = Tensor::from_vector<float>({static_cast<int64_t>(xs.size())}, xs);
  for (const char* op : {"Exp", "Sigmoid", "Tanh"}) {
    SCOPED_TRACE(op);
    // atol covers denormal results, whose relative precision is lower by construction.
    node(op, 13).input(x).tolerance(1e-37, 1e-6).compare_tiers();
  }
}

TEST(OptimizedUnary, AttributesAreHonoured) {
  node("LeakyRelu", 16).attr("alpha", 0.3f).input(special_values()).tolerance(0, 0).compare_tiers();
  node("HardSigmoid", 6)
      .attr("alpha", 0.1666667f)
      .attr("beta", 0.5f)
      .input(special_values())
      .tolerance(0, 0)
      .compare_tiers();
  node("Clip", 6).attr("min", -1.0f).attr("max", 2.0f).input(special_values()).tolerance(0, 0).compare_tiers();
  node("Clip", 13)
      .input(special_values())
      .constant_input(Tensor::scalar<float>(0.0f))
      .constant_input(Tensor::scalar<float>(6.0f))
      .tolerance(0, 0)
      .compare_tiers();
  node("Clip", 11).input(special_values()).missing_input().constant_input(Tensor::scalar<float>(1.0f)).compare_tiers();
  // min > max: every value becomes max, as the spec says.
  node("Clip", 13)
      .input(special_values())
      .constant_input(Tensor::scalar<float>(2.0f))
      .constant_input(Tensor::scalar<float>(1.0f))
      .tolerance(0, 0)
      .compare_tiers();
}

TEST(OptimizedUnary, ClipWithRunTimeBoundsOrIntegersDeclines) {
  node("Clip", 13)
      .input(special_values())
      .input(Tensor::scalar<float>(-1.0f))
      .input(Tensor::scalar<float>(1.0f))
      .compare_tiers(/*expect_optimized=*/false);
  node("Clip", 13)
      .input<int32_t>({4}, {-5, 0, 3, 9})
      .constant_input(Tensor::scalar<int32_t>(0))
      .constant_input(Tensor::scalar<int32_t>(6))
      .compare_tiers(false);
}

TEST(OptimizedUnary, PowWithConstantExponent) {
  for (int opset : {7, 12, 13, 15}) {
    node("Pow", opset).input(special_values()).constant_input(Tensor::scalar<float>(2.0f)).tolerance(0, 0).compare_tiers();
    node("Pow", opset).input(special_values()).constant_input(Tensor::scalar<float>(0.5f)).tolerance(0, 0).compare_tiers();
  }
  // An integer or double exponent of 2 means the same (opset 12+ allows mixed types).
  node("Pow", 15).input(random_tensor({3, 5}, 1)).constant_input(Tensor::scalar<int64_t>(2)).tolerance(0, 0).compare_tiers();
  node("Pow", 15).input(random_tensor({3, 5}, 1)).constant_input(Tensor::from_vector<double>({1}, {0.5})).tolerance(0, 0).compare_tiers();
  // A [1] exponent on a scalar base makes the output [1]: delegated at run time.
  node("Pow", 15).input(Tensor::scalar<float>(3.0f)).constant_input(Tensor::from_vector<float>({1}, {2.0f})).compare_tiers();
  // Other exponents, or one known only at run time, stay with the reference kernel.
  node("Pow", 15).input(random_tensor({4}, 1)).constant_input(Tensor::scalar<float>(3.0f)).compare_tiers(false);
  node("Pow", 15).input(random_tensor({4}, 1)).input(Tensor::scalar<float>(2.0f)).compare_tiers(false);
}

TEST(OptimizedUnary, AvxAndBaselineLoopsAgree) {
  const auto* avx2 = ops::fast::avx2_loops();
  if (!avx2) GTEST_SKIP() << "this CPU has no AVX2";
  const auto& base = ops::fast::baseline_loops();
  const Tensor x = special_values();
  const int64_t n = x.numel();
  for (auto op : {ops::fast::EwOp::kRelu, ops::fast::EwOp::kClip, ops::fast::EwOp::kHardSigmoid,
                  ops::fast::EwOp::kHardSwish, ops::fast::EwOp::kSqrtPow, ops::fast::EwOp::kSquare,
                  ops::fast::EwOp::kSigmoid, ops::fast::EwOp::kTanh, ops::fast::EwOp::kExp}) {
    const ops::fast::EwUnary f{op, 0.2f, 0.5f};
    std::vector<float> y1(n), y2(n);
    base.unary(f, x.data<float>(), y1.data(), n);
    avx2->unary(f, x.data<float>(), y2.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_TRUE(std::memcmp(&y1[i], &y2[i], sizeof(float)) == 0 || (std::isnan(y1[i]) && std::isnan(y2[i])))
          << "op " << static_cast<int>(op) << " element " << i;
  }
}

// --- fused chains through a Session ---------------------------------------------------------

/// x -> Add(3) -> Clip(0, 6) -> Div(6) -> Mul(x, ·) -> Sub(bias, ·) -> Relu -> y: the HardSwish
/// pattern of exported MobileNets, a same-shape run-time operand, and tails that read the chain
/// through input 1 (Mul commutes, Sub does not).
testing::ModelBuilder chain_model(const Shape& bias_shape) {
  testing::ModelBuilder m(13);
  m.input("x", DType::kFloat32, {-1, 4, 3, 5});
  m.initializer("three", Tensor::scalar<float>(3.0f));
  m.initializer("lo", Tensor::scalar<float>(0.0f));
  m.initializer("hi", Tensor::scalar<float>(6.0f));
  m.initializer("six", Tensor::from_vector<float>({1}, {6.0f}));
  m.initializer("bias", random_tensor(bias_shape, 77));
  m.node("Add", {"x", "three"}, {"a"});
  m.node("Clip", {"a", "lo", "hi"}, {"c"});
  m.node("Div", {"c", "six"}, {"d"});
  m.node("Mul", {"x", "d"}, {"m"});
  m.node("Sub", {"bias", "m"}, {"s"});
  m.node("Relu", {"s"}, {"y"});
  m.output("y", DType::kFloat32, {-1, 4, 3, 5});
  return m;
}

void compare_sessions(const onnx::ModelProto& model, const Tensor& x, int threads) {
  SessionOptions fast_options, reference_options;
  fast_options.threads = reference_options.threads = threads;
  reference_options.kernels = KernelTier::kReference;
  auto fast = Session::create(model, fast_options).value();
  auto reference = Session::create(model, reference_options).value();
  const TensorMap feed{{"x", x}};
  const TensorMap want = reference.run(feed);
  const TensorMap got = fast.run(feed);
  EXPECT_TRUE(testing::tensors_close(got.at("y"), want.at("y"), 0, 0));
  // A hook forces the unfused plan: every intermediate must match too.
  RunOptions observe;
  std::map<std::string, Tensor> seen;
  observe.hook = [&](const std::string& name, const Value& v) { seen[name] = v.tensor(); };
  fast.run(feed, observe);
  for (const auto& node : model.graph().node()) EXPECT_TRUE(seen.count(node.output(0))) << node.output(0);
  EXPECT_TRUE(testing::tensors_close(seen.at("y"), want.at("y"), 0, 0));
}

TEST(OptimizedElementwiseFusion, ChainMatchesReference) {
  for (int threads : {1, 2}) {
    // Scalar bias: the fused fast path; per-channel bias: the reference chain.
    compare_sessions(chain_model({}).model(), random_tensor({2, 4, 3, 5}, 5), threads);
    compare_sessions(chain_model({}).model(), random_tensor({1000, 4, 3, 5}, 6), threads);
    compare_sessions(chain_model({4, 1, 1}).model(), random_tensor({2, 4, 3, 5}, 7), threads);
  }
}

TEST(OptimizedElementwiseFusion, TailThatChangesTheShapeStartsANewPass) {
  // Sub's bias [2, 4, 3, 5] is larger than a batch-1 input: the chain's value is broadcast into a
  // new buffer, and the remaining tails run on that.
  auto model = chain_model({2, 4, 3, 5});
  model.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(2);
  compare_sessions(model.model(), random_tensor({1, 4, 3, 5}, 8), 1);
}

/// LayerNorm as exported op by op: the chain Add(var, eps) -> Sqrt -> Div(x - mean, ·) ->
/// Mul(·, gamma) -> Add(·, beta) grows from [N, 1] to [N, C] at the Div, then broadcasts
/// per-feature parameters into its value.
TEST(OptimizedElementwiseFusion, LayerNormChainBroadcastsMidway) {
  testing::ModelBuilder m(13);
  m.input("x", DType::kFloat32, {-1, 9});
  m.input("v", DType::kFloat32, {-1, 1});
  m.initializer("eps", Tensor::scalar<float>(1e-5f));
  m.initializer("gamma", random_tensor({9}, 3));
  m.initializer("beta", random_tensor({9}, 4));
  m.node("Add", {"v", "eps"}, {"a"});
  m.node("Sqrt", {"a"}, {"r"});
  m.node("Div", {"x", "r"}, {"d"});
  m.node("Mul", {"d", "gamma"}, {"g"});
  m.node("Add", {"g", "beta"}, {"y"});
  m.output("y", DType::kFloat32, {-1, 9});
  for (int64_t rows : {int64_t{3}, int64_t{20000}}) {
    SessionOptions fast_options, reference_options;
    reference_options.kernels = KernelTier::kReference;
    auto fast = Session::create(m.model(), fast_options).value();
    auto reference = Session::create(m.model(), reference_options).value();
    const TensorMap feed{{"x", random_tensor({rows, 9}, 5)}, {"v", random_tensor({rows, 1}, 6, 0.0f, 2.0f)}};
    EXPECT_TRUE(testing::tensors_close(fast.run(feed).at("y"), reference.run(feed).at("y"), 0, 0)) << rows;
  }
}

TEST(OptimizedElementwiseFusion, UncoveredBroadcastInATailRunsTheReferenceChain) {
  // Relu -> Add(·, c) with five alternating dimension groups.
  testing::ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1, 3, 1, 2, 1});
  m.initializer("c", random_tensor({2, 1, 3, 1, 2}, 7));
  m.node("Relu", {"x"}, {"r"});
  m.node("Add", {"r", "c"}, {"y"});
  m.output("y", DType::kFloat32, {2, 3, 3, 2, 2});
  compare_sessions(m.model(), random_tensor({1, 3, 1, 2, 1}, 8), 1);
}

TEST(OptimizedElementwiseFusion, OperandsThatOnlyLackLeadingOnesStayInThePass) {
  // A single LayerNorm row: [1, 1, 7] * w[7] + b[1, 7] reads the operands element for element;
  // with two rows the same graph broadcasts them.
  for (int64_t rows : {int64_t{1}, int64_t{2}}) {
    testing::ModelBuilder m(13);
    m.input("x", DType::kFloat32, {rows, 1, 7});
    m.initializer("w", random_tensor({7}, 12));
    m.initializer("b", random_tensor({1, 7}, 13));
    m.node("Relu", {"x"}, {"r"});
    m.node("Mul", {"w", "r"}, {"s"});
    m.node("Add", {"s", "b"}, {"y"});
    m.output("y", DType::kFloat32, {rows, 1, 7});
    compare_sessions(m.model(), random_tensor({rows, 1, 7}, 14), 1);
  }
}

TEST(OptimizedElementwiseFusion, TailsAtInputOneRunInTheReferenceChainInPlace) {
  // Relu -> Sub(c, ·) -> Div(d, ·): both tails read the chain at input 1, and c's five
  // alternating dimension groups send the fused chain to the shared ReferenceChain fallback.
  testing::ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1, 3, 1, 2, 1});
  m.initializer("c", random_tensor({2, 1, 3, 1, 2}, 9));
  m.initializer("d", random_tensor({1}, 10, 1.0f, 2.0f));
  m.node("Relu", {"x"}, {"r"});
  m.node("Sub", {"c", "r"}, {"s"});
  m.node("Div", {"d", "s"}, {"y"});
  m.output("y", DType::kFloat32, {2, 3, 3, 2, 2});
  SessionOptions reference_options;
  reference_options.kernels = KernelTier::kReference;
  auto fast = Session::create(m.model()).value();
  auto reference = Session::create(m.model(), reference_options).value();
  const TensorMap feed{{"x", random_tensor({1, 3, 1, 2, 1}, 11)}};
  const uint64_t before = ops::ReferenceChain::fallback_count();
  const TensorMap got = fast.run(feed);
  EXPECT_EQ(ops::ReferenceChain::fallback_count(), before + 1) << "one fused node, one fallback";
  EXPECT_TRUE(testing::tensors_close(got.at("y"), reference.run(feed).at("y"), 0, 0));
}

}  // namespace
}  // namespace parity::runtime

namespace parity::runtime {
namespace {

/// Squeeze-excitation as torchvision exports it: y = depthwise Conv(x) (+Relu), s =
/// Sigmoid(Conv1x1(GlobalAveragePool(y))), z = Mul(s, y) (or Mul(y, s)), out = Conv1x1(z).
/// A non-empty `scale_shape` replaces s by a constant of that shape; the pooled map is then a
/// graph output, so that the depthwise Conv still has two readers and does not absorb the Mul.
onnx::ModelProto squeeze_excitation_model(int64_t channels, int64_t size, bool scale_first,
                                          const Shape& scale_shape = {}, int64_t batch = 1) {
  testing::ModelBuilder b(17);
  b.input("x", DType::kFloat32, {batch, channels, size, size}).output("out", DType::kFloat32, {batch, 8, size, size});
  b.initializer("dw", testing::random_uniform({channels, 1, 3, 3}, 31, -0.5f, 0.5f));
  b.initializer("fc", testing::random_uniform({channels, channels, 1, 1}, 32, -0.5f, 0.5f));
  b.initializer("proj", testing::random_uniform({8, channels, 1, 1}, 33, -0.5f, 0.5f));
  auto& dw = b.node("Conv", {"x", "dw"}, {"y"}, "depthwise");
  testing::add_int_attr(dw, "group", channels);
  auto* pads = dw.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  b.node("GlobalAveragePool", {"y"}, {"pooled"}, "pool");
  if (scale_shape.empty()) {
    b.node("Conv", {"pooled", "fc"}, {"logits"}, "fc");
    b.node("Sigmoid", {"logits"}, {"s"}, "gate");
  } else {
    b.initializer("s", testing::random_uniform(scale_shape, 34, 0.f, 1.f));
    b.output("pooled", DType::kFloat32, {batch, channels, 1, 1});
  }
  if (scale_first) b.node("Mul", {"s", "y"}, {"z"}, "scale");
  else b.node("Mul", {"y", "s"}, {"z"}, "scale");
  b.node("Conv", {"z", "proj"}, {"out"}, "project");
  return b.model();
}

TEST(OptimizedElementwise, SqueezeExcitationMulStaysChannelsLastBetweenConvolutions) {
  for (int64_t channels : {1, 8, 24})
    for (bool scale_first : {false, true})
      for (const Shape& scale_shape : {Shape{}, Shape{channels, 1, 1}, Shape{1, channels, 1, 1}})
        for (int threads : {1, 2}) {
          const auto model = squeeze_excitation_model(channels, 9, scale_first, scale_shape);
          TensorMap feed;
          feed.set("x", testing::random_uniform({1, channels, 9, 9}, 35, -2, 2));
          const Tensor expected = testing::reference_output(model, feed, "out");
          SessionOptions options;
          options.threads = threads;
          const Session optimized = Session::create(model, options).value();
          EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("out"), expected, 1e-5, 1e-5))
              << channels << " " << scale_first << " " << shape_to_string(scale_shape) << " threads " << threads;
          bool mul_reads_channels_last = false, mul_writes_channels_last = false;
          for (const auto& node : optimized.plan().nodes_)
            if (node.spec.op_type == "Mul") {
              mul_reads_channels_last = !node.reads_channels_last.empty();
              mul_writes_channels_last = node.writes_channels_last;
            }
#if PARITY_HAVE_DNNL
          EXPECT_TRUE(mul_reads_channels_last && mul_writes_channels_last)
              << channels << " " << scale_first << " " << shape_to_string(scale_shape);
#endif
        }
}

// The channels-last x * s loop (elementwise_fast.cpp, scale_rows) on maps large enough to split
// between threads: batch 2 with one gate per image (the split crosses the images' boundary), odd
// and vector-sized channel counts, and a constant gate shared by both images.
TEST(OptimizedElementwise, SqueezeExcitationMulOnLargeMapsAndBatches) {
  for (int64_t channels : {37, 48, 3})
    for (const Shape& scale_shape : {Shape{}, Shape{channels, 1, 1}})
      for (int threads : {1, 2}) {
        const auto model = squeeze_excitation_model(channels, 40, false, scale_shape, 2);
        TensorMap feed;
        feed.set("x", testing::random_uniform({2, channels, 40, 40}, 39, -2, 2));
        const Tensor expected = testing::reference_output(model, feed, "out");
        SessionOptions options;
        options.threads = threads;
        const Session optimized = Session::create(model, options).value();
        EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("out"), expected, 1e-5, 1e-5))
            << channels << " " << shape_to_string(scale_shape) << " threads " << threads;
      }
}

// A map the Mul reads channels-last but hands on in plain order (its reader is a graph output).
TEST(OptimizedElementwise, ChannelsLastMulFeedingAGraphOutputWritesPlainOrder) {
  testing::ModelBuilder b(17);
  b.input("x", DType::kFloat32, {1, 6, 5, 5}).output("z", DType::kFloat32, {1, 6, 5, 5});
  b.initializer("w", testing::random_uniform({6, 6, 3, 3}, 36, -0.5f, 0.5f));
  b.initializer("s", testing::random_uniform({6, 1, 1}, 37, 0.f, 1.f));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"}, "conv");
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  b.node("Mul", {"y", "s"}, {"z"}, "scale");
  b.node("GlobalAveragePool", {"y"}, {"p"}, "pool");  // a second reader: the Conv cannot absorb the Mul
  b.output("p", DType::kFloat32, {1, 6, 1, 1});
  TensorMap feed;
  feed.set("x", testing::random_uniform({1, 6, 5, 5}, 38, -2, 2));
  SessionOptions reference_options;
  reference_options.kernels = KernelTier::kReference;
  const Tensor expected = Session::create(b.model(), reference_options).value().run(feed).at("z");
  const Session optimized = Session::create(b.model()).value();
  EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("z"), expected, 1e-5, 1e-5));
#if PARITY_HAVE_DNNL
  for (const auto& node : optimized.plan().nodes_)
    if (node.spec.op_type == "Mul") {
      EXPECT_FALSE(node.reads_channels_last.empty());
      EXPECT_FALSE(node.writes_channels_last);
    }
#endif
}

}  // namespace
}  // namespace parity::runtime
