// End-to-end `parity check lint`: Polygraphy-shaped JSON report, checker errors attributed to
// nodes, parity's own lints, exit code 1 only when there are errors.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct LintRun {
  CommandResult result;
  json report;
};

LintRun lint(const fs::path& model, const TempDir& dir) {
  LintRun run;
  const fs::path out = dir / "report.json";
  fs::remove(out);
  run.result = run_parity({"check", "lint", model.string(), "-o", out.string()});
  if (fs::exists(out)) run.report = json::parse(read_file(out));
  return run;
}

std::vector<json> entries_matching(const json& report, const std::string& level, const std::string& text) {
  std::vector<json> out;
  for (const auto& e : report["lint_entries"])
    if (e["level"] == level && e["message"].get<std::string>().find(text) != std::string::npos) out.push_back(e);
  return out;
}

bool has_node(const json& list, const std::string& name) {
  for (const auto& n : list)
    if (n == name) return true;
  return false;
}

TEST(CheckLint, CleanModelPasses) {
  TempDir dir;
  write_model(add_relu_model(), dir / "m.onnx");
  auto run = lint(dir / "m.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 0) << run.result.output;
  ASSERT_TRUE(run.report.contains("summary")) << run.result.output;
  EXPECT_TRUE(has_node(run.report["summary"]["passing"], "add0"));
  EXPECT_TRUE(has_node(run.report["summary"]["passing"], "relu0"));
  EXPECT_TRUE(run.report["summary"]["failing"].empty());
  EXPECT_TRUE(entries_matching(run.report, "exception", "").empty()) << run.report.dump(2);
}

// ONNX Runtime lints the model node by node, in its own words with its formatting pruned as
// Polygraphy prunes it; a node whose input an earlier failure left uncomputed is not linted.
TEST(CheckLint, OnnxRuntimeNamesEachNodeThatFails) {
  TempDir dir;
  auto run = lint(source_dir() / "tests" / "data" / "polygraphy_cli" / "incompatible_shapes.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.output;
  ASSERT_TRUE(run.report.contains("summary")) << run.result.output;
  const auto errors = entries_matching(run.report, "exception", "Incompatible dimensions");
  ASSERT_EQ(errors.size(), 1u) << run.report.dump(2);
  EXPECT_EQ(errors[0]["source"], "onnxruntime");
  EXPECT_EQ(errors[0]["message"], " Incompatible dimensions") << "ORT's 'Node (..) Op (..) [ShapeInferenceError]' is pruned";
  EXPECT_EQ(errors[0]["nodes"], json::array({"bad_add"}));
  EXPECT_NE(run.result.output.find("LINT | Nodes: bad_add |  Incompatible dimensions"), std::string::npos)
      << run.result.output;
}

// Without ONNX Runtime, lint still runs every other check and says in one warning what it skipped.
TEST(CheckLint, WithoutOnnxRuntimeTheOtherChecksStand) {
  TempDir dir;
  const fs::path out = dir / "report.json";
  const CommandResult r = run_shell("PARITY_ORT_LIBRARY=" + (dir / "no-such-libonnxruntime.so").string() + " " +
                                    std::string(PARITY_BINARY) + " check lint " +
                                    (source_dir() / "tests" / "data" / "polygraphy_cli" / "incompatible_shapes.onnx").string() + " -o " +
                                    out.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  ASSERT_TRUE(fs::exists(out)) << r.output;
  const json report = json::parse(read_file(out));
  const auto skipped = entries_matching(report, "warning", "ONNX Runtime checks skipped: cannot load ONNX Runtime");
  EXPECT_EQ(skipped.size(), 1u) << report.dump(2);
  const auto errors = entries_matching(report, "exception", "Incompatible dimensions");
  ASSERT_EQ(errors.size(), 1u) << report.dump(2);
  EXPECT_EQ(errors[0]["source"], "onnx_shape_inference");
  EXPECT_EQ(errors[0]["nodes"], json::array({"bad_add"}));
}

TEST(CheckLint, ParityLintsFindUnusedDuplicateAndRandomParts) {
  TempDir dir;
  onnx::ModelProto m = add_relu_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "unused_input", onnx::TensorProto::FLOAT, {1});
  auto* init = g->add_initializer();
  *init = g->initializer(0);
  init->set_name("unused_weights");
  add_node(g, "Neg", {"x"}, {"dead_out"}, "dead_node");
  auto* random = add_node(g, "RandomNormal", {}, {"noise"}, "noise_node");
  auto* shape_attr = random->add_attribute();
  shape_attr->set_name("shape");
  shape_attr->set_type(onnx::AttributeProto::INTS);
  shape_attr->add_ints(4);
  add_node(g, "Add", {"y", "noise"}, {"z"}, "relu0");  // second node named relu0
  g->add_output()->set_name("z");                        // an output without type or shape
  write_model(m, dir / "m.onnx");

  auto run = lint(dir / "m.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.output;
  const json& r = run.report;
  EXPECT_EQ(entries_matching(r, "warning", "Input: 'unused_input' does not affect outputs").size(), 1u) << r.dump(2);
  EXPECT_EQ(entries_matching(r, "warning", "Initializer: 'unused_weights' does not affect outputs").size(), 1u);
  auto dead = entries_matching(r, "warning", "Does not affect outputs");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]["nodes"], json::array({"dead_node"}));
  auto dup = entries_matching(r, "exception", "Duplicate node name: 'relu0' for nodes with topological IDs: [");
  ASSERT_EQ(dup.size(), 1u) << r.dump(2);
  EXPECT_EQ(dup[0]["source"], "onnx_graphsurgeon");
  EXPECT_EQ(dead[0]["source"], "onnx_graphsurgeon");
  EXPECT_EQ(entries_matching(r, "warning", "RandomNormal is non-deterministic").size(), 1u);
  EXPECT_EQ(entries_matching(r, "warning", "Graph output 'z' has no type or shape information").size(), 1u);
  EXPECT_TRUE(has_node(r["summary"]["failing"], "relu0"));
  EXPECT_TRUE(has_node(r["summary"]["passing"], "add0"));
  EXPECT_TRUE(run.result.output.find("[E] LINT | Nodes: relu0 | Duplicate node name") != std::string::npos)
      << run.result.output;
}

TEST(CheckLint, CheckerErrorsAreAttributedToNodes) {
  TempDir dir;
  onnx::ModelProto m = add_relu_model();
  m.mutable_graph()->mutable_node(1)->add_input("x");  // Relu takes one input
  write_model(m, dir / "m.onnx");
  auto run = lint(dir / "m.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.output;
  bool found = false;
  for (const auto& e : run.report["lint_entries"])
    if (e["source"] == "onnx_checker" && e["level"] == "exception" && e.contains("nodes") &&
        e["nodes"] == json::array({"relu0"}))
      found = true;
  EXPECT_TRUE(found) << run.report.dump(2);
  EXPECT_EQ(run.report["summary"]["failing"], json::array({"relu0"}));
}

TEST(CheckLint, CycleAndDuplicateTensorsAreErrors) {
  TempDir dir;
  write_model(cyclic_model(), dir / "cycle.onnx");
  auto run = lint(dir / "cycle.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 1);
  auto cycle = entries_matching(run.report, "exception", "has a cycle");
  ASSERT_EQ(cycle.size(), 1u) << run.report.dump(2);
  EXPECT_EQ(cycle[0]["nodes"].size(), 3u);

  onnx::ModelProto m = add_relu_model();
  add_node(m.mutable_graph(), "Neg", {"x"}, {"sum"}, "second_producer");
  write_model(m, dir / "dup.onnx");
  auto dup = lint(dir / "dup.onnx", dir);
  EXPECT_EQ(dup.result.exit_code, 1);
  auto e = entries_matching(dup.report, "exception", "Duplicate tensor name: 'sum' is defined 2 times");
  ASSERT_EQ(e.size(), 1u) << dup.report.dump(2);
  EXPECT_EQ(e[0]["nodes"], json::array({"add0", "second_producer"}));
}

TEST(CheckLint, UnloadableModelIsOneLoaderError) {
  TempDir dir;
  const std::string bytes = add_relu_model().SerializeAsString();
  write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() / 3));
  auto run = lint(dir / "cut.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.output;
  ASSERT_EQ(run.report["lint_entries"].size(), 1u);
  EXPECT_EQ(run.report["lint_entries"][0]["source"], "onnx_loader");
  EXPECT_EQ(run.report["lint_entries"][0]["level"], "exception");
  EXPECT_TRUE(run.result.last_line().find("FAILED") != std::string::npos);
}

TEST(CheckLint, ReportsOpsWithoutKernels) {
  TempDir dir;
  onnx::ModelProto m = add_relu_model();
  auto* custom = add_node(m.mutable_graph(), "FancyOp", {"y"}, {"fancy"}, "fancy0");
  custom->set_domain("com.example");
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  auto* out = m.mutable_graph()->add_output();
  add_tensor_info(out, "fancy", onnx::TensorProto::FLOAT, {4});
  write_model(m, dir / "m.onnx");
  auto run = lint(dir / "m.onnx", dir);
  EXPECT_EQ(run.result.exit_code, 0) << run.result.output;
  auto missing = entries_matching(run.report, "warning", "no kernel for com.example.FancyOp at opset 1");
  ASSERT_EQ(missing.size(), 1u) << run.report.dump(2);
  EXPECT_EQ(missing[0]["source"], "parity_runtime");
  EXPECT_EQ(missing[0]["nodes"], json::array({"fancy0"}));
}

}  // namespace
}  // namespace parity::testing
