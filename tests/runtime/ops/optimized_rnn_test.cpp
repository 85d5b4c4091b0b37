// Spec: https://onnx.ai/onnx/operators/onnx__GRU.html, onnx__LSTM.html, onnx__RNN.html
// The optimized RNN/GRU/LSTM kernels (rnn_fast.cpp) against the reference kernels (rnn.cpp) on
// random weights over directions, layouts, batch sizes, optional inputs and outputs, GRU's
// linear_before_reset, tiny and odd sizes, at 1 and 2 threads (and steps split between threads
// when there are fewer chains than threads); the cases the fast path leaves to
// the reference (sequence_lens, clip, other activations) give the reference's numbers too.
#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

struct Case {
  std::string op = "GRU";
  std::string direction = "forward";
  int64_t layout = 0, steps = 5, batch = 1, input = 9, hidden = 7;
  bool bias = true, initial_h = false, initial_c = false, linear_before_reset = false;
  bool sequence_lens = false, clip = false, relu = false;
  bool all_outputs = true;
};

std::string describe(const Case& c) {
  return c.op + " " + c.direction + " layout " + std::to_string(c.layout) + " T" + std::to_string(c.steps) + " B" +
         std::to_string(c.batch) + " I" + std::to_string(c.input) + " H" + std::to_string(c.hidden) +
         (c.bias ? " bias" : "") + (c.initial_h ? " h0" : "") + (c.initial_c ? " c0" : "") +
         (c.linear_before_reset ? " lbr" : "") + (c.sequence_lens ? " lens" : "") + (c.clip ? " clip" : "") +
         (c.relu ? " relu" : "") + (c.all_outputs ? "" : " Y only");
}

int64_t gates(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

onnx::ModelProto model_of(const Case& c) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, g = gates(c.op);
  ModelBuilder b(14);
  const Shape x = c.layout == 0 ? Shape{c.steps, c.batch, c.input} : Shape{c.batch, c.steps, c.input};
  const Shape state = c.layout == 0 ? Shape{dirs, c.batch, c.hidden} : Shape{c.batch, dirs, c.hidden};
  b.input("x", DType::kFloat32, x);
  b.initializer("w", testing::random_uniform({dirs, g * c.hidden, c.input}, 21, -0.6f, 0.6f));
  b.initializer("r", testing::random_uniform({dirs, g * c.hidden, c.hidden}, 22, -0.6f, 0.6f));
  if (c.bias) b.initializer("b", testing::random_uniform({dirs, 2 * g * c.hidden}, 23, -0.5f, 0.5f));
  if (c.initial_h) b.input("h0", DType::kFloat32, state);
  if (c.initial_c) b.input("c0", DType::kFloat32, state);
  if (c.sequence_lens) b.input("lens", DType::kInt32, {c.batch});
  std::vector<std::string> inputs = {"x", "w", "r", c.bias ? "b" : "", c.sequence_lens ? "lens" : "",
                                     c.initial_h ? "h0" : ""};
  if (c.initial_c) inputs.push_back("c0");
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  auto* node = b.graph().add_node();
  node->set_op_type(c.op);
  node->set_name("rnn");
  for (const auto& i : inputs) node->add_input(i);
  node->add_output("y");
  b.output("y", DType::kFloat32,
           c.layout == 0 ? Shape{c.steps, dirs, c.batch, c.hidden} : Shape{c.batch, c.steps, dirs, c.hidden});
  if (c.all_outputs) {
    node->add_output("y_h");
    b.output("y_h", DType::kFloat32, state);
    if (c.op == "LSTM") {
      node->add_output("y_c");
      b.output("y_c", DType::kFloat32, state);
    }
  }
  auto attr_int = [&](const char* name, int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  attr_int("hidden_size", c.hidden);
  if (c.layout) attr_int("layout", 1);
  if (c.linear_before_reset) attr_int("linear_before_reset", 1);
  auto* dir = node->add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s(c.direction);
  if (c.clip) {
    auto* a = node->add_attribute();
    a->set_name("clip");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(0.7f);
  }
  if (c.relu) {
    auto* a = node->add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (int64_t k = 0; k < dirs * (g == 1 ? 1 : g == 3 ? 2 : 3); ++k) a->add_strings(k == 0 ? "Relu" : "Tanh");
  }
  return b.model();
}

TensorMap feed_of(const Case& c) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const Shape state = c.layout == 0 ? Shape{dirs, c.batch, c.hidden} : Shape{c.batch, dirs, c.hidden};
  TensorMap feed;
  feed.set("x", testing::random_uniform(c.layout == 0 ? Shape{c.steps, c.batch, c.input} : Shape{c.batch, c.steps, c.input},
                                        24, -2, 2));
  if (c.initial_h) feed.set("h0", testing::random_uniform(state, 25, -1, 1));
  if (c.initial_c) feed.set("c0", testing::random_uniform(state, 26, -1, 1));
  if (c.sequence_lens) {
    std::vector<int32_t> lens;
    for (int64_t b = 0; b < c.batch; ++b) lens.push_back(static_cast<int32_t>((b * 3) % (c.steps + 1)));
    feed.set("lens", Tensor::from_vector<int32_t>({c.batch}, lens));
  }
  return feed;
}

Session session(const onnx::ModelProto& model, KernelTier tier, int threads) {
  SessionOptions options;
  options.kernels = tier;
  options.threads = threads;
  auto s = Session::create(model, options);
  if (!s) throw s.error();
  return std::move(s).value();
}

/// Runs the case on both tiers; returns the optimized plan's tactic for the node.
std::string expect_tiers_agree(const Case& c, int threads = 1) {
  const auto model = model_of(c);
  const TensorMap feed = feed_of(c);
  const TensorMap expected = session(model, KernelTier::kReference, 1).run(feed);
  const Session optimized = session(model, KernelTier::kOptimized, threads);
  const TensorMap actual = optimized.run(feed);
  for (const auto& [name, t] : expected)
    EXPECT_TRUE(testing::tensors_close(actual.at(name), t, 2e-5, 2e-5)) << describe(c) << " output " << name;
  return optimized.plan().nodes_.at(0).tactic;
}

TEST(OptimizedRecurrent, MatchesTheReferenceAcrossShapesAndOptions) {
  for (const std::string op : {"RNN", "GRU", "LSTM"})
    for (const std::string direction : {"forward", "reverse", "bidirectional"})
      for (int64_t layout : {0, 1})
        for (int64_t batch : {1, 3})
          for (bool with_options : {false, true}) {
            Case c;
            c.op = op;
            c.direction = direction;
            c.layout = layout;
            c.batch = batch;
            c.bias = !with_options;
            c.initial_h = with_options;
            c.initial_c = with_options && op == "LSTM";
            c.linear_before_reset = with_options;
            c.all_outputs = !(with_options && batch == 3);
            for (int threads : {1, 2})
              EXPECT_EQ(expect_tiers_agree(c, threads), "optimized:rnn_fast") << describe(c);
          }
}

TEST(OptimizedRecurrent, TinyOddAndLargerSizes) {
  for (const std::string op : {"RNN", "GRU", "LSTM"})
    for (auto [steps, input, hidden] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 1}, {2, 1, 3}, {7, 33, 17}, {12, 64, 40}}) {
      Case c;
      c.op = op;
      c.direction = "bidirectional";
      c.steps = steps;
      c.input = input;
      c.hidden = hidden;
      c.batch = steps == 12 ? 6 : 1;  // more rows than the direct product takes: the packed matmul
      EXPECT_EQ(expect_tiers_agree(c, 2), "optimized:rnn_fast") << describe(c);
    }
}

TEST(OptimizedRecurrent, StepsSplitBetweenThreadsWhenChainsAreFewerThanThreads) {
  // Batch-1 one-direction layers with recurrent products on both sides of the split threshold (gates*H*H
  // >= 64K): each step's units are split between 2 threads; hidden sizes not a multiple of the
  // 16-unit block nor of the thread count, both GRU forms, h0/c0, reverse and layout 1.
  for (const std::string op : {"RNN", "GRU", "LSTM"})
    for (int64_t hidden : {int64_t{131}, int64_t{151}, int64_t{263}})
      for (bool with_options : {false, true}) {
        Case c;
        c.op = op;
        c.direction = with_options ? "reverse" : "forward";
        c.layout = with_options ? 1 : 0;
        c.steps = 4;
        c.input = 19;
        c.hidden = hidden;
        c.initial_h = with_options;
        c.initial_c = with_options && op == "LSTM";
        c.linear_before_reset = with_options;
        for (int threads : {2, 3})
          EXPECT_EQ(expect_tiers_agree(c, threads), "optimized:rnn_fast") << describe(c) << " threads " << threads;
      }
  // Two chains at 3 threads (bidirectional, batch 1): chains run in turn, each step split.
  Case bidirectional;
  bidirectional.op = "GRU";
  bidirectional.direction = "bidirectional";
  bidirectional.steps = 3;
  bidirectional.hidden = 151;
  bidirectional.initial_h = true;
  EXPECT_EQ(expect_tiers_agree(bidirectional, 3), "optimized:rnn_fast");
}

TEST(OptimizedRecurrent, CasesLeftToTheReferenceKeepItsNumbers) {
  Case lens;
  lens.batch = 4;
  lens.sequence_lens = true;
  expect_tiers_agree(lens);  // planned fast, run by the reference (sequence_lens is a run-time input)
  Case clip;
  clip.op = "LSTM";
  clip.clip = true;
  EXPECT_EQ(expect_tiers_agree(clip), "reference:rnn");
  Case relu;
  relu.op = "RNN";
  relu.relu = true;
  EXPECT_EQ(expect_tiers_agree(relu), "reference:rnn");
}

}  // namespace
}  // namespace parity::runtime
