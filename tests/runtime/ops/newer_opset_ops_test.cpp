// Operators and semantics added after ONNX 1.12 (opsets 18-28) outside the transformer block:
// Bitwise*, BitShift on signed integers, CumProd, SwiGLU, ReduceMax/ReduceMin on bool, BitCast,
// Cast-19's bfloat16 rounding, TensorScatter, CenterCropPad, AffineGrid, Col2Im, GridSample-20,
// Resize-18/19 (axes, keep_aspect_ratio_policy, antialias, half_pixel_symmetric), StringConcat,
// StringSplit, RegexFullMatch, AveragePool-19/LpPool-18 dilations, Quantize/DequantizeLinear-21
// (blocked, 16-bit), DFT-20 (axis input, inverse real DFT), SpaceToDepth's CRD mode, DeformConv,
// LabelEncoder-4's tensor attributes, TreeEnsemble-5.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(NewerOpsetOps, BitwiseOnSignedAndUnsigned) {
  OpTester("BitwiseAnd", 18)
      .input<int16_t>({3}, {-1, 12, 5})
      .input<int16_t>({1}, {6})
      .output<int16_t>({3}, {6, 4, 4})
      .run();
  OpTester("BitwiseOr", 18).input<uint8_t>({2}, {0x0f, 0x80}).input<uint8_t>({2}, {0xf0, 0x01}).output<uint8_t>({2}, {0xff, 0x81}).run();
  OpTester("BitwiseXor", 18).input<int32_t>({2}, {-1, 6}).input<int32_t>({2}, {1, 3}).output<int32_t>({2}, {-2, 5}).run();
  OpTester("BitwiseNot", 18).input<int8_t>({2}, {0, -128}).output<int8_t>({2}, {-1, 127}).run();
  OpTester("BitwiseNot", 18).input<uint64_t>({1}, {0}).output<uint64_t>({1}, {UINT64_MAX}).run();
  OpTester("BitwiseAnd", 18).input<float>({1}, {1}).input<float>({1}, {1}).output_shape_only(DType::kFloat32, {1})
      .run_expect_error(ErrorCode::kUnsupported);
}

TEST(NewerOpsetOps, BitShiftEveryIntegerType) {
  // Left shifts wrap; a negative or too-wide shift clears every bit.
  OpTester("BitShift", 28)
      .attr("direction", "LEFT")
      .input<int8_t>({4}, {64, 1, -8, 3})
      .input<int8_t>({4}, {1, 7, -1, 8})
      .output<int8_t>({4}, {-128, -128, 0, 0})
      .run();
  // Right shifts of signed values are arithmetic; shifting everything out leaves the sign.
  OpTester("BitShift", 28)
      .attr("direction", "RIGHT")
      .input<int32_t>({4}, {-8, -1, -8, 4})
      .input<int32_t>({4}, {1, 1, 40, -3})
      .output<int32_t>({4}, {-4, -1, -1, 0})
      .run();
  OpTester("BitShift", 11)
      .attr("direction", "RIGHT")
      .input<uint64_t>({2}, {16, 16})
      .input<uint64_t>({2}, {2, 64})
      .output<uint64_t>({2}, {4, 0})
      .run();
}

TEST(NewerOpsetOps, CumProdExclusiveReverse) {
  OpTester("CumProd", 26)
      .input<float>({4}, {1, 2, 3, 4})
      .input<int64_t>({}, {0})
      .output<float>({4}, {1, 2, 6, 24})
      .run();
  OpTester("CumProd", 26)
      .attr("exclusive", 1)
      .attr("reverse", 1)
      .input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<int32_t>({}, {-1})
      .output<int32_t>({2, 3}, {6, 3, 1, 30, 6, 1})
      .run();
}

TEST(NewerOpsetOps, SwiGluIsSwishTimesGate) {
  const float s1 = 1.0f / (1.0f + std::exp(-1.0f));
  const float s_half = 1.0f / (1.0f + std::exp(-0.5f));
  OpTester("SwiGLU", 28).input<float>({2}, {1, 0}).input<float>({1}, {2}).output<float>({2}, {2 * s1, 0}).run();
  OpTester("SwiGLU", 28)
      .attr("alpha", 0.5f)
      .input<float>({1}, {1})
      .input<float>({1}, {3})
      .output<float>({1}, {3 * s_half})
      .run();
}

TEST(NewerOpsetOps, ReduceMaxMinOnBool) {
  OpTester("ReduceMax", 20)
      .attr("keepdims", 0)
      .input<bool>({2, 2}, {false, true, false, false})
      .input<int64_t>({1}, {1})
      .output<bool>({2}, {true, false})
      .run();
  OpTester("ReduceMin", 20)
      .attr("keepdims", 0)
      .input<bool>({2, 2}, {true, true, false, true})
      .input<int64_t>({1}, {1})
      .output<bool>({2}, {true, false})
      .run();
}

TEST(NewerOpsetOps, BitCastReinterpretsBytes) {
  OpTester("BitCast", 26)
      .attr("to", static_cast<int64_t>(DType::kInt32))
      .input<float>({2}, {1.0f, -2.0f})
      .output<int32_t>({2}, {0x3f800000, static_cast<int32_t>(0xc0000000u)})
      .run();
  OpTester("BitCast", 26).attr("to", static_cast<int64_t>(DType::kUInt8)).input<int8_t>({2}, {-1, 5}).output<uint8_t>({2}, {255, 5}).run();
  OpTester("BitCast", 26)
      .attr("to", static_cast<int64_t>(DType::kInt64))
      .input<float>({1}, {1.0f})
      .output_shape_only(DType::kInt64, {1})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(NewerOpsetOps, CastToBfloat16TruncatesBeforeOpset19AndRoundsFrom19) {
  const float x = std::bit_cast<float>(0x3ef5eeb0u);  // low half 0xeeb0: rounds up to 0x3ef6
  auto bf16 = [](uint16_t bits) { return Tensor::from_bytes(DType::kBFloat16, {1}, &bits, sizeof bits); };
  OpTester cast13("Cast", 13);
  cast13.attr("to", static_cast<int64_t>(DType::kBFloat16)).input<float>({1}, {x}).output(bf16(0x3ef5)).tolerance(0, 0);
  cast13.run();
  OpTester cast19("Cast", 19);
  cast19.attr("to", static_cast<int64_t>(DType::kBFloat16)).input<float>({1}, {x}).output(bf16(0x3ef6)).tolerance(0, 0);
  cast19.run();
}

TEST(NewerOpsetOps, TensorScatterLinearAndCircular) {
  OpTester("TensorScatter", 24)
      .input<float>({2, 3, 1}, {0, 0, 0, 0, 0, 0})
      .input<float>({2, 1, 1}, {7, 8})
      .input<int64_t>({2}, {2, 0})
      .output<float>({2, 3, 1}, {0, 0, 7, 8, 0, 0})
      .run();
  OpTester("TensorScatter", 24)
      .attr("mode", "circular")
      .input<float>({1, 3, 1}, {0, 0, 0})
      .input<float>({1, 2, 1}, {5, 6})
      .input<int64_t>({1}, {2})
      .output<float>({1, 3, 1}, {6, 0, 5})
      .run();
  OpTester("TensorScatter", 24)
      .input<float>({1, 3, 1}, {0, 0, 0})
      .input<float>({1, 2, 1}, {5, 6})
      .input<int64_t>({1}, {2})
      .output_shape_only(DType::kFloat32, {1, 3, 1})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(NewerOpsetOps, CenterCropPadCropsAndPadsAroundTheCentre) {
  OpTester("CenterCropPad", 18).input<float>({5}, {1, 2, 3, 4, 5}).input<int64_t>({1}, {3}).output<float>({3}, {2, 3, 4}).run();
  OpTester("CenterCropPad", 18).input<float>({2}, {1, 2}).input<int64_t>({1}, {5}).output<float>({5}, {0, 1, 2, 0, 0}).run();
  OpTester("CenterCropPad", 18)
      .attr_ints("axes", {-1})
      .input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})
      .input<int64_t>({1}, {1})
      .output<int32_t>({2, 1}, {2, 5})
      .run();
}

TEST(NewerOpsetOps, AffineGridIdentity) {
  OpTester("AffineGrid", 20)
      .attr("align_corners", 1)
      .input<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0})
      .input<int64_t>({4}, {1, 1, 2, 2})
      .output<float>({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1})
      .run();
  // Without align_corners the points are cell centres; theta shifts x by 1.
  OpTester("AffineGrid", 20)
      .input<float>({1, 2, 3}, {1, 0, 1, 0, 1, 0})
      .input<int64_t>({4}, {1, 1, 1, 2})
      .output<float>({1, 1, 2, 2}, {0.5f, 0, 1.5f, 0})
      .run();
}

TEST(NewerOpsetOps, Col2ImSumsOverlappingBlocks) {
  // Block [1, 2] sliding over a [1, 3] image: the middle pixel gets one value from each position.
  OpTester("Col2Im", 18)
      .input<float>({1, 2, 2}, {1, 2, 10, 20})
      .input<int64_t>({2}, {1, 3})
      .input<int64_t>({2}, {1, 2})
      .output<float>({1, 1, 1, 3}, {1, 12, 20})
      .run();
}

TEST(NewerOpsetOps, GridSampleVolumetricAndRenamedModes) {
  // Depth 2 volume (1, 3); the grid point z = 0 lies half way between the two slices.
  auto node = [](const char* mode) {
    OpTester t("GridSample", 20);
    t.attr("mode", mode).attr("align_corners", 1);
    t.input<float>({1, 1, 2, 1, 1}, {1, 3}).input<float>({1, 1, 1, 1, 3}, {0, 0, 0});
    return t;
  };
  node("linear").output<float>({1, 1, 1, 1, 1}, {2}).run();
  node("nearest").output<float>({1, 1, 1, 1, 1}, {1}).run();  // 0.5 rounds to even: slice 0
  node("cubic").output_shape_only(DType::kFloat32, {1, 1, 1, 1, 1}).run_expect_error(ErrorCode::kRuntime);
}

TEST(NewerOpsetOps, ResizeAxesAspectPolicyAndAntialias) {
  // axes: scales names only the last axis.
  OpTester("Resize", 18)
      .attr_ints("axes", {3})
      .input<float>({1, 1, 1, 2}, {1, 2})
      .missing_input()
      .input<float>({1}, {2})
      .output<float>({1, 1, 1, 4}, {1, 1, 2, 2})
      .run();
  // not_smaller keeps the aspect ratio with the larger of the two scales (2 and 1).
  OpTester("Resize", 18)
      .attr_ints("axes", {2, 3})
      .attr("keep_aspect_ratio_policy", "not_smaller")
      .input<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})
      .missing_input()
      .missing_input()
      .input<int64_t>({2}, {4, 4})
      .output_shape_only(DType::kFloat32, {1, 1, 4, 8})
      .run();
  // Antialiased linear downscaling by 2 averages over a 4-tap triangle (1/8, 3/8, 3/8, 1/8).
  OpTester("Resize", 18)
      .attr("mode", "linear")
      .attr("antialias", 1)
      .input<float>({4}, {0, 0, 4, 4})
      .missing_input()
      .input<float>({1}, {0.5f})
      .output<float>({2}, {0.5f, 3.5f})
      .run();
  OpTester("Resize", 18)
      .attr("mode", "linear")
      .input<float>({4}, {0, 0, 4, 4})
      .missing_input()
      .input<float>({1}, {0.5f})
      .output<float>({2}, {0, 4})
      .run();
}

TEST(NewerOpsetOps, StringConcatSplitAndRegex) {
  OpTester("StringConcat", 20)
      .input<std::string>({2}, {"cat", "dog"})
      .input<std::string>({1}, {"s"})
      .output<std::string>({2}, {"cats", "dogs"})
      .run();
  // An exact delimiter keeps empty fields; rows pad with "" to the longest.
  OpTester("StringSplit", 20)
      .attr("delimiter", ",")
      .input<std::string>({2}, {"a,,b", "c"})
      .output<std::string>({2, 3}, {"a", "", "b", "c", "", ""})
      .output<int64_t>({2}, {3, 1})
      .run();
  // Without a delimiter: whitespace runs, at most maxsplit splits.
  OpTester("StringSplit", 20)
      .attr("maxsplit", 1)
      .input<std::string>({1}, {"  o n  n x "})
      .output<std::string>({1, 2}, {"o", "n  n x"})
      .output<int64_t>({1}, {2})
      .run();
  OpTester("RegexFullMatch", 20)
      .attr("pattern", "[a-z]+@(example|test)\\.com")
      .input<std::string>({3}, {"me@example.com", "me@example.org", "x me@test.com"})
      .output<bool>({3}, {true, false, false})
      .run();
  OpTester("RegexFullMatch", 20).attr("pattern", "(").input<std::string>({1}, {"a"}).output_shape_only(DType::kBool, {1})
      .run_expect_error(ErrorCode::kInvalidModel);
}

TEST(NewerOpsetOps, DilatedAverageAndLpPools) {
  // Kernel 2 with dilation 2 over a row of 4: windows {0, 2} and {1, 3}.
  for (const auto tier : {runtime::KernelTier::kReference, runtime::KernelTier::kOptimized}) {
    OpTester("AveragePool", 19)
        .kernels(tier)
        .attr_ints("kernel_shape", {1, 2})
        .attr_ints("dilations", {1, 2})
        .input<float>({1, 1, 1, 4}, {1, 2, 3, 4})
        .output<float>({1, 1, 1, 2}, {2, 3})
        .run();
  }
  OpTester("LpPool", 18)
      .attr("p", 1)
      .attr_ints("kernel_shape", {1, 2})
      .attr_ints("dilations", {1, 2})
      .input<float>({1, 1, 1, 4}, {1, -2, 3, 4})
      .output<float>({1, 1, 1, 2}, {4, 6})
      .run();
}

TEST(NewerOpsetOps, BlockedAnd16BitQuantization) {
  // Blocks of 2 along axis 1: scales 1 and 2.
  OpTester("QuantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 2)
      .input<float>({1, 4}, {1, 2, 3, 4})
      .input<float>({1, 2}, {1, 2})
      .output<uint8_t>({1, 4}, {1, 2, 2, 2})
      .run();
  OpTester("QuantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 2)
      .attr("output_dtype", static_cast<int64_t>(DType::kInt16))
      .input<float>({1, 4}, {-1, 2, 3000, 4})
      .input<float>({1, 2}, {1, 0.5f})
      .output<int16_t>({1, 4}, {-1, 2, 6000, 8})
      .run();
  OpTester("DequantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 2)
      .input<uint16_t>({1, 4}, {1, 2, 3, 60000})
      .input<float>({1, 2}, {1, 2})
      .input<uint16_t>({1, 2}, {0, 1})
      .output<float>({1, 4}, {1, 2, 4, 119998})
      .run();
  OpTester("QuantizeLinear", 21)
      .attr("axis", 1)
      .attr("block_size", 3)
      .input<float>({1, 4}, {1, 2, 3, 4})
      .input<float>({1, 1}, {1})
      .output_shape_only(DType::kUInt8, {1, 4})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(NewerOpsetOps, DftAxisInputAndInverseRealDft) {
  // Along axis 2 of [1, 2, 2, 1]: rows (1, 2) and (3, 4) transform to (3, -1) and (7, -1).
  OpTester("DFT", 20)
      .input<float>({1, 2, 2, 1}, {1, 2, 3, 4})
      .missing_input()
      .input<int64_t>({}, {2})
      .output<float>({1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0})
      .run();
  // Bins 0..2 of the flat spectrum (1, 1, 1, 1) invert to the impulse of length 4.
  OpTester("DFT", 20)
      .attr("inverse", 1)
      .attr("onesided", 1)
      .input<float>({1, 3, 2}, {1, 0, 1, 0, 1, 0})
      .output<float>({1, 4, 1}, {1, 0, 0, 0})
      .tolerance(1e-6, 1e-6)
      .run();
}

TEST(NewerOpsetOps, SpaceToDepthModes) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};  // two channels of 2x2
  OpTester("SpaceToDepth", 13).attr("blocksize", 2).attr("mode", "CRD").input<float>({1, 2, 2, 2}, x)
      .output<float>({1, 8, 1, 1}, {1, 2, 3, 4, 5, 6, 7, 8}).run();
  OpTester("SpaceToDepth", 13).attr("blocksize", 2).input<float>({1, 2, 2, 2}, x)
      .output<float>({1, 8, 1, 1}, {1, 5, 2, 6, 3, 7, 4, 8}).run();
}

TEST(NewerOpsetOps, DeformConvSamplesAtOffsets) {
  // A 1x1 kernel of weight 1 reading half a pixel to the right (zero beyond the edge).
  const std::vector<float> offsets{0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f};  // dy plane, then dx plane
  OpTester("DeformConv", 19)
      .attr_ints("kernel_shape", {1, 1})
      .input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
      .input<float>({1, 1, 1, 1}, {1})
      .input<float>({1, 2, 2, 2}, offsets)
      .output<float>({1, 1, 2, 2}, {1.5f, 1, 3.5f, 2})
      .run();
  OpTester("DeformConv", 19)
      .attr_ints("kernel_shape", {1, 1})
      .input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
      .input<float>({1, 1, 1, 1}, {1})
      .input<float>({1, 2, 2, 2}, offsets)
      .input<float>({1}, {10})
      .input<float>({1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f})
      .output<float>({1, 1, 2, 2}, {10.75f, 10.5f, 11.75f, 11})
      .run();
}

TEST(NewerOpsetOps, LabelEncoderTensorAttributes) {
  OpTester("LabelEncoder", 4, "ai.onnx.ml")
      .attr("keys_tensor", Tensor::from_vector<int64_t>({2}, {1, 2}))
      .attr("values_tensor", Tensor::from_vector<int16_t>({2}, {10, 20}))
      .attr("default_tensor", Tensor::from_vector<int16_t>({1}, {-1}))
      .input<int64_t>({3}, {2, 3, 1})
      .output<int16_t>({3}, {20, -1, 10})
      .run();
  OpTester("LabelEncoder", 4, "ai.onnx.ml")
      .attr_strings("keys_strings", {"a", "b"})
      .attr("values_tensor", Tensor::from_vector<double>({2}, {0.5, 1.5}))
      .input<std::string>({2}, {"b", "z"})
      .output<double>({2}, {1.5, 0})
      .run();
}

TEST(NewerOpsetOps, TreeEnsembleWithSetMembership) {
  // x <= 1 -> leaf 0 (5 to target 0); else x in {2, 3} -> leaf 1 (7 to target 1); else leaf 2.
  const float nan = std::nanf("");
  OpTester("TreeEnsemble", 5, "ai.onnx.ml")
      .attr("nodes_splits", Tensor::from_vector<float>({2}, {1, 0}))
      .attr_ints("nodes_featureids", {0, 0})
      .attr("nodes_modes", Tensor::from_vector<uint8_t>({2}, {0, 6}))
      .attr_ints("nodes_truenodeids", {0, 1})
      .attr_ints("nodes_trueleafs", {1, 1})
      .attr_ints("nodes_falsenodeids", {1, 2})
      .attr_ints("nodes_falseleafs", {0, 1})
      .attr_ints("leaf_targetids", {0, 1, 0})
      .attr("leaf_weights", Tensor::from_vector<float>({3}, {5, 7, -1}))
      .attr_ints("tree_roots", {0})
      .attr("membership_values", Tensor::from_vector<float>({3}, {2, 3, nan}))
      .attr("n_targets", 2)
      .input<float>({3, 1}, {0, 2, 5})
      .output<float>({3, 2}, {5, 0, 0, 7, -1, 0})
      .run();
}

}  // namespace
}  // namespace parity::testing
