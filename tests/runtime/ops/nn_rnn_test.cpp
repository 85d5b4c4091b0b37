// RNN / GRU / LSTM: direction, sequence_lens, layout, clip and activations checked through
// invariants (reverse = forward on reversed time, bidirectional = both stacked) and hand values.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

int gates_of(const std::string& op) { return op == "RNN" ? 1 : (op == "GRU" ? 3 : 4); }

/// Reverses axis 0 of a [seq, ...] tensor.
Tensor reverse_time(const Tensor& t) {
  const int64_t seq = t.dim(0), rest = t.numel() / seq;
  auto v = t.to_vector<float>();
  std::vector<float> out(v.size());
  for (int64_t s = 0; s < seq; ++s)
    std::copy(v.begin() + s * rest, v.begin() + (s + 1) * rest, out.begin() + (seq - 1 - s) * rest);
  return ft(t.shape(), out);
}

/// Slice [d] of a [2, ...] tensor as a [1, ...] tensor.
Tensor direction(const Tensor& t, int64_t d) {
  auto v = t.to_vector<float>();
  const int64_t half = t.numel() / 2;
  Shape s = t.shape();
  s[0] = 1;
  return ft(s, std::vector<float>(v.begin() + d * half, v.begin() + (d + 1) * half));
}

class RecurrentInvariants : public ::testing::TestWithParam<std::string> {};

TEST_P(RecurrentInvariants, ReverseAndBidirectional) {
  const std::string op = GetParam();
  const int64_t seq = 4, batch = 2, input = 3, hidden = 5, g = gates_of(op);
  const Tensor x = random_tensor({seq, batch, input}, 11);
  const Tensor w2 = random_tensor({2, g * hidden, input}, 12);
  const Tensor r2 = random_tensor({2, g * hidden, hidden}, 13);
  const Tensor b2 = random_tensor({2, 2 * g * hidden}, 14);
  NodeBuilder fwd(op, 14);
  fwd.i("hidden_size", hidden).outputs(2);
  const auto f = fwd.run({x, direction(w2, 0), direction(r2, 0), direction(b2, 0)});
  NodeBuilder rev(op, 14);
  rev.i("hidden_size", hidden).s("direction", "reverse").outputs(2);
  const auto r = rev.run({x, direction(w2, 1), direction(r2, 1), direction(b2, 1)});
  // reverse == forward over reversed time, with Y reversed back.
  const auto f_on_reversed = fwd.run({reverse_time(x), direction(w2, 1), direction(r2, 1), direction(b2, 1)});
  EXPECT_LT(max_abs_diff(r[0], reverse_time(f_on_reversed[0])), 1e-6);
  EXPECT_LT(max_abs_diff(r[1], f_on_reversed[1]), 1e-6);
  NodeBuilder bi(op, 14);
  bi.i("hidden_size", hidden).s("direction", "bidirectional").outputs(2);
  const auto both = bi.run({x, w2, r2, b2});
  ASSERT_EQ(both[0].shape(), (Shape{seq, 2, batch, hidden}));
  const auto yb = both[0].to_vector<float>(), yf = f[0].to_vector<float>(), yr = r[0].to_vector<float>();
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < batch * hidden; ++i) {
      EXPECT_FLOAT_EQ(yb[(t * 2 + 0) * batch * hidden + i], yf[t * batch * hidden + i]);
      EXPECT_FLOAT_EQ(yb[(t * 2 + 1) * batch * hidden + i], yr[t * batch * hidden + i]);
    }
}

TEST_P(RecurrentInvariants, SequenceLensAndLayout) {
  const std::string op = GetParam();
  const int64_t seq = 3, batch = 2, input = 2, hidden = 3, g = gates_of(op);
  const Tensor x = random_tensor({seq, batch, input}, 21);
  const Tensor w = random_tensor({1, g * hidden, input}, 22);
  const Tensor r = random_tensor({1, g * hidden, hidden}, 23);
  NodeBuilder node(op, 14);
  node.i("hidden_size", hidden).outputs(2);
  const auto out = node.run({x, w, r, Tensor(), Tensor::from_vector<int32_t>({2}, {3, 1})});
  // Batch 1 ran one step: same as a length-1 sequence of its first input.
  const auto xv = x.to_vector<float>();
  const Tensor x1 = ft({1, 1, input}, {xv[input], xv[input + 1]});
  const auto single = node.run({x1, w, r});
  const auto y = out[0].to_vector<float>(), yh = out[1].to_vector<float>(), ys = single[1].to_vector<float>();
  for (int64_t j = 0; j < hidden; ++j) {
    EXPECT_FLOAT_EQ(y[(0 * batch + 1) * hidden + j], ys[j]);
    EXPECT_FLOAT_EQ(y[(1 * batch + 1) * hidden + j], 0.0f);  // padded steps are zero
    EXPECT_FLOAT_EQ(y[(2 * batch + 1) * hidden + j], 0.0f);
    EXPECT_FLOAT_EQ(yh[1 * hidden + j], ys[j]);              // Y_h is the last valid state
  }
  // layout=1: batch-major X, Y and states give the same numbers.
  std::vector<float> xt(xv.size());
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < input; ++k) xt[(b * seq + t) * input + k] = xv[(t * batch + b) * input + k];
  NodeBuilder bm(op, 14);
  bm.i("hidden_size", hidden).i("layout", 1).outputs(2);
  const auto out_bm = bm.run({ft({batch, seq, input}, xt), w, r});
  const auto out_sm = node.run({x, w, r});
  const auto y_bm = out_bm[0].to_vector<float>(), y_sm = out_sm[0].to_vector<float>();
  ASSERT_EQ(out_bm[0].shape(), (Shape{batch, seq, 1, hidden}));
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hidden; ++j)
        EXPECT_FLOAT_EQ(y_bm[(b * seq + t) * hidden + j], y_sm[(t * batch + b) * hidden + j]);
}

INSTANTIATE_TEST_SUITE_P(Cells, RecurrentInvariants, ::testing::Values("RNN", "GRU", "LSTM"));

TEST(Rnn, ClipAndActivationsWithAlphaBeta) {
  const Tensor x = ft({1, 1, 1}, {2});
  const Tensor w = ft({1, 1, 1}, {3});
  const Tensor r = ft({1, 1, 1}, {0});
  NodeBuilder clip("RNN", 14);
  clip.i("hidden_size", 1).f("clip", 0.5f);
  EXPECT_FLOAT_EQ(clip.run({x, w, r})[0].to_vector<float>()[0], std::tanh(0.5f));
  NodeBuilder affine("RNN", 14);
  affine.i("hidden_size", 1).strings("activations", {"Affine"}).floats("activation_alpha", {0.5f}).floats(
      "activation_beta", {1.0f});
  EXPECT_FLOAT_EQ(affine.run({x, w, r})[0].to_vector<float>()[0], 0.5f * 6 + 1);
  NodeBuilder bad("RNN", 14);
  bad.i("hidden_size", 1).strings("activations", {"Gelu"});
  EXPECT_THROW(bad.run({x, w, r}), Error);
}

TEST(Gru, LinearBeforeResetByHand) {
  // hidden 1, input 1; W = [z, r, h] = [0, 0, 1], R = [0, 0, 2], Rbh = 1, H0 = 1, x = 1:
  // z = r = sigmoid(0) = 0.5.
  const Tensor x = ft({1, 1, 1}, {1});
  const Tensor w = ft({1, 3, 1}, {0, 0, 1});
  const Tensor r = ft({1, 3, 1}, {0, 0, 2});
  const Tensor b = ft({1, 6}, {0, 0, 0, 0, 0, 1});
  const Tensor h0 = ft({1, 1, 1}, {1});
  NodeBuilder lbr("GRU", 14);
  lbr.i("hidden_size", 1).i("linear_before_reset", 1);
  // h~ = tanh(1 + 0.5 * (2 * 1 + 1)); H = 0.5 * h~ + 0.5 * 1
  EXPECT_FLOAT_EQ(lbr.run({x, w, r, b, Tensor(), h0})[0].to_vector<float>()[0], 0.5f * std::tanh(2.5f) + 0.5f);
  NodeBuilder plain("GRU", 14);
  plain.i("hidden_size", 1);
  // h~ = tanh(1 + (0.5 * 1) * 2 + 1)
  EXPECT_FLOAT_EQ(plain.run({x, w, r, b, Tensor(), h0})[0].to_vector<float>()[0], 0.5f * std::tanh(3.0f) + 0.5f);
}

TEST(Lstm, PeepholesAndInputForgetByHand) {
  // hidden 1, input 1, all weights zero except the candidate: i = o = f = sigmoid(0) = 0.5 without
  // peepholes; c~ = tanh(x * 1).
  const Tensor x = ft({1, 1, 1}, {1});
  const Tensor w = ft({1, 4, 1}, {0, 0, 0, 1});
  const Tensor r = ft({1, 4, 1}, {0, 0, 0, 0});
  const Tensor c0 = ft({1, 1, 1}, {2});
  NodeBuilder node("LSTM", 14);
  node.i("hidden_size", 1).outputs(3);
  const auto out = node.run({x, w, r, Tensor(), Tensor(), Tensor(), c0});
  const float c = 0.5f * 2 + 0.5f * std::tanh(1.0f);
  EXPECT_FLOAT_EQ(out[2].to_vector<float>()[0], c);
  EXPECT_FLOAT_EQ(out[1].to_vector<float>()[0], 0.5f * std::tanh(c));
  // Peepholes P = [pi, po, pf] = [1, 1, 1]: i = f = sigmoid(c0), o = sigmoid(c_new).
  const auto peep = node.run({x, w, r, Tensor(), Tensor(), Tensor(), c0, ft({1, 3}, {1, 1, 1})});
  const auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  const float cp = sig(2) * 2 + sig(2) * std::tanh(1.0f);
  EXPECT_NEAR(peep[2].to_vector<float>()[0], cp, 1e-6);
  EXPECT_NEAR(peep[1].to_vector<float>()[0], sig(cp) * std::tanh(cp), 1e-6);
  NodeBuilder coupled("LSTM", 14);
  coupled.i("hidden_size", 1).i("input_forget", 1).outputs(3);
  const auto cf = coupled.run({x, w, r, Tensor(), Tensor(), Tensor(), c0});
  EXPECT_FLOAT_EQ(cf[2].to_vector<float>()[0], (1 - 0.5f) * 2 + 0.5f * std::tanh(1.0f));
}

TEST(Lstm, RejectsWrongWeightShape) {
  NodeBuilder node("LSTM", 14);
  node.i("hidden_size", 2);
  EXPECT_THROW(node.run({random_tensor({1, 1, 3}, 1), random_tensor({1, 4, 3}, 2), random_tensor({1, 8, 2}, 3)}),
               Error);
}

}  // namespace
}  // namespace parity::testing::nn
