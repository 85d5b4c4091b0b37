// Polygraphy users' command lines on parity (issue 21): models newer than libonnx save and lint
// correctly, the logging/version habits, and surgeon/inspect/lint options as Polygraphy has them.
// Models come from scripts/make_polygraphy_cli_fixtures.py (tests/data/polygraphy_cli) and the
// shared modern exports (IR 10, opset 20).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "model/graph.h"
#include "model/model.h"
#include "model/proto_convert.h"
#include "model/transforms/sparsity.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) { return source_dir() / "tests" / "data" / "polygraphy_cli" / name; }
fs::path modern(const std::string& name) { return modern_models_dir() / name; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::shared_ptr<model::Graph> load_graph(const fs::path& path) {
  return model::Graph::from_model(model::load_model(path).value());
}

std::vector<std::string> names(const std::vector<model::ValuePtr>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v->name);
  return out;
}

std::vector<std::string> node_names(const model::Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes) out.push_back(n->name);
  return out;
}

using Names = std::vector<std::string>;

CommandResult surgeon(const std::string& tool, const fs::path& model, const fs::path& out,
                      std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"surgeon", tool, model.string(), "-o", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_parity(args);
}

bool has(const json& list, const std::string& name) {
  for (const auto& n : list)
    if (n == name) return true;
  return false;
}

TEST(PolygraphyHabits, SavingNewerIrModelsNeverFailsAfterWriting) {
  TempDir dir;
  const std::vector<fs::path> models = {fixture("ir9_relu.onnx"), fixture("ir10_relu.onnx"),
                                        modern("bert_tiny_dynamo.onnx"), modern("gpt2_tiny_dynamo.onnx")};
  for (const auto& model : models) {
    SCOPED_TRACE(model.string());
    ASSERT_TRUE(fs::exists(model));
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"surgeon", "sanitize", model.string(), "--fold-constants", "--cleanup"},
          std::vector<std::string>{"surgeon", "weight-strip", model.string()},
          std::vector<std::string>{"convert", model.string()}}) {
      std::vector<std::string> args = command;
      const fs::path out = dir / ("out_" + command[1] + "_" + model.filename().string());
      args.insert(args.end(), {"-o", out.string()});
      const CommandResult r = run_parity(args);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      EXPECT_TRUE(fs::exists(out)) << r.output;
      EXPECT_FALSE(contains(r.output, "ir_version is higher")) << r.output;
      EXPECT_FALSE(contains(r.output, "fails libonnx's checker")) << r.output;
    }
  }
}

TEST(PolygraphyHabits, SavingANewerIrModelWithRealErrorsStillFailsNamingTheNode) {
  TempDir dir;
  const CommandResult r =
      run_parity({"surgeon", "sanitize", fixture("ir9_lint_errors.onnx").string(), "-o", (dir / "o.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "fails libonnx's checker (node 0 'bad_relu')")) << r.output;
  EXPECT_TRUE(fs::exists(dir / "o.onnx")) << "the written file stays, to be inspected";
}

TEST(PolygraphyHabits, LintOnIr9ModelNamesEveryFailingNode) {
  TempDir dir;
  const CommandResult r =
      run_parity({"check", "lint", fixture("ir9_lint_errors.onnx").string(), "-o", (dir / "r.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json report = json::parse(read_file(dir / "r.json"));
  EXPECT_TRUE(has(report["summary"]["failing"], "bad_relu")) << report.dump(2);
  EXPECT_TRUE(has(report["summary"]["failing"], "bad_transpose")) << report.dump(2);
  EXPECT_TRUE(has(report["summary"]["passing"], "good_abs")) << report.dump(2);
  EXPECT_TRUE(has(report["summary"]["passing"], "good_neg")) << report.dump(2);
  size_t errors = 0;
  for (const auto& e : report["lint_entries"]) {
    if (e["level"] != "exception") continue;
    ++errors;
    EXPECT_EQ(e["source"], "onnx_checker") << e.dump();
    EXPECT_FALSE(contains(e["message"].get<std::string>(), "ir_version")) << e.dump();
    EXPECT_FALSE(contains(e["message"].get<std::string>(), "'z'")) << "a shapeless output is no error: " << e.dump();
  }
  EXPECT_EQ(errors, 2u) << report.dump(2);
}

TEST(PolygraphyHabits, LintOnModernExportsHasNoFalseErrors) {
  for (const auto& name : {"bert_tiny_dynamo.onnx", "gpt2_tiny_dynamo.onnx"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const CommandResult r = run_parity({"check", "lint", modern(name).string(), "-o", (dir / "r.json").string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json report = json::parse(read_file(dir / "r.json"));
    EXPECT_TRUE(report["summary"]["failing"].empty()) << report.dump(2);
    // libonnx 1.17 knows IR 10 and opset 20 (Gelu-20, Split-18's num_outputs): nothing is left
    // unjudged, so the checker says nothing at all (it warned with libonnx 1.12).
    for (const auto& e : report["lint_entries"])
      EXPECT_NE(e["source"], "onnx_checker") << e.dump();
    EXPECT_FALSE(contains(r.output, "No Op registered")) << r.output;
  }
}

TEST(PolygraphyHabits, DashVAlonePrintsTheVersion) {
  for (const char* flag : {"-v", "--version"}) {
    const CommandResult r = run_parity({flag});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("parity | Version: ", 0), 0u) << r.output;
    EXPECT_TRUE(contains(r.output, "| Path: ['")) << r.output;
  }
}

TEST(PolygraphyHabits, LoggingOptionsBetweenToolAndSubtool) {
  const std::string demo = (source_dir() / "models" / "demo.onnx").string();
  const CommandResult plain = run_parity({"inspect", "model", demo});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_TRUE(contains(plain.output, "ONNX Model")) << plain.output;
  const CommandResult verbose = run_parity({"inspect", "-v", "model", demo});
  EXPECT_EQ(verbose.exit_code, 0) << verbose.output;
  EXPECT_TRUE(contains(verbose.output, "ONNX Model")) << verbose.output;
  // Taking effect, not just accepted: quieter than info hides the summary.
  const CommandResult quiet = run_parity({"inspect", "-qq", "model", demo});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_FALSE(contains(quiet.output, "ONNX Model")) << quiet.output;
  const CommandResult level = run_parity({"inspect", "--verbosity", "error", "model", demo});
  EXPECT_EQ(level.exit_code, 0) << level.output;
  EXPECT_FALSE(contains(level.output, "ONNX Model")) << level.output;
}

TEST(PolygraphyHabits, LogFileInAFolderThatDoesNotExistYet) {
  TempDir dir;
  const fs::path log = dir / "logs/today/inspect.log";
  const std::string demo = (source_dir() / "models" / "demo.onnx").string();
  const CommandResult r = run_parity({"inspect", "--log-file", log.string(), "model", demo});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(log)) << r.output;
  EXPECT_TRUE(contains(read_file(log), "ONNX Model"));
}

TEST(PolygraphySurgeon, ExtractWithoutBoundariesKeepsTheModelsInputsAndOutputs) {
  TempDir dir;
  const CommandResult r = surgeon("extract", fixture("ir9_relu.onnx"), dir / "e.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto g = load_graph(dir / "e.onnx");
  EXPECT_EQ(names(g->inputs), Names{"x"});
  EXPECT_EQ(names(g->outputs), Names{"y"});
  EXPECT_EQ(node_names(*g), (Names{"add0", "relu0"}));
}

TEST(PolygraphySurgeon, ExtractForceFallbackTakesTypesFromARun) {
  TempDir dir;
  const CommandResult r = surgeon("extract", source_dir() / "models" / "demo.onnx", dir / "e.onnx",
                                  {"--outputs", "relu1:auto", "--force-fallback-shape-inference"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "running the model to find the types of: relu1")) << r.output;
  const auto g = load_graph(dir / "e.onnx");
  ASSERT_EQ(names(g->outputs), Names{"relu1"});
  EXPECT_EQ(g->outputs[0]->dtype, DType::kFloat32);
  EXPECT_FALSE(g->outputs[0]->shape.unknown_rank);
}

TEST(PolygraphySurgeon, InsertAtASingleTensorStandsInPlace) {
  TempDir dir;
  const CommandResult r = surgeon("insert", fixture("ir9_relu.onnx"), dir / "i.onnx",
                                  {"--inputs", "sum", "--outputs", "sum", "--op", "Neg", "--name", "neg"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto g = load_graph(dir / "i.onnx");
  EXPECT_EQ(node_names(*g), (Names{"add0", "neg", "relu0"}));
  EXPECT_EQ(g->nodes[1]->inputs[0]->name, "sum");
  EXPECT_EQ(g->nodes[1]->outputs[0]->name, "sum_polygraphy_surgeon_insert_output");
  EXPECT_EQ(g->nodes[2]->inputs[0]->name, "sum_polygraphy_surgeon_insert_output");
}

TEST(PolygraphySurgeon, InsertAtAGraphInputAndAGraphOutput) {
  TempDir dir;
  CommandResult r = surgeon("insert", fixture("ir9_relu.onnx"), dir / "in.onnx",
                            {"--inputs", "x", "--outputs", "x", "--op", "Abs", "--name", "abs"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto g = load_graph(dir / "in.onnx");
  EXPECT_EQ(node_names(*g), (Names{"abs", "add0", "relu0"}));
  EXPECT_EQ(names(g->inputs), Names{"x"});
  EXPECT_EQ(g->nodes[1]->inputs[0]->name, "x_polygraphy_surgeon_insert_output");

  // At a graph output the new tensor keeps the output's name (and dtype); the old one is renamed.
  r = surgeon("insert", fixture("ir9_relu.onnx"), dir / "out.onnx",
              {"--inputs", "y", "--outputs", "y", "--op", "Neg", "--name", "neg"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  g = load_graph(dir / "out.onnx");
  EXPECT_EQ(node_names(*g), (Names{"add0", "relu0", "neg"}));
  EXPECT_EQ(names(g->outputs), Names{"y"});
  EXPECT_EQ(g->outputs[0]->dtype, DType::kFloat32);
  EXPECT_EQ(g->nodes[2]->inputs[0]->name, "y_polygraphy_surgeon_insert_output");
  // The edited model runs: Neg(Relu(x + W)) is never positive.
  r = run_parity({"run", (dir / "out.onnx").string(), "--ref", "--validate"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(PolygraphySurgeon, SanitizeTakesSizesWithSuffixes) {
  TempDir dir;
  const fs::path demo = source_dir() / "models" / "demo.onnx";
  CommandResult r = surgeon("sanitize", demo, dir / "a.onnx", {"--fold-constants", "--fold-size-threshold", "10M"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = surgeon("sanitize", demo, dir / "b.onnx", {"--fold-constants", "--fold-size-threshold", "1.5K"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = surgeon("sanitize", demo, dir / "c.onnx", {"--fold-constants", "--fold-size-threshold", "10Q"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--fold-size-threshold: '10Q' is not a number of bytes")) << r.output;
}

TEST(PolygraphySurgeon, SanitizeIgnoresShapeOverridesOfNonInputsWithAWarning) {
  TempDir dir;
  const CommandResult r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "s.onnx",
                                  {"--override-input-shapes", "sum:[4]", "x:[2,2]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[W] --override-input-shapes: 'sum' is not a graph input")) << r.output;
}

TEST(PolygraphySurgeon, SanitizeFoldingOptionsWithoutFoldingWarn) {
  TempDir dir;
  const CommandResult r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "s.onnx",
                                  {"--partitioning", "basic", "--no-per-pass-shape-inference", "--num-passes", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* option : {"--partitioning", "--no-per-pass-shape-inference", "--num-passes"})
    EXPECT_TRUE(contains(r.output, std::string("[W] ") + option + " is ignored")) << r.output;
  const CommandResult bad = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "t.onnx", {"--partitioning", "deep"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
}

TEST(PolygraphySurgeon, SanitizeMarksOutputs) {
  TempDir dir;
  CommandResult r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "all.onnx", {"--outputs", "mark", "all"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto g = load_graph(dir / "all.onnx");
  EXPECT_EQ(names(g->outputs), (Names{"sum", "y"}));
  EXPECT_EQ(g->outputs[0]->dtype, DType::kFloat32);

  r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "ex.onnx",
              {"--outputs", "mark", "all", "--exclude-outputs", "y", "--cleanup"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  g = load_graph(dir / "ex.onnx");
  EXPECT_EQ(names(g->outputs), Names{"sum"});
  EXPECT_EQ(node_names(*g), Names{"add0"});

  r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "bad.onnx", {"--outputs", "summ"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--outputs")) << r.output;
}

TEST(PolygraphySurgeon, SanitizeCleanupKeepsGraphInputsAsPolygraphy) {
  TempDir dir;
  const CommandResult r = surgeon("sanitize", fixture("ir9_unused_input.onnx"), dir / "c.onnx", {"--cleanup"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(names(load_graph(dir / "c.onnx")->inputs), (Names{"x", "unused"}));
}

TEST(PolygraphySurgeon, SanitizeForceFallbackShapeInferenceRunsTheModel) {
  TempDir dir;
  const CommandResult r = surgeon("sanitize", fixture("ir9_relu.onnx"), dir / "f.onnx",
                                  {"--force-fallback-shape-inference", "--no-onnxruntime-shape-inference",
                                   "--no-shape-inference"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The graph input x and the two values the nodes produce.
  EXPECT_TRUE(contains(r.output, "Shapes from running the model: 3 tensors")) << r.output;
  const auto g = load_graph(dir / "f.onnx");
  const auto sum = g->find_tensor("sum");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->dtype, DType::kFloat32);
  ASSERT_FALSE(sum->shape.unknown_rank);
}

TEST(PolygraphySurgeon, ExternalDataDirIsWhereWeightsAreRead) {
  TempDir dir;
  fs::create_directories(dir / "model");
  fs::create_directories(dir / "weights");
  CommandResult r = run_parity({"convert", (source_dir() / "models" / "demo.onnx").string(), "-o",
                                (dir / "model" / "m.onnx").string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::rename(dir / "model" / "m.onnx.data", dir / "weights" / "m.onnx.data");
  r = surgeon("sanitize", dir / "model" / "m.onnx", dir / "a.onnx");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const char* flag : {"--external-data-dir", "--load-external-data", "--ext"}) {
    r = surgeon("sanitize", dir / "model" / "m.onnx", dir / "b.onnx", {flag, (dir / "weights").string(), "--fold-constants"});
    EXPECT_EQ(r.exit_code, 0) << flag << r.output;
  }
  r = surgeon("sanitize", dir / "model" / "m.onnx", dir / "c.onnx", {"--ext", (dir / "nowhere").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "external data folder")) << r.output;
}

// Doc strings of every initializer of a saved model, by name.
std::map<std::string, std::string> initializer_docs(const fs::path& path) {
  std::map<std::string, std::string> out;
  const model::Model m = model::load_model(path).value();
  for (const auto& t : m.proto().graph().initializer()) out[t.name()] = t.doc_string();
  return out;
}

Tensor initializer(const fs::path& path, const std::string& name) {
  const model::Model m = model::load_model(path).value();
  for (const auto& t : m.proto().graph().initializer())
    if (t.name() == name) return model::tensor_from_proto(t, m.base_dir()).clone();
  ADD_FAILURE() << name << " not in " << path;
  return {};
}

TEST(PolygraphyWeights, StripFollowsPolygraphysPatternsAndTagsSparseWeights) {
  TempDir dir;
  const CommandResult r = surgeon("weight-strip", fixture("weight_patterns.onnx"), dir / "s.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Stripped 8 tensors (864 bytes); 2 marked SPARSE_2_4")) << r.output;
  for (const auto& [name, doc] : initializer_docs(dir / "s.onnx")) {
    SCOPED_TRACE(name);
    if (name.rfind("K_", 0) == 0) EXPECT_EQ(doc, "");  // kept: Add, small Gather, Q/DQ scales, uint8
    else if (name == "W_sparse" || name == "W_conv") EXPECT_EQ(doc, "TRT_WEIGHTLESS/SPARSE_2_4");
    else EXPECT_EQ(doc, "TRT_WEIGHTLESS/");
  }
  EXPECT_EQ(model::load_model(dir / "s.onnx").value().proto().doc_string(), "TRT_WEIGHTLESS");
}

TEST(PolygraphyWeights, ExcludeListKeepsNamedWeightsAndWarnsAboutUnknownNames) {
  TempDir dir;
  write_file(dir / "exclude.txt", "W_mm\nW_gemm_bias  \nnot_in_model\n");
  const CommandResult r = surgeon("weight-strip", fixture("weight_patterns.onnx"), dir / "s.onnx",
                                  {"--exclude-list", (dir / "exclude.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "were not found in the model: not_in_model")) << r.output;
  const auto docs = initializer_docs(dir / "s.onnx");
  EXPECT_EQ(docs.at("W_mm"), "");
  EXPECT_EQ(docs.at("W_gemm_bias"), "");
  EXPECT_EQ(docs.at("W_gemm"), "TRT_WEIGHTLESS/");
  const CommandResult missing = surgeon("weight-strip", fixture("weight_patterns.onnx"), dir / "t.onnx",
                                        {"--exclude-list", (dir / "nope.txt").string()});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "--exclude-list: cannot read")) << missing.output;
}

TEST(PolygraphyWeights, ReconstructPrunesSparseTaggedWeightsTo2To4) {
  TempDir dir;
  ASSERT_EQ(surgeon("weight-strip", fixture("weight_patterns.onnx"), dir / "s.onnx").exit_code, 0);
  const CommandResult r = surgeon("weight-reconstruct", dir / "s.onnx", dir / "r.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Reconstructed 8 tensors (864 bytes); 2 pruned to 2:4 sparsity")) << r.output;
  EXPECT_TRUE(model::transforms::is_2_4_sparse(initializer(dir / "r.onnx", "W_sparse"), 0));
  EXPECT_TRUE(model::transforms::is_2_4_sparse(initializer(dir / "r.onnx", "W_conv"), 1));
  // Untagged weights are plain random values.
  EXPECT_FALSE(model::transforms::is_2_4_sparse(initializer(dir / "r.onnx", "W_mm"), 0));
}

TEST(PolygraphyWeights, PruneMakesEveryCandidate2To4SparseAndLeavesTheRest) {
  TempDir dir;
  const fs::path original = fixture("weight_patterns.onnx");
  const CommandResult r = surgeon("prune", original, dir / "p.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Found: 6 weight tensor(s) eligible for pruning")) << r.output;
  // MatMul B along K (through Q/DQ too), Gemm B with transB along its axis 1, Transpose mapped
  // through perm, Conv along input channels.
  const std::vector<std::pair<std::string, int64_t>> pruned = {{"W_mm", 0},   {"W_sparse", 0}, {"W_gemm", 1},
                                                               {"W_qf", 0},   {"W_t", 1},      {"W_conv", 1}};
  for (const auto& [name, axis] : pruned) {
    SCOPED_TRACE(name);
    const Tensor before = initializer(original, name);
    const Tensor after = initializer(dir / "p.onnx", name);
    EXPECT_TRUE(model::transforms::is_2_4_sparse(after, axis));
    // Exactly half the values of a dense weight go; the kept ones are unchanged.
    int64_t zeros = 0;
    for (int64_t i = 0; i < after.numel(); ++i) {
      const float a = after.data<float>()[i];
      if (a == 0.0f) ++zeros;
      else EXPECT_EQ(a, before.data<float>()[i]);
    }
    if (name != "W_sparse" && name != "W_conv") EXPECT_EQ(zeros, after.numel() / 2);
  }
  for (const char* kept : {"K_add", "K_table", "W_custom", "W_gemm_bias"}) {
    const Tensor before = initializer(original, kept);
    const Tensor after = initializer(dir / "p.onnx", kept);
    EXPECT_EQ(std::memcmp(before.raw_data(), after.raw_data(), before.size_bytes()), 0) << kept;
  }
}

TEST(PolygraphyInspect, ModelLayoutAsPolygraphyPrintsIt) {
  const CommandResult r = run_parity({"inspect", "model", fixture("inspect_cases.onnx").string(), "--show", "layers",
                                      "attrs", "weights"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Weights: a list for the dims in the header, numpy's nested values below it.
  EXPECT_TRUE(contains(r.output, "    Initializer | W [dtype=float32, shape=[2, 2]] | Values:\n"
                                 "        [[ 1.5   2.  ]\n"
                                 "         [-0.25  4.  ]]\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "const.value = Tensor: [dtype=float32, shape=[2, 2]] | Values:\n"
                                 "            [[1. 1.]\n"
                                 "             [1. 1.]]")) << r.output;
  // A typed output without a shape reads as shape=(); a tensor with neither type nor shape is its
  // name alone; a node without inputs stays on one line.
  EXPECT_TRUE(contains(r.output, "{y [dtype=float32, shape=()]}")) << r.output;
  EXPECT_TRUE(contains(r.output, "    Node 0    | const [Op: Constant]\n        {} -> {c}\n")) << r.output;
  // Subgraphs: Polygraphy's headers, no name line, indented two levels under the attribute.
  EXPECT_TRUE(contains(r.output, "branch.then_branch =\n                ---- 0 Subgraph Input(s) ----\n")) << r.output;
  EXPECT_FALSE(contains(r.output, "Name: then_body")) << r.output;
  EXPECT_TRUE(contains(r.output, "                Node 0    |  [Op: Identity]\n")) << r.output;
}

TEST(PolygraphyInspect, ExternalDataDir) {
  TempDir dir;
  fs::create_directories(dir / "model");
  fs::create_directories(dir / "weights");
  ASSERT_EQ(run_parity({"convert", fixture("inspect_cases.onnx").string(), "-o", (dir / "model" / "m.onnx").string(),
                        "--external-data", "--external-data-size-threshold", "0"})
                .exit_code,
            0);
  fs::rename(dir / "model" / "m.onnx.data", dir / "weights" / "m.onnx.data");
  EXPECT_EQ(run_parity({"inspect", "model", (dir / "model" / "m.onnx").string()}).exit_code, 1);
  const CommandResult r = run_parity({"inspect", "model", (dir / "model" / "m.onnx").string(), "--ext",
                                      (dir / "weights").string(), "--show", "weights"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[-0.25  4.  ]]")) << r.output;
}

TEST(PolygraphyLint, NamesTheNodeWhoseShapesDoNotFit) {
  TempDir dir;
  const CommandResult r =
      run_parity({"check", "lint", fixture("incompatible_shapes.onnx").string(), "-o", (dir / "r.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json report = json::parse(read_file(dir / "r.json"));
  EXPECT_EQ(report["summary"]["failing"], json::array({"bad_add"})) << report.dump(2);
  // As in Polygraphy, a node downstream of the failure is not blamed: ONNX Runtime could not lint it.
  EXPECT_FALSE(has(report["summary"]["passing"], "neg")) << report.dump(2);
  bool found = false;
  for (const auto& e : report["lint_entries"])
    if (e["level"] == "exception") {
      found = true;
      EXPECT_EQ(e["source"], "onnxruntime");
      EXPECT_TRUE(contains(e["message"].get<std::string>(), "Incompatible dimensions")) << e.dump();
      EXPECT_EQ(e["nodes"], json::array({"bad_add"}));
    }
  EXPECT_TRUE(found) << report.dump(2);
}

}  // namespace
}  // namespace parity::testing
