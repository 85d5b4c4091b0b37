// End-to-end tests of `parity surgeon weight-strip` and `surgeon weight-reconstruct`.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../onnx/test_models.h"
#include "onnx/model.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

TEST(SurgeonWeights, StripThenReconstructKeepsWeightsExternal) {
  testing::TempDir tmp;
  std::vector<float> w(4096, 0.5f);
  onnx::ModelProto m = testing::add_relu_model(w);
  testing::externalize(m, "W", tmp.path(), "w.bin");
  testing::write_model(m, tmp / "m.onnx");

  auto r = run_parity({"surgeon", "weight-strip", (tmp / "m.onnx").string(), "-o", (tmp / "s.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Stripped 1 tensors (16384 bytes)"), std::string::npos) << r.output;
  onnx_io::Model stripped = onnx_io::load_model(tmp / "s.onnx").value();
  EXPECT_FALSE(stripped.has_external_data());
  EXPECT_EQ(stripped.proto().graph().initializer(0).doc_string(), "TRT_WEIGHTLESS");
  EXPECT_LT(std::filesystem::file_size(tmp / "s.onnx"), 1024u);

  r = run_parity({"surgeon", "weight-reconstruct", (tmp / "s.onnx").string(), "-o", (tmp / "r.onnx").string(),
                  "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  onnx_io::Model rebuilt = onnx_io::load_model(tmp / "r.onnx").value();
  EXPECT_TRUE(rebuilt.has_external_data());
  EXPECT_EQ(std::filesystem::file_size(tmp / "r.onnx.data"), 16384u);
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "r.onnx").string()));
}

TEST(SurgeonWeights, MissingModelIsAUserError) {
  testing::TempDir tmp;
  const auto r = run_parity({"surgeon", "weight-strip", (tmp / "nope.onnx").string(), "-o", (tmp / "s.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity
