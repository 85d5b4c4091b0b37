// Spec: none (parity's "ai.parity" ChannelShuffle, recognized from ONNX Reshape -> Transpose -> Reshape)
// The planner recognizes ShuffleNet's channel shuffle (Reshape [N, G, C/G, H, W] -> Transpose
// [0, 2, 1, 3, 4] -> Reshape [N, C, H, W]), runs it as one ChannelShuffle node that keeps the
// convolutions, Concat and Slices around it channels-last, and keeps the chain's numbers; chains
// that are not a shuffle, or whose intermediate values are seen, stay as they are.
#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

Tensor random_tensor(const Shape& shape, uint32_t seed) { return testing::random_uniform(shape, seed, -1, 1); }

Tensor ints(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

using testing::add_ints_attr;
struct ShuffleCase {
  int64_t groups = 2;
  int64_t size = 5;
  int64_t concat_axis = 1;             // 1 or -3
  std::vector<int64_t> perm = {0, 2, 1, 3, 4};
  bool merged_shape_has_minus_one = true;
  bool merged_is_flat = false;          // the last Reshape is not [N, C, H, W]: not a shuffle
  bool expose_transposed = false;       // the Transpose's output is a graph output
  bool shuffled_is_output = false;      // the shuffle's own output is a graph output
};

/// ShuffleNetV2's block: two convolutions -> Concat -> channel shuffle -> Shape and two channel
/// halves (Slice): one into a convolution, one into the next Concat, whose result a last
/// convolution reads. Per-group channels: 3, so every group count gives a different permutation.
onnx::ModelProto shuffle_block_model(const ShuffleCase& c) {
  ModelBuilder b(13);
  const int64_t n = 2, per_group = 3, channels = c.groups * per_group, left = channels / 2, right = channels - left;
  b.input("x", DType::kFloat32, {n, 4, c.size, c.size});
  int seed = 10;
  auto conv = [&](const std::string& in, int64_t in_c, int64_t out_c, int64_t k, const std::string& out) {
    seed += 2;
    b.initializer(out + "_w", random_tensor({out_c, in_c, k, k}, seed)).initializer(out + "_b", random_tensor({out_c}, seed + 1));
    auto& node = b.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
    add_ints_attr(node, "pads", {k / 2, k / 2, k / 2, k / 2});
  };
  conv("x", 4, left, 1, "a");
  conv("x", 4, right, 3, "bb");
  auto& concat = b.node("Concat", {"a", "bb"}, {"joined"}, "concat");
  testing::add_int_attr(concat, "axis", c.concat_axis);
  // The split shape as a Constant node (as torch exports it), the merged one as an initializer.
  auto& split = b.node("Constant", {}, {"split_shape"}, "split_shape");
  auto* value = split.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(5);
  for (int64_t d : {n, c.groups, per_group, c.size, c.size}) value->mutable_t()->add_int64_data(d);
  b.node("Reshape", {"joined", "split_shape"}, {"grouped"}, "reshape");
  auto& transpose = b.node("Transpose", {"grouped"}, {"transposed"}, "transpose");
  add_ints_attr(transpose, "perm", c.perm);
  std::vector<int64_t> merged = {n, c.merged_shape_has_minus_one ? -1 : channels, c.size, c.size};
  if (c.merged_is_flat) merged = {n, channels * c.size, c.size};
  b.initializer("merged_shape", ints(merged));
  b.node("Reshape", {"transposed", "merged_shape"}, {"shuffled"}, "reshape_1");
  b.node("Shape", {"shuffled"}, {"shape"}, "shape");
  b.initializer("one", ints({1})).initializer("two", ints({2})).initializer("zero", ints({0}));
  b.initializer("big", ints({INT64_MAX})).initializer("axis1", ints({1}));
  b.node("Gather", {"shape", "one"}, {"channels"}, "gather");
  b.node("Div", {"channels", "two"}, {"half"}, "div");
  b.node("Slice", {"shuffled", "zero", "half", "axis1"}, {"first"}, "slice_first");
  b.node("Slice", {"shuffled", "half", "big", "axis1"}, {"second"}, "slice_second");
  if (!c.merged_is_flat) {
    const int64_t first = channels / 2, second = channels - first;
    conv("second", second, second, 1, "branch");
    auto& join = b.node("Concat", {"first", "branch"}, {"next"}, "next_concat");
    testing::add_int_attr(join, "axis", 1);
    conv("next", channels, 3, 3, "y");
  } else {
    b.node("Identity", {"first"}, {"y"}, "identity");
  }
  b.output("y", DType::kFloat32, {});
  if (c.expose_transposed) b.output("transposed", DType::kFloat32, {});
  if (c.shuffled_is_output) b.output("shuffled", DType::kFloat32, {});
  return b.model();
}

const PlannedNode* find_op(const Session& session, const std::string& op) {
  for (const auto& node : session.plan().nodes_)
    if (node.spec.op_type == op) return &node;
  return nullptr;
}

/// Runs `model` on the reference kernels and the optimized ones at 1-3 threads; every output agrees.
void expect_outputs_match_reference(const onnx::ModelProto& model, const Shape& input_shape, int64_t threads_max = 3) {
  TensorMap feed;
  feed.set("x", random_tensor(input_shape, 7));
  SessionOptions reference_options;
  reference_options.kernels = KernelTier::kReference;
  const TensorMap expected = Session::create(model, reference_options).value().run(feed);
  for (int threads = 1; threads <= threads_max; ++threads) {
    SessionOptions options;
    options.threads = threads;
    const TensorMap got = Session::create(model, options).value().run(feed);
    for (const auto& [name, tensor] : expected)
      EXPECT_TRUE(testing::tensors_close(got.at(name), tensor, 2e-4, 2e-4)) << name << " threads " << threads;
  }
}

TEST(ChannelShuffleRewrite, ShuffleOfEachGroupCountMatchesTheChainAndStaysChannelsLast) {
  for (int64_t groups : {1, 2, 3, 4}) {
    for (int64_t size : {1, 5, 40}) {  // 40: gathers large enough to split over threads
      SCOPED_TRACE("groups " + std::to_string(groups) + " size " + std::to_string(size));
      ShuffleCase c;
      c.groups = groups;
      c.size = size;
      c.merged_shape_has_minus_one = groups % 2 == 0;
      const onnx::ModelProto model = shuffle_block_model(c);
      expect_outputs_match_reference(model, {2, 4, size, size});
      const Session session = Session::create(model, SessionOptions{}).value();
      const PlannedNode* shuffle = find_op(session, "ChannelShuffle");
      ASSERT_NE(shuffle, nullptr);
      EXPECT_EQ(shuffle->spec.domain, "ai.parity");
      EXPECT_EQ(find_op(session, "Transpose"), nullptr);
      EXPECT_EQ(find_op(session, "Reshape"), nullptr);
#if PARITY_HAVE_DNNL
      EXPECT_EQ(shuffle->reads_channels_last, std::vector<size_t>{0});
      EXPECT_TRUE(shuffle->writes_channels_last);
      for (const auto& node : session.plan().nodes_) {
        if (node.spec.op_type != "Slice") continue;
        EXPECT_TRUE(node.writes_channels_last) << node.spec.name;
      }
#endif
    }
  }
}

TEST(ChannelShuffleRewrite, ConcatWithANegativeAxisFeedsTheShuffleChannelsLast) {
  ShuffleCase c;
  c.concat_axis = -3;
  const onnx::ModelProto model = shuffle_block_model(c);
  expect_outputs_match_reference(model, {2, 4, c.size, c.size});
#if PARITY_HAVE_DNNL
  const Session session = Session::create(model, SessionOptions{}).value();
  const PlannedNode* concat = find_op(session, "Concat");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->reads_channels_last.size(), 2u);
  EXPECT_TRUE(concat->writes_channels_last);
#endif
}

TEST(ChannelShuffleRewrite, ShuffleAsAGraphOutputIsInTheOnnxLayout) {
  ShuffleCase c;
  c.shuffled_is_output = true;
  const onnx::ModelProto model = shuffle_block_model(c);
  expect_outputs_match_reference(model, {2, 4, c.size, c.size});
  const Session session = Session::create(model, SessionOptions{}).value();
  const PlannedNode* shuffle = find_op(session, "ChannelShuffle");
  ASSERT_NE(shuffle, nullptr);
  EXPECT_FALSE(shuffle->writes_channels_last);
}

TEST(ChannelShuffleRewrite, ChainsThatAreNotAShuffleStay) {
  ShuffleCase swapped_inner;
  swapped_inner.perm = {0, 1, 2, 4, 3};
  ShuffleCase flat;
  flat.merged_is_flat = true;
  ShuffleCase seen;
  seen.expose_transposed = true;
  for (const ShuffleCase& c : {swapped_inner, flat, seen}) {
    const onnx::ModelProto model = shuffle_block_model(c);
    expect_outputs_match_reference(model, {2, 4, c.size, c.size}, 1);
    const Session session = Session::create(model, SessionOptions{}).value();
    EXPECT_EQ(find_op(session, "ChannelShuffle"), nullptr);
    EXPECT_NE(find_op(session, "Transpose"), nullptr);
  }
}

/// The kernel itself, on inputs that only hold as many elements as its shape: the chain reshapes
/// them first, and so does the kernel.
TEST(ChannelShuffleKernel, InputOfAnotherShapeWithTheSameElementsIsReshapedLikeTheChain) {
  ModelBuilder b(13);
  b.input("x", DType::kFloat32, {2, -1});
  b.initializer("split_shape", ints({2, 3, 2, 2, 5})).initializer("merged_shape", ints({2, 6, 2, 5}));
  b.node("Reshape", {"x", "split_shape"}, {"grouped"}, "reshape");
  auto& transpose = b.node("Transpose", {"grouped"}, {"transposed"}, "transpose");
  add_ints_attr(transpose, "perm", {0, 2, 1, 3, 4});
  b.node("Reshape", {"transposed", "merged_shape"}, {"y"}, "reshape_1");
  b.output("y", DType::kFloat32, {});
  const onnx::ModelProto model = b.model();
  expect_outputs_match_reference(model, {2, 60}, 1);
  EXPECT_NE(find_op(Session::create(model, SessionOptions{}).value(), "ChannelShuffle"), nullptr);
  // One element too many fails like the chain's Reshape: one error naming the node.
  TensorMap feed;
  feed.set("x", random_tensor({2, 61}, 3));
  const Session session = Session::create(model, SessionOptions{}).value();
  EXPECT_THROW(session.run(feed), Error);
}

}  // namespace
}  // namespace parity::runtime
