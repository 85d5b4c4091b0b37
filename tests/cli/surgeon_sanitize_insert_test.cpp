// End-to-end tests of `parity surgeon sanitize` and `parity surgeon insert`.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "../model/test_models.h"
#include "model/model.h"
#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::filesystem::path ocr_det() {
  return testing::source_dir() / ".cache" / "npm" / "ocr-models" / "assets" / "ch_PP-OCRv4_det_infer.onnx";
}

TEST(SurgeonSanitize, FoldsTheOcrDetectorWithExternalWeights) {
  PARITY_REQUIRE_FILE(ocr_det());
  testing::TempDir tmp;
  const auto out = tmp / "det_folded.onnx";
  const auto r = run_parity({"surgeon", "sanitize", ocr_det().string(), "--fold-constants", "--override-input-shapes",
                             "x:[1,3,64,96]", "--cleanup", "--toposort", "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Nodes: 672 -> ")) << r.output;
  EXPECT_TRUE(contains(r.output, "342 Constant nodes")) << r.output;
  model::Model folded = model::load_model(out).value();
  EXPECT_LE(folded.proto().graph().node_size(), 330);
  EXPECT_TRUE(folded.has_external_data());
  EXPECT_EQ(folded.proto().graph().input(0).type().tensor_type().shape().dim(2).dim_value(), 64);
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
}

size_t count_op(const onnx::ModelProto& m, const std::string& op) {
  return static_cast<size_t>(std::count_if(m.graph().node().begin(), m.graph().node().end(),
                                           [&](const onnx::NodeProto& n) { return n.op_type() == op; }));
}

// Two transformer blocks traced from PyTorch with dynamic batch and sequence axes
// (scripts/make_torch_fixtures.py): every reshape is a Shape -> Gather -> Unsqueeze -> Concat chain
// that parity's runtime can only fold once the input shape is static.
TEST(SurgeonSanitize, FoldsTransformerShapeChainsOnceShapesAreStatic) {
  const auto model = testing::source_dir() / "tests" / "data" / "torch" / "attention_blocks.onnx";
  testing::TempDir tmp;
  const model::Model original = model::load_model(model).value();
  ASSERT_EQ(original.proto().graph().node_size(), 177);
  ASSERT_EQ(count_op(original.proto(), "Shape"), 6u);

  // Dynamic shapes: only the Constant nodes go; every shape chain stays.
  const auto dynamic = tmp / "dynamic.onnx";
  auto r = run_parity({"surgeon", "sanitize", model.string(), "--fold-constants", "--cleanup", "-o", dynamic.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const model::Model kept = model::load_model(dynamic).value();
  EXPECT_EQ(count_op(kept.proto(), "Shape"), 6u);
  EXPECT_EQ(count_op(kept.proto(), "Concat"), 4u);

  // Static shapes: the chains fold (Shape, Unsqueeze, Concat, Cast and their arithmetic all go).
  const auto folded_path = tmp / "folded.onnx";
  r = run_parity({"surgeon", "sanitize", model.string(), "--override-input-shapes", "x:[2,8,32]", "--fold-constants",
                  "--cleanup", "-o", folded_path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "6 Shape/Size nodes")) << r.output;
  const model::Model folded = model::load_model(folded_path).value();
  EXPECT_LE(folded.proto().graph().node_size(), 95) << r.output;  // 177 -> 90 measured
  EXPECT_LT(folded.proto().graph().node_size(), kept.proto().graph().node_size() * 3 / 4);
  for (const char* op : {"Shape", "Unsqueeze", "Concat", "Cast", "Constant"})
    EXPECT_EQ(count_op(folded.proto(), op), 0u) << op;
  EXPECT_EQ(count_op(folded.proto(), "Reshape"), 4u);
  EXPECT_NO_THROW(onnx::checker::check_model(folded_path.string()));

  // The folded model computes what the original computes on generated inputs (within 1e-5).
  const std::string inputs = (tmp / "in.json").string(), outputs = (tmp / "out.json").string();
  r = run_parity({"run", model.string(), "--ref", "--input-shapes", "x:[2,8,32]", "--seed", "5", "--save-inputs", inputs,
                  "--save-outputs", outputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", folded_path.string(), "--ref", "--load-inputs", inputs, "--load-outputs", outputs, "--atol",
                  "1e-5", "--rtol", "1e-5"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "PASSED | All outputs matched")) << r.output;
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
  model::Model out = model::load_model(tmp / "o.onnx").value();
  ASSERT_EQ(out.proto().graph().node_size(), 2);
  EXPECT_EQ(out.proto().graph().node(1).op_type(), "LeakyRelu");
  EXPECT_FLOAT_EQ(out.proto().graph().node(1).attribute(0).f(), 0.25f);
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "o.onnx").string()));

  // An op the default domain lacks goes in as Polygraphy puts it, with a warning naming near matches.
  r = run_parity({"surgeon", "insert", (tmp / "m.onnx").string(), "--inputs", "sum", "--outputs", "y", "--op",
                  "LeakyRelux", "-o", (tmp / "custom.onnx").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[W] --op: 'LeakyRelux' is not an ONNX operator")) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'LeakyRelu'")) << r.output;
  EXPECT_EQ(model::load_model(tmp / "custom.onnx").value().proto().graph().node(1).op_type(), "LeakyRelux");
}

// --verify: the folded detector runs like the original on seeded inputs.
TEST(SurgeonSanitize, VerifyRunsTheResultAgainstTheOriginal) {
  PARITY_REQUIRE_FILE(ocr_det().string());
  testing::TempDir tmp;
  const auto r = testing::run_parity({"surgeon", "sanitize", ocr_det().string(), "--fold-constants",
                                      "--override-input-shapes", "x:[1,3,64,64]", "-o", (tmp / "s.onnx").string(),
                                      "--verify", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Verify | 1 output(s) equal to the original's on 2 seeded input(s)"), std::string::npos)
      << r.output;
  const auto bad = testing::run_parity({"surgeon", "sanitize", ocr_det().string(), "-o", (tmp / "t.onnx").string(),
                                        "--verify", "0"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
}

// insert --verify: an equivalent node keeps the outputs; a different op is caught.
TEST(SurgeonInsert, VerifyRunsTheResultAgainstTheOriginal) {
  const std::string demo = (testing::source_dir() / "models" / "demo.onnx").string();
  testing::TempDir tmp;
  const auto same = testing::run_parity({"surgeon", "insert", demo, "--inputs", "conv2", "--outputs", "relu2", "--op",
                                         "Relu", "-o", (tmp / "same.onnx").string(), "--verify", "2"});
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(contains(same.output, "Verify | 1 output(s) equal to the original's on 2 seeded input(s)")) << same.output;
  const auto other = testing::run_parity({"surgeon", "insert", demo, "--inputs", "conv2", "--outputs", "relu2", "--op",
                                          "Sigmoid", "-o", (tmp / "other.onnx").string(), "--verify"});
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_TRUE(contains(other.output, "Verify | the edited model differs from the original: output 'probs', iteration 0"))
      << other.output;
  const auto bad = testing::run_parity({"surgeon", "insert", demo, "--inputs", "conv2", "--outputs", "relu2", "--op",
                                        "Relu", "-o", (tmp / "bad.onnx").string(), "--verify", "1", "--verify-atol", "-1"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--verify-atol must not be negative")) << bad.output;
}

// test_surgeon.py's test_force_fallback_shape_inference_will_override_model_shapes (sanitize and
// extract), as its tests type them: the shapes the model ran with replace its dynamic ones.
TEST(SurgeonSanitize, ForceFallbackShapeInferenceFixesTheShapesItRanWith) {
  testing::TempDir tmp;
  testing::ModelBuilder b(13);
  b.input("X", DType::kFloat32, {1, 2, -1, -1}).output("Y", DType::kFloat32, {1, 2, -1, -1});
  b.node("Identity", {"X"}, {"Y"}, "onnx_graphsurgeon_node_1");
  const std::string model = (tmp / "dynamic_identity.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), model).throw_if_error();
  auto dims = [](const onnx::ValueInfoProto& v) {
    std::vector<int64_t> out;
    for (const auto& d : v.type().tensor_type().shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
    return out;
  };
  const std::vector<std::vector<std::string>> commands = {
      {"surgeon", "sanitize", model, "-o", (tmp / "sanitized.onnx").string(), "--force-fallback-shape-inference"},
      {"surgeon", "extract", model, "-o", (tmp / "extracted.onnx").string(), "--outputs", "Y:auto",
       "--force-fallback-shape-inference"},
  };
  for (const auto& command : commands) {
    SCOPED_TRACE(command[1]);
    const auto r = run_parity(command);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const model::Model out = model::load_model(command[4]).value();
    EXPECT_EQ(dims(out.proto().graph().input(0)), (std::vector<int64_t>{1, 2, 1, 1}));
    EXPECT_EQ(dims(out.proto().graph().output(0)), (std::vector<int64_t>{1, 2, 1, 1}));
    // onnx_model_sanity_check: the model runs.
    EXPECT_EQ(run_parity({"run", command[4], "--model-type=onnx", "--ref"}).exit_code, 0);
  }
}

}  // namespace
}  // namespace parity
