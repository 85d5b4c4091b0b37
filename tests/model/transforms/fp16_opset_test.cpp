#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../test_models.h"
#include "model/transforms/extract.h"
#include "model/transforms/fp16.h"
#include "model/transforms/opset.h"
#include "transform_test_util.h"

namespace parity::model::transforms {
namespace {

int count_ops(const onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op;
  return n;
}

TEST(Fp16, SmallModelKeepsIoTypesWithEdgeCasts) {
  model::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  auto g = graph_with_inferred_types(model);
  const auto report = convert_to_fp16(*g);
  EXPECT_EQ(report.converted_nodes, 2u);
  EXPECT_EQ(report.constants_converted, 1u);
  EXPECT_EQ(report.casts_added, 2u);
  model::Model out = g->to_model();
  EXPECT_NO_THROW(onnx::checker::check_model(out.proto()));
  const auto& graph = out.proto().graph();
  EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.initializer(0).data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(count_ops(out.proto(), "Cast"), 2);
}

TEST(Fp16, IoBecomesFp16WhenAsked) {
  model::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  auto g = graph_with_inferred_types(model);
  Fp16Options options;
  options.keep_io_types = false;
  const auto report = convert_to_fp16(*g, options);
  EXPECT_EQ(report.casts_added, 0u);
  model::Model out = g->to_model();
  EXPECT_EQ(out.proto().graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT16);
  EXPECT_NO_THROW(onnx::checker::check_model(out.proto()));
}

// Tolerance. float16 keeps 11 significant bits (relative rounding step 2^-11 ~ 4.9e-4). The
// detector's ~60 convolutions accumulate such roundings, so its pre-sigmoid logits are compared
// relative to their largest magnitude: 1e-2 (measured ~2.6e-3 on ORT, so a 4x margin), which still
// catches a wrong conversion (a saturated constant or a float32-only op fed float16 moved logits by
// 10-400x their range before the out-of-range rule existed). The sigmoid output's slope is at most
// 1/4, so the probabilities may move by at most a quarter of the logits' bound.
constexpr double kFp16LogitTolerance = 1e-2;

void expect_fp16_close(const std::string& runner, const std::filesystem::path& fp32, const std::filesystem::path& fp16,
                       const std::string& logits, const std::string& output) {
  testing::TempDir tmp;
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 5)}};
  const TensorMap want = testing::run_with(runner, testing::with_outputs(fp32, {logits, output}, tmp / "a.onnx"), feed);
  const TensorMap got = testing::run_with(runner, testing::with_outputs(fp16, {logits, output}, tmp / "b.onnx"), feed);
  EXPECT_EQ(got.find(output)->dtype(), DType::kFloat32);  // graph outputs keep their dtype
  EXPECT_EQ(got.find(logits)->dtype(), DType::kFloat16);
  double range = 0.0;
  const Tensor& ref_logits = *want.find(logits);
  for (int64_t i = 0; i < ref_logits.numel(); ++i) range = std::max(range, std::abs(ref_logits.value_as_double(i)));
  const double logit_diff = testing::max_abs_diff(*got.find(logits), ref_logits);
  const double out_diff = testing::max_abs_diff(*got.find(output), *want.find(output));
  std::printf("[ measured ] PP-OCRv4 det fp16 vs fp32 (%s): logits max |diff| = %.3g (max |logit| %.3g), "
              "probabilities max |diff| = %.3g\n", runner.c_str(), logit_diff, range, out_diff);
  EXPECT_LE(logit_diff, kFp16LogitTolerance * range);
  EXPECT_LE(out_diff, 0.25 * kFp16LogitTolerance * range);
}

TEST(Fp16, OcrDetectorRunsWithinTolerance) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  PARITY_REQUIRE_FILE(path);
  model::Model model = model::load_model(path).value();
  std::string logits, output;
  for (const auto& n : model.proto().graph().node())
    if (n.op_type() == "Sigmoid") logits = n.input(0), output = n.output(0);
  auto g = graph_with_inferred_types(model);
  const auto report = convert_to_fp16(*g);
  EXPECT_GT(report.converted_nodes, 300u);
  EXPECT_GT(report.kept_nodes, 0u);  // Resize, and BatchNormalizations with variances beyond float16's range
  testing::TempDir tmp;
  model::save_model(g->to_model(), tmp / "fp16.onnx").throw_if_error();
  EXPECT_NO_THROW(check_saved_model(tmp / "fp16.onnx"));
  EXPECT_LT(std::filesystem::file_size(tmp / "fp16.onnx"), std::filesystem::file_size(path) * 6 / 10);
  expect_fp16_close("ref", path, tmp / "fp16.onnx", logits, output);
  PARITY_REQUIRE_RUNNER("ort");
  expect_fp16_close("ort", path, tmp / "fp16.onnx", logits, output);
}

TEST(Opset, ConvertsSmallModelAndKeepsExternalWeights) {
  testing::TempDir tmp;
  std::vector<float> w(1024, 1.0f);
  onnx::ModelProto proto = testing::add_relu_model(w);
  testing::externalize(proto, "W", tmp.path(), "w.bin");
  testing::write_model(proto, tmp / "m.onnx");
  model::Model model = model::load_model(tmp / "m.onnx").value();
  convert_opset(model, 17);
  EXPECT_EQ(model.opset(""), 17);
  EXPECT_TRUE(model.has_external_data());
  ASSERT_EQ(model.proto().graph().initializer_size(), 1);
  EXPECT_EQ(model.proto().graph().input_size(), 1);
  model::SaveOptions save;
  save.external_data = true;
  model::save_model(model, tmp / "out" / "m17.onnx", save).throw_if_error();
  EXPECT_TRUE(std::filesystem::exists(tmp / "out" / "m17.onnx.data"));
  EXPECT_NO_THROW(check_saved_model(tmp / "out" / "m17.onnx"));
}

TEST(Opset, OcrDetectorUpgradeMatchesOriginal) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  PARITY_REQUIRE_FILE(path);
  model::Model model = model::load_model(path).value();
  convert_opset(model, 13);
  EXPECT_EQ(model.opset(""), 13);
  testing::TempDir tmp;
  model::save_model(model, tmp / "m13.onnx").throw_if_error();
  EXPECT_NO_THROW(check_saved_model(tmp / "m13.onnx"));
  PARITY_REQUIRE_RUNNER("ort");
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 2)}};
  EXPECT_LE(testing::max_abs_diff(testing::run_with_ort(tmp / "m13.onnx", feed).begin()->second,
                                  testing::run_with_ort(path, feed).begin()->second),
            1e-6);
}

TEST(Opset, BadTargetsAreUserErrors) {
  model::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  try {
    convert_opset(model, 999);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace parity::model::transforms
