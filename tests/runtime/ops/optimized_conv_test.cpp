// The oneDNN Conv / ConvTranspose / pooling kernels against the reference kernels (compare_tiers)
// on seeded random inputs, their declines and delegations, and Conv fusion through a Session.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

using nn::random_tensor;

constexpr double kAtol = 2e-4, kRtol = 2e-4;

/// compare_tiers, and checks that the optimized kernel ran on oneDNN (not its reference fallback)
/// exactly when `on_onednn` says so.
void compare_tiers_on_onednn(OpTester& t, bool on_onednn = true) {
  const uint64_t before = runtime::nn::dnnl_fast_path_runs();
  t.compare_tiers();
  if (on_onednn) {
    EXPECT_GT(runtime::nn::dnnl_fast_path_runs(), before) << "the optimized kernel fell back to the reference path";
  } else {
    EXPECT_EQ(runtime::nn::dnnl_fast_path_runs(), before) << "expected the reference fallback";
  }
}
void compare_tiers_on_onednn(OpTester&& t, bool on_onednn = true) { compare_tiers_on_onednn(t, on_onednn); }

struct ConvCase {
  std::string name;
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  bool bias = true;
};

OpTester conv_tester(const std::string& op, const ConvCase& c, uint32_t seed, int opset = 11) {
  OpTester t(op, opset);
  if (c.group != 1) t.attr("group", c.group);
  if (!c.strides.empty()) t.attr_ints("strides", c.strides);
  if (!c.dilations.empty()) t.attr_ints("dilations", c.dilations);
  if (!c.pads.empty()) t.attr_ints("pads", c.pads);
  if (!c.auto_pad.empty()) t.attr("auto_pad", c.auto_pad);
  t.input(random_tensor(c.x, seed)).constant_input(random_tensor(c.w, seed + 1));
  const int64_t out_channels = op == "Conv" ? c.w[0] : c.w[1] * c.group;
  if (c.bias) t.constant_input(random_tensor({out_channels}, seed + 2));
  t.output_shape_only(DType::kFloat32, {}).tolerance(kAtol, kRtol);
  return t;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"2d_3x3_pad1", {1, 3, 9, 11}, {8, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"2d_1x1", {2, 16, 7, 5}, {24, 16, 1, 1}},
      {"2d_1x1_no_bias", {1, 16, 7, 5}, {24, 16, 1, 1}, 1, {}, {}, {}, "", false},
      {"2d_stride2_asym_pads", {1, 5, 13, 10}, {7, 5, 3, 3}, 1, {2, 2}, {}, {0, 1, 2, 1}},
      {"2d_stride_unused_pad", {1, 4, 6, 6}, {4, 4, 1, 1}, 1, {2, 2}, {}, {0, 0, 1, 1}},
      {"2d_dilation2", {2, 4, 12, 12}, {6, 4, 3, 3}, 1, {}, {2, 2}, {2, 2, 2, 2}},
      {"2d_dilation_stride", {1, 3, 15, 17}, {5, 3, 3, 2}, 1, {2, 3}, {3, 2}, {1, 0, 1, 2}},
      {"2d_grouped", {1, 8, 9, 9}, {12, 2, 3, 3}, 4, {}, {}, {1, 1, 1, 1}},
      {"2d_depthwise", {2, 16, 10, 8}, {16, 1, 3, 3}, 16, {}, {}, {1, 1, 1, 1}},
      {"2d_depthwise_5x5_stride2", {1, 32, 15, 15}, {32, 1, 5, 5}, 32, {2, 2}, {}, {2, 2, 2, 2}},
      {"2d_depthwise_multiplier", {1, 4, 8, 8}, {8, 1, 3, 3}, 4, {}, {}, {1, 1, 1, 1}},
      {"2d_same_upper", {1, 3, 10, 7}, {4, 3, 4, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},
      {"2d_same_lower", {1, 3, 10, 7}, {4, 3, 4, 3}, 1, {2, 1}, {}, {}, "SAME_LOWER"},
      {"2d_valid", {1, 3, 10, 7}, {4, 3, 3, 2}, 1, {3, 2}, {}, {}, "VALID"},
      {"2d_kernel_equals_input", {3, 2, 4, 4}, {5, 2, 4, 4}},
      {"2d_1x1_spatial", {1, 8, 1, 1}, {3, 8, 1, 1}},
      {"2d_odd_channels", {1, 17, 9, 11}, {19, 17, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"1d", {2, 3, 20}, {5, 3, 4}, 1, {2}, {}, {1, 2}},
      {"1d_dilated_grouped", {1, 6, 19}, {6, 2, 3}, 3, {1}, {2}, {2, 2}},
      {"3d", {1, 2, 5, 6, 7}, {4, 2, 3, 3, 3}, 1, {1, 2, 1}, {}, {1, 1, 1, 1, 1, 1}},
      {"3d_depthwise", {1, 4, 4, 5, 6}, {4, 1, 2, 2, 2}, 4, {}, {}, {}, "SAME_UPPER"},
  };
  return cases;
}

TEST(OptimizedConv, MatchesReference) {
  uint32_t seed = 100;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    compare_tiers_on_onednn(conv_tester("Conv", c, seed += 10));
  }
}

TEST(OptimizedConv, OpsetOneRegistrationMatchesReference) {
  compare_tiers_on_onednn(conv_tester("Conv", conv_cases()[0], 7, /*opset=*/1));
}

TEST(OptimizedConv, RuntimeBiasInputMatchesReference) {
  // A bias that is a run-time input (not an initializer) is read at run time.
  OpTester t("Conv", 11);
  t.attr_ints("pads", {1, 1, 1, 1})
      .input(random_tensor({1, 3, 6, 6}, 1))
      .constant_input(random_tensor({4, 3, 3, 3}, 2))
      .input(random_tensor({4}, 3))
      .output_shape_only(DType::kFloat32, {})
      .tolerance(kAtol, kRtol);
  compare_tiers_on_onednn(t);
}

TEST(OptimizedConv, ZeroBatchDelegatesToReference) {
  OpTester t("Conv", 11);
  t.input(Tensor(DType::kFloat32, {0, 3, 5, 5}))
      .constant_input(random_tensor({4, 3, 3, 3}, 2))
      .output_shape_only(DType::kFloat32, {});
  compare_tiers_on_onednn(t, /*on_onednn=*/false);
  std::vector<Tensor> out = t.run_outputs(runtime::KernelTier::kOptimized);
  EXPECT_EQ(out[0].shape(), (Shape{0, 4, 3, 3}));
}

TEST(OptimizedConv, DeclinesRuntimeWeightsAndOtherDtypes) {
  bool used = true;
  OpTester runtime_weights("Conv", 11);
  runtime_weights.input(random_tensor({1, 2, 4, 4}, 1))
      .input(random_tensor({3, 2, 3, 3}, 2))
      .output_shape_only(DType::kFloat32, {})
      .tolerance(kAtol, kRtol);
  runtime_weights.run_outputs(runtime::KernelTier::kOptimized, &used);
  EXPECT_FALSE(used) << "weights that are not constants are left to the reference kernel";
  runtime_weights.compare_tiers(/*expect_optimized=*/false);

  used = true;
  OpTester f64("Conv", 11);
  f64.input(random_tensor({1, 2, 4, 4}, 1).cast(DType::kFloat64))
      .constant_input(random_tensor({3, 2, 3, 3}, 2).cast(DType::kFloat64))
      .output_shape_only(DType::kFloat64, {});
  f64.run_outputs(runtime::KernelTier::kOptimized, &used);
  EXPECT_FALSE(used) << "float64 is left to the reference kernel";
}

TEST(OptimizedConv, ShapeErrorsMatchReference) {
  OpTester t("Conv", 11);
  t.input(random_tensor({1, 5, 4, 4}, 1)).constant_input(random_tensor({3, 2, 3, 3}, 2)).output_shape_only(DType::kFloat32, {});
  bool used = false;
  try {
    t.run_outputs(runtime::KernelTier::kOptimized, &used);
    ADD_FAILURE() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("input channels"), std::string::npos) << e.what();
  }
}

const std::vector<ConvCase>& conv_transpose_cases() {
  static const std::vector<ConvCase> cases = {
      {"2x2_stride2", {1, 8, 5, 6}, {8, 4, 2, 2}, 1, {2, 2}, {}, {0, 0, 0, 0}},
      {"3x3_pad1", {2, 3, 6, 5}, {3, 5, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"stride2_pads_dilation", {1, 4, 5, 5}, {4, 3, 3, 3}, 1, {2, 2}, {2, 1}, {1, 2, 0, 1}},
      {"grouped", {1, 6, 4, 5}, {6, 2, 3, 3}, 3, {2, 1}, {}, {1, 1, 1, 1}},
      {"no_bias", {1, 4, 7, 3}, {4, 2, 3, 2}, 1, {1, 2}, {}, {}, "", false},
      {"same_upper", {1, 2, 5, 4}, {2, 3, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},
      {"1d", {2, 3, 9}, {3, 2, 4}, 1, {3}, {}, {1, 1}},
      {"3d", {1, 2, 3, 4, 3}, {2, 3, 2, 2, 3}, 1, {2, 1, 2}, {}, {0, 1, 0, 0, 1, 1}},
  };
  return cases;
}

TEST(OptimizedConvTranspose, MatchesReference) {
  uint32_t seed = 500;
  for (const ConvCase& c : conv_transpose_cases()) {
    SCOPED_TRACE(c.name);
    compare_tiers_on_onednn(conv_tester("ConvTranspose", c, seed += 10));
  }
}

TEST(OptimizedConvTranspose, OutputPaddingAndOutputShapeMatchReference) {
  // Geometries oneDNN cannot express exactly run the reference path; either way the result agrees.
  OpTester output_padding("ConvTranspose", 11);
  output_padding.attr_ints("strides", {2, 2})
      .attr_ints("output_padding", {1, 1})
      .input(random_tensor({1, 2, 4, 4}, 1))
      .constant_input(random_tensor({2, 3, 3, 3}, 2))
      .output_shape_only(DType::kFloat32, {})
      .tolerance(kAtol, kRtol);
  compare_tiers_on_onednn(output_padding, /*on_onednn=*/false);
  OpTester output_shape("ConvTranspose", 11);
  output_shape.attr_ints("strides", {3, 2})
      .attr_ints("output_shape", {10, 8})
      .input(random_tensor({1, 2, 3, 3}, 3))
      .constant_input(random_tensor({2, 3, 3, 3}, 4))
      .output_shape_only(DType::kFloat32, {})
      .tolerance(kAtol, kRtol);
  output_shape.compare_tiers();
}

// --- pooling -------------------------------------------------------------------------------------

struct PoolCase {
  std::string name;
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
  bool count_include_pad = false;
  std::string auto_pad;
};

OpTester pool_tester(const std::string& op, const PoolCase& c, uint32_t seed, int opset = 12) {
  OpTester t(op, opset);
  t.attr_ints("kernel_shape", c.kernel);
  if (!c.strides.empty()) t.attr_ints("strides", c.strides);
  if (!c.pads.empty()) t.attr_ints("pads", c.pads);
  if (!c.dilations.empty()) t.attr_ints("dilations", c.dilations);
  if (c.ceil_mode) t.attr("ceil_mode", 1);
  if (c.count_include_pad) t.attr("count_include_pad", 1);
  if (!c.auto_pad.empty()) t.attr("auto_pad", c.auto_pad);
  t.input(random_tensor(c.x, seed)).output_shape_only(DType::kFloat32, {}).tolerance(1e-5, 1e-5);
  return t;
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {"3x3_s2_p1", {1, 8, 11, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"2x2_s2", {2, 3, 8, 6}, {2, 2}, {2, 2}},
      {"asym_pads", {1, 4, 9, 7}, {3, 2}, {1, 2}, {0, 1, 2, 1}},
      {"ceil_mode", {1, 3, 10, 9}, {3, 3}, {2, 2}, {}, {}, true},
      {"ceil_mode_pads", {1, 3, 10, 10}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true},
      {"same_upper", {1, 2, 7, 8}, {3, 3}, {2, 2}, {}, {}, false, false, "SAME_UPPER"},
      {"same_lower", {1, 2, 7, 8}, {2, 3}, {2, 2}, {}, {}, false, false, "SAME_LOWER"},
      {"include_pad", {1, 5, 6, 6}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, false, true},
      {"include_pad_ceil", {1, 5, 6, 6}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, true},
      {"1d", {2, 3, 17}, {4}, {3}, {1, 2}},
      {"3d", {1, 2, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}},
      {"kernel_equals_input", {1, 3, 4, 5}, {4, 5}},
  };
  return cases;
}

TEST(OptimizedPool, MaxPoolMatchesReference) {
  uint32_t seed = 900;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.name);
    compare_tiers_on_onednn(pool_tester("MaxPool", c, seed += 10));
  }
  PoolCase dilated{"dilated", {1, 3, 12, 12}, {3, 3}, {1, 2}, {2, 2, 2, 2}, {2, 3}};
  compare_tiers_on_onednn(pool_tester("MaxPool", dilated, 77));
  compare_tiers_on_onednn(pool_tester("MaxPool", pool_cases()[0], 78, /*opset=*/8));
}

TEST(OptimizedPool, AveragePoolMatchesReference) {
  uint32_t seed = 1900;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.name);
    // include_pad with ceil_mode windows past the end padding runs the reference fallback.
    compare_tiers_on_onednn(pool_tester("AveragePool", c, seed += 10, 11), c.name != "include_pad_ceil");
  }
  compare_tiers_on_onednn(pool_tester("AveragePool", pool_cases()[0], 78, /*opset=*/7));
}

TEST(OptimizedPool, MaxPoolWithIndicesDeclines) {
  OpTester t("MaxPool", 12);
  t.attr_ints("kernel_shape", {2, 2}).input(random_tensor({1, 2, 4, 4}, 3));
  t.output_shape_only(DType::kFloat32, {}).output_shape_only(DType::kInt64, {});
  bool used = true;
  t.run_outputs(runtime::KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  t.compare_tiers(/*expect_optimized=*/false);
}

TEST(OptimizedPool, NonFloatInputsDelegate) {
  // uint8 MaxPool: declined at plan time (the dtype is known), and computed by the reference.
  OpTester t("MaxPool", 12);
  t.attr_ints("kernel_shape", {2, 2})
      .input(Tensor::from_vector<uint8_t>({1, 1, 2, 3}, {1, 9, 3, 4, 5, 200}))
      .output(Tensor::from_vector<uint8_t>({1, 1, 1, 2}, {9, 200}));
  bool used = true;
  std::vector<Tensor> out = t.run_outputs(runtime::KernelTier::kOptimized, &used);
  EXPECT_FALSE(used);
  EXPECT_TRUE(out[0].bit_equal(Tensor::from_vector<uint8_t>({1, 1, 1, 2}, {9, 200})));
}

TEST(OptimizedPool, GlobalPoolsMatchReference) {
  const std::vector<Shape> shapes = {{1, 8, 7, 7}, {2, 3, 1, 1}, {2, 5, 9}, {1, 4, 3, 4, 5}, {1, 1280, 7, 7}};
  uint32_t seed = 3000;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(shape_to_string(s));
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      OpTester t(op, 1);
      t.input(random_tensor(s, seed += 3)).output_shape_only(DType::kFloat32, {}).tolerance(1e-5, 1e-5);
      // The planar loop takes every NCHW plane, 1x1 ones (a copy) included.
      compare_tiers_on_onednn(t);
    }
  }
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
