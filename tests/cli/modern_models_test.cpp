// End-to-end: the models torch 2.x's default exporter writes today (tests/data/modern_models: BERT
// with Gelu-20, GPT-2; ONNX IR 10, opset 20) run on parity's own runtime and match the outputs
// the real Polygraphy saved with ONNX Runtime, at default tolerances, in float32 and in the fp64
// oracle; and parity's runtime matches the ort runner on fresh inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <fstream>

#include "runners/registry.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kModels = {"bert_tiny_dynamo", "gpt2_tiny_dynamo"};

fs::path modern_dir() { return modern_models_dir(); }

bool ort_available() {
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  return ort && (!ort->availability || ort->availability({}).is_ok());
}

std::vector<std::string> polygraphy_files(const std::string& model) {
  const fs::path base = modern_dir() / model;
  return {"--load-inputs", base.string() + ".polygraphy_inputs.json", "--load-outputs",
          base.string() + ".polygraphy_outputs.json"};
}

void expect_passed(const std::vector<std::string>& args) {
  const CommandResult r = run_parity(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.last_line().rfind("[I] PASSED | ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("Passed: 2/2 iterations"), std::string::npos) << r.output;
}

TEST(ModernModels, RefMatchesPolygraphyOnnxRuntimeOutputs) {
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const fs::path path = modern_dir() / (model + ".onnx");
    ASSERT_TRUE(fs::exists(path)) << path;
    std::vector<std::string> args = {"run", path.string(), "--ref"};
    const auto files = polygraphy_files(model);
    args.insert(args.end(), files.begin(), files.end());
    expect_passed(args);
    args.insert(args.end(), {"--precision", "fp64"});
    expect_passed(args);
  }
}

TEST(ModernModels, RefMatchesOrtRunner) {
  if (!ort_available()) {
    if (std::getenv("CI")) FAIL() << "ONNX Runtime unavailable; run scripts/setup.sh";
    GTEST_SKIP() << "ONNX Runtime unavailable (run scripts/setup.sh)";
  }
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const CommandResult r = run_parity({"run", (modern_dir() / (model + ".onnx")).string(), "--ref", "--ort",
                                        "--val-range", "input_ids:[0,999]", "--iterations", "2"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.last_line().rfind("[I] PASSED | ", 0), 0u) << r.output;
  }
}

// The model tools judge today's exports by their own operator versions: libonnx 1.17 knows IR 10
// and opset 20, so nothing says "No Op registered" or falls back to an older schema or IR. What they
// write is usable: the folded model still matches Polygraphy's ONNX Runtime outputs at default
// tolerances, the float16 model and the fp16 plan match them within float16's precision.
TEST(ModernModels, ModelToolsRunWithoutSchemaWarnings) {
  TempDir tmp;
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const std::string path = (modern_dir() / (model + ".onnx")).string();
    const std::string folded = (tmp / (model + "_folded.onnx")).string();
    const std::string fp16 = (tmp / (model + "_fp16.onnx")).string();
    const std::string plan = (tmp / (model + "_fp16.plan")).string();
    const std::vector<std::vector<std::string>> commands = {
        {"inspect", "model", path, "--shape-inference"},
        {"check", "lint", path},
        {"surgeon", "sanitize", path, "--fold-constants", "-o", folded},
        {"check", "lint", folded},
        {"convert", path, "--fp-to-fp16", "-o", fp16},
        {"convert", path, "--fp16", "-o", plan}};
    for (const auto& args : commands) {
      SCOPED_TRACE(args[0] + " " + args[1]);
      const CommandResult r = run_parity(args);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      // `inspect model` ends with its report, as Polygraphy's does; the others with the PASSED line.
      if (args[0] != "inspect") EXPECT_EQ(r.last_line().rfind("[I] PASSED | ", 0), 0u) << r.output;
      for (const char* unwanted : {"No Op registered", "newer than", "older opset", "[W]", "[E]"})
        EXPECT_EQ(r.output.find(unwanted), std::string::npos) << unwanted << " in:\n" << r.output;
    }
    const auto files = polygraphy_files(model);
    std::vector<std::string> run_folded = {"run", folded, "--ref"};
    run_folded.insert(run_folded.end(), files.begin(), files.end());
    expect_passed(run_folded);
    for (const std::string& reduced : {fp16, plan}) {
      SCOPED_TRACE(reduced);
      std::vector<std::string> args = {"run", reduced, "--ref"};
      args.insert(args.end(), files.begin(), files.end());
      args.insert(args.end(), {"--atol", "2e-2", "--rtol", "2e-2"});
      expect_passed(args);
    }
  }
}

// A one-node model x -> op -> y (float32 [2]) importing `domain` at `opset`.
void write_one_node_model(const fs::path& path, const std::string& op, const std::string& domain, int opset) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  auto* import = model.add_opset_import();
  import->set_domain(domain);
  import->set_version(opset);
  if (!domain.empty()) model.add_opset_import()->set_version(21);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("one_node");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(op);
  node->set_domain(domain);
  node->set_name("the_node");
  node->add_input("x");
  node->add_output("y");
  for (auto [value, name] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
    value->set_name(name);
    auto* tensor_type = value->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(onnx::TensorProto::FLOAT);
    tensor_type->mutable_shape()->add_dim()->set_dim_value(2);
  }
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
}

// Error lines besides the closing "[E] FAILED | Runtime: ..." line every failing command ends with.
size_t error_lines(const std::string& output) {
  size_t count = 0;
  for (size_t at = output.find("[E]"); at != std::string::npos; at = output.find("[E]", at + 1))
    if (output.compare(at, 12, "[E] FAILED |") != 0) ++count;
  return count;
}

TEST(ModernModels, OpOrVersionParityDoesNotKnowIsOneLineNamingTheNewestItHas) {
  TempDir tmp;
  struct Case {
    std::string op, domain;
    int opset;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"Relu", "", 29,
       "[E] Relu node 'the_node': op 'Relu' at ai.onnx opset 29 is newer than parity knows (it implements ai.onnx "
       "up to opset 28 as of ONNX 1.23); the newest version parity implements is 14"},
      {"FancyOp", "", 20,
       "[E] FancyOp node 'the_node': parity has no kernel for op 'FancyOp' in domain 'ai.onnx' (opset 20); parity "
       "implements no version of it"},
      {"Normalizer", "ai.onnx.ml", 6,
       "[E] ai.onnx.ml::Normalizer node 'the_node': op 'Normalizer' at ai.onnx.ml opset 6 is newer than parity "
       "knows (it implements ai.onnx.ml up to opset 5 as of ONNX 1.23); the newest version parity implements is 1"},
      {"Widget", "com.example", 1,
       "[E] com.example::Widget node 'the_node': parity has no kernel for op 'Widget' in domain 'com.example' "
       "(opset 1); parity implements no version of it"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const fs::path model = tmp / (c.op + ".onnx");
    write_one_node_model(model, c.op, c.domain, c.opset);
    const CommandResult r = run_parity({"run", model.string(), "--ref"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
    EXPECT_EQ(error_lines(r.output), 1u) << r.output;
  }
}

// The model tools judge ONNX's own domains by the schemas this build has: an op, or op version,
// without one cannot be checked or inferred, so `inspect model --shape-inference` (and
// --list-unbounded-dds, which infers shapes first) and `check lint` refuse it with one line naming
// the node, op, domain, version and the newest version parity knows.
TEST(ModernModels, ModelToolsRefuseAnOpOrVersionWithoutSchemaInOneLine) {
  TempDir tmp;
  struct Case {
    std::string op, domain;
    int opset;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"Relu", "", 29,
       "Relu node 'the_node': op 'Relu' at ai.onnx opset 29 is newer than parity knows (it knows ai.onnx up to "
       "opset 28 as of ONNX 1.23); the newest version parity knows is 14"},
      {"FancyOp", "", 20,
       "FancyOp node 'the_node': op 'FancyOp' is no ai.onnx operator parity knows (opset 20; ONNX 1.23 defines "
       "ai.onnx up to opset 28); parity knows no version of it"},
      {"Gelu", "", 19,
       "Gelu node 'the_node': op 'Gelu' does not exist at ai.onnx opset 19 (it was introduced later); the newest "
       "version parity knows is 20"},
      {"Normalizer", "ai.onnx.ml", 6,
       "ai.onnx.ml::Normalizer node 'the_node': op 'Normalizer' at ai.onnx.ml opset 6 is newer than parity knows "
       "(it knows ai.onnx.ml up to opset 5 as of ONNX 1.23); the newest version parity knows is 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const fs::path model = tmp / (c.op + ".onnx");
    write_one_node_model(model, c.op, c.domain, c.opset);

    for (const char* inferring : {"--shape-inference", "--list-unbounded-dds"}) {
      SCOPED_TRACE(inferring);
      const CommandResult inspect = run_parity({"inspect", "model", model.string(), inferring});
      EXPECT_EQ(inspect.exit_code, 1) << inspect.output;
      EXPECT_NE(inspect.output.find("[E] " + c.message + "\n"), std::string::npos) << inspect.output;
      EXPECT_EQ(error_lines(inspect.output), 1u) << inspect.output;
    }

    const CommandResult lint = run_parity({"check", "lint", model.string()});
    EXPECT_EQ(lint.exit_code, 1) << lint.output;
    EXPECT_NE(lint.output.find("[E] LINT | Nodes: the_node | " + c.message + "\n"), std::string::npos)
        << lint.output;
    EXPECT_EQ(error_lines(lint.output), 1u) << lint.output;
    EXPECT_NE(lint.output.find("Lint summary: 1 error(s)"), std::string::npos) << lint.output;
  }
  // Ops of custom domains come from extensions and peer runtimes: inspect shows the model, lint warns
  // that the ref runner has no kernel, neither refuses it.
  const fs::path custom = tmp / "Widget.onnx";
  write_one_node_model(custom, "Widget", "com.example", 1);
  const CommandResult inspect = run_parity({"inspect", "model", custom.string(), "--shape-inference"});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  const CommandResult lint = run_parity({"check", "lint", custom.string()});
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(error_lines(lint.output), 0u) << lint.output;
}

}  // namespace
}  // namespace parity::testing
