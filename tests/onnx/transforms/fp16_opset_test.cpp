#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../test_models.h"
#include "onnx/transforms/extract.h"
#include "onnx/transforms/fp16.h"
#include "onnx/transforms/opset.h"
#include "transform_test_util.h"

namespace parity::transforms {
namespace {

int count_ops(const onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph().node()) n += node.op_type() == op;
  return n;
}

TEST(Fp16, SmallModelKeepsIoTypesWithEdgeCasts) {
  onnx_io::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  auto g = graph_with_inferred_types(model);
  const auto report = convert_to_fp16(*g);
  EXPECT_EQ(report.converted_nodes, 2u);
  EXPECT_EQ(report.constants_converted, 1u);
  EXPECT_EQ(report.casts_added, 2u);
  onnx_io::Model out = g->to_model();
  EXPECT_NO_THROW(onnx::checker::check_model(out.proto()));
  const auto& graph = out.proto().graph();
  EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.initializer(0).data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(count_ops(out.proto(), "Cast"), 2);
}

TEST(Fp16, IoBecomesFp16WhenAsked) {
  onnx_io::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  auto g = graph_with_inferred_types(model);
  Fp16Options options;
  options.keep_io_types = false;
  const auto report = convert_to_fp16(*g, options);
  EXPECT_EQ(report.casts_added, 0u);
  onnx_io::Model out = g->to_model();
  EXPECT_EQ(out.proto().graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT16);
  EXPECT_NO_THROW(onnx::checker::check_model(out.proto()));
}

// Tolerance: float16 keeps 11 significant bits (relative step 2^-11 ~ 4.9e-4 per rounding). The
// detector's ~60 convolutions accumulate those roundings, and its sigmoid output lies in [0, 1];
// an absolute 2e-2 bounds what the measured runs show with margin while still catching a wrong
// conversion (a broken cast or a float32-only op fed float16 moves outputs by ~0.1-1).
constexpr double kFp16Tolerance = 2e-2;

TEST(Fp16, OcrDetectorRunsInOrtWithinTolerance) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing (run scripts/setup.sh)";
  onnx_io::Model model = onnx_io::load_model(path).value();
  auto g = graph_with_inferred_types(model);
  const auto report = convert_to_fp16(*g);
  EXPECT_GT(report.converted_nodes, 300u);
  EXPECT_GT(report.kept_nodes, 0u);  // Resize stays float32
  testing::TempDir tmp;
  onnx_io::save_model(g->to_model(), tmp / "fp16.onnx").throw_if_error();
  EXPECT_NO_THROW(check_saved_model(tmp / "fp16.onnx"));
  EXPECT_LT(std::filesystem::file_size(tmp / "fp16.onnx"), std::filesystem::file_size(path) * 6 / 10);
  if (!testing::ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 5)}};
  const TensorMap want = testing::run_with_ort(path, feed);
  const TensorMap got = testing::run_with_ort(tmp / "fp16.onnx", feed);
  const Tensor& y = got.begin()->second;
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  const double diff = testing::max_abs_diff(y, want.begin()->second);
  std::printf("[ measured ] PP-OCRv4 det fp16 vs fp32 (ORT): max |diff| = %.3g\n", diff);
  EXPECT_LE(diff, kFp16Tolerance);
}

TEST(Opset, ConvertsSmallModelAndKeepsExternalWeights) {
  testing::TempDir tmp;
  std::vector<float> w(1024, 1.0f);
  onnx::ModelProto proto = testing::add_relu_model(w);
  testing::externalize(proto, "W", tmp.path(), "w.bin");
  testing::write_model(proto, tmp / "m.onnx");
  onnx_io::Model model = onnx_io::load_model(tmp / "m.onnx").value();
  convert_opset(model, 17);
  EXPECT_EQ(model.opset(""), 17);
  EXPECT_TRUE(model.has_external_data());
  ASSERT_EQ(model.proto().graph().initializer_size(), 1);
  EXPECT_EQ(model.proto().graph().input_size(), 1);
  onnx_io::SaveOptions save;
  save.external_data = true;
  onnx_io::save_model(model, tmp / "out" / "m17.onnx", save).throw_if_error();
  EXPECT_TRUE(std::filesystem::exists(tmp / "out" / "m17.onnx.data"));
  EXPECT_NO_THROW(check_saved_model(tmp / "out" / "m17.onnx"));
}

TEST(Opset, OcrDetectorUpgradeMatchesOriginal) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing (run scripts/setup.sh)";
  onnx_io::Model model = onnx_io::load_model(path).value();
  convert_opset(model, 13);
  EXPECT_EQ(model.opset(""), 13);
  testing::TempDir tmp;
  onnx_io::save_model(model, tmp / "m13.onnx").throw_if_error();
  EXPECT_NO_THROW(check_saved_model(tmp / "m13.onnx"));
  if (!testing::ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 2)}};
  EXPECT_LE(testing::max_abs_diff(testing::run_with_ort(tmp / "m13.onnx", feed).begin()->second,
                                  testing::run_with_ort(path, feed).begin()->second),
            1e-6);
}

TEST(Opset, BadTargetsAreUserErrors) {
  onnx_io::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model()));
  try {
    convert_opset(model, 999);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace parity::transforms
