// End-to-end tests of `parity convert`.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"
#include "model/model.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

std::filesystem::path write_external_model(const testing::TempDir& tmp) {
  std::vector<float> w(2048, 0.5f);
  onnx::ModelProto m = testing::add_relu_model(w);
  testing::externalize(m, "W", tmp.path(), "w.bin");
  testing::write_model(m, tmp / "m.onnx");
  return tmp / "m.onnx";
}

TEST(Convert, Fp16AndOpsetKeepWeightsExternal) {
  testing::TempDir tmp;
  const auto model = write_external_model(tmp);
  const auto out = tmp / "o" / "m16.onnx";
  const auto r = run_parity({"convert", model.string(), "-o", out.string(), "--fp-to-fp16", "--opset", "17",
                             "--external-data", "--external-data-size-threshold", "1K"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.last_line().find("PASSED"), std::string::npos) << r.output;
  model::Model converted = model::load_model(out).value();
  EXPECT_EQ(converted.opset(""), 17);
  EXPECT_TRUE(converted.has_external_data());
  EXPECT_EQ(std::filesystem::file_size(tmp / "o" / "m16.onnx.data"), 4096u);  // 2048 halves
  const auto& g = converted.proto().graph();
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(g.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
}

TEST(Convert, InlinesWeightsUnlessAsked) {
  testing::TempDir tmp;
  const auto model = write_external_model(tmp);
  const auto r = run_parity({"convert", model.string(), "-o", (tmp / "inline.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(model::load_model(tmp / "inline.onnx").value().has_external_data());
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "inline.onnx").string()));
}

TEST(Convert, BadOpsetAndOverwriteAreUserErrors) {
  testing::TempDir tmp;
  const auto model = write_external_model(tmp);
  auto r = run_parity({"convert", model.string(), "-o", (tmp / "x.onnx").string(), "--opset", "999"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--opset 999"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "x.onnx"));
  r = run_parity({"convert", model.string(), "-o", model.string(), "--fp-to-fp16"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("pass --force"), std::string::npos) << r.output;
}

// --verify: an opset change keeps the outputs exactly; float16 needs the looser tolerances it asks for.
TEST(Convert, VerifyRunsTheResultAgainstTheOriginal) {
  const std::string demo = (testing::source_dir() / "models" / "demo.onnx").string();
  testing::TempDir tmp;
  auto has = [](const testing::CommandResult& r, const std::string& text) {
    return r.output.find(text) != std::string::npos;
  };
  const auto opset = testing::run_parity({"convert", demo, "--opset", "17", "-o", (tmp / "a.onnx").string(), "--verify", "3"});
  ASSERT_EQ(opset.exit_code, 0) << opset.output;
  EXPECT_TRUE(has(opset, "Verify | 1 output(s) equal to the original's on 3 seeded input(s) (max abs err 0)")) << opset.output;
  // demo's float16 probabilities differ by ~3e-4 from float32's.
  const auto strict = testing::run_parity({"convert", demo, "--fp-to-fp16", "-o", (tmp / "b.onnx").string(), "--verify"});
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_TRUE(has(strict, "Verify | the converted model differs from the original: output 'probs'")) << strict.output;
  const auto loose = testing::run_parity({"convert", demo, "--fp-to-fp16", "-o", (tmp / "c.onnx").string(), "--verify",
                                          "--verify-atol", "1e-2", "--verify-rtol", "1e-2"});
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  const auto plan = testing::run_parity({"convert", demo, "-o", (tmp / "d.plan").string(), "--verify"});
  EXPECT_EQ(plan.exit_code, 1) << plan.output;
  EXPECT_TRUE(has(plan, "--verify checks converted ONNX models")) << plan.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "d.plan"));
}

}  // namespace
}  // namespace parity
