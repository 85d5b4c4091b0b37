// Spec: https://onnx.ai/onnx/operators/onnx__Transpose.html, onnx__Concat.html, onnx__Slice.html, onnx__Pad.html
// Optimized Transpose (ops/tensor/transpose_fast.cpp), Concat (ops/tensor/concat_fast.cpp),
// Slice (ops/tensor/slice_fast.cpp) and the Pad that pads nothing (ops/tensor/pad_fast.cpp) against the reference kernels: every perm of ranks 1-4,
// size-1 and empty dims, channel shuffle, each element size, negative axes and steps, empty
// inputs, threads, slices that are views of their input; and the cases they leave to the
// reference (strings, bad perms, shapes and slice parameters, which must still fail the same way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_tester.h"
#include "support/model_builder.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

Tensor random_tensor(const Shape& shape, uint32_t seed) { return testing::random_uniform(shape, seed, -3, 3); }

/// `t` cast to `dtype`: the values are small, and made non-negative for uint8 (a negative float
/// converted to an unsigned type is undefined behaviour, which UBSan reports).
Tensor as(const Tensor& t, DType dtype) {
  if (dtype != DType::kUInt8) return t.cast(dtype);
  Tensor magnitudes(DType::kFloat32, t.shape());
  const auto source = t.values<float>();
  auto target = magnitudes.values<float>();
  for (size_t i = 0; i < target.size(); ++i) target[i] = std::fabs(source[i]);
  return magnitudes.cast(dtype);
}

void compare_transpose(const Tensor& x, const std::optional<std::vector<int64_t>>& perm) {
  OpTester t = testing::one_output_node("Transpose", 13);
  if (perm) t.attr_ints("perm", *perm);
  t.input(x).tolerance(0, 0).compare_tiers();
}

TEST(OptimizedTranspose, EveryPermOfRanksOneToFour) {
  const std::vector<Shape> shapes = {{5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 5}, {1, 4, 1, 3}, {3, 2, 4, 5}};
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      SCOPED_TRACE(shape_to_string(shape) + " perm " + shape_to_string(perm));
      compare_transpose(random_tensor(shape, seed++), perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
    compare_transpose(random_tensor(shape, seed++), std::nullopt);  // default: reversed dims
  }
}

TEST(OptimizedTranspose, ChannelShuffleElementSizesAndEdgeShapes) {
  const Tensor shuffle = random_tensor({1, 2, 58, 28, 28}, 2);
  for (DType dtype : {DType::kFloat32, DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool, DType::kFloat64})
    compare_transpose(as(shuffle, dtype), std::vector<int64_t>{0, 2, 1, 3, 4});
  compare_transpose(random_tensor({2, 0, 3}, 3), std::vector<int64_t>{2, 0, 1});                   // empty
  compare_transpose(random_tensor({}, 4), std::vector<int64_t>{});                                 // scalar
  compare_transpose(random_tensor({1, 1, 1}, 5), std::vector<int64_t>{2, 1, 0});                   // all ones
  compare_transpose(random_tensor({2, 3, 4, 5, 6, 2}, 6), std::vector<int64_t>{5, 3, 1, 0, 2, 4});  // rank 6
  compare_transpose(random_tensor({300, 257}, 7), std::vector<int64_t>{1, 0});                     // large 2-D
}

TEST(OptimizedTranspose, StringsAndBadPermsRunTheReference) {
  OpTester strings("Transpose", 13);
  strings.attr_ints("perm", {1, 0}).input(Tensor::from_vector<std::string>({2, 2}, {"a", "b", "c", "d"}));
  strings.output(Tensor::from_vector<std::string>({2, 2}, {"a", "c", "b", "d"})).kernels(KernelTier::kOptimized).run();
  OpTester bad = testing::one_output_node("Transpose", 13);
  bad.attr_ints("perm", {0, 0}).input(random_tensor({2, 2}, 8)).kernels(KernelTier::kOptimized);
  EXPECT_NE(bad.run_expect_error(ErrorCode::kRuntime).find("is not a permutation"), std::string::npos);
}

void compare_concat(const std::vector<Tensor>& inputs, int64_t axis, int opset = 13) {
  OpTester t = testing::one_output_node("Concat", opset);
  t.attr("axis", axis);
  for (const Tensor& x : inputs) t.input(x);
  t.tolerance(0, 0).compare_tiers();
}

TEST(OptimizedConcat, AxesDtypesAndEmptyInputs) {
  compare_concat({random_tensor({1, 3, 5, 5}, 1), random_tensor({1, 4, 5, 5}, 2)}, 1);
  compare_concat({random_tensor({2, 3, 4}, 3), random_tensor({2, 3, 1}, 4), random_tensor({2, 3, 2}, 5)}, -1);
  compare_concat({random_tensor({2, 3}, 6), random_tensor({5, 3}, 7)}, 0);
  compare_concat({random_tensor({2, 0, 3}, 8), random_tensor({2, 2, 3}, 9)}, 1);  // an empty input
  compare_concat({random_tensor({0, 2}, 10), random_tensor({0, 3}, 11)}, 1);      // an empty output
  compare_concat({random_tensor({7}, 12)}, 0, 4);                                // one input, Concat-4
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool})
    compare_concat({as(random_tensor({2, 3, 4}, 13), dtype), as(random_tensor({2, 5, 4}, 14), dtype)}, 1);
}

TEST(OptimizedConcat, MismatchesAndStringsRunTheReference) {
  OpTester bad = testing::one_output_node("Concat", 13);
  bad.attr("axis", int64_t{1}).input(random_tensor({2, 3}, 1)).input(random_tensor({3, 3}, 2));
  bad.kernels(KernelTier::kOptimized);
  EXPECT_NE(bad.run_expect_error(ErrorCode::kRuntime).find("does not match input 0"), std::string::npos);
  OpTester strings("Concat", 13);
  strings.attr("axis", int64_t{0}).input(Tensor::from_vector<std::string>({1}, {"a"})).input(Tensor::from_vector<std::string>({2}, {"b", "c"}));
  strings.output(Tensor::from_vector<std::string>({3}, {"a", "b", "c"})).kernels(KernelTier::kOptimized).run();
}

// Large tensors split over threads: a DenseNet-sized concat and a ShuffleNet-sized shuffle at 1,
// 2 and 3 threads give the reference's bytes.
TEST(OptimizedLayout, ThreadedCopiesMatchTheReference) {
  testing::ModelBuilder b(13);
  b.input("a", DType::kFloat32, {1, 96, 28, 28}).input("b", DType::kFloat32, {1, 32, 28, 28});
  b.output("y", DType::kFloat32, {1, 28, 2, 64, 28});
  auto& concat = b.node("Concat", {"a", "b"}, {"c"}, "concat");
  testing::add_int_attr(concat, "axis", 1);
  b.initializer("shape", Tensor::from_vector<int64_t>({5}, {1, 2, 64, 28, 28}));
  b.node("Reshape", {"c", "shape"}, {"r"}, "reshape");
  auto& transpose = b.node("Transpose", {"r"}, {"y"}, "shuffle");
  auto* perm = transpose.add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {0, 3, 1, 2, 4}) perm->add_ints(p);
  TensorMap feed;
  feed.set("a", random_tensor({1, 96, 28, 28}, 1));
  feed.set("b", random_tensor({1, 32, 28, 28}, 2));
  auto run = [&](KernelTier tier, int threads) {
    SessionOptions options;
    options.kernels = tier;
    options.threads = threads;
    return Session::create(b.model(), options).value().run(feed).at("y");
  };
  const Tensor expected = run(KernelTier::kReference, 1);
  for (int threads : {1, 2, 3})
    EXPECT_TRUE(testing::tensors_close(run(KernelTier::kOptimized, threads), expected, 0, 0)) << threads;
}

/// SqueezeNet's fire module and variants around a channel Concat, as one graph (two images),
/// each Concat reading its own convolutions of s = Relu(Conv1x1(x)):
///   fire  = Concat(1x1, 3x3)  -> MaxPool -> Conv -> y1     (all channels-last)
///   mixed = Concat(1x1, x)    -> Conv -> y2                (x comes in NCHW, is transposed)
///   chain = Concat(Concat(3x3, 1x1), 3x3) -> Conv -> y3    (two Concats pass the layout on)
///   plain = Concat(3x3, 1x1)  -> Reshape -> y4             (a reader that needs NCHW)
///   shown = Concat(1x1, 1x1)  a graph output, also read by a Conv -> y5
onnx::ModelProto fire_model(int64_t size) {
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {2, 4, size, size});
  int seed = 40;
  auto conv = [&](const std::string& in, int64_t in_c, int64_t out_c, int64_t k, const std::string& out) {
    b.initializer(out + "_w", random_tensor({out_c, in_c, k, k}, ++seed));
    b.initializer(out + "_b", random_tensor({out_c}, ++seed));
    auto& node = b.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
    auto* pads = node.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(k / 2);
  };
  auto concat = [&](const std::vector<std::string>& in, const std::string& out) {
    auto& node = b.node("Concat", {}, {out}, out);
    for (const std::string& name : in) node.add_input(name);
    testing::add_int_attr(node, "axis", 1);
  };
  conv("x", 4, 3, 1, "sq");
  b.node("Relu", {"sq"}, {"s"}, "relu");
  conv("s", 3, 5, 1, "f1");
  conv("s", 3, 6, 3, "f3");
  concat({"f1", "f3"}, "fire");
  auto& pool = b.node("MaxPool", {"fire"}, {"pooled"}, "pool");
  auto* kernel = pool.add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(2);
  kernel->add_ints(2);
  conv("pooled", 11, 2, 1, "y1");
  conv("s", 3, 5, 1, "m1");
  concat({"m1", "x"}, "mixed");
  conv("mixed", 9, 2, 3, "y2");
  conv("s", 3, 6, 3, "c3");
  conv("s", 3, 5, 1, "c1");
  conv("s", 3, 6, 3, "c3b");
  concat({"c3", "c1"}, "inner");
  concat({"inner", "c3b"}, "chain");
  conv("chain", 17, 2, 1, "y3");
  conv("s", 3, 6, 3, "p3");
  conv("s", 3, 5, 1, "p1");
  concat({"p3", "p1"}, "plain");
  b.initializer("flat", Tensor::from_vector<int64_t>({2}, {1, -1}));
  b.node("Reshape", {"plain", "flat"}, {"y4"}, "reshape");
  conv("s", 3, 5, 1, "s1");
  conv("s", 3, 5, 1, "s1b");
  concat({"s1", "s1b"}, "shown");
  conv("shown", 10, 2, 1, "y5");
  for (const char* out : {"y1", "y2", "y3", "y4", "y5", "shown"}) b.output(out, DType::kFloat32, {});
  return b.model();
}

TEST(OptimizedConcat, ChannelConcatBetweenConvolutionsStaysChannelsLast) {
  for (int64_t size : {2, 6, 17, 64}) {  // 64: Concats large enough to split over threads
    const onnx::ModelProto model = fire_model(size);
    TensorMap feed;
    feed.set("x", random_tensor({2, 4, size, size}, 39));
    SessionOptions reference_options;
    reference_options.kernels = KernelTier::kReference;
    const TensorMap expected = Session::create(model, reference_options).value().run(feed);
    for (int threads : {1, 2, 3}) {  // 3: a thread's pixels span both images
      SessionOptions options;
      options.threads = threads;
      const Session session = Session::create(model, options).value();
      const TensorMap got = session.run(feed);
      for (const char* out : {"y1", "y2", "y3", "y4", "y5", "shown"})
        EXPECT_TRUE(testing::tensors_close(got.at(out), expected.at(out), 2e-4, 2e-4))  // oneDNN sums in its own order
            << out << " size " << size << " threads " << threads;
#if PARITY_HAVE_DNNL
      std::map<std::string, std::pair<size_t, bool>> concats;  // label -> (inputs read channels-last, writes)
      for (const auto& node : session.plan().nodes_)
        if (node.spec.op_type == "Concat") concats[node.spec.name] = {node.reads_channels_last.size(), node.writes_channels_last};
      EXPECT_EQ(concats["fire"], std::make_pair(size_t{2}, true));
      EXPECT_EQ(concats["mixed"], std::make_pair(size_t{1}, true));
      EXPECT_EQ(concats["inner"], std::make_pair(size_t{2}, true));
      EXPECT_EQ(concats["chain"], std::make_pair(size_t{2}, true));
      EXPECT_EQ(concats["plain"], std::make_pair(size_t{0}, false));
      EXPECT_EQ(concats["shown"], std::make_pair(size_t{0}, false));
#endif
    }
  }
}

void compare_slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                   const std::optional<std::vector<int64_t>>& axes = std::nullopt,
                   const std::optional<std::vector<int64_t>>& steps = std::nullopt) {
  SCOPED_TRACE(shape_to_string(x.shape()) + " starts " + shape_to_string(starts) + " ends " + shape_to_string(ends) +
               (axes ? " axes " + shape_to_string(*axes) : "") + (steps ? " steps " + shape_to_string(*steps) : ""));
  OpTester t = testing::one_output_node("Slice", 13);
  const auto ints = [](const std::vector<int64_t>& v) {
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  t.input(x).input(ints(starts)).input(ints(ends));
  if (axes || steps) t.input(ints(axes.value_or(std::vector<int64_t>{})));
  if (steps) t.input(ints(*steps));
  t.tolerance(0, 0).compare_tiers();
}

// ShuffleNetV2's channel halves (views of the input), ranges along inner dims (copies with
// merged rows), negative and clamped bounds, negative and large steps, size-1 and empty dims.
TEST(OptimizedSlice, ViewsAndCopiesMatchTheReference) {
  const Tensor x = random_tensor({1, 116, 14, 14}, 1);
  compare_slice(x, {0}, {58}, std::vector<int64_t>{1});                      // a view
  compare_slice(x, {58}, {116}, std::vector<int64_t>{1});                    // a view at an offset
  compare_slice(x, {58}, {INT64_MAX}, std::vector<int64_t>{-3});             // clamped end
  compare_slice(x, {2, 3}, {5, 9}, std::vector<int64_t>{2, 3});              // rows of a window
  compare_slice(x, {1}, {-1}, std::vector<int64_t>{-1});                     // innermost range
  compare_slice(x, {0, 0}, {116, 14}, std::vector<int64_t>{1, 3}, std::vector<int64_t>{2, 3});  // steps
  compare_slice(x, {-1}, {INT64_MIN}, std::vector<int64_t>{1}, std::vector<int64_t>{-1});       // reversed
  compare_slice(x, {100}, {-200}, std::vector<int64_t>{1}, std::vector<int64_t>{-7});
  compare_slice(x, {5}, {6}, std::vector<int64_t>{1}, std::vector<int64_t>{INT64_MAX});  // one element, huge step
  const Tensor y = random_tensor({4, 3, 5, 6}, 2);
  compare_slice(y, {1}, {3});                                                // outermost range: a view
  compare_slice(y, {2, 1}, {3, 2});                                          // one row: a view inside
  compare_slice(y, {1, 0, 2}, {3, 3, 4});                                    // blocks of 2 rows
  compare_slice(y, {0, 0, 0, 0}, {4, 3, 5, 6});                              // everything
  compare_slice(y, {3}, {3});                                                // empty
  compare_slice(y, {0, 7}, {4, 9}, std::vector<int64_t>{0, 3});              // empty past the end
  compare_slice(random_tensor({0, 3}, 3), {0}, {2}, std::vector<int64_t>{1});  // empty input
  compare_slice(random_tensor({7}, 4), {2}, {5});                              // rank 1
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kInt64, DType::kBool, DType::kFloat64})
    compare_slice(as(random_tensor({2, 6, 3}, 5), dtype), {1, 1}, {5, 3}, std::vector<int64_t>{1, 2});
}

// Slices of one value feeding several consumers, some of them views, beside the value itself:
// a graph like ShuffleNetV2's split, with the input released while its views live on.
TEST(OptimizedSlice, ViewsOfOneValueInAGraphMatchTheReference) {
  testing::ModelBuilder b(13);
  b.input("x", DType::kFloat32, {1, 8, 3, 3});
  b.output("y", DType::kFloat32, {1, 8, 3, 3});
  b.initializer("zero", Tensor::from_vector<int64_t>({1}, {0}))
      .initializer("half", Tensor::from_vector<int64_t>({1}, {4}))
      .initializer("end", Tensor::from_vector<int64_t>({1}, {8}))
      .initializer("axis", Tensor::from_vector<int64_t>({1}, {1}));
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Slice", {"r", "zero", "half", "axis"}, {"lo"}, "lo");
  b.node("Slice", {"r", "half", "end", "axis"}, {"hi"}, "hi");
  b.node("Neg", {"hi"}, {"n"}, "neg");
  auto& concat = b.node("Concat", {"n", "lo"}, {"y"}, "concat");
  testing::add_int_attr(concat, "axis", 1);
  TensorMap feed;
  feed.set("x", random_tensor({1, 8, 3, 3}, 6));
  auto run = [&](KernelTier tier) {
    SessionOptions options;
    options.kernels = tier;
    return Session::create(b.model(), options).value().run(feed).at("y");
  };
  EXPECT_TRUE(testing::tensors_close(run(KernelTier::kOptimized), run(KernelTier::kReference), 0, 0));
}

TEST(OptimizedSlice, StringsAndBadParametersRunTheReference) {
  OpTester strings("Slice", 13);
  strings.input(Tensor::from_vector<std::string>({3}, {"a", "b", "c"}))
      .input(Tensor::from_vector<int64_t>({1}, {1}))
      .input(Tensor::from_vector<int64_t>({1}, {3}));
  strings.output(Tensor::from_vector<std::string>({2}, {"b", "c"})).kernels(KernelTier::kOptimized).run();
  OpTester zero_step = testing::one_output_node("Slice", 13);
  zero_step.input(random_tensor({4}, 7))
      .input(Tensor::from_vector<int64_t>({1}, {0}))
      .input(Tensor::from_vector<int64_t>({1}, {4}))
      .input(Tensor::from_vector<int64_t>({1}, {0}))
      .input(Tensor::from_vector<int64_t>({1}, {0}))
      .kernels(KernelTier::kOptimized);
  EXPECT_NE(zero_step.run_expect_error(ErrorCode::kRuntime).find("steps must not be 0"), std::string::npos);
}

}  // namespace
}  // namespace parity::runtime

namespace parity::runtime {
namespace {

/// Adds a Conv (`k` x ... kernel over `spatial` dims, same padding) from `in` to `out`.
void add_conv(testing::ModelBuilder& b, const std::string& in, int64_t in_c, int64_t out_c, int64_t k, size_t spatial,
              const std::string& out, uint32_t seed) {
  Shape w_shape = {out_c, in_c};
  for (size_t d = 0; d < spatial; ++d) w_shape.push_back(k);
  b.initializer(out + "_w", random_tensor(w_shape, seed)).initializer(out + "_b", random_tensor({out_c}, seed + 1));
  auto& node = b.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
  auto* pads = node.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (size_t i = 0; i < 2 * spatial; ++i) pads->add_ints(k / 2);
}

/// Runs `model` on `x` with the reference kernels and the optimized ones at 1-3 threads.
void expect_tiers_agree(const onnx::ModelProto& model, const Tensor& x, const std::string& trace) {
  SCOPED_TRACE(trace);
  TensorMap feed;
  feed.set("x", x);
  SessionOptions reference_options;
  reference_options.kernels = KernelTier::kReference;
  const TensorMap expected = Session::create(model, reference_options).value().run(feed);
  for (int threads : {1, 3}) {
    SessionOptions options;
    options.threads = threads;
    const TensorMap got = Session::create(model, options).value().run(feed);
    for (const auto& [name, tensor] : expected)
      EXPECT_TRUE(testing::tensors_close(got.at(name), tensor, 2e-4, 2e-4)) << name << " threads " << threads;
  }
}

/// Conv -> Slice -> Conv: the Slice reads and writes channels-last; every kind of window (channel
/// ranges as in ShuffleNetV2, spatial windows with steps, reversed channels, one image of the batch).
TEST(OptimizedSlice, SlicesBetweenConvolutionsStayChannelsLast) {
  struct Window {
    std::vector<int64_t> starts, ends, axes, steps;
    int64_t out_channels;
  };
  const std::vector<Window> windows = {
      {{0}, {3}, {1}, {1}, 3},                   // first channel half
      {{3}, {INT64_MAX}, {1}, {1}, 3},           // second half
      {{1, 2}, {5, 9}, {2, 3}, {1, 2}, 6},       // spatial window with a step
      {{-1}, {INT64_MIN}, {1}, {-2}, 3},         // every second channel, reversed
      {{1, 1}, {2, 5}, {0, 1}, {1, 1}, 4},       // one image, channels 1-4
  };
  for (const Window& w : windows) {
    testing::ModelBuilder b(13);
    b.input("x", DType::kFloat32, {2, 4, 11, 11});
    add_conv(b, "x", 4, 6, 3, 2, "a", 5);
    auto ints = [](const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); };
    b.initializer("starts", ints(w.starts)).initializer("ends", ints(w.ends));
    b.initializer("axes", ints(w.axes)).initializer("steps", ints(w.steps));
    b.node("Slice", {"a", "starts", "ends", "axes", "steps"}, {"part"}, "slice");
    add_conv(b, "part", w.out_channels, 2, 1, 2, "y", 9);
    b.output("y", DType::kFloat32, {});
    const onnx::ModelProto model = b.model();
    expect_tiers_agree(model, random_tensor({2, 4, 11, 11}, 3), "starts " + shape_to_string(w.starts));
#if PARITY_HAVE_DNNL
    const Session session = Session::create(model, SessionOptions{}).value();
    for (const auto& node : session.plan().nodes_) {
      if (node.spec.op_type != "Slice") continue;
      EXPECT_EQ(node.reads_channels_last, std::vector<size_t>{0});
      EXPECT_TRUE(node.writes_channels_last);
    }
#endif
  }
}

/// Concat with a negative axis between convolutions: -3 is the channel axis of 2-D convolutions'
/// values (the channels-last hand-off); of 1-D convolutions' values it is the batch axis, which
/// the Concat joins in NCHW order and permutes back.
TEST(OptimizedConcat, NegativeAxesBetweenConvolutions) {
  for (size_t spatial : {size_t{1}, size_t{2}}) {
    for (int64_t axis : {-3, -2, 1}) {
      testing::ModelBuilder b(13);
      Shape x_shape = {2, 4};
      for (size_t d = 0; d < spatial; ++d) x_shape.push_back(7);
      std::vector<int64_t> dims(x_shape.begin(), x_shape.end());
      b.input("x", DType::kFloat32, dims);
      add_conv(b, "x", 4, 3, 3, spatial, "a", 11);
      add_conv(b, "x", 4, 3, 1, spatial, "c", 13);
      auto& concat = b.node("Concat", {"a", "c"}, {"joined"}, "concat");
      testing::add_int_attr(concat, "axis", axis);
      const int64_t rank = static_cast<int64_t>(spatial) + 2, normalized = axis < 0 ? axis + rank : axis;
      add_conv(b, "joined", normalized == 1 ? 6 : 3, 2, 1, spatial, "y", 17);
      b.output("y", DType::kFloat32, {});
      expect_tiers_agree(b.model(), random_tensor(x_shape, 4),
                         "spatial " + std::to_string(spatial) + " axis " + std::to_string(axis));
#if PARITY_HAVE_DNNL
      if (axis == -2) continue;  // not a channel axis this test hands off at plan time
      const Session session = Session::create(b.model(), SessionOptions{}).value();
      for (const auto& node : session.plan().nodes_) {
        if (node.spec.op_type != "Concat") continue;
        EXPECT_EQ(node.reads_channels_last.size(), 2u) << "spatial " << spatial << " axis " << axis;
        EXPECT_TRUE(node.writes_channels_last);
      }
#endif
    }
  }
}

Tensor int64s(const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

/// Pad with constant pads that are all zero: the optimized kernel hands its input on, in every
/// mode, opset and dtype; any other Pad (a nonzero pad, pads known only at run time, an axes or
/// constant_value input) is the reference kernel's, and pads that do not fit the rank fail the same way.
TEST(OptimizedPad, ZeroPadsHandTheInputOnAndEveryOtherPadRunsTheReference) {
  const Tensor x = random_tensor({2, 5, 7, 4}, 21);
  const Tensor zeros = int64s({0, 0, 0, 0, 0, 0, 0, 0});
  for (int opset : {11, 13, 18, 19})
    for (const char* mode : {"constant", "reflect", "edge"}) {
      SCOPED_TRACE(std::to_string(opset) + " " + mode);
      testing::one_output_node("Pad", opset).attr("mode", mode).input(x).constant_input(zeros).tolerance(0, 0).compare_tiers();
    }
  for (DType dtype : {DType::kUInt8, DType::kInt64, DType::kBool})
    testing::one_output_node("Pad", 13).input(as(x, dtype)).constant_input(zeros).tolerance(0, 0).compare_tiers();
  testing::one_output_node("Pad", 13).input(random_tensor({0, 3}, 22)).constant_input(int64s({0, 0, 0, 0})).compare_tiers();

  auto declined = [&](OpTester t, const std::string& what) {
    SCOPED_TRACE(what);
    t.tolerance(0, 0).compare_tiers(/*expect_optimized=*/false);
    bool used = true;
    t.run_outputs(KernelTier::kOptimized, &used);
    EXPECT_FALSE(used);
  };
  declined(testing::one_output_node("Pad", 13).input(x).constant_input(int64s({0, 0, 1, 0, 0, 0, 0, 2})), "nonzero");
  declined(testing::one_output_node("Pad", 13).input(x).input(zeros), "run-time pads");
  declined(testing::one_output_node("Pad", 13).input(x).constant_input(zeros).input(Tensor::from_vector<float>({}, {1.5f})),
           "constant_value");
  declined(testing::one_output_node("Pad", 18).input(x).constant_input(int64s({0, 0})).missing_input().constant_input(int64s({1})),
           "axes");

  OpTester short_pads = testing::one_output_node("Pad", 13);
  short_pads.input(x).constant_input(int64s({0, 0, 0, 0})).kernels(KernelTier::kOptimized);
  EXPECT_NE(short_pads.run_expect_error(ErrorCode::kRuntime).find("pads has 4 entries"), std::string::npos);
}

/// DenseNet's transition: Conv -> Pad (all zero) -> AveragePool. The Pad passes the convolution's
/// channels-last output through to the AveragePool, on odd channel counts, batches and sizes.
TEST(OptimizedPad, ZeroPadBetweenAConvolutionAndAPoolStaysChannelsLast) {
  for (const Shape& shape : {Shape{1, 4, 8, 8}, Shape{2, 3, 9, 7}}) {
    testing::ModelBuilder b(13);
    b.input("x", DType::kFloat32, std::vector<int64_t>(shape.begin(), shape.end()));
    add_conv(b, "x", shape[1], 5, 1, 2, "a", 23);
    b.initializer("pads", int64s({0, 0, 0, 0, 0, 0, 0, 0}));
    b.node("Pad", {"a", "pads"}, {"padded"}, "pad");
    auto& pool = b.node("AveragePool", {"padded"}, {"y"}, "pool");
    auto* kernel = pool.add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(onnx::AttributeProto::INTS);
    kernel->add_ints(2);
    kernel->add_ints(2);
    auto* strides = pool.add_attribute();
    strides->CopyFrom(*kernel);
    strides->set_name("strides");
    b.output("y", DType::kFloat32, {});
    const onnx::ModelProto model = b.model();
    expect_tiers_agree(model, random_tensor(shape, 24), shape_to_string(shape));
#if PARITY_HAVE_DNNL
    const Session session = Session::create(model, SessionOptions{}).value();
    for (const auto& node : session.plan().nodes_) {
      const std::string& op = node.spec.op_type;
      const bool reads = node.reads_channels_last == std::vector<size_t>{0};
      EXPECT_TRUE(op != "Conv" || node.writes_channels_last) << node.label;
      EXPECT_TRUE(op != "Pad" || (reads && node.writes_channels_last)) << node.label;
      EXPECT_TRUE(op != "AveragePool" || reads) << node.label;
    }
#endif
  }
}

}  // namespace
}  // namespace parity::runtime
