// End-to-end tests of `parity surgeon weight-strip` and `surgeon weight-reconstruct`.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"
#include "model/external_data.h"
#include "model/model.h"
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

  auto r = run_parity({"surgeon", "weight-strip", (tmp / "m.onnx").string(), "-o", (tmp / "s.onnx").string(),
                       "--strip-size-threshold", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Stripped 1 tensors (16384 bytes)"), std::string::npos) << r.output;
  model::Model stripped = model::load_model(tmp / "s.onnx").value();
  const auto& w_stripped = stripped.proto().graph().initializer(0);
  EXPECT_EQ(w_stripped.doc_string(), "TRT_WEIGHTLESS/");
  EXPECT_EQ(stripped.proto().doc_string(), "TRT_WEIGHTLESS");
  EXPECT_TRUE(model::is_weightless(w_stripped));
  EXPECT_LT(std::filesystem::file_size(tmp / "s.onnx"), 1024u);
  // The weightless model passes libonnx's checker: stripped tensors reference an empty side file.
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "s.onnx").string()));
  ASSERT_TRUE(std::filesystem::exists(tmp / "s.onnx.weightless"));
  EXPECT_EQ(std::filesystem::file_size(tmp / "s.onnx.weightless"), 0u);
  // onnx.load (Polygraphy's loader) reads it back as Polygraphy's own form: empty raw_data, marker.
  if (testing::run_shell("/usr/bin/python3 -c 'import onnx' 2>/dev/null").exit_code == 0) {
    auto py = testing::run_shell("/usr/bin/python3 -c \"import onnx; t = onnx.load('" + (tmp / "s.onnx").string() +
                                 "').graph.initializer[0]; print(repr(t.raw_data), t.doc_string, list(t.dims), "
                                 "t.data_location)\"");
    EXPECT_EQ(py.exit_code, 0) << py.output;
    EXPECT_NE(py.output.find("b'' TRT_WEIGHTLESS/ [4096] 0"), std::string::npos) << py.output;
  }

  r = run_parity({"surgeon", "weight-reconstruct", (tmp / "s.onnx").string(), "-o", (tmp / "r.onnx").string(),
                  "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  model::Model rebuilt = model::load_model(tmp / "r.onnx").value();
  EXPECT_TRUE(rebuilt.has_external_data());
  EXPECT_EQ(std::filesystem::file_size(tmp / "r.onnx.data"), 16384u);
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "r.onnx").string()));
}

// A model stripped by Polygraphy itself (empty inline raw_data) reconstructs too.
TEST(SurgeonWeights, ReconstructsPolygraphysInlineForm) {
  testing::TempDir tmp;
  onnx::ModelProto m = testing::add_relu_model(std::vector<float>(300, 0.25f));
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_raw_data(std::string());
  w->set_doc_string("TRT_WEIGHTLESS/");
  m.set_doc_string("TRT_WEIGHTLESS");
  testing::write_model(m, tmp / "poly.onnx");
  auto r = run_parity({"surgeon", "weight-reconstruct", (tmp / "poly.onnx").string(), "-o", (tmp / "r.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Reconstructed 1 tensors (1200 bytes)"), std::string::npos) << r.output;
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "r.onnx").string()));
  // A weightless model edited by another command keeps its side file valid in the new folder.
  std::filesystem::create_directory(tmp / "sub");
  ASSERT_EQ(run_parity({"surgeon", "weight-strip", (tmp / "r.onnx").string(), "-o", (tmp / "s.onnx").string(),
                                    "--strip-size-threshold", "1K"}).exit_code, 0);
  r = run_parity({"convert", (tmp / "s.onnx").string(), "-o", (tmp / "sub" / "c.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tmp / "sub" / "s.onnx.weightless"));
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "sub" / "c.onnx").string()));
}

TEST(SurgeonWeights, MissingModelIsAUserError) {
  testing::TempDir tmp;
  const auto r = run_parity({"surgeon", "weight-strip", (tmp / "nope.onnx").string(), "-o", (tmp / "s.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity
