// End-to-end tests of `parity surgeon sanitize` and `parity surgeon insert`.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../onnx/test_models.h"
#include "onnx/model.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::filesystem::path ocr_det() {
  return testing::source_dir() / ".cache" / "npm" / "ocr-models" / "assets" / "ch_PP-OCRv4_det_infer.onnx";
}

TEST(SurgeonSanitize, FoldsTheOcrDetectorWithExternalWeights) {
  if (!std::filesystem::exists(ocr_det())) GTEST_SKIP() << "run scripts/setup.sh";
  testing::TempDir tmp;
  const auto out = tmp / "det_folded.onnx";
  const auto r = run_parity({"surgeon", "sanitize", ocr_det().string(), "--fold-constants", "--override-input-shapes",
                             "x:[1,3,64,96]", "--cleanup", "--toposort", "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Nodes: 672 -> ")) << r.output;
  EXPECT_TRUE(contains(r.output, "342 Constant nodes")) << r.output;
  onnx_io::Model folded = onnx_io::load_model(out).value();
  EXPECT_LE(folded.proto().graph().node_size(), 330);
  EXPECT_TRUE(folded.has_external_data());
  EXPECT_EQ(folded.proto().graph().input(0).type().tensor_type().shape().dim(2).dim_value(), 64);
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
}

TEST(SurgeonSanitize, UnknownOverrideInputIsAUserError) {
  testing::TempDir tmp;
  testing::write_model(testing::add_relu_model(), tmp / "m.onnx");
  const auto r = run_parity({"surgeon", "sanitize", (tmp / "m.onnx").string(), "--override-input-shapes", "xx:[4]",
                             "-o", (tmp / "o.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "'xx' is not a graph input; did you mean 'x'?")) << r.output;
}

TEST(SurgeonInsert, ReplacesNodesAndRejectsUnknownOps) {
  testing::TempDir tmp;
  testing::write_model(testing::add_relu_model(), tmp / "m.onnx");
  auto r = run_parity({"surgeon", "insert", (tmp / "m.onnx").string(), "--inputs", "sum", "--outputs", "y", "--op",
                       "LeakyRelu", "--attrs", "alpha=0.25", "--name", "leaky", "-o", (tmp / "o.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  onnx_io::Model out = onnx_io::load_model(tmp / "o.onnx").value();
  ASSERT_EQ(out.proto().graph().node_size(), 2);
  EXPECT_EQ(out.proto().graph().node(1).op_type(), "LeakyRelu");
  EXPECT_FLOAT_EQ(out.proto().graph().node(1).attribute(0).f(), 0.25f);

  r = run_parity({"surgeon", "insert", (tmp / "m.onnx").string(), "--inputs", "sum", "--outputs", "y", "--op",
                  "LeakyRelux", "-o", (tmp / "bad.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "'LeakyRelux' is not an ONNX operator")) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'LeakyRelu'")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "bad.onnx"));
}

}  // namespace
}  // namespace parity
