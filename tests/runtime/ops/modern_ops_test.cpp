// The operators modern exporters emit (transformer blocks at opsets 20-25): Gelu, Swish,
// RMSNormalization, GroupNormalization-21, RotaryEmbedding, Attention, LinearAttention and
// CausalConvWithState and FlexAttention (without modification subgraphs, which need the executor:
// the ONNX 1.23 score_mod/prob_mod cases run in the conformance CTest), against values worked out
// by hand. Their ONNX 1.23 backend cases run in the conformance CTest.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(ModernOps, GeluExactAndTanh) {
  OpTester("Gelu", 20)
      .input<float>({3}, {-1, 0, 1})
      .output<float>({3}, {-0.158655254f, 0, 0.841344746f})
      .run();
  OpTester("Gelu", 20)
      .attr("approximate", "tanh")
      .input<float>({2}, {0, 1})
      .output<float>({2}, {0, 0.841191990f})
      .run();
  OpTester("Gelu", 20).attr("approximate", "erf").input<float>({1}, {1}).run_expect_error(ErrorCode::kInvalidModel);
}

TEST(ModernOps, SwishAlpha) {
  OpTester("Swish", 24)
      .attr("alpha", 2.0f)
      .input<float>({2}, {-1, 1})
      .output<float>({2}, {-0.119202922f, 0.880797078f})
      .run();
}

TEST(ModernOps, RmsNormalizationOverLastAxis) {
  const float r = 1.0f / std::sqrt(12.5f);  // rms of (3, 4)
  OpTester("RMSNormalization", 23)
      .attr("epsilon", 0.0f)
      .input<float>({2, 2}, {3, 4, 1, 1})
      .input<float>({2}, {1, 2})
      .output<float>({2, 2}, {3 * r, 8 * r, 1, 2})
      .run();
  // axis 0 normalizes the whole tensor: rms of (3, 4, 0, 0) is 2.5.
  OpTester("RMSNormalization", 23)
      .attr("epsilon", 0.0f)
      .attr("axis", 0)
      .input<float>({2, 2}, {3, 4, 0, 0})
      .input<float>({1}, {1})
      .output<float>({2, 2}, {1.2f, 1.6f, 0, 0})
      .run();
}

TEST(ModernOps, GroupNormalizationScalePerChannelSince21) {
  // Groups {1, 3} and {10, 30} both normalize to (-1, 1).
  OpTester("GroupNormalization", 21)
      .attr("num_groups", 2)
      .attr("epsilon", 0.0f)
      .input<float>({1, 4, 1}, {1, 3, 10, 30})
      .input<float>({4}, {1, 2, 3, 4})
      .input<float>({4}, {0, 0, 0, 1})
      .output<float>({1, 4, 1}, {-1, 2, -3, 5})
      .run();
  // Opset 18 took one scale and bias per group.
  OpTester("GroupNormalization", 18)
      .attr("num_groups", 2)
      .attr("epsilon", 0.0f)
      .input<float>({1, 4, 1}, {1, 3, 10, 30})
      .input<float>({2}, {1, 2})
      .input<float>({2}, {0, 1})
      .output<float>({1, 4, 1}, {-1, 1, -1, 3})
      .run();
  OpTester("GroupNormalization", 21)
      .attr("num_groups", 3)
      .input<float>({1, 4, 1}, {1, 3, 10, 30})
      .input<float>({4}, {1, 1, 1, 1})
      .input<float>({4}, {0, 0, 0, 0})
      .output_shape_only(DType::kFloat32, {1, 4, 1})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(ModernOps, RotaryEmbeddingHalvesInterleavedAndPositionIds) {
  // cos/sin rows rotate the first pair by 90 degrees and leave the second unchanged.
  OpTester("RotaryEmbedding", 23)
      .input<float>({1, 1, 1, 4}, {1, 2, 3, 4})
      .input<float>({1, 1, 2}, {0, 1})
      .input<float>({1, 1, 2}, {1, 0})
      .output<float>({1, 1, 1, 4}, {-3, 2, 1, 4})
      .run();
  OpTester("RotaryEmbedding", 23)
      .attr("interleaved", 1)
      .input<float>({1, 1, 1, 4}, {1, 2, 3, 4})
      .input<float>({1, 1, 2}, {0, 1})
      .input<float>({1, 1, 2}, {1, 0})
      .output<float>({1, 1, 1, 4}, {-2, 1, 3, 4})
      .run();
  // position_ids pick row 1 of a [2, 2] cache; 3-D input with num_heads 1 and a partial rotation.
  OpTester("RotaryEmbedding", 23)
      .attr("num_heads", 1)
      .attr("rotary_embedding_dim", 2)
      .input<float>({1, 1, 4}, {1, 2, 3, 4})
      .input<float>({2, 1}, {1, 0})
      .input<float>({2, 1}, {0, 1})
      .input<int64_t>({1, 1}, {1})
      .output<float>({1, 1, 4}, {-2, 1, 3, 4})
      .run();
  OpTester("RotaryEmbedding", 23)
      .input<float>({1, 1, 1, 4}, {1, 2, 3, 4})
      .input<float>({2, 2}, {1, 1, 0, 1})
      .input<float>({2, 2}, {0, 0, 1, 0})
      .input<int64_t>({1, 1}, {2})
      .output_shape_only(DType::kFloat32, {1, 1, 1, 4})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(ModernOps, AttentionCausal) {
  // Row 0 sees key 0 only; row 1 weighs scores (0, ln 3) as (1/4, 3/4).
  OpTester("Attention", 23)
      .attr("is_causal", 1)
      .attr("scale", 1.0f)
      .input<float>({1, 1, 2, 1}, {1, 1})
      .input<float>({1, 1, 2, 1}, {0, std::log(3.0f)})
      .input<float>({1, 1, 2, 1}, {10, 20})
      .output<float>({1, 1, 2, 1}, {10, 17.5f})
      .run();
}

TEST(ModernOps, AttentionGroupedHeadsWithKvCache) {
  // Two query heads share one key/value head; the cache holds one past token.
  OpTester("Attention", 23)
      .attr("scale", 1.0f)
      .input<float>({1, 2, 1, 1}, {1, 0})
      .input<float>({1, 1, 1, 1}, {std::log(3.0f)})
      .input<float>({1, 1, 1, 1}, {20})
      .missing_input()
      .input<float>({1, 1, 1, 1}, {0})
      .input<float>({1, 1, 1, 1}, {10})
      .output<float>({1, 2, 1, 1}, {17.5f, 15})
      .output<float>({1, 1, 2, 1}, {0, std::log(3.0f)})
      .output<float>({1, 1, 2, 1}, {10, 20})
      .run();
}

TEST(ModernOps, AttentionBoolMaskFullyMaskedRowIsZero) {
  OpTester("Attention", 24)
      .attr("qk_matmul_output_mode", 3)
      .input<float>({1, 1, 2, 1}, {1, 1})
      .input<float>({1, 1, 2, 1}, {1, 1})
      .input<float>({1, 1, 2, 1}, {5, 7})
      .input<bool>({2, 2}, {true, false, false, false})
      .output<float>({1, 1, 2, 1}, {5, 0})
      .missing_output()
      .missing_output()
      .output<float>({1, 1, 2, 2}, {1, 0, 0, 0})
      .run();
}

TEST(ModernOps, AttentionPackedHeads) {
  // 3-D [batch, seq, heads * head_size]: zero queries average each head's values.
  OpTester("Attention", 23)
      .attr("q_num_heads", 2)
      .attr("kv_num_heads", 2)
      .input<float>({1, 1, 4}, {0, 0, 0, 0})
      .input<float>({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})
      .input<float>({1, 2, 2}, {1, 3, 5, 7})
      .output<float>({1, 1, 2}, {3, 5})
      .run();
}

TEST(ModernOps, AttentionSoftcapAndQkOutputModes) {
  const float capped = 2 * std::tanh(0.5f);
  auto node = [](int mode) {
    OpTester t("Attention", 23);
    t.attr("scale", 1.0f).attr("softcap", 2.0f).attr("qk_matmul_output_mode", mode);
    t.input<float>({1, 1, 1, 1}, {1}).input<float>({1, 1, 2, 1}, {1, 0}).input<float>({1, 1, 2, 1}, {0, 0});
    t.input<float>({1, 2}, {0, -1});
    t.output<float>({1, 1, 1, 1}, {0}).missing_output().missing_output();
    return t;
  };
  node(1).output<float>({1, 1, 1, 2}, {capped, 0}).run();   // softcapped scores
  node(2).output<float>({1, 1, 1, 2}, {capped, -1}).run();  // plus the mask
}

TEST(ModernOps, AttentionSlidingWindowAndPaddedCache) {
  // Causal with a left window of 1: row 2 sees keys 1 and 2 only.
  OpTester("Attention", 25)
      .attr("is_causal", 1)
      .attr("left_window_size", 1)
      .input<float>({1, 1, 3, 1}, {0, 0, 0})
      .input<float>({1, 1, 3, 1}, {0, 0, 0})
      .input<float>({1, 1, 3, 1}, {1, 2, 4})
      .output<float>({1, 1, 3, 1}, {1, 1.5f, 3})
      .run();
  // nonpad_kv_seqlen: batch 0 holds one valid key, batch 1 all three.
  OpTester("Attention", 24)
      .input<float>({2, 1, 1, 1}, {0, 0})
      .input<float>({2, 1, 3, 1}, {0, 0, 0, 0, 0, 0})
      .input<float>({2, 1, 3, 1}, {1, 2, 4, 1, 2, 4})
      .missing_input()
      .missing_input()
      .missing_input()
      .input<int64_t>({2}, {1, 3})
      .output<float>({2, 1, 1, 1}, {1, 7.0f / 3})
      .run();
}

TEST(ModernOps, AttentionRejectsHeadsThatDoNotGroup) {
  OpTester("Attention", 23)
      .input<float>({1, 3, 1, 1}, {1, 1, 1})
      .input<float>({1, 2, 1, 1}, {1, 1})
      .input<float>({1, 2, 1, 1}, {1, 1})
      .output_shape_only(DType::kFloat32, {1, 3, 1, 1})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(ModernOps, Fp64OracleRunsInDouble) {
  OpTester("Attention", 23)
      .precision(runtime::Precision::kFloat64)
      .attr("is_causal", 1)
      .attr("scale", 1.0f)
      .input<double>({1, 1, 2, 1}, {1, 1})
      .input<double>({1, 1, 2, 1}, {0, std::log(3.0)})
      .input<double>({1, 1, 2, 1}, {10, 20})
      .output<double>({1, 1, 2, 1}, {10, 17.5})
      .tolerance(1e-12, 1e-12)
      .run();
}

TEST(ModernOps, LinearAttentionUpdateRules) {
  // One head, d_k = d_v = 1, two tokens with k = q = 1 and v = (2, 3); scale 1.
  auto node = [](const char* rule) {
    OpTester t("LinearAttention", 27);
    t.attr("q_num_heads", 1).attr("kv_num_heads", 1).attr("scale", 1.0f).attr("update_rule", rule);
    t.input<float>({1, 2, 1}, {1, 1}).input<float>({1, 2, 1}, {1, 1}).input<float>({1, 2, 1}, {2, 3});
    return t;
  };
  // linear: the state sums k v: 2, then 5.
  node("linear").output<float>({1, 2, 1}, {2, 5}).output<float>({1, 1, 1, 1}, {5}).run();
  // gated: the state halves (decay log 0.5) before each write: 2, then 4.
  node("gated")
      .missing_input()
      .input<float>({1, 2, 1}, {std::log(0.5f), std::log(0.5f)})
      .output<float>({1, 2, 1}, {2, 4})
      .output<float>({1, 1, 1, 1}, {4})
      .run();
  // delta (beta 1): each write adds only what the state does not yet predict: 2, then 3.
  node("delta")
      .missing_input()
      .missing_input()
      .input<float>({1, 2, 1}, {1, 1})
      .output<float>({1, 2, 1}, {2, 3})
      .output<float>({1, 1, 1, 1}, {3})
      .run();
  node("gated").output_shape_only(DType::kFloat32, {1, 2, 1}).run_expect_error(ErrorCode::kInvalidModel);
}

TEST(ModernOps, CausalConvWithStateCarriesContext) {
  // Kernel (1, 10) over the past column 5 then (1, 2): 5 + 10 = 15, 1 + 20 = 21; state keeps 2.
  OpTester("CausalConvWithState", 27)
      .input<float>({1, 1, 2}, {1, 2})
      .input<float>({1, 1, 2}, {1, 10})
      .missing_input()
      .input<float>({1, 1, 1}, {5})
      .output<float>({1, 1, 2}, {15, 21})
      .output<float>({1, 1, 1}, {2})
      .run();
  const float y = 3.0f / (1.0f + std::exp(-3.0f));
  OpTester("CausalConvWithState", 27)
      .attr("activation", "silu")
      .input<float>({1, 1, 1}, {1})
      .input<float>({1, 1, 2}, {7, 1})
      .input<float>({1}, {2})
      .output<float>({1, 1, 1}, {y})
      .output<float>({1, 1, 1}, {1})
      .run();
}

TEST(ModernOps, FlexAttentionGroupedHeads) {
  OpTester("FlexAttention", 1, "ai.onnx.preview")
      .attr("scale", 1.0f)
      .input<float>({1, 2, 1, 1}, {1, 0})
      .input<float>({1, 1, 2, 1}, {0, std::log(3.0f)})
      .input<float>({1, 1, 2, 1}, {10, 20})
      .output<float>({1, 2, 1, 1}, {17.5f, 15})
      .run();
}

}  // namespace
}  // namespace parity::testing
