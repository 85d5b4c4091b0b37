// QDQ export on the command line: `convert M.onnx --int8 -o M.qdq.onnx` writes a model ONNX Runtime
// runs and parity's reference runtime matches; `convert M.qdq.onnx --int8 -o X.plan` takes the
// model's scales without calibrating; a QDQ model with a bad scale is one line and exit 1.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "model/model.h"
#include "model/proto_convert.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

std::string classifier() {
  return (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx").string();
}

TEST(QdqCli, ExportedModelRunsOnOnnxRuntimeAndMatchesTheReferenceRuntime) {
  testing::TempDir tmp;
  const std::string qdq = (tmp / "cls.qdq.onnx").string();
  auto r = run_parity({"convert", classifier(), "--int8", "--input-shapes", "x:[1,3,48,192]", "-o", qdq});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("QDQ: 54 layer(s) quantized"), std::string::npos) << r.output;
  r = run_parity({"run", qdq, "--ref", "--ort", "--input-shapes", "x:[1,3,48,192]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED | All outputs matched"), std::string::npos) << r.output;

  const std::string plan = (tmp / "cls.plan").string();
  r = run_parity({"convert", qdq, "--int8", "--input-shapes", "x:[1,3,48,192]", "-o", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from the model's QuantizeLinear nodes"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("calibrated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("54 int8"), std::string::npos) << r.output;
  // The plan holds the int8 weights once, with their scales: inspect counts them by precision.
  r = run_parity({"inspect", "model", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Weights by precision: fp32 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", int8 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x the source model's "), std::string::npos) << r.output;
}

TEST(QdqCli, ANegativeScaleIsOneLineAndExitOne) {
  testing::TempDir tmp;
  const std::string qdq = (tmp / "cls.qdq.onnx").string();
  ASSERT_EQ(run_parity({"convert", classifier(), "--int8", "--input-shapes", "x:[1,3,48,192]", "-o", qdq}).exit_code, 0);
  model::Model model = model::load_model(qdq).value();
  auto& g = *model.proto().mutable_graph();
  std::string node_name, scale_name;
  for (const auto& n : g.node())
    if (n.op_type() == "QuantizeLinear" && node_name.empty()) {
      node_name = n.name();
      scale_name = n.input(1);
    }
  for (auto& t : *g.mutable_initializer())
    if (t.name() == scale_name) model::tensor_to_proto(Tensor::scalar<float>(-1.0f), &t, scale_name);
  const std::string broken = (tmp / "broken.onnx").string();
  ASSERT_TRUE(model::save_model(model, broken).ok());
  const std::string plan = (tmp / "broken.plan").string();
  const auto r = run_parity({"convert", broken, "--int8", "--input-shapes", "x:[1,3,48,192]", "-o", plan});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string line = "[E] QDQ model 'broken.onnx': QuantizeLinear node '" + node_name + "' has scale -1 (input '" +
                           scale_name + "'); scales must be positive finite numbers\n";
  EXPECT_NE(r.output.find(line), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(plan));
}

TEST(QdqCli, ACalibrationCacheOfAnotherModelIsOneLineNamingBothAndExitOne) {
  testing::TempDir tmp;
  const std::string cache = (tmp / "cls.cache").string();
  const std::string demo = (testing::source_dir() / "models/demo.onnx").string();
  ASSERT_EQ(run_parity({"convert", classifier(), "--int8", "--input-shapes", "x:[1,3,48,192]", "--calibration-cache",
                        cache, "-o", (tmp / "cls.plan").string()})
                .exit_code,
            0);
  const std::string plan = (tmp / "demo.plan").string();
  const auto r = run_parity({"convert", demo, "--int8", "--calibration-cache", cache, "-o", plan});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[E] calibration cache '" + cache + "' was made for model 'ch_ppocr_mobile_v2.0_cls_infer.onnx'"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not for 'demo.onnx'"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(plan));
}

}  // namespace
}  // namespace parity
