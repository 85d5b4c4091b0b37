// Conv fusion through a Session: a small model whose convolutions absorb activations, affine
// constants and residual Adds; the fused plan must compute what the reference kernels compute,
// and hooks / intermediate outputs must still see every value a fusion absorbed.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/test_support.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

using nn::random_tensor;

/// x -> Conv -> Add(other, .) -> Relu -> Conv(1x1) -> Mul(s, .) -> Add(., b) -> Clip(0, 6)
///   -> Conv -> Add(per-channel constant) -> HardSwish -> Conv -> Add(broadcast run-time addend)
///   -> Conv(depthwise) -> Sigmoid -> y
/// The first Add and the Mul read the conv output as their second input (as PyTorch and Paddle
/// exports do); the last Add's addend has shape [1, 6, 1, 1], which the fast path does not take.
ModelBuilder fusion_model() {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 4, 9, 8});
  m.input("other", DType::kFloat32, {1, 6, 9, 8});
  m.input("bcast", DType::kFloat32, {1, 6, 1, 1});
  m.initializer("w1", random_tensor({6, 4, 3, 3}, 11)).initializer("b1", random_tensor({6}, 12));
  m.initializer("w2", random_tensor({6, 6, 1, 1}, 13)).initializer("b2", random_tensor({6}, 14));
  m.initializer("w3", random_tensor({6, 6, 3, 3}, 15));
  m.initializer("w4", random_tensor({6, 6, 1, 1}, 16));
  m.initializer("w5", random_tensor({6, 1, 3, 3}, 17)).initializer("b5", random_tensor({6}, 18));
  m.initializer("scale", Tensor::from_vector<float>({1}, {1.5f}));
  m.initializer("shift", Tensor::from_vector<float>({1}, {-0.25f}));
  m.initializer("lo", Tensor::scalar<float>(0.f)).initializer("hi", Tensor::scalar<float>(6.f));
  m.initializer("per_channel", random_tensor({1, 6, 1, 1}, 19));
  add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Add", {"other", "c1"}, {"sum1"}, "residual");
  m.node("Relu", {"sum1"}, {"r1"}, "relu1");
  m.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  m.node("Mul", {"scale", "c2"}, {"m2"}, "scale2");
  m.node("Add", {"m2", "shift"}, {"a2"}, "shift2");
  m.node("Clip", {"a2", "lo", "hi"}, {"k2"}, "clip2");
  add_ints_attr(m.node("Conv", {"k2", "w3"}, {"c3"}, "conv3"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c3", "per_channel"}, {"a3"}, "bias3");
  m.node("HardSwish", {"a3"}, {"h3"}, "hswish3");
  m.node("Conv", {"h3", "w4"}, {"c4"}, "conv4");
  m.node("Add", {"c4", "bcast"}, {"a4"}, "bcast4");
  auto& dw = m.node("Conv", {"a4", "w5", "b5"}, {"c5"}, "conv5");
  add_int_attr(dw, "group", 6);
  add_ints_attr(dw, "pads", {1, 1, 1, 1});
  m.node("Sigmoid", {"c5"}, {"y"}, "sigmoid5");
  m.output("y", DType::kFloat32, {1, 6, 9, 8});
  return m;
}

TensorMap fusion_feed() {
  return TensorMap{{"x", random_tensor({1, 4, 9, 8}, 1)},
                   {"other", random_tensor({1, 6, 9, 8}, 2)},
                   {"bcast", random_tensor({1, 6, 1, 1}, 3)}};
}

runtime::Session make_session(const onnx::ModelProto& model, runtime::KernelTier tier, bool fuse = true) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.kernels = tier;
  options.fuse = fuse;
  return runtime::Session::create(model, options).value();
}

/// Runs the model at 1, 2 and 3 threads: each run takes oneDNN's fast path exactly once and its
/// output y matches `want`.
void expect_one_fast_run_per_thread_count(const onnx::ModelProto& model, const TensorMap& feed, const Tensor& want) {
  for (int threads : {1, 2, 3}) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = test_kernel_isa();
    options.threads = threads;
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const TensorMap got = runtime::Session::create(model, options).value().run(feed);
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 1u) << threads << " threads";
    EXPECT_TRUE(tensors_close(got.at("y"), want, 2e-4, 2e-4)) << threads << " threads";
  }
}

/// x -> Conv -> Mul(1.9) -> Add(0.8) -> HardSwish -> Mul(0.63) -> Add(-0.55) -> Clip(-1, 2)
///   -> Clip(-0.5, 1.5) -> y: PP-OCRv4 det's "learnable affine" blocks around HardSwish, plus two
/// Clips with different bounds. oneDNN 2.6 gives every eltwise post-op the parameters of the first
/// one with the same algorithm, so unless the kernel avoids it the second affine step computed
/// 1.9 * h + 0.8 and the second Clip clipped to [-1, 2] (on every conv implementation).
ModelBuilder affine_hard_swish_model(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t group,
                                     int64_t size) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, in_channels, size, size});
  m.initializer("w", random_tensor({out_channels, in_channels / group, kernel, kernel}, 31));
  m.initializer("b", random_tensor({out_channels}, 32));
  m.initializer("s1", Tensor::from_vector<float>({1}, {1.900608f}));
  m.initializer("t1", Tensor::from_vector<float>({1}, {0.80117214f}));
  m.initializer("s2", Tensor::from_vector<float>({1}, {0.63296586f}));
  m.initializer("t2", Tensor::from_vector<float>({1}, {-0.54658866f}));
  m.initializer("lo1", Tensor::scalar<float>(-1.f)).initializer("hi1", Tensor::scalar<float>(2.f));
  m.initializer("lo2", Tensor::scalar<float>(-0.5f)).initializer("hi2", Tensor::scalar<float>(1.5f));
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  add_int_attr(conv, "group", group);
  add_ints_attr(conv, "pads", {kernel / 2, kernel / 2, kernel / 2, kernel / 2});
  m.node("Mul", {"s1", "c"}, {"m1"}, "scale1");
  m.node("Add", {"m1", "t1"}, {"a1"}, "shift1");
  m.node("HardSwish", {"a1"}, {"h"}, "hswish");
  m.node("Mul", {"s2", "h"}, {"m2"}, "scale2");
  m.node("Add", {"m2", "t2"}, {"a2"}, "shift2");
  m.node("Clip", {"a2", "lo1", "hi1"}, {"k1"}, "clip1");
  m.node("Clip", {"k1", "lo2", "hi2"}, {"y"}, "clip2");
  m.output("y", DType::kFloat32, {1, out_channels, size, size});
  return m;
}

TEST(OptimizedConvFusion, PostOpsOfOneAlgorithmKeepTheirOwnParameters) {
  struct Geometry {
    int64_t in, out, kernel, group;
  };
  // 1x1 (brgconv_1x1), 3x3 (brgconv), depthwise (brdgmm_dw), grouped (jit) on AVX-512.
  for (const Geometry g : {Geometry{16, 32, 1, 1}, Geometry{16, 32, 3, 1}, Geometry{32, 32, 3, 32}, Geometry{16, 32, 3, 4}}) {
    const ModelBuilder m = affine_hard_swish_model(g.in, g.out, g.kernel, g.group, 20);
    const TensorMap feed{{"x", random_tensor({1, g.in, 20, 20}, 33)}};
    const TensorMap reference = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
    runtime::Session fused_session = make_session(m.model(), runtime::KernelTier::kOptimized);
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const TensorMap fused = fused_session.run(feed);
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 1u);
    EXPECT_TRUE(tensors_close(fused.at("y"), reference.at("y"), 1e-4, 1e-4))
        << "in " << g.in << " out " << g.out << " kernel " << g.kernel << " group " << g.group;
  }
  runtime::PlanEnv env;
  env.opsets[""] = 14;
  env.tier = runtime::KernelTier::kOptimized;
  env.fuse = true;
  auto plan = runtime::plan_graph(affine_hard_swish_model(16, 32, 1, 1, 20).model().graph(), env, nullptr);
  // The second affine step stays fused (as binary post-ops), the second Clip does not.
  ASSERT_EQ(plan->nodes_.size(), 2u);
  EXPECT_NE(plan->nodes_[0].label.find("Clip node 'clip1'"), std::string::npos) << plan->nodes_[0].label;
  EXPECT_EQ(plan->fused_nodes_, 6);
}

TEST(OptimizedConvFusion, PlanAbsorbsEveryTail) {
  const ModelBuilder m = fusion_model();
  runtime::PlanEnv env;
  env.opsets[""] = 14;
  env.tier = runtime::KernelTier::kOptimized;
  env.fuse = true;
  auto plan = runtime::plan_graph(m.model().graph(), env, nullptr);
  // Add+Relu, Mul+Add+Clip, Add+HardSwish, Add, Sigmoid.
  EXPECT_EQ(plan->fused_nodes_, 9);
  ASSERT_EQ(plan->nodes_.size(), 5u);
  EXPECT_NE(plan->nodes_[0].label.find("fused with Add node 'residual'"), std::string::npos) << plan->nodes_[0].label;
  EXPECT_NE(plan->nodes_[0].label.find("Relu node 'relu1'"), std::string::npos) << plan->nodes_[0].label;
}

TEST(OptimizedConvFusion, FusedOutputsMatchReferenceKernels) {
  const ModelBuilder m = fusion_model();
  const TensorMap feed = fusion_feed();
  const TensorMap reference = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  runtime::Session fused_session = make_session(m.model(), runtime::KernelTier::kOptimized);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const TensorMap fused = fused_session.run(feed);
  // Four convolutions run on oneDNN; the one whose residual addend broadcasts runs the reference.
  EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 4u);
  const TensorMap unfused = make_session(m.model(), runtime::KernelTier::kOptimized, false).run(feed);
  EXPECT_TRUE(tensors_close(fused.at("y"), reference.at("y"), 1e-4, 1e-4));
  EXPECT_TRUE(tensors_close(unfused.at("y"), reference.at("y"), 1e-4, 1e-4));
}

TEST(OptimizedConvFusion, ResidualWithOtherShapeTakesReferencePath) {
  // The residual input is declared [1, 6, 9, 8] but fed as [1, 6, 1, 8]: Add broadcasts, so the
  // fused node runs the reference kernels for this call and still matches.
  const ModelBuilder m = fusion_model();
  TensorMap feed = fusion_feed();
  feed.set("other", random_tensor({1, 6, 1, 8}, 9));
  runtime::RunOptions no_shape_check;
  no_shape_check.check_input_shapes = false;
  const TensorMap reference = make_session(m.model(), runtime::KernelTier::kReference).run(feed, no_shape_check);
  const TensorMap fused = make_session(m.model(), runtime::KernelTier::kOptimized).run(feed, no_shape_check);
  EXPECT_TRUE(tensors_close(fused.at("y"), reference.at("y"), 1e-4, 1e-4));
}

TEST(OptimizedConvFusion, HooksAndIntermediatesSeeAbsorbedValues) {
  const ModelBuilder m = fusion_model();
  const TensorMap feed = fusion_feed();
  runtime::Session reference = make_session(m.model(), runtime::KernelTier::kReference);
  runtime::Session optimized = make_session(m.model(), runtime::KernelTier::kOptimized);

  std::map<std::string, Tensor> seen;
  runtime::RunOptions hook;
  hook.hook = [&](const std::string& name, const runtime::Value& v) { seen[name] = v.tensor().clone(); };
  optimized.run(feed, hook);
  for (const char* name : {"c1", "sum1", "r1", "c2", "m2", "a2", "k2", "c3", "a3", "h3", "c4", "a4", "c5", "y"})
    EXPECT_TRUE(seen.count(name)) << name << " was not seen by the hook";

  runtime::RunOptions marked;
  marked.outputs = {"c1", "sum1", "m2", "a3", "y"};
  const TensorMap want = reference.run(feed, marked);
  const TensorMap got = optimized.run(feed, marked);
  for (const auto& name : marked.outputs) {
    EXPECT_TRUE(tensors_close(got.at(name), want.at(name), 1e-4, 1e-4)) << name;
    EXPECT_TRUE(tensors_close(seen.at(name), want.at(name), 1e-4, 1e-4)) << name << " (hook)";
  }
  EXPECT_EQ(optimized.intermediate_names().size(), reference.intermediate_names().size());
}

TEST(OptimizedConvFusion, MultiThreadedRunsMatch) {
  const ModelBuilder m = fusion_model();
  const TensorMap feed = fusion_feed();
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = 2;
  const TensorMap two = runtime::Session::create(m.model(), options).value().run(feed);
  const TensorMap reference = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  EXPECT_TRUE(tensors_close(two.at("y"), reference.at("y"), 1e-4, 1e-4));
}

/// Convolutions big enough to be split into output-row slices over the session's threads:
/// strided, dilated, padded, grouped, 1-D and 3-D, with a residual Add, at 1, 2 and 3 threads.
TEST(OptimizedConvFusion, RowSlicesOverThreadsMatchReference) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{1, 16, 31, 29}, {32, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1},
      {{2, 16, 23, 20}, {16, 16, 3, 3}, {1, 1}, {2, 2}, {2, 1, 3, 2}, 1},
      {{1, 32, 40, 33}, {32, 1, 5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 32},
      {{1, 64, 17, 19}, {64, 64, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 16, 11, 10}, {16, 16, 7, 7}, {1, 1}, {1, 1}, {3, 3, 3, 3}, 1},
      {{2, 24, 301}, {24, 24, 5}, {1}, {3}, {6, 6}, 1},
      {{1, 8, 9, 10, 11}, {8, 8, 3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 1},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " * " + shape_to_string(c.w));
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, c.x);
    m.initializer("w", random_tensor(c.w, ++seed));
    m.initializer("b", random_tensor({c.w[0]}, ++seed));
    auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
    add_ints_attr(conv, "strides", c.strides);
    add_ints_attr(conv, "dilations", c.dilations);
    add_ints_attr(conv, "pads", c.pads);
    add_int_attr(conv, "group", c.group);
    m.output("y", DType::kFloat32, {});
    // The conv's output shape, for a residual addend of exactly that shape.
    const TensorMap plain = runtime::Session::create(
                                [&] {
                                  ModelBuilder probe = m;
                                  probe.graph().mutable_output(0)->set_name("c");
                                  return probe.model();
                                }(),
                                {})
                                .value()
                                .run({{"x", random_tensor(c.x, 1)}});
    const Shape out_shape = plain.at("c").shape();
    m.input("other", DType::kFloat32, out_shape);
    m.node("Add", {"other", "c"}, {"s"}, "residual");
    m.node("Relu", {"s"}, {"y"}, "relu");
    const TensorMap feed{{"x", random_tensor(c.x, ++seed)}, {"other", random_tensor(out_shape, ++seed)}};
    const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
    expect_one_fast_run_per_thread_count(m.model(), feed, want.at("y"));
  }
}

/// ConvTranspose whose windows do not overlap along the rows (kernel == stride) splits its input
/// rows over threads; overlapping ones (kernel 3, stride 2) and padded ones run whole.
TEST(OptimizedConvFusion, DisjointConvTransposeRowSlicesMatchReference) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads;
  };
  const std::vector<Case> cases = {
      {{1, 24, 81, 60}, {24, 1, 2, 2}, {2, 2}, {0, 0, 0, 0}},
      {{2, 16, 21, 17}, {16, 8, 2, 3}, {2, 3}, {0, 0, 0, 0}},
      {{1, 8, 25, 20}, {8, 8, 3, 3}, {2, 2}, {1, 1, 1, 1}},
      {{1, 32, 40, 16}, {32, 16, 4, 4}, {4, 4}, {0, 1, 0, 1}},
  };
  uint32_t seed = 140;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " * " + shape_to_string(c.w));
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, c.x);
    m.initializer("w", random_tensor(c.w, ++seed));
    m.initializer("b", random_tensor({c.w[1]}, ++seed));
    auto& deconv = m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "deconv");
    add_ints_attr(deconv, "strides", c.strides);
    add_ints_attr(deconv, "pads", c.pads);
    m.output("y", DType::kFloat32, {});
    const TensorMap feed{{"x", random_tensor(c.x, ++seed)}};
    const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
    expect_one_fast_run_per_thread_count(m.model(), feed, want.at("y"));
  }
}

/// Convolutions hand values to each other in channels-last order (runtime/channels_last.h); the
/// values that leave the chain (graph outputs, inputs of other ops, hooks) keep NCHW:
///   a = Relu(Conv1(x))               read by Conv2 and, as residual, by Conv3's fused Add
///   c = Relu(Add(Conv3(Relu(Conv2(a))), a))   a graph output, also read by Conv4
///   e = GlobalAveragePool(Conv5(Conv4(c)))
TEST(OptimizedConvFusion, ChannelsLastHandOffKeepsResults) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 8, 21, 19});
  for (int k = 1; k <= 5; ++k) {
    const std::string n = std::to_string(k);
    m.initializer("w" + n, random_tensor({8, 8, 3, 3}, 60 + k)).initializer("b" + n, random_tensor({8}, 70 + k));
  }
  auto conv = [&](const std::string& in, int k, const std::string& out) {
    const std::string n = std::to_string(k);
    add_ints_attr(m.node("Conv", {in, "w" + n, "b" + n}, {out}, "conv" + n), "pads", {1, 1, 1, 1});
  };
  conv("x", 1, "c1");
  m.node("Relu", {"c1"}, {"a"});
  conv("a", 2, "c2");
  m.node("Relu", {"c2"}, {"b"});
  conv("b", 3, "c3");
  m.node("Add", {"c3", "a"}, {"s3"});
  m.node("Relu", {"s3"}, {"c"});
  conv("c", 4, "d");
  conv("d", 5, "c5");
  m.node("GlobalAveragePool", {"c5"}, {"e"});
  m.output("c", DType::kFloat32, {1, 8, 21, 19});
  m.output("e", DType::kFloat32, {1, 8, 1, 1});
  const TensorMap feed{{"x", random_tensor({1, 8, 21, 19}, 5)}};
  const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  for (int threads : {1, 3}) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = test_kernel_isa();
    options.threads = threads;
    runtime::Session session = runtime::Session::create(m.model(), options).value();
    const TensorMap got = session.run(feed);
    EXPECT_TRUE(tensors_close(got.at("c"), want.at("c"), 2e-4, 2e-4)) << threads << " threads";
    EXPECT_TRUE(tensors_close(got.at("e"), want.at("e"), 2e-4, 2e-4)) << threads << " threads";
    // Intermediates come from the unfused plan, in NCHW.
    runtime::RunOptions marked;
    marked.outputs = {"a", "d", "c"};
    const TensorMap inter = session.run(feed, marked);
    const TensorMap inter_want = make_session(m.model(), runtime::KernelTier::kReference).run(feed, marked);
    for (const auto& name : marked.outputs)
      EXPECT_TRUE(tensors_close(inter.at(name), inter_want.at(name), 2e-4, 2e-4)) << name;
  }
}

/// A conv that hands its output off in channels-last order but runs its reference fallback (the
/// residual addend broadcasts) still hands the next conv channels-last data.
/// x -> Conv -> MaxPool -> Conv -> AveragePool(ceil_mode, count_include_pad: oneDNN cannot, so
/// its reference kernel runs) -> Conv -> GlobalAveragePool -> y: every pool reads, and the first
/// two write, the convolutions' channels-last layout.
TEST(OptimizedConvFusion, PoolsBetweenConvolutionsReadAndWriteChannelsLast) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 4, 17, 16});
  m.initializer("w1", random_tensor({8, 4, 3, 3}, 81)).initializer("b1", random_tensor({8}, 82));
  m.initializer("w2", random_tensor({8, 8, 1, 1}, 83)).initializer("w3", random_tensor({16, 8, 3, 3}, 84));
  add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  auto& max_pool = m.node("MaxPool", {"c1"}, {"p1"}, "max_pool");
  add_ints_attr(max_pool, "kernel_shape", {3, 3});
  add_ints_attr(max_pool, "strides", {2, 2});
  add_ints_attr(max_pool, "pads", {1, 1, 1, 1});
  m.node("Conv", {"p1", "w2"}, {"c2"}, "conv2");
  auto& avg_pool = m.node("AveragePool", {"c2"}, {"p2"}, "avg_pool");
  add_ints_attr(avg_pool, "kernel_shape", {3, 3});
  add_ints_attr(avg_pool, "strides", {2, 2});
  add_int_attr(avg_pool, "ceil_mode", 1);
  add_int_attr(avg_pool, "count_include_pad", 1);
  add_ints_attr(m.node("Conv", {"p2", "w3"}, {"c3"}, "conv3"), "pads", {1, 1, 1, 1});
  m.node("GlobalAveragePool", {"c3"}, {"y"}, "global_pool");
  m.output("y", DType::kFloat32, {1, 16, 1, 1});
  const TensorMap feed{{"x", random_tensor({1, 4, 17, 16}, 85)}};
  const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  for (int threads : {1, 2}) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = test_kernel_isa();
    options.threads = threads;
    runtime::Session session = runtime::Session::create(m.model(), options).value();
    const uint64_t before = runtime::nn::dnnl_fast_path_runs();
    const TensorMap got = session.run(feed);
    // Three convolutions, MaxPool and GlobalAveragePool on oneDNN; AveragePool on its reference.
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 5u);
    EXPECT_TRUE(tensors_close(got.at("y"), want.at("y"), 1e-4, 1e-4)) << threads << " threads";
    runtime::RunOptions marked;  // intermediates come from the unfused plan, in NCHW
    marked.outputs = {"p1", "p2", "y"};
    const TensorMap inter = session.run(feed, marked);
    const TensorMap inter_want = make_session(m.model(), runtime::KernelTier::kReference).run(feed, marked);
    for (const auto& name : marked.outputs)
      EXPECT_TRUE(tensors_close(inter.at(name), inter_want.at(name), 1e-4, 1e-4)) << name;
  }
}

/// Conv -> MaxPool -> Sigmoid (not a channels-last reader: the pool reads channels-last, writes
/// NCHW) and Conv -> GlobalMaxPool / GlobalAveragePool over a 40x40 plane read channels-last.
TEST(OptimizedConvFusion, PoolsReadingChannelsLastFeedOtherNodes) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {2, 4, 40, 40});
  m.initializer("w1", random_tensor({8, 4, 3, 3}, 91)).initializer("w2", random_tensor({8, 4, 3, 3}, 92));
  add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  auto& max_pool = m.node("MaxPool", {"c1"}, {"p1"}, "max_pool");
  add_ints_attr(max_pool, "kernel_shape", {2, 2});
  add_ints_attr(max_pool, "strides", {2, 2});
  m.node("Sigmoid", {"p1"}, {"y1"}, "sigmoid");
  add_ints_attr(m.node("Conv", {"x", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  m.node("GlobalMaxPool", {"c2"}, {"y2"}, "global_max");
  m.node("GlobalAveragePool", {"c2"}, {"y3"}, "global_average");
  m.output("y1", DType::kFloat32, {2, 8, 20, 20});
  m.output("y2", DType::kFloat32, {2, 8, 1, 1});
  m.output("y3", DType::kFloat32, {2, 8, 1, 1});
  const TensorMap feed{{"x", random_tensor({2, 4, 40, 40}, 93)}};
  const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  runtime::Session session = make_session(m.model(), runtime::KernelTier::kOptimized);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const TensorMap got = session.run(feed);
  EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 5u);  // two convs, three pools
  for (const char* name : {"y1", "y2", "y3"}) EXPECT_TRUE(tensors_close(got.at(name), want.at(name), 1e-5, 1e-5)) << name;
}

/// Conv -> GlobalAveragePool on channels-last maps (pool_dnnl.cpp, channel_means): odd channel
/// counts (vector remainders), planes from 1x1 to 41x43 (blocks of 64 positions and their tail),
/// batch 2, and at 2 and 3 threads the channels of large images split between threads.
TEST(OptimizedConvFusion, GlobalAveragePoolOfChannelsLastMapsMatchesReference) {
  struct Case {
    int64_t channels, h, w;
  };
  uint32_t seed = 950;
  for (const Case c : {Case{37, 41, 43}, Case{48, 30, 30}, Case{200, 14, 14}, Case{7, 9, 8}, Case{33, 1, 1}}) {
    SCOPED_TRACE("channels=" + std::to_string(c.channels) + " " + std::to_string(c.h) + "x" + std::to_string(c.w));
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, {2, 5, c.h, c.w});
    m.initializer("w", random_tensor({c.channels, 5, 3, 3}, ++seed));
    m.initializer("b", random_tensor({c.channels}, ++seed));
    add_ints_attr(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    m.node("GlobalAveragePool", {"c"}, {"y"}, "pool");
    m.output("y", DType::kFloat32, {2, c.channels, 1, 1});
    const TensorMap feed{{"x", random_tensor({2, 5, c.h, c.w}, ++seed)}};
    const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
    for (int threads : {1, 2, 3}) {
      runtime::SessionOptions options;
      options.kernel_options.isa_cap = test_kernel_isa();
      options.threads = threads;
      const TensorMap got = runtime::Session::create(m.model(), options).value().run(feed);
      EXPECT_TRUE(tensors_close(got.at("y"), want.at("y"), 1e-5, 1e-5)) << threads << " threads";
    }
  }
}

TEST(OptimizedConvFusion, ChannelsLastHandOffThroughReferenceFallback) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 6, 9, 8});
  m.input("bcast", DType::kFloat32, {1, 6, 9, 1});
  m.initializer("w1", random_tensor({6, 6, 3, 3}, 81)).initializer("w2", random_tensor({6, 6, 3, 3}, 82));
  add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c1", "bcast"}, {"a1"}, "add1");
  add_ints_attr(m.node("Conv", {"a1", "w2"}, {"y"}, "conv2"), "pads", {1, 1, 1, 1});
  m.output("y", DType::kFloat32, {1, 6, 9, 8});
  const TensorMap feed{{"x", random_tensor({1, 6, 9, 8}, 6)}, {"bcast", random_tensor({1, 6, 9, 1}, 7)}};
  const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  const TensorMap got = make_session(m.model(), runtime::KernelTier::kOptimized).run(feed);
  EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 1u);  // conv2 only
  EXPECT_TRUE(tensors_close(got.at("y"), want.at("y"), 2e-4, 2e-4));
}

/// Inverted-residual blocks with SiLU (Conv -> Sigmoid -> Mul, EfficientNet's pattern): on AVX-512
/// machines a Swish after a channels-last convolution runs outside oneDNN, over the output rows
/// of each thread's slice (swish_fast.h); elsewhere it stays a post-op. Expand 1x1 (outputs big
/// enough for row slices over threads), depthwise 3x3 / 5x5 at strides 1 and 2 with symmetric and
/// asymmetric pads, odd channel counts, batch 2, a residual Add before the Swish, and 1x1 maps
/// (squeeze-excitation), at 1 and 2 threads.
TEST(OptimizedConvFusion, SwishAfterChannelsLastConvolutionsMatchesReference) {
  struct Case {
    Shape x;
    int64_t expanded, kernel, stride;
    std::vector<int64_t> pads;
  };
  const std::vector<Case> cases = {
      {{1, 16, 56, 48}, 64, 3, 1, {1, 1, 1, 1}},  {{1, 16, 57, 45}, 96, 3, 2, {1, 1, 1, 1}},
      {{2, 8, 23, 19}, 21, 5, 1, {2, 2, 2, 2}},   {{1, 24, 28, 28}, 40, 5, 2, {1, 2, 2, 1}},
      {{1, 32, 1, 1}, 48, 1, 1, {0, 0, 0, 0}},    {{1, 12, 2, 3}, 17, 3, 1, {1, 1, 1, 1}},
  };
  uint32_t seed = 300;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " expanded " + std::to_string(c.expanded) + " kernel " +
                 std::to_string(c.kernel) + " stride " + std::to_string(c.stride));
    const int64_t channels = c.x[1], e = c.expanded;
    ModelBuilder m(14);
    m.input("x", DType::kFloat32, c.x);
    m.initializer("w1", random_tensor({e, channels, 1, 1}, ++seed));
    m.initializer("b1", random_tensor({e}, ++seed));
    m.initializer("w2", random_tensor({e, 1, c.kernel, c.kernel}, ++seed));
    m.initializer("b2", random_tensor({e}, ++seed));
    m.initializer("w3", random_tensor({e, e, 1, 1}, ++seed));
    m.initializer("w4", random_tensor({channels, e, 1, 1}, ++seed));
    auto swish = [&](const std::string& in, const std::string& out) {
      m.node("Sigmoid", {in}, {out + "_sigmoid"});
      m.node("Mul", {in, out + "_sigmoid"}, {out});
    };
    m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "expand");
    swish("c1", "s1");
    auto& dw = m.node("Conv", {"s1", "w2", "b2"}, {"c2"}, "depthwise");
    add_int_attr(dw, "group", e);
    add_ints_attr(dw, "strides", {c.stride, c.stride});
    add_ints_attr(dw, "pads", c.pads);
    swish("c2", "s2");
    m.node("Conv", {"s2", "w3"}, {"c3"}, "mix");
    m.node("Add", {"c3", "s2"}, {"a3"}, "residual");  // Add then Swish: the sum post-op stays in oneDNN
    swish("a3", "s3");
    m.node("Conv", {"s3", "w4"}, {"y"}, "project");
    m.output("y", DType::kFloat32, {});
    const TensorMap feed{{"x", random_tensor(c.x, ++seed)}};
    const TensorMap want = make_session(m.model(), runtime::KernelTier::kReference).run(feed);
    for (int threads : {1, 2}) {
      runtime::SessionOptions options;
      options.kernel_options.isa_cap = test_kernel_isa();
      options.threads = threads;
      const uint64_t before = runtime::nn::dnnl_fast_path_runs();
      const TensorMap got = runtime::Session::create(m.model(), options).value().run(feed);
      EXPECT_EQ(runtime::nn::dnnl_fast_path_runs() - before, 4u) << threads << " threads";
      EXPECT_TRUE(tensors_close(got.at("y"), want.at("y"), 2e-4, 2e-4)) << threads << " threads";
    }
  }
}

/// One session fed several spatial sizes (PP-OCR detection sees a new size per image): each shape
/// gets its own primitives, the packed weights are shared, and every run matches the reference.
TEST(OptimizedConvFusion, DynamicSpatialSizesMatchReference) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 5, -1, -1});
  m.initializer("w", random_tensor({7, 5, 3, 3}, 91)).initializer("b", random_tensor({7}, 92));
  m.initializer("w2", random_tensor({7, 1, 3, 3}, 93));
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  add_ints_attr(conv, "pads", {1, 1, 1, 1});
  add_ints_attr(conv, "strides", {2, 2});
  m.node("Relu", {"c"}, {"r"});
  auto& dw = m.node("Conv", {"r", "w2"}, {"y"}, "dw");
  add_int_attr(dw, "group", 7);
  add_ints_attr(dw, "pads", {1, 1, 1, 1});
  m.output("y", DType::kFloat32, {1, 7, -1, -1});
  runtime::Session reference = make_session(m.model(), runtime::KernelTier::kReference);
  for (int threads : {1, 2}) {
    runtime::SessionOptions options;
    options.kernel_options.isa_cap = test_kernel_isa();
    options.threads = threads;
    runtime::Session optimized = runtime::Session::create(m.model(), options).value();
    uint32_t seed = 200;
    for (const Shape& shape : std::vector<Shape>{{1, 5, 32, 24}, {1, 5, 17, 41}, {1, 5, 32, 24}, {1, 5, 3, 2}}) {
      const TensorMap feed{{"x", random_tensor(shape, ++seed)}};
      EXPECT_TRUE(tensors_close(optimized.run(feed).at("y"), reference.run(feed).at("y"), 2e-4, 2e-4))
          << shape_to_string(shape) << " at " << threads << " threads";
    }
  }
}

/// x -> Conv 3x3 (pad 1, bias) -> Add(residual) -> Relu -> Conv 3x3 (no padding) -> y: the 3x3
/// stride-1 convolutions that run Winograd's algorithm by default.
ModelBuilder winograd_block_model(int64_t in, int64_t mid, int64_t height, int64_t width) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, in, height, width});
  m.input("residual", DType::kFloat32, {1, mid, height, width});
  m.initializer("w1", random_tensor({mid, in, 3, 3}, 41)).initializer("b1", random_tensor({mid}, 42));
  m.initializer("w2", random_tensor({mid, mid, 3, 3}, 43));
  add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c1", "residual"}, {"s1"}, "residual_add");
  m.node("Relu", {"s1"}, {"r1"}, "relu1");
  m.node("Conv", {"r1", "w2"}, {"y"}, "conv2");
  m.output("y", DType::kFloat32, {1, mid, height - 2, width - 2});
  return m;
}

TEST(OptimizedConvWinograd, MatchesReferenceWithAndWithoutWinograd) {
  struct Geometry {
    int64_t in, mid, height, width;
  };
  // F(2x2,3x3) and F(4x4,3x3) kernels, channel counts off oneDNN's 16-blocks, maps from 6x6 to 20x9.
  for (const Geometry g : {Geometry{16, 16, 8, 8}, Geometry{32, 64, 14, 14}, Geometry{64, 32, 7, 7},
                           Geometry{24, 40, 20, 9}, Geometry{128, 128, 6, 6}}) {
    SCOPED_TRACE(::testing::Message() << g.in << "->" << g.mid << " at " << g.height << "x" << g.width);
    const ModelBuilder m = winograd_block_model(g.in, g.mid, g.height, g.width);
    const TensorMap feed{{"x", random_tensor({1, g.in, g.height, g.width}, 44)},
                         {"residual", random_tensor({1, g.mid, g.height, g.width}, 45)}};
    const Tensor want = make_session(m.model(), runtime::KernelTier::kReference).run(feed).at("y");
    for (int threads : {1, 2}) {
      for (bool winograd : {true, false}) {
        runtime::SessionOptions options;
        options.kernel_options.isa_cap = test_kernel_isa();
        options.threads = threads;
        options.winograd = winograd;
        const Tensor got = runtime::Session::create(m.model(), options).value().run(feed).at("y");
        // Sums of up to 1,152 products in float: the direct sum's own difference to the
        // reference's order reaches 3e-4 at 128 channels.
        EXPECT_TRUE(tensors_close(got, want, 1e-3, 1e-3)) << threads << " threads, winograd " << winograd;
      }
    }
  }
}

TEST(OptimizedConvWinograd, IsUsedByDefaultAndOffWithTheOption) {
  // Winograd's transforms round differently from a direct sum: the two sessions' outputs differ
  // in the last bits, which shows the default really took the other algorithm. Without AVX-512
  // the default is the direct convolution, bit for bit.
  const ModelBuilder m = winograd_block_model(64, 64, 14, 14);
  const TensorMap feed{{"x", random_tensor({1, 64, 14, 14}, 46)}, {"residual", random_tensor({1, 64, 14, 14}, 47)}};
  runtime::SessionOptions direct_options;
  direct_options.kernel_options.isa_cap = test_kernel_isa();
  direct_options.winograd = false;
  const Tensor by_default = runtime::Session::create(m.model(), runtime::SessionOptions{}).value().run(feed).at("y");
  const Tensor direct = runtime::Session::create(m.model(), direct_options).value().run(feed).at("y");
  ASSERT_EQ(by_default.size_bytes(), direct.size_bytes());
  const bool same = std::memcmp(by_default.raw_data(), direct.raw_data(), direct.size_bytes()) == 0;
  EXPECT_NE(same, runtime::dnnl_support::avx512_core_available());
}

TEST(OptimizedConvWinograd, PlanSavesAndReloadsBitIdentically) {
  // Winograd's transformed weights have no layout a plan stores: the plan keeps the plain weights
  // and the loaded layer transforms them again, to the same values.
  const ModelBuilder m = winograd_block_model(32, 32, 12, 12);
  const TensorMap feed{{"x", random_tensor({1, 32, 12, 12}, 48)}, {"residual", random_tensor({1, 32, 12, 12}, 49)}};
  runtime::Session built = runtime::Session::create(m.model(), runtime::SessionOptions{}).value();
  TempDir dir;
  runtime::plan::save_plan(built, dir / "winograd.plan", "winograd.onnx");
  runtime::Session loaded = runtime::plan::load_plan(dir / "winograd.plan").value();
  const Tensor want = built.run(feed).at("y");
  const Tensor got = loaded.run(feed).at("y");
  ASSERT_EQ(want.size_bytes(), got.size_bytes());
  EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes()));
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
