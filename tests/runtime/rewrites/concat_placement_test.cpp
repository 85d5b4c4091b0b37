// Spec: none (parity's Concat placement, runtime/rewrites/concat_placement.h; #20)
// Producers write a Concat's inputs straight into their slices of a buffer the Concats of a
// DenseNet-style block share, and each Concat's output is a view of it. The numbers stay those of
// the reference kernels; Concats whose slices are not contiguous, inputs the executor does not
// produce, graph outputs and values read by unrelated Concats keep copying; observers (hooks,
// "mark all") see every value in memory of its own; a saved plan keeps the placement.
#include "runtime/rewrites/concat_placement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "model/proto_convert.h"
#include "support/model_builder.h"
#include "runtime/ops/op_tester.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"
#include "support/test_support.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

using testing::add_ints_attr;
/// Adds graph pieces with random weights, each a new name.
class BlockBuilder {
 public:
  explicit BlockBuilder(ModelBuilder& b) : b_(b) {}

  void conv(const std::string& in, int64_t in_c, int64_t out_c, int64_t k, const std::string& out) {
    seed_ += 2;
    b_.initializer(out + "_w", testing::random_uniform({out_c, in_c, k, k}, seed_, -0.5f, 0.5f));
    b_.initializer(out + "_b", testing::random_uniform({out_c}, seed_ + 1, -0.5f, 0.5f));
    auto& node = b_.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
    add_ints_attr(node, "pads", {k / 2, k / 2, k / 2, k / 2});
  }

  /// BatchNormalization -> Relu, as DenseNet normalizes each Concat's output.
  void norm_relu(const std::string& in, int64_t channels, const std::string& out) {
    seed_ += 4;
    b_.initializer(out + "_scale", testing::random_uniform({channels}, seed_, 0.5f, 1.5f));
    b_.initializer(out + "_bias", testing::random_uniform({channels}, seed_ + 1, -0.5f, 0.5f));
    b_.initializer(out + "_mean", testing::random_uniform({channels}, seed_ + 2, -0.5f, 0.5f));
    b_.initializer(out + "_var", testing::random_uniform({channels}, seed_ + 3, 0.5f, 1.5f));
    b_.node("BatchNormalization", {in, out + "_scale", out + "_bias", out + "_mean", out + "_var"}, {out + "_bn"},
            out + "_bn");
    b_.node("Relu", {out + "_bn"}, {out}, out + "_relu");
  }

  onnx::NodeProto& concat(const std::vector<std::string>& inputs, const std::string& out, int64_t axis = 1) {
    auto& node = b_.node("Concat", {}, {out}, out);
    for (const auto& in : inputs) node.add_input(in);
    testing::add_int_attr(node, "axis", axis);
    return node;
  }

 private:
  ModelBuilder& b_;
  uint32_t seed_ = 100;
};

struct BlockCase {
  int64_t batch = 1;
  int64_t size = 9;
  int layers = 4;
  bool expose_feature = false;  // feature map 2 is also a graph output
  bool concat_graph_input = false;  // the block starts from the graph input itself
};

/// A DenseNet dense block: a stem convolution, then `layers` times Concat(every feature map so far)
/// -> BN -> Relu -> Conv 1x1 -> Relu -> Conv 3x3 (a new feature map of `kGrowth` channels), and a
/// last Concat of them all into BN -> Relu -> Conv 1x1 (the output "y").
constexpr int64_t kStem = 8, kGrowth = 4, kBottleneck = 8;
onnx::ModelProto dense_block_model(const BlockCase& c) {
  ModelBuilder b(13);
  BlockBuilder block(b);
  b.input("x", DType::kFloat32, {c.batch, 3, c.size, c.size});
  std::vector<std::string> features;
  int64_t channels = kStem;
  if (c.concat_graph_input) {
    features.push_back("x");
    channels = 3;
  } else {
    block.conv("x", 3, kStem, 3, "f0");
    features.push_back("f0");
  }
  for (int k = 1; k <= c.layers; ++k) {
    const std::string tag = std::to_string(k);
    block.concat(features, "c" + tag);
    block.norm_relu("c" + tag, channels, "n" + tag);
    block.conv("n" + tag, channels, kBottleneck, 1, "m" + tag);
    b.node("Relu", {"m" + tag}, {"r" + tag}, "r" + tag);
    block.conv("r" + tag, kBottleneck, kGrowth, 3, "f" + tag);
    features.push_back("f" + tag);
    channels += kGrowth;
  }
  block.concat(features, "joined");
  block.norm_relu("joined", channels, "t");
  block.conv("t", channels, 5, 1, "y");
  b.output("y", DType::kFloat32, {});
  if (c.expose_feature) b.output("f2", DType::kFloat32, {});
  return b.model();
}

TensorMap random_feed(const Shape& shape) {
  TensorMap feed;
  feed.set("x", testing::random_uniform(shape, 7, -1, 1));
  return feed;
}

/// Every output of the optimized sessions at 1-3 threads agrees with the reference kernels'.
void expect_outputs_match_reference(const onnx::ModelProto& model, const TensorMap& feed, RunOptions run = {}) {
  SessionOptions reference_options;
  reference_options.kernels = KernelTier::kReference;
  const TensorMap expected = Session::create(model, reference_options).value().run(feed, run);
  for (int threads = 1; threads <= 3; ++threads) {
    SessionOptions options;
    options.threads = threads;
    const TensorMap got = Session::create(model, options).value().run(feed, run);
    ASSERT_EQ(got.names(), expected.names());
    for (const auto& name : expected.names())
      EXPECT_TRUE(testing::tensors_close(got.at(name), expected.at(name), 1e-4, 1e-4)) << name << " threads " << threads;
  }
}

int placed_concats(const Subgraph& plan) {
  int placed = 0;
  for (const auto& node : plan.nodes_) placed += node.placed_concat;
  return placed;
}

int concats(const Subgraph& plan) {
  int n = 0;
  for (const auto& node : plan.nodes_) n += node.spec.op_type == "Concat";
  return n;
}

/// Runs the plan with every slot kept (so the frame shows where each value lives).
std::vector<Value> run_keeping_every_value(const Session& session, const Tensor& x) {
  const Subgraph& plan = session.plan();
  std::vector<bool> keep(plan.slot_names_.size(), true);
  RunState state;
  state.keep_slots = &keep;
  return execute_graph(plan, {Value(x)}, nullptr, state, true);
}

const std::byte* data_of(const std::vector<Value>& frame, const Subgraph& plan, const std::string& name) {
  return static_cast<const std::byte*>(frame.at(plan.slot(name)).tensor().raw_data());
}

TEST(ConcatPlacement, DenseBlockSharesOneBufferAndEachConcatIsAViewOfIt) {
  const BlockCase c;
  const onnx::ModelProto model = dense_block_model(c);
  expect_outputs_match_reference(model, random_feed({1, 3, c.size, c.size}));

  const Session session = Session::create(model).value();
  const Subgraph& plan = session.plan();
  ASSERT_EQ(plan.shared_buffers_.size(), 1u);
  EXPECT_EQ(plan.shared_buffers_[0].shape, (Shape{1, kStem + c.layers * kGrowth, c.size, c.size}));
  EXPECT_EQ(placed_concats(plan), c.layers + 1);
  EXPECT_EQ(concats(plan), c.layers + 1);
  for (const auto& node : plan.nodes_)
    EXPECT_FALSE(node.writes_channels_last && !node.outputs.empty() && plan.placed_values_.count(node.outputs[0]))
        << node.label;
#if PARITY_HAVE_DNNL
  // Each BatchNormalization reads its Concat's NCHW view and hands its convolution channels-last
  // (ops/nn/batch_norm_layout.h), so the convolution does not reorder its input.
  for (const auto& node : plan.nodes_) {
    if (node.spec.op_type != "BatchNormalization") continue;
    EXPECT_TRUE(node.writes_channels_last && node.reads_channels_last.empty()) << node.label;
  }
#endif

  // The producers wrote in place: feature map k sits after the stem and k - 1 growth slices, and
  // every Concat's output starts where the stem does.
  const std::vector<Value> frame = run_keeping_every_value(session, random_feed({1, 3, c.size, c.size}).at("x"));
  const std::byte* base = data_of(frame, plan, "f0");
  const size_t plane_bytes = static_cast<size_t>(c.size * c.size) * sizeof(float);
  for (int k = 1; k <= c.layers; ++k) {
    const std::string tag = std::to_string(k);
    EXPECT_EQ(data_of(frame, plan, "f" + tag), base + (kStem + (k - 1) * kGrowth) * plane_bytes) << "f" << k;
    EXPECT_EQ(data_of(frame, plan, "c" + tag), base) << "c" << k;
  }
  EXPECT_EQ(data_of(frame, plan, "joined"), base);
}

TEST(ConcatPlacement, ProfiledRunsStillSeeEveryConcat) {
  const onnx::ModelProto model = dense_block_model({});
  const Session session = Session::create(model).value();
  std::vector<NodeTiming> profile;
  RunOptions run;
  run.profile = &profile;
  session.run(random_feed({1, 3, 9, 9}), run);
  int concat_entries = 0;
  for (const auto& p : profile) concat_entries += p.op_type == "Concat";
  EXPECT_EQ(concat_entries, 5);
}

TEST(ConcatPlacement, AFeatureMapThatIsAGraphOutputKeepsItsOwnMemory) {
  BlockCase c;
  c.expose_feature = true;
  const onnx::ModelProto model = dense_block_model(c);
  expect_outputs_match_reference(model, random_feed({1, 3, c.size, c.size}));
  const Session session = Session::create(model).value();
  const Subgraph& plan = session.plan();
  EXPECT_FALSE(plan.placed_values_.count(plan.slot("f2")));
  // c1 and c2 read f0 and f1 only, so they still share a buffer; every later Concat reads f2 and copies.
  EXPECT_EQ(placed_concats(plan), 2);
  EXPECT_TRUE(plan.placed_values_.count(plan.slot("f1")));
}

TEST(ConcatPlacement, ConcatOfTheGraphInputCopies) {
  BlockCase c;
  c.concat_graph_input = true;
  const onnx::ModelProto model = dense_block_model(c);
  expect_outputs_match_reference(model, random_feed({1, 3, c.size, c.size}));
  const Session session = Session::create(model).value();
  EXPECT_EQ(placed_concats(session.plan()), 0);
  EXPECT_FALSE(session.plan().placed_values_.count(session.plan().slot("x")));
}

TEST(ConcatPlacement, BatchOfTwoCopiesBecauseTheSlicesAreNotContiguous) {
  BlockCase c;
  c.batch = 2;
  const onnx::ModelProto model = dense_block_model(c);
  expect_outputs_match_reference(model, random_feed({2, 3, c.size, c.size}));
  EXPECT_EQ(placed_concats(Session::create(model).value().plan()), 0);
}

/// Two convolutions of x concatenated along `axis`, and the first one alone (a prefix of the
/// same list, so that the two Concats may share a buffer), each into a Sigmoid.
onnx::ModelProto two_branch_model(int64_t axis, const Shape& x_shape, int64_t branch_channels = 2) {
  ModelBuilder b(13);
  BlockBuilder block(b);
  b.input("x", DType::kFloat32, x_shape);
  const int64_t in_c = x_shape[1];
  block.conv("x", in_c, branch_channels, 3, "a");
  block.conv("x", in_c, branch_channels, 1, "bb");
  block.concat({"a"}, "alone", axis);
  block.concat({"a", "bb"}, "joined", axis);
  b.node("Sigmoid", {"joined"}, {"y"}, "y");
  b.node("Sigmoid", {"alone"}, {"y_alone"}, "y_alone");
  b.output("y", DType::kFloat32, {});
  b.output("y_alone", DType::kFloat32, {});
  return b.model();
}

TEST(ConcatPlacement, OtherAxesArePlacedOnlyWhereTheSlicesAreContiguous) {
  // Along H with 2 channels: each channel's rows interleave, so it copies.
  const onnx::ModelProto rows = two_branch_model(2, {1, 3, 5, 6});
  expect_outputs_match_reference(rows, random_feed({1, 3, 5, 6}));
  EXPECT_EQ(placed_concats(Session::create(rows).value().plan()), 0);
  // Along the channels, counted from the end: placed.
  const onnx::ModelProto channels = two_branch_model(-3, {1, 3, 5, 6});
  expect_outputs_match_reference(channels, random_feed({1, 3, 5, 6}));
  EXPECT_EQ(placed_concats(Session::create(channels).value().plan()), 2);
  // Along H of single-channel maps: each input is one block again.
  const onnx::ModelProto one_channel = two_branch_model(2, {1, 3, 5, 6}, 1);
  expect_outputs_match_reference(one_channel, random_feed({1, 3, 5, 6}));
  EXPECT_EQ(placed_concats(Session::create(one_channel).value().plan()), 2);
}

TEST(ConcatPlacement, ALoneConcatKeepsItsCopy) {
  // SqueezeNet's fire module: one Concat of two convolutions, between convolutions. Placed, its
  // NCHW slices would cost the convolutions reorders; it stays a (channels-last) copy.
  ModelBuilder b(13);
  BlockBuilder block(b);
  b.input("x", DType::kFloat32, {1, 3, 6, 6});
  block.conv("x", 3, 4, 1, "squeeze");
  block.conv("squeeze", 4, 8, 1, "expand1");
  block.conv("squeeze", 4, 8, 3, "expand3");
  block.concat({"expand1", "expand3"}, "fire");
  block.conv("fire", 16, 4, 1, "y");
  b.output("y", DType::kFloat32, {});
  const onnx::ModelProto model = b.model();
  expect_outputs_match_reference(model, random_feed({1, 3, 6, 6}));
  const Session session = Session::create(model).value();
  EXPECT_EQ(placed_concats(session.plan()), 0);
  EXPECT_TRUE(session.plan().shared_buffers_.empty());
}

TEST(ConcatPlacement, AValueReadByTwoUnrelatedConcatsIsPlacedForOneOfThem) {
  ModelBuilder b(13);
  BlockBuilder block(b);
  b.input("x", DType::kFloat32, {1, 3, 6, 6});
  block.conv("x", 3, 4, 3, "shared");
  block.conv("x", 3, 2, 1, "left");
  block.conv("x", 3, 3, 3, "right");
  block.concat({"shared", "left"}, "first");
  block.concat({"shared", "right"}, "second");
  block.concat({"right", "shared"}, "third");  // the same values in another order
  block.concat({"shared"}, "fourth");           // a prefix of "first": shares its buffer
  block.conv("first", 6, 2, 1, "y1");
  block.conv("second", 7, 2, 1, "y2");
  block.conv("third", 7, 2, 1, "y3");
  block.conv("fourth", 4, 2, 1, "y4");
  for (const char* out : {"y1", "y2", "y3", "y4"}) b.output(out, DType::kFloat32, {});
  const onnx::ModelProto model = b.model();
  expect_outputs_match_reference(model, random_feed({1, 3, 6, 6}));
  const Session session = Session::create(model).value();
  EXPECT_EQ(placed_concats(session.plan()), 2);
  EXPECT_EQ(session.plan().shared_buffers_.size(), 1u);
  for (const auto& node : session.plan().nodes_) {
    if (!node.placed_concat) continue;
    EXPECT_TRUE(node.spec.name == "first" || node.spec.name == "fourth") << node.spec.name;
  }
}

TEST(ConcatPlacement, AnInputItsKernelDidNotWriteInPlaceIsCopiedIntoItsSlice) {
  // Identity hands its input on without allocating: the executor copies it into its slice.
  ModelBuilder b(13);
  BlockBuilder block(b);
  b.input("x", DType::kFloat32, {1, 3, 6, 6});
  block.conv("x", 3, 4, 3, "a");
  block.conv("x", 3, 2, 1, "bb");
  b.node("Identity", {"a"}, {"same"}, "identity");
  block.concat({"a", "same"}, "pair");
  block.concat({"a", "same", "bb"}, "joined");
  block.conv("joined", 10, 2, 1, "y");
  block.conv("pair", 8, 2, 1, "y_pair");
  b.output("y", DType::kFloat32, {});
  b.output("y_pair", DType::kFloat32, {});
  const onnx::ModelProto model = b.model();
  expect_outputs_match_reference(model, random_feed({1, 3, 6, 6}));
  const Session session = Session::create(model).value();
  ASSERT_EQ(placed_concats(session.plan()), 2);
  const std::vector<Value> frame = run_keeping_every_value(session, random_feed({1, 3, 6, 6}).at("x"));
  const Subgraph& plan = session.plan();
  EXPECT_EQ(data_of(frame, plan, "joined"), data_of(frame, plan, "a"));
  EXPECT_EQ(data_of(frame, plan, "same"), data_of(frame, plan, "a") + 4 * 36 * sizeof(float));
}

TEST(ConcatPlacement, ShapesOtherThanPlannedFallBackToCopying) {
  // The ONNX backend runner does not check feeds against declared shapes: producers then make
  // other shapes than their slices, and the Concats run.
  const onnx::ModelProto model = dense_block_model({});
  RunOptions run;
  run.check_input_shapes = false;
  expect_outputs_match_reference(model, random_feed({1, 3, 7, 7}), run);
  expect_outputs_match_reference(model, random_feed({2, 3, 9, 9}), run);
}

TEST(ConcatPlacement, ObserversSeeEveryValueInMemoryOfItsOwn) {
  const onnx::ModelProto model = dense_block_model({});
  const Session session = Session::create(model).value();
  ASSERT_GT(placed_concats(session.plan()), 0);
  const TensorMap feed = random_feed({1, 3, 9, 9});

  // Hook: every Concat output is its own tensor, not a view of its first input.
  std::map<std::string, Tensor> seen;
  RunOptions hooked;
  hooked.hook = [&](const std::string& name, const Value& value) {
    if (value.is_tensor()) seen[name] = value.tensor();
  };
  session.run(feed, hooked);
  for (int k = 1; k <= 4; ++k) {
    const std::string tag = std::to_string(k);
    ASSERT_TRUE(seen.count("c" + tag));
    EXPECT_NE(seen.at("c" + tag).raw_data(), seen.at("f0").raw_data()) << "c" << k;
  }

  // "Mark all": every intermediate comes back, equal to the reference kernels'.
  RunOptions all;
  all.outputs = session.intermediate_names();
  for (int k = 1; k <= 4; ++k)
    EXPECT_NE(std::find(all.outputs.begin(), all.outputs.end(), "c" + std::to_string(k)), all.outputs.end());
  expect_outputs_match_reference(model, feed, all);
}

TEST(ConcatPlacement, SavedPlanKeepsThePlacementAndTheOutputs) {
  const onnx::ModelProto model = dense_block_model({});
  const Session built = Session::create(model).value();
  const std::string bytes = plan::plan_to_bytes(built);
  const Session loaded = plan::load_plan_bytes(bytes).value();
  EXPECT_EQ(loaded.plan().shared_buffers_.size(), built.plan().shared_buffers_.size());
  EXPECT_EQ(loaded.plan().placed_values_.size(), built.plan().placed_values_.size());
  EXPECT_EQ(placed_concats(loaded.plan()), placed_concats(built.plan()));
  const TensorMap feed = random_feed({1, 3, 9, 9});
  const TensorMap want = built.run(feed);
  const TensorMap got = loaded.run(feed);
  for (const auto& name : want.names())
    EXPECT_TRUE(want.at(name).bit_equal(got.at(name))) << name;
  const std::vector<Value> frame = run_keeping_every_value(loaded, feed.at("x"));
  EXPECT_EQ(data_of(frame, loaded.plan(), "joined"), data_of(frame, loaded.plan(), "f0"));

  // `inspect model X.plan` counts them.
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("concat_placement_" + std::to_string(::getpid()) + ".plan");
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const plan::PlanSummary summary = plan::summarize_plan(path);
  std::filesystem::remove(path);
  EXPECT_EQ(summary.placed_concats, placed_concats(built.plan()));
  EXPECT_GT(summary.placed_concats, 1);
  EXPECT_EQ(summary.shared_buffers, static_cast<int>(built.plan().shared_buffers_.size()));
}

TEST(ConcatPlacement, InconsistentPlacementsAreFound) {
  Subgraph g;
  g.slot_names_ = {"a", "b", "joined"};
  PlannedNode concat;
  concat.label = "Concat node 'joined'";
  concat.spec.op_type = "Concat";
  concat.inputs = {0, 1};
  concat.outputs = {2};
  concat.placed_concat = true;
  g.nodes_.push_back(std::move(concat));
  g.shared_buffers_.push_back({DType::kFloat32, {1, 4, 2, 2}, 0});
  g.placed_values_[0] = {0, 0, {1, 1, 2, 2}};
  g.placed_values_[1] = {0, 16, {1, 3, 2, 2}};
  g.placed_values_[2] = {0, 0, {1, 4, 2, 2}};
  EXPECT_EQ(placement_inconsistency(g), "");
  g.placed_values_[1].byte_offset = 20;  // a gap, and past the end
  EXPECT_NE(placement_inconsistency(g), "");
  g.placed_values_[1] = {0, 16, {1, 2, 2, 2}};  // inside, but the output is more than its inputs
  EXPECT_NE(placement_inconsistency(g), "");
  g.placed_values_[1] = {1, 16, {1, 3, 2, 2}};  // no such buffer
  EXPECT_NE(placement_inconsistency(g), "");
  g.placed_values_[1] = {0, 16, {1, 3, 2, 2}};
  g.shared_buffers_[0].shape = {1, 3, 2, 2};  // too small for the output
  EXPECT_NE(placement_inconsistency(g), "");
}


// Real data: two dense blocks and a transition as torchvision builds them, exported by PyTorch
// with trained-looking BatchNorm statistics (scripts/make_torch_fixtures.py); PyTorch's own
// output is the oracle, at 1 and 2 threads and through a saved plan.
TEST(ConcatPlacement, PyTorchDenseBlocksMatchPyTorchsOutput) {
  const std::filesystem::path dir = testing::source_dir() / "tests" / "data" / "torch";
  const Tensor x = model::tensor_from_pb_file(dir / "dense_blocks.input_0.pb");
  const Tensor want = model::tensor_from_pb_file(dir / "dense_blocks.output_0.pb");
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.threads = threads;
    const Session session = Session::create(dir / "dense_blocks.onnx", options).value();
    // Block 1: four Concats (three layers' inputs and the block's output) in one buffer; block 2: three.
    EXPECT_EQ(session.plan().shared_buffers_.size(), 2u);
    EXPECT_EQ(placed_concats(session.plan()), 7);
    const TensorMap feed{{"x", x}};
    EXPECT_TRUE(testing::tensors_close(session.run(feed).at("logits"), want, 1e-4, 1e-5)) << threads << " threads";
    const Session loaded = plan::load_plan_bytes(plan::plan_to_bytes(session)).value();
    EXPECT_EQ(placed_concats(loaded.plan()), 7);
    EXPECT_TRUE(testing::tensors_close(loaded.run(feed).at("logits"), want, 1e-4, 1e-5)) << threads << " threads, plan";
  }
}

}  // namespace
}  // namespace parity::runtime
