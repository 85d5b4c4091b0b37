// Optimized BatchNormalization (ops/nn/batch_norm_fast.cpp) and Resize
// (ops/nn/resize_fast.cpp) against the reference kernels, and what they decline; BatchNormalization
// between convolutions in channels-last order, and changing an NCHW input into channels-last
// order for a convolution (ops/nn/batch_norm_layout.h).
#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/test_support.h"
#include "op_tester.h"
#include "support/model_builder.h"
#include "runtime/ops/nn/batch_norm_layout.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session_test_util.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

OpTester node(const std::string& op, int opset) { return testing::one_output_node(op, opset); }

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  return testing::random_uniform(shape, seed, lo, hi);
}

OpTester batch_norm(int opset, const Tensor& x, int64_t c, uint32_t seed, bool constant = true) {
  OpTester t = node("BatchNormalization", opset);
  t.input(x);
  const Tensor params[] = {random_tensor({c}, seed), random_tensor({c}, seed + 1), random_tensor({c}, seed + 2),
                           random_tensor({c}, seed + 3, 0.1f, 3.0f)};
  for (const Tensor& p : params) constant ? t.constant_input(p) : t.input(p);
  return t;
}

TEST(OptimizedBatchNorm, MatchesReference) {
  for (int opset : {7, 9, 14, 15}) {
    SCOPED_TRACE(opset);
    batch_norm(opset, random_tensor({2, 5, 7, 3}, 1), 5, 10).tolerance(0, 0).compare_tiers();
    batch_norm(opset, random_tensor({3, 4}, 2), 4, 20).tolerance(0, 0).compare_tiers();           // no spatial axes
    batch_norm(opset, random_tensor({1, 16, 33, 129}, 3), 16, 30).tolerance(0, 0).compare_tiers();  // threads
    batch_norm(opset, random_tensor({0, 3, 2, 2}, 4), 3, 40).compare_tiers();                       // empty batch
  }
  batch_norm(15, random_tensor({2, 3, 4, 5, 6}, 5), 3, 50).attr("epsilon", 1e-3f).tolerance(0, 0).compare_tiers();
}

TEST(OptimizedBatchNorm, DeclinesRunTimeStatisticsAndTraining) {
  batch_norm(15, random_tensor({2, 5, 3}, 1), 5, 10, /*constant=*/false).compare_tiers(false);
  auto training = batch_norm(15, random_tensor({2, 5, 3}, 1), 5, 10);
  training.attr("training_mode", int64_t{1});
  bool used = true;
  training.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
}

/// x -> BatchNormalization (constant statistics) -> Relu; `expose_normalized` also outputs the
/// BatchNormalization's result (then the Relu must not be fused).
onnx::ModelProto batch_norm_relu_model(const Shape& x, bool expose_normalized = false) {
  testing::ModelBuilder b(15);
  const int64_t c = x[1];
  b.input("x", DType::kFloat32, x).output("y", DType::kFloat32, x);
  if (expose_normalized) b.output("n", DType::kFloat32, x);
  b.initializer("scale", random_tensor({c}, 61)).initializer("bias", random_tensor({c}, 62));
  b.initializer("mean", random_tensor({c}, 63)).initializer("var", random_tensor({c}, 64, 0.1f, 3.0f));
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}, "bn");
  b.node("Relu", {"n"}, {"y"}, "relu");
  return b.model();
}

TEST(OptimizedBatchNorm, FusedReluMatchesReferenceOnRandomAndEdgeValues) {
  for (const Shape& shape : {Shape{1, 4, 7, 7}, Shape{2, 3}, Shape{1, 16, 33, 129}, Shape{0, 3, 2, 2}, Shape{1, 1, 1, 1}})
    for (bool expose : {false, true}) {
      Tensor x = random_tensor(shape, 65, -4, 4);
      const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
      for (int64_t i = 0; i < x.numel() && i < 5; ++i) x.data<float>()[i] = edge[i];
      TensorMap feed;
      feed.set("x", x);
      const auto model = batch_norm_relu_model(shape, expose);
      const runtime::Session optimized = testing::session_with_kernels(model, KernelTier::kOptimized);
      const TensorMap expected = testing::session_with_kernels(model, KernelTier::kReference).run(feed);
      const TensorMap actual = optimized.run(feed);
      for (const auto& [name, t] : expected)
        EXPECT_TRUE(testing::tensors_close(actual.at(name), t, 0, 0)) << shape_to_string(shape) << " " << name;
      EXPECT_EQ(testing::any_label_contains(testing::executed_node_labels(optimized, feed), "fused with Relu"), !expose)
          << shape_to_string(shape);
    }
}

/// DenseNet's pattern: Concat of convolutions -> BatchNormalization (-> Relu) -> Conv, three ways:
///   y1: with the Relu, y2: without it (both stay channels-last), y3: the normalized map is also a
///   graph output, so it and its Concat keep NCHW.
onnx::ModelProto dense_layers_model(int64_t size) {
  testing::ModelBuilder b(15);
  b.input("x", DType::kFloat32, {2, 4, size, size});
  uint32_t seed = 70;
  auto conv = [&](const std::string& in, int64_t in_c, int64_t out_c, int64_t k, const std::string& out) {
    b.initializer(out + "_w", random_tensor({out_c, in_c, k, k}, ++seed, -0.5f, 0.5f));
    auto& node = b.node("Conv", {in, out + "_w"}, {out}, out);
    auto* pads = node.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(k / 2);
  };
  auto dense = [&](const std::string& n, bool relu) {
    conv("x", 4, 6, 3, n + "a");
    conv("x", 4, 5, 1, n + "b");
    testing::add_int_attr(b.node("Concat", {n + "a", n + "b"}, {n + "cat"}, n + "cat"), "axis", 1);
    b.initializer(n + "scale", random_tensor({11}, ++seed));
    b.initializer(n + "bias", random_tensor({11}, ++seed));
    b.initializer(n + "mean", random_tensor({11}, ++seed));
    b.initializer(n + "var", random_tensor({11}, ++seed, 0.1f, 3.0f));
    b.node("BatchNormalization", {n + "cat", n + "scale", n + "bias", n + "mean", n + "var"}, {n + "bn"}, n + "bn");
    if (relu) b.node("Relu", {n + "bn"}, {n + "r"}, n + "relu");
    conv(relu ? n + "r" : n + "bn", 11, 3, 1, n);
  };
  dense("y1", true);
  dense("y2", false);
  dense("y3", false);
  for (const char* out : {"y1", "y2", "y3", "y3bn"}) b.output(out, DType::kFloat32, {});
  return b.model();
}

TEST(OptimizedBatchNorm, BetweenConvolutionsStaysChannelsLast) {
  for (int64_t size : {3, 64}) {  // 64: enough pixels to split over threads
    const onnx::ModelProto model = dense_layers_model(size);
    TensorMap feed;
    feed.set("x", random_tensor({2, 4, size, size}, 69));
    const TensorMap expected = testing::session_with_kernels(model, KernelTier::kReference).run(feed);
    for (int threads : {1, 2}) {
      SessionOptions options;
      options.threads = threads;
      const Session session = Session::create(model, options).value();
      const TensorMap got = session.run(feed);
      for (const auto& [name, t] : expected)
        EXPECT_TRUE(testing::tensors_close(got.at(name), t, 2e-4, 2e-4))  // oneDNN sums in its own order
            << name << " size " << size << " threads " << threads;
#if PARITY_HAVE_DNNL
      std::map<std::string, bool> channels_last;  // node name -> reads and writes channels-last
      for (const auto& node : session.plan().nodes_)
        channels_last[node.spec.name] = !node.reads_channels_last.empty() && node.writes_channels_last;
      EXPECT_TRUE(channels_last["y1bn"] && channels_last["y1cat"]);
      EXPECT_TRUE(channels_last["y2bn"] && channels_last["y2cat"]);
      EXPECT_FALSE(channels_last["y3bn"] || channels_last["y3cat"]);
#endif
    }
  }
}

/// What scale_shift_to_channels_last must write: the NCHW loop's expressions, element by element.
float normalized(float x, float a, float b, bool relu) {
  const float v = x * a + b;
  return relu && !(v > 0.0f || v != v) ? 0.0f : v;
}

TEST(BatchNormToChannelsLast, EveryTileAndTailMatchesTheNchwFormulaBitForBit) {
  // The dispatched loop at every tier the process tests, and the portable one.
  using Loop = std::function<void(const float*, const float*, const float*, bool, int64_t, int64_t, int64_t, int64_t,
                                  float*)>;
  std::vector<Loop> loops = {nn::scale_shift_to_channels_last_portable};
  for (const KernelIsa isa : testing::tested_kernel_isas())
    loops.push_back([isa](const float* x, const float* a, const float* b, bool relu, int64_t c, int64_t pixels,
                          int64_t begin, int64_t end, float* y) {
      nn::scale_shift_to_channels_last(x, a, b, relu, c, pixels, begin, end, y, isa);
    });
  const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f};
  // Channel counts below, at and around the 8-channel tiles and their 16-channel pairs (24 and 45
  // end on a lone 8-channel group); pixel counts around the 8-pixel tiles and the 64-pixel blocks
  // (DenseNet's 7 x 7 and 14 x 14 maps among them).
  for (int64_t channels : {1, 3, 8, 13, 16, 24, 32, 37, 45})
    for (int64_t pixels : {1, 5, 8, 49, 64, 67, 196})
      for (bool relu : {false, true}) {
        Tensor x = random_tensor({channels, pixels}, static_cast<uint32_t>(channels * 1000 + pixels), -3, 3);
        for (int64_t i = 0; i < x.numel() && i < 7; ++i) x.data<float>()[i * 3 % x.numel()] = edge[i];
        const Tensor scale = random_tensor({channels}, 91), shift = random_tensor({channels}, 92);
        const float* a = scale.data<float>();
        const float* b = shift.data<float>();
        // The whole map, and a range that starts and ends inside tiles (a thread's share).
        const std::pair<int64_t, int64_t> ranges[] = {{0, pixels}, {pixels / 3, pixels - pixels / 4}};
        for (const Loop& loop : loops)
          for (auto [begin, end] : ranges) {
            std::vector<float> y(static_cast<size_t>(channels * pixels), 12345.0f);
            loop(x.data<float>(), a, b, relu, channels, pixels, begin, end, y.data());
            for (int64_t p = 0; p < pixels; ++p)
              for (int64_t c = 0; c < channels; ++c) {
                const float got = y[static_cast<size_t>(p * channels + c)];
                const float want = p >= begin && p < end ? normalized(x.data<float>()[c * pixels + p], a[c], b[c], relu)
                                                         : 12345.0f;  // outside the range: untouched
                ASSERT_TRUE(std::memcmp(&got, &want, sizeof got) == 0 || (got != got && want != want))
                    << "channels " << channels << " pixels " << pixels << " relu " << relu << " range [" << begin
                    << ", " << end << ") at c " << c << " p " << p << ": " << got << " vs " << want;
              }
          }
      }
}

/// x (a graph input, so NCHW) -> BatchNormalization (-> Relu) -> Conv 3x3 (3x3x3, ... by the rank
/// of x) into "y"; `side` adds
/// a second reader of the normalized map, a Sigmoid into "s".
onnx::ModelProto normalized_input_model(const Shape& x, bool relu, bool side = false) {
  testing::ModelBuilder b(15);
  const int64_t c = x[1];
  b.input("x", DType::kFloat32, x);
  b.initializer("scale", random_tensor({c}, 81)).initializer("bias", random_tensor({c}, 82));
  b.initializer("mean", random_tensor({c}, 83)).initializer("var", random_tensor({c}, 84, 0.1f, 3.0f));
  Shape w_shape = {6, c};
  for (size_t d = 2; d < x.size(); ++d) w_shape.push_back(3);
  b.initializer("w", random_tensor(w_shape, 85, -0.5f, 0.5f));
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}, "bn");
  const std::string conv_input = relu ? "r" : "n";
  if (relu) b.node("Relu", {"n"}, {"r"}, "relu");
  auto* pads = b.node("Conv", {conv_input, "w"}, {"y"}, "conv").add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (size_t i = 4; i < 2 * x.size(); ++i) pads->add_ints(1);  // 1 before and after each spatial axis
  b.output("y", DType::kFloat32, {});
  if (side) {
    b.node("Sigmoid", {conv_input}, {"s"}, "side");
    b.output("s", DType::kFloat32, {});
  }
  return b.model();
}

const PlannedNode& planned(const Session& session, const std::string& name) {
  for (const auto& node : session.plan().nodes_)
    if (node.spec.name == name) return node;
  throw std::runtime_error("no node " + name);
}

void expect_matches_reference(const onnx::ModelProto& model, const TensorMap& feed, const std::string& what) {
  const TensorMap expected = testing::session_with_kernels(model, KernelTier::kReference).run(feed);
  for (int threads : {1, 2, 3}) {
    SessionOptions options;
    options.threads = threads;
    const TensorMap got = Session::create(model, options).value().run(feed);
    for (const auto& [name, t] : expected)
      EXPECT_TRUE(testing::tensors_close(got.at(name), t, 2e-4, 2e-4))  // oneDNN sums in its own order
          << what << " " << name << " threads " << threads;
  }
}

TEST(BatchNormToChannelsLast, ReadsNchwAndWritesChannelsLastForAConvolution) {
  // Odd channel counts, batches above 1, maps of a tile's size and large enough to split over
  // threads, 1-D and 3-D maps; a dynamic batch (the kernel takes the run's shape).
  for (const Shape& shape : {Shape{1, 5, 7, 9}, Shape{2, 13, 8, 8}, Shape{3, 3, 1, 1}, Shape{2, 16, 40, 41},
                             Shape{2, 9, 19}, Shape{1, 4, 3, 5, 6}})
    for (bool relu : {false, true}) {
      const std::string what = shape_to_string(shape) + (relu ? " relu" : "");
      Tensor x = random_tensor(shape, 86, -3, 3);
      x.data<float>()[0] = NAN;
      x.data<float>()[1] = -0.0f;
      TensorMap feed;
      feed.set("x", x);
      const onnx::ModelProto model = normalized_input_model(shape, relu);
      expect_matches_reference(model, feed, what);
#if PARITY_HAVE_DNNL
      const Session session = Session::create(model).value();
      const PlannedNode& bn = planned(session, "bn");
      EXPECT_TRUE(bn.writes_channels_last && bn.reads_channels_last.empty()) << what;
      EXPECT_EQ(planned(session, "conv").reads_channels_last, std::vector<size_t>{0}) << what;
#endif
    }
  Shape dynamic{-1, 5, 6, 7};
  const onnx::ModelProto model = normalized_input_model(dynamic, true);
  for (int64_t batch : {1, 3}) {
    TensorMap feed;
    feed.set("x", random_tensor({batch, 5, 6, 7}, 87));
    expect_matches_reference(model, feed, "dynamic batch " + std::to_string(batch));
  }
}

TEST(BatchNormToChannelsLast, KeepsNchwWhereAReaderWouldNotConvertItself) {
  // The normalized map also feeds a Sigmoid, which reads NCHW: the layout change would only move.
  const onnx::ModelProto model = normalized_input_model({1, 5, 7, 9}, true, /*side=*/true);
  TensorMap feed;
  feed.set("x", random_tensor({1, 5, 7, 9}, 88));
  expect_matches_reference(model, feed, "two readers");
  const Session session = Session::create(model).value();
  EXPECT_FALSE(planned(session, "bn").writes_channels_last);
  // Unfused plans (hooks, "mark all") keep every value in the ONNX layout.
  SessionOptions unfused;
  unfused.fuse = false;
  const Session plain = Session::create(normalized_input_model({1, 5, 7, 9}, true), unfused).value();
  EXPECT_FALSE(planned(plain, "bn").writes_channels_last);
}

TEST(BatchNormToChannelsLast, SavedPlanKeepsTheLayoutChange) {
  const onnx::ModelProto model = normalized_input_model({2, 7, 9, 9}, true);
  const Session built = Session::create(model).value();
  const Session loaded = plan::load_plan_bytes(plan::plan_to_bytes(built)).value();
  const PlannedNode& bn = planned(loaded, "bn");
  EXPECT_EQ(bn.writes_channels_last, planned(built, "bn").writes_channels_last);
  EXPECT_TRUE(bn.reads_channels_last.empty());
  TensorMap feed;
  feed.set("x", random_tensor({2, 7, 9, 9}, 89));
  const TensorMap want = built.run(feed);
  const TensorMap got = loaded.run(feed);
  for (const auto& name : want.names()) EXPECT_TRUE(want.at(name).bit_equal(got.at(name))) << name;
}

OpTester resize(const Tensor& x, const std::string& mode, const std::string& coord, const std::string& nearest,
                const std::vector<float>& scales, const std::vector<int64_t>& sizes = {}) {
  OpTester t = node("Resize", 13);
  t.attr("mode", mode).attr("coordinate_transformation_mode", coord);
  if (!nearest.empty()) t.attr("nearest_mode", nearest);
  t.input(x).missing_input();
  if (!scales.empty()) t.constant_input(Tensor::from_vector<float>({static_cast<int64_t>(scales.size())}, scales));
  else t.missing_input();
  if (!sizes.empty()) t.constant_input(Tensor::from_vector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes));
  return t;
}

TEST(OptimizedResize, NearestIntegerUpsamplingAsInPaddleOcr) {
  for (float s : {2.0f, 4.0f, 8.0f})
    resize(random_tensor({1, 6, 9, 13}, 1), "nearest", "asymmetric", "floor", {1, 1, s, s}).tolerance(0, 0).compare_tiers();
  resize(random_tensor({2, 3, 40, 41}, 2), "nearest", "asymmetric", "floor", {1, 1, 2, 2}).tolerance(0, 0).compare_tiers();
}

TEST(OptimizedResize, EveryNearestAndCoordinateMode) {
  const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  const char* nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const char* c : coords)
    for (const char* n : nearests) {
      SCOPED_TRACE(std::string(c) + " " + n);
      resize(random_tensor({1, 2, 5, 7}, 3), "nearest", c, n, {1, 1, 1.7f, 0.6f}).tolerance(0, 0).compare_tiers();
      resize(random_tensor({2, 2, 4, 4}, 4), "nearest", c, n, {}, {2, 2, 9, 3}).tolerance(0, 0).compare_tiers();
      resize(random_tensor({3, 4}, 5), "nearest", c, n, {2.5f, 1.5f}).tolerance(0, 0).compare_tiers();
    }
}

TEST(OptimizedResize, Linear) {
  const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  for (const char* c : coords) {
    SCOPED_TRACE(c);
    resize(random_tensor({1, 3, 6, 5}, 6), "linear", c, "", {1, 1, 2, 2}).tolerance(1e-6, 1e-6).compare_tiers();
    resize(random_tensor({2, 2, 7, 9}, 7), "linear", c, "", {1, 1, 0.5f, 1.3f}).tolerance(1e-6, 1e-6).compare_tiers();
    resize(random_tensor({1, 1, 5, 4}, 8), "linear", c, "", {}, {1, 1, 1, 11}).tolerance(1e-6, 1e-6).compare_tiers();
    resize(random_tensor({1, 2, 3, 6, 5}, 9), "linear", c, "", {1, 1, 1, 3, 2}).tolerance(1e-6, 1e-6).compare_tiers();
  }
  // Many rows: split across threads.
  resize(random_tensor({1, 8, 64, 64}, 10), "linear", "half_pixel", "", {1, 1, 2, 2}).tolerance(1e-6, 1e-6).compare_tiers();
  // LR-ASPP's head: 8x upsampling, where each source row's width interpolation serves 8 output
  // rows; also shrinking rows (each source row used once or skipped) and a 1-row source.
  resize(random_tensor({1, 21, 28, 28}, 11), "linear", "half_pixel", "", {}, {1, 21, 224, 224}).tolerance(1e-6, 1e-6).compare_tiers();
  resize(random_tensor({2, 3, 30, 8}, 12), "linear", "half_pixel", "", {}, {2, 3, 7, 19}).tolerance(1e-6, 1e-6).compare_tiers();
  resize(random_tensor({1, 2, 1, 6}, 13), "linear", "align_corners", "", {}, {1, 2, 5, 9}).tolerance(1e-6, 1e-6).compare_tiers();
}

TEST(OptimizedResize, InfAndNanStayWhereTheReferencePutsThem) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 3}, {1, inf, 3, -inf, nan, 0});
  resize(x, "linear", "align_corners", "", {}, {1, 1, 3, 5}).tolerance(0, 0).compare_tiers();
  resize(x, "linear", "asymmetric", "", {1, 1, 2, 2}).tolerance(0, 0).compare_tiers();
  resize(x, "nearest", "half_pixel", "round_prefer_ceil", {1, 1, 2, 2}).tolerance(0, 0).compare_tiers();
}

TEST(OptimizedResize, DelegatesWhatItDoesNotCover) {
  // Cubic and crop-and-resize are declined at plan time.
  bool used = true;
  resize(random_tensor({1, 1, 4, 4}, 1), "cubic", "half_pixel", "", {1, 1, 2, 2}).run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  // Resizing the channel axis, or an integer image, runs the reference kernel at run time.
  resize(random_tensor({1, 3, 4, 4}, 2), "nearest", "asymmetric", "floor", {1, 2, 2, 2}).tolerance(0, 0).compare_tiers();
  node("Resize", 13)
      .attr("mode", "nearest")
      .input<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})
      .missing_input()
      .constant_input(Tensor::from_vector<float>({4}, {1, 1, 2, 2}))
      .compare_tiers(false);
  // Resize-11 takes the same path.
  OpTester t = node("Resize", 11);
  t.attr("mode", "nearest")
      .attr("coordinate_transformation_mode", "asymmetric")
      .attr("nearest_mode", "floor")
      .input(random_tensor({1, 2, 3, 3}, 3))
      .constant_input(Tensor::from_vector<float>({0}, {}))
      .constant_input(Tensor::from_vector<float>({4}, {1, 1, 2, 2}))
      .tolerance(0, 0)
      .compare_tiers();
}

}  // namespace
}  // namespace parity::runtime
