// The optimized (oneDNN) MatMul, Gemm, Softmax, LogSoftmax and LayerNormalization kernels against
// the reference kernels: random inputs with fixed seeds, edge-case shapes, declines, and fusion of
// bias / scaling / activation tails through a Session.
#if PARITY_HAVE_DNNL

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_support.h"
#include "support/model_builder.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/kernel.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/math/matmul_fast.h"
#include "runtime/session.h"

namespace parity::testing {
namespace {

using nn::random_tensor;
using runtime::KernelTier;

constexpr double kAtol = 1e-4, kRtol = 1e-4;

/// Runs the two-tier comparison and checks whether the optimized kernel took its oneDNN fast path
/// (`fast`) or handed the case to the reference kernels at run time.
void compare_expecting(OpTester& t, bool fast, bool expect_optimized = true) {
  const uint64_t before = runtime::ops::ReferenceChain::fallback_count();
  t.compare_tiers(expect_optimized);
  if (expect_optimized) {
    EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count() == before, fast)
        << (fast ? "the fast path was expected" : "a reference fallback was expected");
  }
}

/// MatMul of random A and B; B is a plan-time constant (pre-packed weights) when `constant_b`.
void compare_matmul(const Shape& a, const Shape& b, bool constant_b, uint32_t seed, int opset = 13, bool fast = true) {
  SCOPED_TRACE(shape_to_string(a) + " x " + shape_to_string(b) + (constant_b ? " (constant B)" : ""));
  OpTester t("MatMul", opset);
  t.input(random_tensor(a, seed));
  if (constant_b) t.constant_input(random_tensor(b, seed + 1));
  else t.input(random_tensor(b, seed + 1));
  t.output_shape_only(DType::kFloat32, {}).tolerance(kAtol, kRtol);
  compare_expecting(t, fast);
}

TEST(OptimizedMatMul, MatchesReferenceOnTwoDimensionalAndFoldedBatches) {
  uint32_t seed = 1;
  for (bool constant_b : {false, true}) {
    compare_matmul({5, 7}, {7, 3}, constant_b, seed++);
    compare_matmul({64, 96}, {96, 80}, constant_b, seed++);
    compare_matmul({2, 197, 192}, {192, 576}, constant_b, seed++);  // a transformer projection
    compare_matmul({2, 3, 4, 5}, {5, 6}, constant_b, seed++);
    compare_matmul({3, 4, 5}, {1, 5, 6}, constant_b, seed++);  // B's batch of 1s folds too
  }
}

TEST(OptimizedMatMul, MatchesReferenceWithBroadcastBatchDims) {
  uint32_t seed = 100;
  for (bool constant_b : {false, true}) {
    compare_matmul({3, 8, 16}, {3, 16, 8}, constant_b, seed++);  // attention scores
    compare_matmul({4, 5}, {2, 5, 6}, constant_b, seed++);       // A broadcast over B's batch
    compare_matmul({2, 1, 4, 5}, {3, 5, 6}, constant_b, seed++);
    compare_matmul({1, 3, 4, 5}, {2, 1, 5, 6}, constant_b, seed++);
    compare_matmul({2, 1, 1, 1, 1, 1, 2, 3}, {2, 1, 1, 1, 1, 3, 2}, constant_b, seed++);  // rank 8
    // Large enough to be split by rows over threads: chunks keep the batch strides.
    compare_matmul({3, 197, 64}, {3, 64, 197}, constant_b, seed++);
    compare_matmul({2, 1, 150, 64}, {3, 64, 120}, constant_b, seed++);
  }
}

TEST(OptimizedMatMul, MatchesReferenceOnVectorsAndDegenerateSizes) {
  uint32_t seed = 200;
  for (bool constant_b : {false, true}) {
    compare_matmul({7}, {7, 3}, constant_b, seed++);
    compare_matmul({5, 7}, {7}, constant_b, seed++);
    compare_matmul({7}, {7}, constant_b, seed++);
    compare_matmul({2, 3, 7}, {7}, constant_b, seed++);
    compare_matmul({7}, {2, 7, 3}, constant_b, seed++);
    compare_matmul({5, 1}, {1, 3}, constant_b, seed++);  // K = 1
    compare_matmul({1, 9}, {9, 4}, constant_b, seed++);  // M = 1
    compare_matmul({6, 9}, {9, 1}, constant_b, seed++);  // N = 1
    compare_matmul({0, 5}, {5, 3}, constant_b, seed++, 13, false);  // zero-size M: reference path
    compare_matmul({4, 0}, {0, 3}, constant_b, seed++, 13, false);  // K = 0: zeros
    compare_matmul({0, 4, 5}, {5, 3}, constant_b, seed++, 13, false);
  }
}

TEST(OptimizedMatMul, OlderOpsetsUseTheSameKernel) {
  compare_matmul({3, 4}, {4, 5}, false, 300, 1);
  compare_matmul({2, 3, 4}, {4, 5}, true, 301, 9);
}

TEST(OptimizedMatMul, DeclinesOtherDtypesAndReportsMismatches) {
  OpTester ints("MatMul", 13);
  ints.input<int32_t>({2, 2}, {1, 2, 3, 4}).input<int32_t>({2, 2}, {1, 0, 0, 1}).output_shape_only(DType::kInt32, {});
  bool used = true;
  EXPECT_EQ(ints.run_outputs(KernelTier::kOptimized, &used)[0].to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_FALSE(used);
  // A float node fed a mismatch at run time reports it through the reference kernel.
  OpTester bad("MatMul", 13);
  bad.input(random_tensor({2, 3}, 1)).input(random_tensor({4, 5}, 2)).output_shape_only(DType::kFloat32, {});
  try {
    bad.run_outputs(KernelTier::kOptimized);
    ADD_FAILURE() << "a 2x3 by 4x5 MatMul ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("inner dimensions"), std::string::npos) << e.what();
  }
}

/// Gemm with optional C (constant or fed) and attributes.
struct GemmCase {
  int64_t m, k, n;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  std::optional<Shape> c;
  bool constant_b = true, constant_c = true;
  bool fast = true;  // expected to take the oneDNN path (not a run-time fallback)
};

void compare_gemm(const GemmCase& g, uint32_t seed, bool expect_optimized = true) {
  SCOPED_TRACE("Gemm m=" + std::to_string(g.m) + " k=" + std::to_string(g.k) + " n=" + std::to_string(g.n) +
               " transA=" + std::to_string(g.trans_a) + " transB=" + std::to_string(g.trans_b) +
               " alpha=" + std::to_string(g.alpha) + " beta=" + std::to_string(g.beta) +
               " C=" + (g.c ? shape_to_string(*g.c) : "none"));
  OpTester t("Gemm", 13);
  t.attr("transA", g.trans_a ? 1 : 0).attr("transB", g.trans_b ? 1 : 0).attr("alpha", g.alpha).attr("beta", g.beta);
  t.input(random_tensor(g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k}, seed));
  const Tensor b = random_tensor(g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n}, seed + 1);
  if (g.constant_b) t.constant_input(b);
  else t.input(b);
  if (g.c) {
    const Tensor c = random_tensor(*g.c, seed + 2);
    if (g.constant_c) t.constant_input(c);
    else t.input(c);
  }
  t.output_shape_only(DType::kFloat32, {}).tolerance(kAtol, kRtol);
  compare_expecting(t, g.fast, expect_optimized);
}

TEST(OptimizedGemm, MatchesReferenceForTransposesAndBiasShapes) {
  uint32_t seed = 400;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool constant_b : {false, true}) {
        GemmCase g{6, 5, 4, ta, tb};
        g.constant_b = constant_b;
        compare_gemm(g, seed++);
        for (const Shape& c : {Shape{}, Shape{4}, Shape{1, 4}, Shape{6, 1}, Shape{6, 4}, Shape{1, 1}}) {
          g.c = c;
          g.constant_c = (seed % 2) == 0;
          compare_gemm(g, seed++);
        }
      }
}

TEST(OptimizedGemm, FoldsAlphaAndBetaIntoConstants) {
  GemmCase g{8, 12, 10, false, true, 0.5f, 2.f, Shape{10}};
  compare_gemm(g, 500);
  g.trans_a = true;
  g.c = Shape{8, 10};
  g.alpha = -1.5f;
  g.beta = 0.25f;
  compare_gemm(g, 501);
  // A linear layer: transB, bias, batch 1 (openWakeWord's heads).
  compare_gemm(GemmCase{1, 2400, 32, false, true, 1.f, 1.f, Shape{32}}, 502);
  compare_gemm(GemmCase{1, 32, 1, false, true, 1.f, 1.f, Shape{1}}, 503);
  compare_gemm(GemmCase{3, 1, 2, false, false, 1.f, 1.f, Shape{2}}, 504);  // K = 1
  // Split by rows over threads, with transposed A and a per-row C.
  compare_gemm(GemmCase{300, 200, 100, true, false, 1.f, 1.f, Shape{300, 1}}, 505);
  compare_gemm(GemmCase{300, 200, 100, false, true, 1.f, 1.f, Shape{300, 100}, false, false}, 506);
}

TEST(OptimizedGemm, DeclinesWhatItCannotFoldAndDelegatesEmptyShapes) {
  // alpha with a fed B, beta with a fed C, beta = 0: the reference kernel runs the node.
  GemmCase fed_b{4, 3, 5, false, false, 2.f, 1.f, std::nullopt, false};
  compare_gemm(fed_b, 600, false);
  GemmCase fed_c{4, 3, 5, false, false, 1.f, 0.5f, Shape{5}, true, false};
  compare_gemm(fed_c, 601, false);
  GemmCase beta0{4, 3, 5, false, false, 1.f, 0.f, Shape{5}};
  compare_gemm(beta0, 602, false);
  bool used = true;
  OpTester t("Gemm", 13);
  t.input(random_tensor({4, 3}, 1)).input(random_tensor({3, 5}, 2)).attr("alpha", 2.f);
  t.output_shape_only(DType::kFloat32, {});
  t.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  // Accepted at plan time, empty at run time: the reference computes it.
  GemmCase empty_m{0, 3, 5, false, false, 1.f, 1.f, Shape{5}};
  empty_m.fast = false;
  compare_gemm(empty_m, 603);
  GemmCase empty_k{4, 0, 5, false, false, 1.f, 1.f, Shape{5}};
  empty_k.fast = false;
  compare_gemm(empty_k, 604);
}

void compare_softmax(const std::string& op, int opset, const Shape& shape, std::optional<int64_t> axis, uint32_t seed) {
  SCOPED_TRACE(op + " opset " + std::to_string(opset) + " " + shape_to_string(shape) +
               " axis=" + (axis ? std::to_string(*axis) : "default"));
  OpTester t(op, opset);
  if (axis) t.attr("axis", *axis);
  Tensor x = random_tensor(shape, seed);
  for (float& v : x.values<float>()) v *= 8.f;  // a wide range exercises the max subtraction
  t.input(x).output_shape_only(DType::kFloat32, {}).tolerance(1e-5, 1e-4);
  compare_expecting(t, true);
}

TEST(OptimizedSoftmax, MatchesReferenceForBothAxisSemantics) {
  uint32_t seed = 700;
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    // Opset 13: one axis, also a middle one.
    compare_softmax(op, 13, {3, 197, 197}, std::nullopt, seed++);
    compare_softmax(op, 13, {2, 5, 7}, 1, seed++);
    compare_softmax(op, 13, {2, 5, 7}, -3, seed++);
    compare_softmax(op, 13, {9}, 0, seed++);
    // Before 13: coerced to 2-D at axis (default 1), normalized over everything after it.
    compare_softmax(op, 11, {2, 5, 7}, std::nullopt, seed++);
    compare_softmax(op, 11, {2, 5, 7}, 0, seed++);
    compare_softmax(op, 1, {1, 2, 25, 40}, 3, seed++);  // PP-OCR's attention softmax (opset 9)
    compare_softmax(op, 11, {2, 5, 7}, -1, seed++);
    compare_softmax(op, 13, {2, 150, 9, 40}, 1, seed++);  // split by rows over threads, inner > 1
  }
}

TEST(OptimizedSoftmax, DelegatesEmptyAndDeclinesDouble) {
  OpTester empty("Softmax", 13);
  empty.input(Tensor(DType::kFloat32, {0, 4})).output_shape_only(DType::kFloat32, {});
  compare_expecting(empty, false);
  OpTester f64("Softmax", 13);
  f64.input<double>({2}, {0.0, 1.0}).output_shape_only(DType::kFloat64, {});
  bool used = true;
  f64.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
}

void compare_layer_norm(const Shape& x, int64_t axis, bool with_bias, uint32_t seed) {
  SCOPED_TRACE("LayerNormalization " + shape_to_string(x) + " axis=" + std::to_string(axis));
  const int64_t rank = static_cast<int64_t>(x.size());
  const Shape block(x.begin() + (axis < 0 ? axis + rank : axis), x.end());
  OpTester t("LayerNormalization", 17);
  t.attr("axis", axis).attr("epsilon", 1e-6f);
  t.input(random_tensor(x, seed)).input(random_tensor(block, seed + 1));
  if (with_bias) t.input(random_tensor(block, seed + 2));
  t.output_shape_only(DType::kFloat32, {}).tolerance(1e-5, 1e-4);
  compare_expecting(t, true);
}

TEST(OptimizedLayerNorm, MatchesReference) {
  compare_layer_norm({1, 197, 192}, -1, true, 800);
  compare_layer_norm({2, 3, 4, 5}, 2, true, 801);
  compare_layer_norm({2, 3, 4, 5}, 0, false, 802);
  compare_layer_norm({7, 1}, -1, true, 803);
  compare_layer_norm({4, 197, 192}, -1, true, 804);  // split by rows over threads
}

TEST(OptimizedLayerNorm, DeclinesStatisticsOutputsAndDelegatesBroadcastScale) {
  OpTester stats("LayerNormalization", 17);
  stats.input(random_tensor({2, 4}, 1)).input(random_tensor({4}, 2)).output_shape_only(DType::kFloat32, {2, 4});
  stats.output_shape_only(DType::kFloat32, {2, 1});
  bool used = true;
  stats.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  // A Scale that broadcasts inside the normalized block is left to the reference at run time.
  OpTester broadcast("LayerNormalization", 17);
  broadcast.attr("axis", 1).input(random_tensor({2, 3, 4}, 3)).input(random_tensor({1, 4}, 4));
  broadcast.output_shape_only(DType::kFloat32, {}).tolerance(1e-5, 1e-4);
  compare_expecting(broadcast, false);
}

/// A tail node's plan-time view, with constant inputs, for calling fuse_tail directly.
class TailInit : public runtime::KernelInit {
 public:
  TailInit(const runtime::NodeSpec& spec, std::vector<std::optional<Tensor>> constants)
      : KernelInit(spec, runtime::Precision::kFloat32), constants_(std::move(constants)) {}
  std::optional<Tensor> constant_input(size_t i) const override {
    return i < constants_.size() ? constants_[i] : std::nullopt;
  }

 private:
  std::vector<std::optional<Tensor>> constants_;
};

runtime::NodeSpec node_spec(const std::string& op, std::vector<std::string> inputs, int opset = 17) {
  runtime::NodeSpec spec;
  spec.op_type = op;
  spec.opset = opset;
  spec.since_version = opset;
  spec.inputs = std::move(inputs);
  spec.outputs = {op + "_out"};
  return spec;
}

TEST(OptimizedMatMul, AcceptsBiasScalingAndActivationTailsOnly) {
  const auto& registry = runtime::KernelRegistry::instance();
  runtime::NodeSpec spec = node_spec("MatMul", {"a", "w"});
  const auto* reference = registry.resolve("", "MatMul", 17);
  ASSERT_NE(reference, nullptr);
  const auto* optimized = registry.resolve_optimized(*reference, 17);
  ASSERT_NE(optimized, nullptr);
  spec.since_version = reference->since_version;
  TailInit init(spec, {std::nullopt, random_tensor({4, 3}, 1)});
  auto kernel = optimized->create(init);
  ASSERT_NE(kernel, nullptr);
  auto* fusable = dynamic_cast<runtime::FusableKernel*>(kernel.get());
  ASSERT_NE(fusable, nullptr);

  const runtime::NodeSpec add = node_spec("Add", {"mm", "bias"});
  EXPECT_TRUE(fusable->fuse_tail(TailInit(add, {std::nullopt, random_tensor({3}, 2)}), 2));
  const runtime::NodeSpec relu = node_spec("Relu", {"x"});
  EXPECT_TRUE(fusable->fuse_tail(TailInit(relu, {}), 3));
  const runtime::NodeSpec mul = node_spec("Mul", {"x", "s"});
  EXPECT_TRUE(fusable->fuse_tail(TailInit(mul, {std::nullopt, Tensor::scalar<float>(0.125f)}), 3));
  // A second bias (the post-ops already started) and a non-scalar Mul are refused.
  EXPECT_FALSE(fusable->fuse_tail(TailInit(add, {std::nullopt, random_tensor({3}, 3)}), 4));
  EXPECT_FALSE(fusable->fuse_tail(TailInit(mul, {std::nullopt, random_tensor({3}, 4)}), 4));
  const runtime::NodeSpec transpose = node_spec("Transpose", {"x"});
  EXPECT_FALSE(fusable->fuse_tail(TailInit(transpose, {}), 4));
}

/// X(batch, 4, 8) -> MatMul(W) -> Add(bias, .) -> Relu -> Mul(0.5) -> Y, plus a Gemm head with a
/// Sigmoid tail: the fused optimized plan must equal the reference plan.
ModelBuilder linear_model(int64_t batch) {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {batch, 4, 8});
  m.input("g", DType::kFloat32, {3, 8});
  m.initializer("w", random_tensor({8, 16}, 11));
  m.initializer("bias", random_tensor({16}, 12));
  m.initializer("half", Tensor::scalar<float>(0.5f));
  m.initializer("gw", random_tensor({5, 8}, 13));
  m.initializer("gb", random_tensor({5}, 14));
  m.node("MatMul", {"x", "w"}, {"mm"});
  m.node("Add", {"bias", "mm"}, {"biased"});  // torch's nn.Linear order: bias first
  m.node("Relu", {"biased"}, {"act"});
  m.node("Mul", {"act", "half"}, {"y"});
  auto& gemm = m.node("Gemm", {"g", "gw", "gb"}, {"gemm"});
  add_int_attr(gemm, "transB", 1);
  m.node("Sigmoid", {"gemm"}, {"z"});
  m.output("y", DType::kFloat32, {batch, 4, 16});
  m.output("z", DType::kFloat32, {3, 5});
  return m;
}

void expect_tiers_agree(const ModelBuilder& model, const TensorMap& feed, int threads, bool fast_path,
                        const std::vector<std::string>& intermediates_to_check = {"mm", "y", "z"}) {
  runtime::SessionOptions fast;
  fast.kernel_options.isa_cap = test_kernel_isa();
  fast.threads = threads;
  runtime::SessionOptions reference = fast;
  reference.kernels = KernelTier::kReference;
  auto optimized_session = runtime::Session::create(model.model(), fast).value();
  auto reference_session = runtime::Session::create(model.model(), reference).value();
  const TensorMap expected = reference_session.run(feed);
  const uint64_t before = runtime::ops::ReferenceChain::fallback_count();
  const TensorMap actual = optimized_session.run(feed);
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count() == before, fast_path);
  for (const auto& [name, tensor] : expected) EXPECT_TRUE(tensors_close(actual.at(name), tensor, kAtol, kRtol)) << name;
  // Asking for an intermediate uses the unfused plan; it agrees as well.
  runtime::RunOptions intermediates;
  intermediates.outputs = intermediates_to_check;
  const TensorMap unfused = optimized_session.run(feed, intermediates);
  EXPECT_TRUE(tensors_close(unfused.at("y"), expected.at("y"), kAtol, kRtol));
}

TEST(OptimizedLinearFusion, SessionMatchesReferenceTier) {
  for (int threads : {1, 2}) expect_tiers_agree(linear_model(2), {{"x", random_tensor({2, 4, 8}, 20)}, {"g", random_tensor({3, 8}, 21)}}, threads, true);
}

TEST(OptimizedLinearFusion, FusedChainFallsBackToReferenceKernelsOnEmptyBatch) {
  // Dynamic batch fed as 0: the fused MatMul+Add+Relu+Mul runs its reference chain.
  expect_tiers_agree(linear_model(-1), {{"x", Tensor(DType::kFloat32, {0, 4, 8})}, {"g", random_tensor({3, 8}, 22)}}, 1, false);
}

/// Attention-sized products, softmax and layer norm: large enough that every kernel splits its
/// rows over the session's threads, so primitives run on threads other than their creator's.
TEST(OptimizedLinearFusion, ChunkedKernelsAgreeAcrossThreadsAndRuns) {
  ModelBuilder m(17);
  m.input("q", DType::kFloat32, {3, 197, 64});
  m.input("k", DType::kFloat32, {3, 64, 197});
  m.input("v", DType::kFloat32, {3, 197, 128});
  m.initializer("scale", random_tensor({128}, 30));
  m.initializer("shift", random_tensor({128}, 31));
  m.node("MatMul", {"q", "k"}, {"scores"});
  m.node("Softmax", {"scores"}, {"probs"});
  m.node("MatMul", {"probs", "v"}, {"context"});
  m.node("LayerNormalization", {"context", "scale", "shift"}, {"y"});
  m.output("y", DType::kFloat32, {3, 197, 128});
  // PP-OCRv4 rec's classifier: long softmax rows need a scratchpad, which two threads running
  // the same primitive must not share (oneDNN's default library scratchpad garbled this output).
  m.input("features", DType::kFloat32, {40, 120});
  m.initializer("classes", random_tensor({120, 6625}, 35));
  m.initializer("class_bias", random_tensor({6625}, 36));
  m.node("MatMul", {"features", "classes"}, {"logits"});
  m.node("Add", {"logits", "class_bias"}, {"class_scores"});
  m.node("Softmax", {"class_scores"}, {"scores_out"});
  m.output("scores_out", DType::kFloat32, {40, 6625});
  const TensorMap feed{{"q", random_tensor({3, 197, 64}, 32)},
                       {"k", random_tensor({3, 64, 197}, 33)},
                       {"v", random_tensor({3, 197, 128}, 34)},
                       {"features", random_tensor({40, 120}, 37)}};
  runtime::SessionOptions reference;
  reference.kernel_options.isa_cap = test_kernel_isa();
  reference.kernels = KernelTier::kReference;
  const TensorMap expected = runtime::Session::create(m.model(), reference).value().run(feed);
  for (int threads : {1, 2, 3}) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = test_kernel_isa();
    options.threads = threads;
    auto session = runtime::Session::create(m.model(), options).value();
    for (int run = 0; run < 8; ++run) {
      const uint64_t before = runtime::ops::ReferenceChain::fallback_count();
      const TensorMap actual = session.run(feed);
      for (const char* name : {"y", "scores_out"})
        EXPECT_TRUE(tensors_close(actual.at(name), expected.at(name), kAtol, kRtol))
            << name << ", " << threads << " threads, run " << run;
      EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), before);
    }
  }
}

TEST(OptimizedLinearFusion, BiasFirstAddAndActivationAreFusedIntoTheMatMul) {
  // The fused node's label names its tails: a run-time mismatch (K = 5 against weights of K = 8)
  // fails in the fused node's reference chain and shows that Add(bias, MatMul) and Relu were fused.
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {2, 4, -1});
  m.initializer("w", random_tensor({8, 16}, 40));
  m.initializer("bias", random_tensor({16}, 41));
  m.node("MatMul", {"x", "w"}, {"mm"}, "proj");
  m.node("Add", {"bias", "mm"}, {"biased"}, "proj_bias");
  m.node("Relu", {"biased"}, {"y"}, "act");
  m.output("y", DType::kFloat32, {2, 4, 16});
  auto session = runtime::Session::create(m.model()).value();
  EXPECT_EQ(session.run({{"x", random_tensor({2, 4, 8}, 42)}}).at("y").shape(), (Shape{2, 4, 16}));
  try {
    session.run({{"x", random_tensor({2, 4, 5}, 43)}});
    ADD_FAILURE() << "a K mismatch ran";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("proj"), std::string::npos) << message;
    EXPECT_NE(message.find("fused with Add node 'proj_bias'"), std::string::npos) << message;
    EXPECT_NE(message.find("fused with Relu node 'act'"), std::string::npos) << message;
  }
}

/// MatMul -> Add(bias) -> Add(residual) -> Relu and Gemm -> Add(residual), all static shapes: the
/// residual Adds become oneDNN binary post-ops.
ModelBuilder residual_model() {
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {2, 4, 8});
  m.input("r", DType::kFloat32, {2, 4, 16});
  m.input("g", DType::kFloat32, {3, 8});
  m.input("gr", DType::kFloat32, {3, 5});
  m.initializer("w", random_tensor({8, 16}, 50));
  m.initializer("bias", random_tensor({16}, 51));
  m.initializer("gw", random_tensor({5, 8}, 52));
  m.node("MatMul", {"x", "w"}, {"mm"}, "proj");
  m.node("Add", {"bias", "mm"}, {"biased"}, "proj_bias");
  m.node("Add", {"r", "biased"}, {"summed"}, "residual");
  m.node("Relu", {"summed"}, {"y"}, "act");
  auto& gemm = m.node("Gemm", {"g", "gw"}, {"gemm"}, "head");
  add_int_attr(gemm, "transB", 1);
  m.node("Add", {"gemm", "gr"}, {"z"}, "head_residual");
  m.output("y", DType::kFloat32, {2, 4, 16});
  m.output("z", DType::kFloat32, {3, 5});
  return m;
}

TEST(OptimizedLinearFusion, ResidualAddsRunAsBinaryPostOps) {
  const TensorMap feed{{"x", random_tensor({2, 4, 8}, 53)},
                       {"r", random_tensor({2, 4, 16}, 54)},
                       {"g", random_tensor({3, 8}, 55)},
                       {"gr", random_tensor({3, 5}, 56)}};
  for (int threads : {1, 2}) expect_tiers_agree(residual_model(), feed, threads, true, {"mm", "y", "z"});
  // The residual is fused (the fused node's label names it)...
  auto session = runtime::Session::create(residual_model().model()).value();
  runtime::RunOptions unchecked;
  unchecked.check_input_shapes = false;
  TensorMap bad_k = feed;
  bad_k.set("x", random_tensor({2, 4, 5}, 57));
  try {
    session.run(bad_k, unchecked);
    ADD_FAILURE() << "a K mismatch ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fused with Add node 'residual'"), std::string::npos) << e.what();
  }
  // ...and a residual that only broadcasts to the output at run time goes to the reference chain.
  TensorMap broadcast = feed;
  broadcast.set("r", random_tensor({2, 4, 1}, 58));
  runtime::SessionOptions reference;
  reference.kernel_options.isa_cap = test_kernel_isa();
  reference.kernels = KernelTier::kReference;
  const TensorMap expected = runtime::Session::create(residual_model().model(), reference).value().run(broadcast, unchecked);
  const uint64_t before = runtime::ops::ReferenceChain::fallback_count();
  const TensorMap actual = session.run(broadcast, unchecked);
  EXPECT_GT(runtime::ops::ReferenceChain::fallback_count(), before);
  EXPECT_TRUE(tensors_close(actual.at("y"), expected.at("y"), kAtol, kRtol));
}

/// Runs `fn` and checks whether it took the direct small-product path.
template <typename Fn>
void expect_direct(bool direct, Fn&& fn) {
  const uint64_t before = runtime::ops::small_gemm::runs();
  fn();
  EXPECT_EQ(runtime::ops::small_gemm::runs() > before, direct)
      << (direct ? "the direct small product was expected" : "oneDNN was expected");
}

TEST(OptimizedSmallProduct, GemmOfFewRowsMatchesReference) {
  uint32_t seed = 700;
  for (int64_t m : {1, 2, 4})
    for (int64_t k : {1, 7, 8, 33})
      for (int64_t n : {1, 3, 4, 5})
        for (bool tb : {false, true}) {
          GemmCase g{m, k, n, false, tb};
          const Shape cs[] = {Shape{n}, Shape{m, 1}, Shape{m, n}, Shape{1, 1}};
          g.c = cs[seed % 4];
          g.alpha = seed % 3 == 0 ? 0.5f : 1.f;
          expect_direct(true, [&] { compare_gemm(g, seed); });
          ++seed;
        }
  // openWakeWord's first layer, and a C-less product.
  expect_direct(true, [&] { compare_gemm(GemmCase{1, 2400, 32, false, true, 1.f, 1.f, Shape{32}}, 750); });
  expect_direct(true, [&] { compare_gemm(GemmCase{3, 17, 9, false, false}, 751); });
  // transA: a single row is contiguous either way; several rows go to oneDNN.
  expect_direct(true, [&] { compare_gemm(GemmCase{1, 19, 6, true, true, 1.f, 1.f, Shape{6}}, 752); });
  expect_direct(false, [&] { compare_gemm(GemmCase{3, 19, 6, true, true, 1.f, 1.f, Shape{6}}, 753); });
  // More rows than kMaxRows, or a fed B: oneDNN.
  expect_direct(false, [&] { compare_gemm(GemmCase{runtime::ops::small_gemm::kMaxRows + 1, 8, 4, false, true}, 754); });
  GemmCase fed{1, 8, 4, false, true, 1.f, 1.f, Shape{4}, false};
  expect_direct(false, [&] { compare_gemm(fed, 755); });
}

/// y = Gemm(x, W, b) with a constant W of `n` x `k` (transB) or `k` x `n`, run by a Session.
TensorMap run_linear(int64_t m, int64_t k, int64_t n, bool trans_b, KernelTier tier, int threads) {
  ModelBuilder mb;
  mb.input("x", DType::kFloat32, {m, k}).output("y", DType::kFloat32, {m, n});
  mb.initializer("W", random_tensor(trans_b ? Shape{n, k} : Shape{k, n}, 810));
  mb.initializer("b", random_tensor({n}, 811));
  add_int_attr(mb.node("Gemm", {"x", "W", "b"}, {"y"}, "fc"), "transB", trans_b ? 1 : 0);
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.kernels = tier;
  options.threads = threads;
  const runtime::Session session = runtime::Session::create(mb.model(), options).value();
  TensorMap feed;
  feed.set("x", random_tensor({m, k}, 812));
  return session.run(feed);
}

TEST(OptimizedSmallProduct, LargeWeightsAreUsedInPlaceOnEveryThread) {
  // A classifier layer at batch 1 beyond kMaxTransposedWeights takes the direct path at any size
  // (no packed or transposed copy), split by output columns over the threads: [N, K] weights as
  // rows of K, [K, N] ones read row by row of N.
  const int64_t k = 4200, n = 1010;
  ASSERT_GT(k * n, runtime::ops::small_gemm::kMaxTransposedWeights);
  for (bool trans_b : {true, false})
    for (int64_t m : {1, 3})
      for (int threads : {1, 2}) {
        SCOPED_TRACE("transB=" + std::to_string(trans_b) + " m=" + std::to_string(m) +
                     " threads=" + std::to_string(threads));
        const TensorMap expected = run_linear(m, k, n, trans_b, KernelTier::kReference, 1);
        TensorMap actual;
        expect_direct(true, [&] { actual = run_linear(m, k, n, trans_b, KernelTier::kOptimized, threads); });
        EXPECT_TRUE(tensors_close(actual.at("y"), expected.at("y"), kAtol, kRtol));
      }
  // More rows than kMaxRows: oneDNN.
  const TensorMap expected = run_linear(5, k, n, false, KernelTier::kReference, 1);
  TensorMap actual;
  expect_direct(false, [&] { actual = run_linear(5, k, n, false, KernelTier::kOptimized, 2); });
  EXPECT_TRUE(tensors_close(actual.at("y"), expected.at("y"), kAtol, kRtol));
}

TEST(OptimizedSmallProduct, ProductsSplitBetweenThreadsMatchReference) {
  ASSERT_GT(210000 * 20, runtime::ops::small_gemm::kMaxTransposedWeights);
  // From 64K weights a few-row product is split by output columns; the chunk edges fall inside
  // SIMD vectors and column blocks (N not a multiple of 8 or of the kernel's block), and large
  // [K, N] weights (read in place, past kMaxTransposedWeights) with few columns leave chunks
  // narrower than a vector. Sums of 210,000 products, whose partial sums reach ~150, round by
  // ~1e-3 in any order: that case's tolerance is wider.
  for (const auto& [k_case, n_case] : {std::pair<int64_t, int64_t>{300, 301}, {257, 1029}, {210000, 20}})
    for (bool trans_b : {true, false})
      for (int64_t m : {1, 2, 4}) {
        const int64_t k = k_case, n = n_case;  // clang 14 cannot capture structured bindings
        SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n) + " transB=" + std::to_string(trans_b) +
                     " m=" + std::to_string(m));
        const TensorMap expected = run_linear(m, k, n, trans_b, KernelTier::kReference, 1);
        TensorMap actual;
        expect_direct(true, [&] { actual = run_linear(m, k, n, trans_b, KernelTier::kOptimized, 2); });
        const double atol = k > 100000 ? 5e-3 : kAtol;
        EXPECT_TRUE(tensors_close(actual.at("y"), expected.at("y"), atol, kRtol));
      }
}

TEST(OptimizedSmallProduct, ColumnsOfKnWeightsMatchTheRowsOfKLoop) {
  // multiply_kn (dispatched and portable) on a column slice of wider [K, N] weights equals
  // multiply on the same weights transposed to [N, K].
  const int64_t k = 37, full_n = 1100, begin = 5, n = 1030;  // K's remainder after fours; N's after eights
  const Tensor w_kn = random_tensor({k, full_n}, 790);
  Tensor w_nk(DType::kFloat32, {n, k});
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) w_nk.data<float>()[j * k + i] = w_kn.data<float>()[i * full_n + begin + j];
  for (int64_t rows : {1, 2, 3, 4}) {
    SCOPED_TRACE("rows=" + std::to_string(rows));
    const Tensor x = random_tensor({rows, k}, 791);
    Tensor expected(DType::kFloat32, {rows, n}), fast(DType::kFloat32, {rows, n}), portable(DType::kFloat32, {rows, n});
    runtime::ops::small_gemm::multiply(x.data<float>(), k, w_nk.data<float>(), n, k, expected.data<float>(), n, rows,
                                       test_kernel_isa());
    runtime::ops::small_gemm::multiply_kn(x.data<float>(), k, w_kn.data<float>() + begin, full_n, n, k,
                                          fast.data<float>(), n, rows, test_kernel_isa());
    runtime::ops::small_gemm::multiply_kn_portable(x.data<float>(), k, w_kn.data<float>() + begin, full_n, n, k,
                                                   portable.data<float>(), n, rows);
    EXPECT_TRUE(tensors_close(fast, expected, kAtol, kRtol));
    EXPECT_TRUE(tensors_close(portable, expected, kAtol, kRtol));
  }
}

TEST(OptimizedSmallProduct, PortableLoopMatchesTheDispatchedOne) {
  // The CPUs here have AVX2; the portable loop (other CPUs) is checked against it directly.
  for (const auto& [rows, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 2400, 32}, {3, 33, 5}, {4, 7, 1}, {2, 1, 9}}) {
    const Tensor x = random_tensor({rows, k}, 780), w = random_tensor({n, k}, 781);
    Tensor fast(DType::kFloat32, {rows, n}), portable(DType::kFloat32, {rows, n});
    runtime::ops::small_gemm::multiply(x.data<float>(), k, w.data<float>(), n, k, fast.data<float>(), n, rows,
                                       test_kernel_isa());
    runtime::ops::small_gemm::multiply_portable(x.data<float>(), k, w.data<float>(), n, k, portable.data<float>(), n,
                                                rows);
    EXPECT_TRUE(tensors_close(portable, fast, kAtol, kRtol)) << rows << "x" << k << "x" << n;
  }
}

TEST(OptimizedSmallProduct, Avx512LoopMatchesTheOthersWithAndWithoutPrefetch) {
  // The dispatched loop (AVX-512 here) against the AVX2 and portable ones: K's remainder after
  // sixteens (masked loads), N's after fours, one to four rows, and weights below and above the
  // 1 MiB from which the loop prefetches the next rows.
  for (const auto& [rows, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 512, 2048}, {2, 700, 383}, {3, 33, 7},
                                   {4, 17, 5}, {1, 15, 9}, {2, 1, 3}, {3, 1030, 301}}) {
    const Tensor x = random_tensor({rows, k}, 782), w = random_tensor({n, k}, 783);
    Tensor fast(DType::kFloat32, {rows, n}), avx2(DType::kFloat32, {rows, n}), portable(DType::kFloat32, {rows, n});
    runtime::ops::small_gemm::multiply(x.data<float>(), k, w.data<float>(), n, k, fast.data<float>(), n, rows,
                                       test_kernel_isa());
    runtime::ops::small_gemm::multiply(x.data<float>(), k, w.data<float>(), n, k, avx2.data<float>(), n, rows,
                                       runtime::min_isa(test_kernel_isa(), runtime::KernelIsa::kAvx2));
    runtime::ops::small_gemm::multiply_portable(x.data<float>(), k, w.data<float>(), n, k, portable.data<float>(), n,
                                                rows);
    EXPECT_TRUE(tensors_close(fast, portable, kAtol, kRtol)) << rows << "x" << k << "x" << n;
    EXPECT_TRUE(tensors_close(avx2, portable, kAtol, kRtol)) << rows << "x" << k << "x" << n;
  }
}

TEST(OptimizedSmallProduct, MatMulOfFewRowsMatchesReference) {
  expect_direct(true, [&] { compare_matmul({1, 64}, {64, 10}, true, 760); });
  expect_direct(true, [&] { compare_matmul({2, 1, 9}, {9, 3}, true, 761); });  // batch folds into 2 rows
  expect_direct(true, [&] { compare_matmul({13}, {13, 5}, true, 762); });       // vector A
  expect_direct(true, [&] { compare_matmul({4, 1}, {1, 1}, true, 763); });      // K = N = 1
  expect_direct(false, [&] { compare_matmul({1, 64}, {64, 10}, false, 764); });  // fed B
  expect_direct(false, [&] { compare_matmul({3, 5}, {5}, true, 765); });         // vector B
  expect_direct(false, [&] { compare_matmul({2, 3, 5}, {2, 5, 4}, true, 766); });  // batched B
}

/// x(rows, 24) -> Gemm(W, b) -> `tails`: the fused node's epilogue in the direct loop (or, for
/// an activation it does not implement, on oneDNN) equals the reference tier.
void compare_small_chain(int64_t rows, const std::vector<std::string>& tails, bool direct, uint32_t seed) {
  SCOPED_TRACE("rows=" + std::to_string(rows) + " tails=" + std::to_string(tails.size()));
  ModelBuilder m(17);
  m.input("x", DType::kFloat32, {rows, 24});
  m.input("r", DType::kFloat32, {rows, 6});
  m.initializer("w", random_tensor({6, 24}, seed));
  m.initializer("b", random_tensor({6}, seed + 1));
  m.initializer("three", Tensor::scalar<float>(3.f));
  m.initializer("lo", Tensor::scalar<float>(-0.5f));
  m.initializer("hi", Tensor::scalar<float>(0.75f));
  auto& gemm = m.node("Gemm", {"x", "w", "b"}, {"t0"});
  add_int_attr(gemm, "transB", 1);
  std::string last = "t0";
  for (size_t i = 0; i < tails.size(); ++i) {
    const std::string out = "t" + std::to_string(i + 1);
    if (tails[i] == "Mul") m.node("Mul", {last, "three"}, {out});
    else if (tails[i] == "Sub") m.node("Sub", {last, "three"}, {out});
    else if (tails[i] == "Residual") m.node("Add", {"r", last}, {out});
    else if (tails[i] == "Clip") m.node("Clip", {last, "lo", "hi"}, {out});
    else m.node(tails[i], {last}, {out});
    last = out;
  }
  m.node("Identity", {last}, {"y"});
  m.output("y", DType::kFloat32, {rows, 6});
  const TensorMap feed{{"x", random_tensor({rows, 24}, seed + 2)}, {"r", random_tensor({rows, 6}, seed + 3)}};
  runtime::SessionOptions reference;
  reference.kernel_options.isa_cap = test_kernel_isa();
  reference.kernels = KernelTier::kReference;
  const TensorMap expected = runtime::Session::create(m.model(), reference).value().run(feed);
  auto session = runtime::Session::create(m.model()).value();
  const uint64_t fallbacks = runtime::ops::ReferenceChain::fallback_count();
  expect_direct(direct, [&] { EXPECT_TRUE(tensors_close(session.run(feed).at("y"), expected.at("y"), kAtol, kRtol)); });
  EXPECT_EQ(runtime::ops::ReferenceChain::fallback_count(), fallbacks);
}

TEST(OptimizedSmallProduct, FusedTailsRunInTheDirectLoop) {
  compare_small_chain(1, {"Relu"}, true, 770);
  compare_small_chain(2, {"Mul", "Sigmoid"}, true, 771);
  compare_small_chain(1, {"Residual", "Tanh", "Sub"}, true, 772);
  compare_small_chain(3, {"Clip", "Residual"}, true, 773);
  compare_small_chain(1, {"LeakyRelu"}, true, 774);
  compare_small_chain(1, {"HardSwish"}, true, 775);
  compare_small_chain(2, {"Mul", "HardSwish"}, true, 779);
  // Elu is a oneDNN post-op the direct loop does not implement.
  compare_small_chain(1, {"Elu"}, false, 780);
}

TEST(OptimizedLinear, PostOpsOfOneAlgorithmKeepTheirOwnParameters) {
  // oneDNN 2.6 gives every eltwise post-op the parameters of the first one with its algorithm:
  // the Sub after the Relu ran as a second Mul(3), LeakyRelu's slope leaked into the Relu.
  compare_small_chain(64, {"Mul", "Relu", "Sub"}, false, 776);
  compare_small_chain(64, {"Sub", "LeakyRelu", "Relu", "Mul", "Sub"}, false, 777);
  compare_small_chain(64, {"Clip", "Mul", "Tanh", "Clip", "HardSwish", "Sub"}, false, 778);
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
