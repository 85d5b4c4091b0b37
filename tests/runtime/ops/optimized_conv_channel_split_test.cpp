// Convolutions split over threads by output channels (runtime/ops/nn/conv_split.h): the rule that
// picks rows or channels per layer, and sessions whose convolutions run channel slices, checked
// against the reference kernels. A slice that read the wrong weights, bias, per-channel operands
// or input channels, or wrote its channels at the wrong offset, changes the output.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/conv_split.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "support/test_support.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

using nn::random_tensor;
using runtime::ChannelSplitPolicy;
using runtime::nn::ConvSplitAxis;

/// The channel-split policy the sessions of this file's tests are built with
/// (KernelOptions::conv_channel_split), set for a block by PolicyScope.
ChannelSplitPolicy session_policy = ChannelSplitPolicy::kCostRule;

class PolicyScope {
 public:
  explicit PolicyScope(ChannelSplitPolicy policy) : previous_(session_policy) { session_policy = policy; }
  ~PolicyScope() { session_policy = previous_; }

 private:
  ChannelSplitPolicy previous_;
};

/// `layout` under the policy in force.
runtime::nn::ConvSplitLayout with_policy(runtime::nn::ConvSplitLayout layout) {
  layout.policy = session_policy;
  return layout;
}

/// A 2-D convolution problem with square kernel, stride 1 and "same" padding.
runtime::nn::ConvProblem problem(int64_t in, int64_t out, int64_t size, int64_t kernel, int64_t group = 1) {
  runtime::nn::ConvProblem p;
  p.batch = 1;
  p.in_channels = in;
  p.out_channels = out;
  p.group = group;
  p.geom.rank = 2;
  p.geom.in = p.geom.out = {size, size};
  p.geom.kernel = {kernel, kernel};
  p.geom.strides = p.geom.dilations = {1, 1};
  p.geom.pad_begin = p.geom.pad_end = {kernel / 2, kernel / 2};
  return p;
}

TEST(ConvChannelSplitRule, BoundsFallOnVectorsAndWholeGroups) {
  using runtime::nn::channel_slice_bounds;
  EXPECT_EQ(channel_slice_bounds(problem(960, 160, 7, 1), 2), (std::vector<int64_t>{0, 80, 160}));
  EXPECT_EQ(channel_slice_bounds(problem(64, 37, 7, 1), 2), (std::vector<int64_t>{0, 16, 37}));
  EXPECT_EQ(channel_slice_bounds(problem(64, 64, 7, 1), 3), (std::vector<int64_t>{0, 16, 48, 64}));
  // Too few channels for 16-channel bounds: even bounds instead.
  EXPECT_EQ(channel_slice_bounds(problem(8, 20, 7, 1), 3), (std::vector<int64_t>{0, 6, 13, 20}));
  // Depthwise: groups of one channel, cut on 16 channels.
  EXPECT_EQ(channel_slice_bounds(problem(480, 480, 7, 3, 480), 2), (std::vector<int64_t>{0, 240, 480}));
  // 4 groups of 6 output channels: whole groups.
  EXPECT_EQ(channel_slice_bounds(problem(8, 24, 7, 3, 4), 2), (std::vector<int64_t>{0, 12, 24}));
  EXPECT_TRUE(channel_slice_bounds(problem(3, 3, 7, 3, 3), 4).empty());
  EXPECT_TRUE(channel_slice_bounds(problem(64, 64, 7, 1), 1).empty());
}

TEST(ConvChannelSplitRule, DeepLayersSplitChannelsEarlyLayersRows) {
  using runtime::nn::choose_conv_split_axis;
  const runtime::nn::ConvSplitLayout channels_last{true, true};
  PolicyScope scope(ChannelSplitPolicy::kCostRule);
  // MobileNetV3's last 1x1 layers: 150K weights against 47K input floats.
  EXPECT_EQ(choose_conv_split_axis(problem(960, 160, 7, 1), 2, with_policy(channels_last)), ConvSplitAxis::kChannels);
  EXPECT_EQ(choose_conv_split_axis(problem(512, 512, 7, 3), 2, with_policy(channels_last)), ConvSplitAxis::kChannels);
  // Winograd on channel slices (ResNet-18 128 channels at 28x28), direct on row slices.
  runtime::nn::ConvSplitLayout winograd = channels_last;
  winograd.winograd_slices = true;
  EXPECT_EQ(choose_conv_split_axis(problem(128, 128, 28, 3), 2, with_policy(channels_last)), ConvSplitAxis::kRows);
  EXPECT_EQ(choose_conv_split_axis(problem(128, 128, 28, 3), 2, with_policy(winograd)), ConvSplitAxis::kChannels);
  // An early layer: 1K weights against 200K input floats.
  EXPECT_EQ(choose_conv_split_axis(problem(16, 64, 112, 1), 2, with_policy(channels_last)), ConvSplitAxis::kRows);
  EXPECT_EQ(choose_conv_split_axis(problem(64, 64, 56, 3, 64), 2, with_policy(channels_last)), ConvSplitAxis::kRows);
  {
    PolicyScope off(ChannelSplitPolicy::kOff);
    EXPECT_EQ(choose_conv_split_axis(problem(960, 160, 7, 1), 2, with_policy(channels_last)), ConvSplitAxis::kRows);
  }
  {
    PolicyScope always(ChannelSplitPolicy::kAlways);
    EXPECT_EQ(choose_conv_split_axis(problem(16, 64, 112, 1), 2, with_policy(channels_last)), ConvSplitAxis::kChannels);
    EXPECT_EQ(choose_conv_split_axis(problem(16, 64, 112, 1), 1, with_policy(channels_last)), ConvSplitAxis::kRows);
  }
}

struct SessionRun {
  Tensor y;
  uint64_t fast_runs = 0, channel_runs = 0;
};

SessionRun run_session(const onnx::ModelProto& model, const TensorMap& feed, int threads) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = threads;
  options.kernel_options.conv_channel_split = session_policy;
  const uint64_t fast_before = runtime::nn::dnnl_fast_path_runs();
  const uint64_t channel_before = runtime::nn::conv_channel_slice_runs();
  SessionRun run;
  run.y = runtime::Session::create(model, options).value().run(feed).at("y");
  run.fast_runs = runtime::nn::dnnl_fast_path_runs() - fast_before;
  run.channel_runs = runtime::nn::conv_channel_slice_runs() - channel_before;
  return run;
}

Tensor reference_output(const onnx::ModelProto& model, const TensorMap& feed) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.kernels = runtime::KernelTier::kReference;
  return runtime::Session::create(model, options).value().run(feed).at("y");
}

/// One convolution (NCHW graph input and output) with bias, a per-channel constant Add, a residual
/// Add and a Relu fused, over odd channel counts, groups, depthwise, strides, asymmetric padding,
/// dilation, batch 2, 1-D and 3-D, fewer rows than threads, at 2 and 3 threads: every run takes
/// channel slices. (Each has at least the 256K multiply-adds below which the kernel does not split.)
TEST(ConvChannelSplit, SlicesOfOneConvolutionMatchReference) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
    int64_t group;
  };
  const std::vector<Case> cases = {
      {{1, 160, 7, 7}, {37, 160, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 32, 9, 11}, {80, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{2, 16, 13, 10}, {33, 16, 3, 3}, {2, 2}, {1, 1}, {0, 1, 2, 1}, 1},
      {{1, 24, 12, 12}, {40, 24, 3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, 1},
      {{1, 64, 28, 28}, {64, 1, 5, 5}, {2, 2}, {1, 1}, {2, 2, 2, 2}, 64},
      {{1, 21, 40, 36}, {21, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 21},
      {{1, 24, 12, 12}, {36, 6, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4},
      {{1, 72, 3, 3}, {52, 72, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 960, 1, 2}, {288, 960, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},  // (1x1 maps: direct products)
      {{2, 24, 61}, {40, 24, 5}, {1}, {2}, {4, 4}, 1},
      {{1, 8, 6, 7, 5}, {24, 8, 3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 1},
  };
  PolicyScope scope(ChannelSplitPolicy::kAlways);
  uint32_t seed = 500;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " * " + shape_to_string(c.w) + " group " + std::to_string(c.group));
    const int64_t out_channels = c.w[0];
    ModelBuilder probe(14);
    probe.input("x", DType::kFloat32, c.x);
    probe.initializer("w", random_tensor(c.w, ++seed));
    probe.initializer("b", random_tensor({out_channels}, ++seed));
    auto& conv = probe.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    add_ints_attr(conv, "strides", c.strides);
    add_ints_attr(conv, "dilations", c.dilations);
    add_ints_attr(conv, "pads", c.pads);
    add_int_attr(conv, "group", c.group);
    probe.output("y", DType::kFloat32, {});
    const Shape out_shape = reference_output(probe.model(), {{"x", random_tensor(c.x, 1)}}).shape();

    ModelBuilder m = probe;
    m.graph().mutable_node(0)->set_output(0, "c");
    m.graph().mutable_output(0)->set_name("y");
    Shape per_channel_shape(out_shape.size(), 1);
    per_channel_shape[1] = out_channels;
    m.initializer("per_channel", random_tensor(per_channel_shape, ++seed));
    m.input("other", DType::kFloat32, out_shape);
    m.node("Add", {"c", "per_channel"}, {"a"}, "shift");
    m.node("Add", {"other", "a"}, {"s"}, "residual");
    m.node("Relu", {"s"}, {"y"}, "relu");
    const TensorMap feed{{"x", random_tensor(c.x, ++seed)}, {"other", random_tensor(out_shape, ++seed)}};
    const Tensor want = reference_output(m.model(), feed);
    for (int threads : {2, 3}) {
      const SessionRun got = run_session(m.model(), feed, threads);
      EXPECT_EQ(got.fast_runs, 1u) << threads << " threads";
      EXPECT_EQ(got.channel_runs, 1u) << threads << " threads";
      EXPECT_TRUE(tensors_close(got.y, want, 2e-4, 2e-4)) << threads << " threads";
    }
  }
}

/// Convolutions handing channels-last values to each other, whose channel slices are strided in
/// those tensors: x -> Conv 3x3 (69 channels) + per-channel Add -> Swish -> depthwise 5x5 -> Relu
/// -> Conv 1x1 (48) -> Swish -> Conv 1x1 (48) + residual Add of the previous output -> y.
/// (69 channels, not fewer than 65: a 1x1 conv of up to 64 input channels with a Swish runs the
/// direct loop of conv_pointwise_fast.h instead of oneDNN's slices.)
TEST(ConvChannelSplit, ChannelsLastChainWithSwishAndResidualMatchesReference) {
  ModelBuilder m(14);
  const Shape x_shape{1, 24, 20, 18};  // every conv above the kernel's threshold for slicing
  m.input("x", DType::kFloat32, x_shape);
  m.initializer("w1", random_tensor({69, 24, 3, 3}, 601)).initializer("b1", random_tensor({69}, 602));
  m.initializer("shift", random_tensor({1, 69, 1, 1}, 603));
  m.initializer("w2", random_tensor({69, 1, 5, 5}, 604)).initializer("b2", random_tensor({69}, 605));
  m.initializer("w3", random_tensor({48, 69, 1, 1}, 606));
  m.initializer("w4", random_tensor({48, 48, 1, 1}, 607)).initializer("b4", random_tensor({48}, 608));
  auto swish = [&](const std::string& in, const std::string& out) {
    m.node("Sigmoid", {in}, {out + "_sigmoid"});
    m.node("Mul", {in, out + "_sigmoid"}, {out});
  };
  add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c1", "shift"}, {"a1"}, "shift1");
  swish("a1", "s1");
  auto& dw = m.node("Conv", {"s1", "w2", "b2"}, {"c2"}, "depthwise");
  add_int_attr(dw, "group", 69);
  add_ints_attr(dw, "pads", {2, 2, 2, 2});
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  m.node("Conv", {"r2", "w3"}, {"c3"}, "expand");
  swish("c3", "s3");
  m.node("Conv", {"s3", "w4", "b4"}, {"c4"}, "mix");
  m.node("Add", {"c4", "s3"}, {"y"}, "residual");
  m.output("y", DType::kFloat32, {});
  const TensorMap feed{{"x", random_tensor(x_shape, 609)}};
  const Tensor want = reference_output(m.model(), feed);
  PolicyScope scope(ChannelSplitPolicy::kAlways);
  for (int threads : {2, 3}) {
    const SessionRun got = run_session(m.model(), feed, threads);
    EXPECT_EQ(got.fast_runs, 4u) << threads << " threads";
    EXPECT_EQ(got.channel_runs, 4u) << threads << " threads";
    EXPECT_TRUE(tensors_close(got.y, want, 2e-4, 2e-4)) << threads << " threads";
  }
}

/// x -> Conv 1x1 (480 -> 160) at 7x7: weights three times the input, so the cost rule takes channel
/// slices at 2 threads; at 1 thread there is nothing to split.
ModelBuilder deep_pointwise_model() {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 480, 7, 7});
  m.initializer("w", random_tensor({160, 480, 1, 1}, 701)).initializer("b", random_tensor({160}, 702));
  m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  m.node("Relu", {"c"}, {"y"}, "relu");
  m.output("y", DType::kFloat32, {1, 160, 7, 7});
  return m;
}

TEST(ConvChannelSplit, CostRuleSplitsDeepPointwiseLayersByChannels) {
  const ModelBuilder m = deep_pointwise_model();
  const TensorMap feed{{"x", random_tensor({1, 480, 7, 7}, 703)}};
  const Tensor want = reference_output(m.model(), feed);
  PolicyScope scope(ChannelSplitPolicy::kCostRule);
  const SessionRun one = run_session(m.model(), feed, 1);
  EXPECT_EQ(one.channel_runs, 0u);
  EXPECT_TRUE(tensors_close(one.y, want, 2e-4, 2e-4));
  const SessionRun two = run_session(m.model(), feed, 2);
  EXPECT_EQ(two.channel_runs, 1u);
  EXPECT_TRUE(tensors_close(two.y, want, 2e-4, 2e-4));
  {
    PolicyScope off(ChannelSplitPolicy::kOff);
    EXPECT_EQ(run_session(m.model(), feed, 2).channel_runs, 0u);
  }
}

/// Squeeze-excitation-like 1x1 convs on 1x2 maps: below the multiply-add threshold for slicing,
/// but bound by reading their 82K weights, which channel slices share out. (On 1x1 maps they are
/// direct products instead: optimized_conv_point_product_test.cpp.)
TEST(ConvChannelSplit, WeightBoundConvolutionsOnTinyMapsSplitByChannels) {
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 512, 1, 2});
  m.initializer("w1", random_tensor({160, 512, 1, 1}, 711)).initializer("b1", random_tensor({160}, 712));
  m.initializer("w2", random_tensor({512, 160, 1, 1}, 713)).initializer("b2", random_tensor({512}, 714));
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "reduce");
  m.node("Relu", {"c1"}, {"r1"}, "relu");
  m.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "expand");
  m.node("HardSigmoid", {"c2"}, {"y"}, "gate");
  m.output("y", DType::kFloat32, {1, 512, 1, 2});
  const TensorMap feed{{"x", random_tensor({1, 512, 1, 2}, 715)}};
  const Tensor want = reference_output(m.model(), feed);
  PolicyScope scope(ChannelSplitPolicy::kCostRule);
  EXPECT_EQ(run_session(m.model(), feed, 1).channel_runs, 0u);
  const SessionRun two = run_session(m.model(), feed, 2);
  EXPECT_EQ(two.fast_runs, 2u);
  EXPECT_EQ(two.channel_runs, 2u);
  EXPECT_TRUE(tensors_close(two.y, want, 2e-4, 2e-4));
}

/// 3x3 stride-1 convolutions of 128 channels: at 2 threads the cost rule cuts them into two
/// 64-channel slices that each run Winograd (a residual Add fused into the second).
TEST(ConvChannelSplit, WinogradChannelSlicesMatchReference) {
  ModelBuilder m(14);
  const Shape x_shape{1, 128, 14, 14};
  m.input("x", DType::kFloat32, x_shape);
  m.initializer("w1", random_tensor({128, 128, 3, 3}, 721)).initializer("b1", random_tensor({128}, 722));
  m.initializer("w2", random_tensor({128, 128, 3, 3}, 723));
  add_ints_attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu");
  add_ints_attr(m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  m.node("Add", {"c2", "x"}, {"y"}, "residual");
  m.output("y", DType::kFloat32, {});
  const TensorMap feed{{"x", random_tensor(x_shape, 724)}};
  const Tensor want = reference_output(m.model(), feed);
  PolicyScope scope(ChannelSplitPolicy::kCostRule);
  for (int threads : {1, 2}) {
    const SessionRun got = run_session(m.model(), feed, threads);
    EXPECT_EQ(got.channel_runs, threads == 1 ? 0u : 2u) << threads << " threads";
    // Sums of 1,152 products, with Winograd's transforms: as OptimizedConvWinograd's tolerance.
    EXPECT_TRUE(tensors_close(got.y, want, 1e-3, 1e-3)) << threads << " threads";
  }
}

/// A saved plan keeps the whole layer's packed weights; loaded at 2 threads, the channel slices pack
/// their own from the plan's plain weights and compute what the built session computes.
TEST(ConvChannelSplit, PlanLoadedAtTwoThreadsMatchesBuiltSession) {
  const ModelBuilder m = deep_pointwise_model();
  const TensorMap feed{{"x", random_tensor({1, 480, 7, 7}, 704)}};
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = 2;
  options.kernel_options.conv_channel_split = ChannelSplitPolicy::kAlways;
  runtime::Session built = runtime::Session::create(m.model(), options).value();
  TempDir dir;
  runtime::plan::save_plan(built, dir / "deep.plan", "deep.onnx");
  runtime::Session loaded = runtime::plan::load_plan(dir / "deep.plan", options).value();
  const uint64_t before = runtime::nn::conv_channel_slice_runs();
  const Tensor want = built.run(feed).at("y");
  const Tensor got = loaded.run(feed).at("y");
  EXPECT_EQ(runtime::nn::conv_channel_slice_runs() - before, 2u);
  ASSERT_EQ(want.size_bytes(), got.size_bytes());
  EXPECT_EQ(0, std::memcmp(want.raw_data(), got.raw_data(), want.size_bytes()));
  EXPECT_TRUE(tensors_close(got, reference_output(m.model(), feed), 2e-4, 2e-4));
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
