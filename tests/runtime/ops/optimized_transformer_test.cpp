// Spec: https://onnx.ai/onnx/operators/onnx__Attention.html, onnx__RMSNormalization.html,
//       onnx__RotaryEmbedding.html, onnx__Gelu.html, onnx__GroupNormalization.html
// The optimized kernels of transformer models (ops/nn/attention_fast.cpp,
// normalization_fast.cpp, rotary_embedding_fast.cpp, Gelu in ops/math/elementwise_fast.cpp)
// against their reference kernels, on random and edge-case shapes, and what they decline.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "op_tester.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime {
namespace {

using testing::OpTester;

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  return testing::random_uniform(shape, seed, lo, hi);
}

Tensor random_bools(const Shape& shape, uint32_t seed, double p_true) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution coin(p_true);
  Tensor t(DType::kBool, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<bool>()[i] = coin(rng);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Attention

struct AttentionCase {
  int opset = 23;
  int64_t batch = 1, q_heads = 2, kv_heads = 2, q_seq = 3, kv_seq = 3, past = 0, head = 8, v_head = 8;
  bool packed = false;  // 3-D [batch, seq, heads * head] inputs
  bool causal = false;
  float scale = 0.0f;    // 0: the default 1/sqrt(head)
  float softcap = 0.0f;  // 0: none
  int64_t left_window = -1;
  enum class Mask { kNone, kBool, kAdditive } mask = Mask::kNone;
  Shape mask_shape;  // default [q_seq, past + kv_seq]
  bool present = false;
  uint32_t seed = 1;
};

Shape heads_shape(const AttentionCase& c, int64_t heads, int64_t seq, int64_t size) {
  return c.packed ? Shape{c.batch, seq, heads * size} : Shape{c.batch, heads, seq, size};
}

OpTester attention(const AttentionCase& c) {
  OpTester t("Attention", c.opset);
  if (c.packed) t.attr("q_num_heads", c.q_heads).attr("kv_num_heads", c.kv_heads);
  if (c.causal) t.attr("is_causal", 1);
  if (c.scale != 0.0f) t.attr("scale", c.scale);
  if (c.softcap != 0.0f) t.attr("softcap", c.softcap);
  if (c.left_window >= 0) t.attr("left_window_size", c.left_window);
  t.input(random_tensor(heads_shape(c, c.q_heads, c.q_seq, c.head), c.seed));
  t.input(random_tensor(heads_shape(c, c.kv_heads, c.kv_seq, c.head), c.seed + 1));
  t.input(random_tensor(heads_shape(c, c.kv_heads, c.kv_seq, c.v_head), c.seed + 2));
  const Shape mask_shape = c.mask_shape.empty() ? Shape{c.q_seq, c.past + c.kv_seq} : c.mask_shape;
  if (c.mask == AttentionCase::Mask::kBool) t.input(random_bools(mask_shape, c.seed + 3, 0.7));
  else if (c.mask == AttentionCase::Mask::kAdditive) t.input(random_tensor(mask_shape, c.seed + 3, -3.0f, 1.0f));
  else if (c.past > 0) t.missing_input();
  if (c.past > 0) {
    t.input(random_tensor({c.batch, c.kv_heads, c.past, c.head}, c.seed + 4));
    t.input(random_tensor({c.batch, c.kv_heads, c.past, c.v_head}, c.seed + 5));
  }
  t.output_shape_only(DType::kUndefined, {});
  if (c.present) t.output_shape_only(DType::kUndefined, {}).output_shape_only(DType::kUndefined, {});
  t.tolerance(2e-6, 2e-5);
  return t;
}

TEST(OptimizedAttention, MatchesReferenceOnRandomShapes) {
  std::mt19937 rng(7);
  for (int n = 0; n < 40; ++n) {
    AttentionCase c;
    c.seed = 100 + n;
    c.batch = 1 + rng() % 2;
    c.kv_heads = 1 + rng() % 3;
    c.q_heads = c.kv_heads * (1 + rng() % 3);
    c.q_seq = 1 + rng() % 9;
    c.kv_seq = 1 + rng() % 150;  // crosses key blocks
    c.head = 1 + rng() % 20;
    c.v_head = rng() % 2 ? c.head : 1 + rng() % 12;
    c.packed = rng() % 2;
    c.causal = rng() % 2;
    SCOPED_TRACE(n);
    attention(c).compare_tiers();
  }
}

TEST(OptimizedAttention, GroupedQueryHeadsCausalWithKvCache) {
  for (bool packed : {false, true})
    for (int64_t q_seq : {1, 5, 40}) {
      AttentionCase c;
      c.q_heads = 8, c.kv_heads = 2, c.q_seq = q_seq, c.kv_seq = q_seq, c.past = 70, c.head = 16, c.v_head = 16;
      c.packed = packed, c.causal = true, c.present = true;
      SCOPED_TRACE(std::to_string(packed) + " " + std::to_string(q_seq));
      attention(c).compare_tiers();
      c.causal = false;
      attention(c).compare_tiers();
    }
}

TEST(OptimizedAttention, HeadSizesWithUnrolledLoops) {
  // Head sizes 32, 64 and 128 and full key blocks of 64 take the fixed-width loops.
  for (int64_t head : {32, 64, 128})
    for (bool causal : {false, true}) {
      AttentionCase c;
      c.q_heads = 4, c.kv_heads = 2, c.q_seq = 6, c.kv_seq = 100, c.past = 60, c.head = head, c.v_head = head;
      c.causal = causal, c.present = true;
      SCOPED_TRACE(std::to_string(head) + (causal ? " causal" : ""));
      attention(c).compare_tiers();
    }
}

TEST(OptimizedAttention, DecodingOneTokenSplitsTheKeysOverThreads) {
  // One task per key/value head, fewer than the test context's 3 threads: the 600 keys are split
  // into ranges whose partial results are merged (including ranges that are entirely masked).
  for (int64_t kv_heads : {1, 2})
    for (bool causal : {false, true})
      for (auto mask : {AttentionCase::Mask::kNone, AttentionCase::Mask::kAdditive}) {
        AttentionCase c;
        c.q_heads = 4, c.kv_heads = kv_heads, c.q_seq = 1, c.kv_seq = 1, c.past = 599, c.head = 64, c.v_head = 64;
        c.causal = causal, c.mask = mask, c.present = true;
        SCOPED_TRACE(std::to_string(kv_heads) + std::to_string(causal) + std::to_string(static_cast<int>(mask)));
        attention(c).compare_tiers();
      }
  // A boolean mask hiding the first 400 keys: the first ranges hold no visible key.
  OpTester t("Attention", 23);
  std::vector<bool> visible(600);
  for (int j = 0; j < 600; ++j) visible[j] = j >= 400;
  Tensor mask(DType::kBool, {1, 600});
  for (int j = 0; j < 600; ++j) mask.data<bool>()[j] = visible[j];
  t.input(random_tensor({1, 2, 1, 16}, 1)).input(random_tensor({1, 1, 600, 16}, 2)).input(random_tensor({1, 1, 600, 16}, 3));
  t.input(mask).output_shape_only(DType::kUndefined, {}).tolerance(2e-6, 2e-5).compare_tiers();
}

TEST(OptimizedAttention, BooleanAndAdditiveMasksEveryBroadcast) {
  for (auto mask : {AttentionCase::Mask::kBool, AttentionCase::Mask::kAdditive})
    for (const Shape& shape : {Shape{5, 77}, Shape{77}, Shape{2, 1, 5, 77}, Shape{1, 4, 5, 77}, Shape{2, 4, 1, 77},
                               Shape{5, 60} /* shorter than the keys: the rest is masked */,
                               Shape{1, 1, 5, 90} /* longer than the keys */}) {
      AttentionCase c;
      c.batch = 2, c.q_heads = 4, c.kv_heads = 2, c.q_seq = 5, c.kv_seq = 70, c.past = 7, c.head = 12, c.v_head = 9;
      c.mask = mask, c.mask_shape = shape;
      SCOPED_TRACE(shape_to_string(shape));
      attention(c).compare_tiers();
      c.causal = true;
      attention(c).compare_tiers();
    }
}

TEST(OptimizedAttention, ScaleSoftcapAndSlidingWindow) {
  AttentionCase c;
  c.q_seq = 20, c.kv_seq = 20, c.head = 32, c.v_head = 32;
  c.scale = 0.3f;
  attention(c).compare_tiers();
  c.softcap = 1.5f;
  attention(c).compare_tiers();
  c.causal = true, c.left_window = 4, c.opset = 25;
  attention(c).compare_tiers();
}

TEST(OptimizedAttention, FullyMaskedRowsAndLargeScoresAreStable) {
  // Every key of query 0 masked (boolean): zeros, as in the reference.
  OpTester t("Attention", 24);
  t.input(random_tensor({1, 1, 2, 4}, 1)).input(random_tensor({1, 1, 3, 4}, 2)).input(random_tensor({1, 1, 3, 4}, 3));
  t.input<bool>({2, 3}, {false, false, false, true, false, true});
  t.output_shape_only(DType::kUndefined, {});
  t.compare_tiers();
  // Scores of +-1e4 (scale 1000): the running maximum keeps exp() finite.
  AttentionCase big;
  big.q_seq = 4, big.kv_seq = 130, big.scale = 1000.0f;
  attention(big).compare_tiers();
  // Additive -inf in a mask, a key block entirely masked, then visible keys.
  OpTester inf("Attention", 23);
  Tensor mask = Tensor::from_vector<float>({1, 130}, std::vector<float>(130, 0.0f));
  for (int j = 0; j < 70; ++j) mask.data<float>()[j] = -std::numeric_limits<float>::infinity();
  inf.input(random_tensor({1, 1, 1, 8}, 4)).input(random_tensor({1, 1, 130, 8}, 5)).input(random_tensor({1, 1, 130, 8}, 6));
  inf.input(mask).output_shape_only(DType::kUndefined, {}).tolerance(2e-6, 2e-5).compare_tiers();
}

TEST(OptimizedAttention, PaddedStaticCacheWithNonpadKvSeqlen) {
  // nonpad_kv_seqlen (opset 24): batch 0 has no valid key, batch 1 five, batch 2 all 70; causal
  // masking is bottom-right aligned after each batch's valid keys.
  for (bool causal : {false, true})
    for (bool with_mask : {false, true}) {
      OpTester t("Attention", 24);
      if (causal) t.attr("is_causal", 1);
      t.input(random_tensor({3, 4, 4, 16}, 1)).input(random_tensor({3, 2, 70, 16}, 2)).input(random_tensor({3, 2, 70, 16}, 3));
      if (with_mask) t.input(random_tensor({4, 70}, 4, -2.0f, 1.0f));
      else t.missing_input();
      t.missing_input().missing_input().input<int64_t>({3}, {0, 5, 70});
      SCOPED_TRACE(std::to_string(causal) + std::to_string(with_mask));
      t.output_shape_only(DType::kUndefined, {}).tolerance(2e-6, 2e-5).compare_tiers();
    }
}

TEST(OptimizedAttention, DeclinesQkOutputAndRunsOtherDtypesOnTheReference) {
  // The QK output is declined at plan time.
  OpTester qk("Attention", 23);
  qk.input(random_tensor({1, 1, 2, 4}, 1)).input(random_tensor({1, 1, 2, 4}, 2)).input(random_tensor({1, 1, 2, 4}, 3));
  qk.output_shape_only(DType::kUndefined, {}).missing_output().missing_output().output_shape_only(DType::kUndefined, {});
  qk.compare_tiers(/*expect_optimized=*/false);
  bool used = true;
  qk.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  // float16 inputs are the reference kernel's.
  auto half = [](const Tensor& t) {
    Tensor h(DType::kFloat16, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) h.data<Float16>()[i] = Float16(t.data<float>()[i]);
    return h;
  };
  OpTester fp16("Attention", 23);
  fp16.input(half(random_tensor({1, 2, 3, 4}, 1))).input(half(random_tensor({1, 2, 3, 4}, 2)));
  fp16.input(half(random_tensor({1, 2, 3, 4}, 3))).output_shape_only(DType::kUndefined, {});
  fp16.compare_tiers(/*expect_optimized=*/false);
  used = true;
  fp16.run_outputs(KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
}

// ---------------------------------------------------------------------------------------------
// RMSNormalization, GroupNormalization

TEST(OptimizedRmsNormalization, MatchesReference) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
  };
  for (const Case& c : {Case{{2, 5, 64}, -1, {64}}, Case{{3, 7}, -1, {7}}, Case{{3, 1, 7}, 1, {1, 7}}, Case{{2, 3, 4, 5}, 2, {4, 5}},
                        Case{{2, 3, 4, 5}, 0, {2, 3, 4, 5}}, Case{{64, 4096}, -1, {4096}} /* threads */,
                        Case{{1, 1, 1}, -1, {1}}, Case{{4, 33}, 1, {33}}}) {
    SCOPED_TRACE(shape_to_string(c.x));
    testing::one_output_node("RMSNormalization", 23)
        .attr("axis", c.axis)
        .input(random_tensor(c.x, 1))
        .input(random_tensor(c.scale, 2))
        .tolerance(1e-6, 1e-5)
        .compare_tiers();
  }
  testing::one_output_node("RMSNormalization", 23)
      .attr("epsilon", 0.1f)
      .input(random_tensor({4, 16}, 3, -1e-3f, 1e-3f))
      .constant_input(random_tensor({16}, 4))
      .tolerance(1e-6, 1e-5)
      .compare_tiers();
}

TEST(OptimizedRmsNormalization, BroadcastScaleRunsTheReferenceEmptyInputDoesNot) {
  const uint64_t before = ops::ReferenceChain::fallback_count();
  testing::one_output_node("RMSNormalization", 23).attr("axis", 1).input(random_tensor({2, 3, 4}, 1))
      .input(random_tensor({1, 4}, 2)).compare_tiers();  // scale broadcast over axis 1
  EXPECT_EQ(ops::ReferenceChain::fallback_count(), before + 1);
  testing::one_output_node("RMSNormalization", 23).input(random_tensor({0, 4}, 1)).input(random_tensor({4}, 2))
      .compare_tiers();
}

TEST(OptimizedGroupNormalization, MatchesReferenceForOpsets18And21) {
  struct Case {
    Shape x;
    int64_t groups;
  };
  for (int opset : {18, 21})
    for (const Case& c : {Case{{2, 6, 5, 5}, 3}, Case{{1, 32, 16, 16}, 8}, Case{{3, 4}, 2}, Case{{2, 8, 7}, 8},
                          Case{{1, 64, 32, 32}, 32} /* threads */, Case{{1, 4, 3, 3, 3}, 1}}) {
      SCOPED_TRACE(std::to_string(opset) + " " + shape_to_string(c.x));
      const int64_t params = opset >= 21 ? c.x[1] : c.groups;
      testing::one_output_node("GroupNormalization", opset)
          .attr("num_groups", c.groups)
          .input(random_tensor(c.x, 1, -3.0f, 5.0f))
          .input(random_tensor({params}, 2))
          .input(random_tensor({params}, 3))
          .tolerance(1e-5, 1e-5)
          .compare_tiers();
    }
  // A constant row: variance 0, epsilon alone scales it.
  testing::one_output_node("GroupNormalization", 21)
      .attr("num_groups", 2)
      .attr("epsilon", 1e-2f)
      .input(Tensor::from_vector<float>({1, 2, 3}, {4, 4, 4, 1, 2, 3}))
      .input(random_tensor({2}, 2))
      .input(random_tensor({2}, 3))
      .tolerance(1e-5, 1e-5)
      .compare_tiers();
}

// ---------------------------------------------------------------------------------------------
// RotaryEmbedding

TEST(OptimizedRotaryEmbedding, BitIdenticalToReference) {
  for (bool interleaved : {false, true})
    for (int64_t rotary_dim : {0, 4, 8})
      for (bool packed : {false, true})
        for (bool with_positions : {false, true}) {
          const int64_t batch = 2, heads = 3, seq = 5, head = 8, half = (rotary_dim ? rotary_dim : head) / 2;
          OpTester t = testing::one_output_node("RotaryEmbedding", 23);
          t.attr("interleaved", interleaved ? 1 : 0);
          if (rotary_dim) t.attr("rotary_embedding_dim", rotary_dim);
          if (packed) t.attr("num_heads", heads);
          t.input(random_tensor(packed ? Shape{batch, seq, heads * head} : Shape{batch, heads, seq, head}, 1));
          const Shape cache = with_positions ? Shape{11, half} : Shape{batch, seq, half};
          t.input(random_tensor(cache, 2, -1, 1)).input(random_tensor(cache, 3, -1, 1));
          if (with_positions) t.input<int64_t>({batch, seq}, {0, 3, 10, 2, 2, 9, 8, 7, 1, 0});
          SCOPED_TRACE(std::to_string(interleaved) + std::to_string(rotary_dim) + std::to_string(packed) +
                       std::to_string(with_positions));
          t.tolerance(0, 0).compare_tiers();
        }
  // Large enough to split over threads.
  OpTester big = testing::one_output_node("RotaryEmbedding", 23);
  big.input(random_tensor({2, 8, 512, 64}, 4)).input(random_tensor({2, 512, 32}, 5)).input(random_tensor({2, 512, 32}, 6));
  big.tolerance(0, 0).compare_tiers();
}

TEST(OptimizedRotaryEmbedding, PositionOutsideTheCacheIsTheReferenceError) {
  OpTester t = testing::one_output_node("RotaryEmbedding", 23);
  t.input(random_tensor({1, 1, 2, 4}, 1)).input(random_tensor({3, 2}, 2)).input(random_tensor({3, 2}, 3));
  t.input<int64_t>({1, 2}, {0, 3}).kernels(KernelTier::kOptimized);
  EXPECT_NE(t.run_expect_error(ErrorCode::kRuntime).find("outside the cache"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Gelu

TEST(OptimizedGelu, BothFormsCloseToReferenceIncludingSpecialValues) {
  Tensor x = random_tensor({3, 1000}, 1, -12.0f, 12.0f);
  const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-30f, -1e-30f, 5.0f, -5.0f, 0.625f, -0.625f};
  for (size_t i = 0; i < std::size(edge); ++i) x.data<float>()[i] = edge[i];
  for (const char* mode : {"none", "tanh"}) {
    SCOPED_TRACE(mode);
    testing::one_output_node("Gelu", 20).attr("approximate", mode).input(x).tolerance(1e-6, 1e-5).compare_tiers();
  }
  testing::one_output_node("Gelu", 20).input(random_tensor({70000}, 2, -6, 6)).tolerance(1e-6, 1e-5).compare_tiers();
}

TEST(OptimizedGelu, Avx2AndBaselineLoopsAgree) {
  const auto* avx2 = ops::fast::avx2_loops();
  if (!avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  const Tensor x = random_tensor({4099}, 3, -10, 10);
  for (auto op : {ops::fast::EwOp::kGelu, ops::fast::EwOp::kGeluTanh}) {
    std::vector<float> a(4099), b(4099);
    ops::fast::baseline_loops().unary({op, 0, 0}, x.data<float>(), a.data(), 4099);
    avx2->unary({op, 0, 0}, x.data<float>(), b.data(), 4099);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6 * std::max(1.0f, std::fabs(a[i]))) << i;
  }
}

}  // namespace
}  // namespace parity::runtime
