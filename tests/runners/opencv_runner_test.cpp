// OpenCV DNN runner (libparity_runner_opencv module) on ONNX backend test cases.
#include <gtest/gtest.h>

#include "peer_runner_test_util.h"
#include "runners/peer_module.h"
#include "runners/registry.h"

namespace parity::testing {
namespace {

#define REQUIRE_OPENCV() PARITY_REQUIRE_RUNNER("opencv")

std::unique_ptr<runners::Runner> make_opencv(const std::string& model, const runners::RunnerOptions& options = {}) {
  return runners::RunnerRegistry::instance().find("opencv")->create({.model_path = model, .options = options});
}

void expect_case_passes(const std::string& name) {
  SCOPED_TRACE(name);
  auto runner = make_opencv((node_case(name) / "model.onnx").string());
  runners::ActiveRunner active(*runner);
  const TensorMap out = active->infer(load_case_inputs(node_case(name)));
  const auto expected = load_case_outputs(node_case(name));
  ASSERT_EQ(out.size(), expected.size());
  size_t i = 0;
  for (const auto& [output_name, tensor] : out) EXPECT_TRUE(tensors_close(tensor, expected[i++], 1e-4, 1e-4)) << output_name;
}

TEST(OpenCvRunner, RunsSupportedModels) {
  REQUIRE_OPENCV();
  expect_case_passes("test_add");
  expect_case_passes("test_conv_with_strides_padding");
  expect_case_passes("test_relu");
  expect_case_passes("test_split_equal_parts_1d");  // several outputs, 1-D shapes restored
}

TEST(OpenCvRunner, InputMetadataComesFromTheModel) {
  REQUIRE_OPENCV();
  auto runner = make_opencv((node_case("test_conv_with_strides_padding") / "model.onnx").string());
  runners::ActiveRunner active(*runner);
  const TensorMetadata meta = active->input_metadata();
  // The weight input "W" is a graph input too in this test case (no initializer).
  ASSERT_TRUE(meta.contains("x"));
  EXPECT_EQ(meta.at("x").dtype, DType::kFloat32);
  EXPECT_EQ(meta.at("x").shape, (DimShape{1, 1, 7, 5}));
}

TEST(OpenCvRunner, FirstUnsupportedNodeIsNamed) {
  REQUIRE_OPENCV();
  auto runner = make_opencv((node_case("test_top_k") / "model.onnx").string());
  try {
    runner->activate();
    FAIL() << "OpenCV 4.6 has no TopK";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("first unsupported node is node #0"), std::string::npos) << what;
    EXPECT_NE(what.find("op TopK"), std::string::npos) << what;
    EXPECT_NE(what.find("output 'values'"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
  }
}

TEST(OpenCvRunner, DropoutMaskIsRefusedNotACrash) {
  REQUIRE_OPENCV();
  auto runner = make_opencv((node_case("test_dropout_default_mask") / "model.onnx").string());
  try {
    runner->activate();
    FAIL() << "OpenCV would read past Dropout's single output";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("only the first output of Dropout"), std::string::npos) << e.what();
  }
}

TEST(OpenCvRunner, MissingModuleIsUnavailableNotFatal) {
  // A folder without the module stands for "OpenCV's libraries are not installed".
  TempDir empty;
  auto r = run_shell("PARITY_RUNNER_MODULE_DIR=" + empty.path().string() + " " + PARITY_BINARY + " runners");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unavailable: " + (empty.path() / "libparity_runner_opencv.so").string()),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ort "), std::string::npos) << r.output;  // the other runners are still listed
}

}  // namespace
}  // namespace parity::testing
