// Issue 21's remaining Polygraphy habits: --ignore-external-data, unbounded data-dependent shapes,
// attributes in the model's order, lint with loaded inputs, and the plugin and template tools.
// Models come from scripts/make_polygraphy_cli_fixtures.py (tests/data/polygraphy_cli).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include "core/formats/polygraphy_json.h"
#include "model/graph.h"
#include "model/model.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture(const std::string& name) { return source_dir() / "tests" / "data" / "polygraphy_cli" / name; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::shared_ptr<model::Graph> load_graph(const fs::path& path) {
  return model::Graph::from_model(model::load_model(path).value());
}

bool has_name(const json& list, const std::string& name) {
  for (const auto& n : list)
    if (n == name) return true;
  return false;
}

const model::Node* find_node(const model::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n->name == name) return n.get();
  return nullptr;
}

TEST(PolygraphyInspect, AttributesInTheModelsOrder) {
  // The file stores transB, beta, alpha: not alphabetical, and Polygraphy prints them as stored.
  const CommandResult r = run_parity({"inspect", "model", fixture("attr_order.onnx").string(), "--show", "attrs"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "gemm.transB = 1\n        gemm.beta = 0.5\n        gemm.alpha = 2\n")) << r.output;
  const CommandResult j =
      run_parity({"inspect", "model", fixture("attr_order.onnx").string(), "--show", "attrs", "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  // stdout (the JSON) and stderr (the closing log line) arrive together.
  const size_t begin = j.output.find('{'), end = j.output.rfind('}');
  const auto report = nlohmann::ordered_json::parse(j.output.substr(begin, end - begin + 1));
  std::vector<std::string> keys;
  for (const auto& [k, _] : report["graph"]["nodes"][0]["attributes"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"transB", "beta", "alpha"}));
}

TEST(PolygraphyExternalData, IgnoreExternalDataLoadsTheStructureOnly) {
  TempDir dir;
  fs::create_directories(dir / "out");
  fs::copy_file(fixture("external_weights.onnx"), dir / "m.onnx");  // without its weight file
  const std::string model = (dir / "m.onnx").string();
  const CommandResult refused = run_parity({"inspect", "model", model});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.output, "does not exist")) << refused.output;

  const CommandResult shown = run_parity({"inspect", "model", model, "--ignore-external-data", "--show", "weights"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_TRUE(contains(shown.output, "Initializer | W [dtype=float32, shape=[3, 2]] | Values: not loaded")) << shown.output;

  const CommandResult lint = run_parity({"check", "lint", model, "--ignore-external-data"});
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(run_parity({"inspect", "model", model, "--ignore-external-data", "--ext", dir.path().string()}).exit_code, 1);

  // A surgeon tool cuts the graph; the weights stay references to the same file, so the result runs
  // once that file is beside it.
  const fs::path cut = dir / "out" / "cut.onnx";
  const CommandResult extracted =
      run_parity({"surgeon", "extract", model, "--ignore-external-data", "-o", cut.string()});
  ASSERT_EQ(extracted.exit_code, 0) << extracted.output;
  EXPECT_TRUE(contains(extracted.output, "saved as references")) << extracted.output;
  EXPECT_EQ(run_parity({"run", cut.string(), "--ref"}).exit_code, 1) << "the weights are still missing";
  fs::copy_file(fixture("external_weights.onnx.data"), dir / "out" / "external_weights.onnx.data");
  const CommandResult ran = run_parity({"run", cut.string(), "--ref"});
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
}

TEST(PolygraphyUnboundedDds, ListedByInspectModel) {
  const CommandResult r = run_parity({"inspect", "model", fixture("unbounded_dds.onnx").string(), "--list-unbounded-dds"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Range's and Tile's run-time sizes; not the constant limit, nor the one that comes out of a Min.
  EXPECT_TRUE(contains(r.output, "Found tensors with unbounded DDS: ['limit', 'reps']")) << r.output;
}

TEST(PolygraphyUnboundedDds, SanitizeInsertsMinNodesWithTheBounds) {
  TempDir dir;
  const fs::path out = dir / "bounded.onnx";
  const CommandResult r = run_parity({"surgeon", "sanitize", fixture("unbounded_dds.onnx").string(), "-o", out.string(),
                                      "--set-unbounded-dds-upper-bound", "1000", "reps:7", "--verify"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Set tensor upper bounds: {'limit': 1000, 'reps': 7}")) << r.output;
  const auto g = load_graph(out);
  for (const auto& [tensor, bound] : std::vector<std::pair<std::string, int64_t>>{{"limit", 1000}, {"reps", 7}}) {
    const model::Node* min = find_node(*g, tensor + "_min");
    ASSERT_NE(min, nullptr) << tensor;
    EXPECT_EQ(min->op_type, "Min");
    EXPECT_EQ(min->inputs[0]->name, tensor + "_copy");
    EXPECT_EQ(min->outputs[0]->name, tensor);
    ASSERT_TRUE(min->inputs[1]->is_constant());
    const Tensor& value = min->inputs[1]->values();
    EXPECT_EQ(value.dtype(), DType::kInt64);
    EXPECT_EQ(value.data<int64_t>()[0], bound);
  }
  // Bounded now: nothing left to list.
  const CommandResult listed = run_parity({"inspect", "model", out.string(), "--list-unbounded-dds"});
  EXPECT_TRUE(contains(listed.output, "Found tensors with unbounded DDS: []")) << listed.output;

  // A bound smaller than the data cuts the Range short: limit = max(x) = 9 becomes 3.
  const fs::path small = dir / "small.onnx";
  ASSERT_EQ(run_parity({"surgeon", "sanitize", fixture("unbounded_dds.onnx").string(), "-o", small.string(),
                        "--set-unbounded-dds-upper-bound", "limit:3"})
                .exit_code,
            0);
  for (const auto& [path, rows] : std::vector<std::pair<fs::path, std::string>>{{small, "3"}, {fixture("unbounded_dds.onnx"), "9"}}) {
    const CommandResult ran = run_parity({"run", path.string(), "--ref", "--val-range", "x:[9,9]", "counts:[2,2]"});
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_TRUE(contains(ran.output, "{y [dtype=float32, shape=(1, 2, " + rows + ", 1)]")) << ran.output;
  }
}

TEST(PolygraphyUnboundedDds, NamedBoundsAreCheckedAgainstTheGraph) {
  TempDir dir;
  const std::string model = fixture("unbounded_dds.onnx").string();
  const CommandResult typo = run_parity({"surgeon", "sanitize", model, "-o", (dir / "a.onnx").string(),
                                         "--set-unbounded-dds-upper-bound", "limt:3"});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_TRUE(contains(typo.output, "did you mean 'limit'")) << typo.output;
  EXPECT_FALSE(fs::exists(dir / "a.onnx"));
  const CommandResult bounded = run_parity({"surgeon", "sanitize", model, "-o", (dir / "b.onnx").string(),
                                            "--set-unbounded-dds-upper-bound", "fixed:3"});
  EXPECT_EQ(bounded.exit_code, 0) << bounded.output;
  EXPECT_TRUE(contains(bounded.output, "'fixed' has no unbounded data-dependent shape")) << bounded.output;
  const CommandResult graph_input = run_parity({"surgeon", "sanitize", model, "-o", (dir / "c.onnx").string(),
                                                "--set-unbounded-dds-upper-bound", "x:3"});
  EXPECT_EQ(graph_input.exit_code, 1);
  EXPECT_TRUE(contains(graph_input.output, "graph input")) << graph_input.output;
  EXPECT_EQ(run_parity({"surgeon", "sanitize", model, "-o", (dir / "d.onnx").string(),
                        "--set-unbounded-dds-upper-bound", "1", "2"})
                .exit_code,
            1);
}


// A plugin folder as parity reads it: one folder per plugin with its pattern.yaml.
void write_plugins(const fs::path& dir) {
  fs::create_directories(dir / "ScaleBiasLeakyRelu");
  fs::create_directories(dir / "Unused");
  write_file(dir / "ScaleBiasLeakyRelu" / "pattern.yaml", R"(op: ScaleBiasLeakyRelu
domain: parity.plugins
inputs: [x, scale, bias]
outputs: [y]
nodes:
  - {name: mul, op: Mul, inputs: [x, scale], outputs: [m]}
  - {name: add, op: Add, inputs: [m, bias], outputs: [a]}
  - {name: act, op: LeakyRelu, inputs: [a], outputs: [y], attrs: {alpha: {lt: 0.5}}}
attributes:
  alpha: $act.alpha
  fused: 1
)");
  write_file(dir / "Unused" / "pattern.yaml", "op: Nothing\ninputs: [x]\noutputs: [y]\n"
                                              "nodes:\n  - {op: Softmax, inputs: [x], outputs: [y]}\n");
}

TEST(PolygraphyPlugin, ListCountsTheMatchesOfEveryPlugin) {
  TempDir dir;
  write_plugins(dir / "plugins");
  const CommandResult r = run_parity({"plugin", "list", fixture("plugin_subgraphs.onnx").string(), "--plugin-dir",
                                      (dir / "plugins").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Chains 0 and 1 match; chain 2's alpha is 0.9; chain 3's Add output is read outside the chain.
  EXPECT_TRUE(contains(r.output, "{'ScaleBiasLeakyRelu': 2, 'Unused': 0}")) << r.output;
  EXPECT_TRUE(contains(r.output, "ScaleBiasLeakyRelu: nodes mul1, add1, act1 | inputs y0, scale, bias -> outputs y1"))
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "config.yaml"));
  const CommandResult excluded = run_parity({"plugin", "list", fixture("plugin_subgraphs.onnx").string(),
                                             "--plugin-dir", (dir / "plugins").string(), "--exclude", "Unused"});
  EXPECT_TRUE(contains(excluded.output, "{'ScaleBiasLeakyRelu': 2}")) << excluded.output;
}

// A folder laid out for Polygraphy (pattern.py) is named, not silently skipped.
TEST(PolygraphyPlugin, PythonPatternFolderIsNamed) {
  TempDir dir;
  write_plugins(dir / "plugins");
  fs::create_directories(dir / "plugins" / "toyPlugin");
  write_file(dir / "plugins" / "toyPlugin" / "pattern.py", "from polygraphy import mod\n");
  const std::string model = fixture("plugin_subgraphs.onnx").string(), plugins = (dir / "plugins").string();
  CommandResult r = run_parity({"plugin", "list", model, "--plugin-dir", plugins});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[W] plugin 'toyPlugin' is skipped: its folder holds Polygraphy's pattern.py, Python "
                                 "that parity cannot run; write its pattern as pattern.yaml"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "{'ScaleBiasLeakyRelu': 2, 'Unused': 0}")) << r.output;
  r = run_parity({"plugin", "list", model, "--plugin-dir", plugins, "--include", "toyPlugin"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--include: plugin 'toyPlugin' has Polygraphy's pattern.py")) << r.output;
  r = run_parity({"plugin", "list", model, "--plugin-dir", plugins, "--exclude", "toyPlugin"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "plugin 'toyPlugin' is skipped")) << r.output;
}

TEST(PolygraphyPlugin, MatchWritesAConfigThatReplaceApplies) {
  TempDir dir;
  write_plugins(dir / "plugins");
  fs::copy_file(fixture("plugin_subgraphs.onnx"), dir / "model.onnx");
  const std::string model = (dir / "model.onnx").string();
  const CommandResult matched = run_parity({"plugin", "match", model, "--plugin-dir", (dir / "plugins").string()});
  ASSERT_EQ(matched.exit_code, 0) << matched.output;
  const std::string config = read_file(dir / "config.yaml");  // default: beside the model, as Polygraphy
  EXPECT_TRUE(contains(config, "name: ScaleBiasLeakyRelu\nop: ScaleBiasLeakyRelu\ndomain: parity.plugins\ninstances:\n"
                               "  - inputs: [x, scale, bias]\n    outputs: [y0]\n    attributes:\n      alpha: 0.1\n"
                               "      fused: 1\n"))
      << config;

  const CommandResult replaced = run_parity({"plugin", "replace", model, "--plugin-dir", (dir / "plugins").string()});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
  const auto g = load_graph(dir / "replaced.onnx");
  ASSERT_EQ(g->nodes.size(), 9u);  // 2 plugin nodes + chains 2 and 3 + Neg
  const model::Node* first = find_node(*g, "ScaleBiasLeakyRelu_0");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->op_type, "ScaleBiasLeakyRelu");
  EXPECT_EQ(first->domain, "parity.plugins");
  EXPECT_EQ(first->inputs[0]->name, "x");
  EXPECT_EQ(first->outputs[0]->name, "y0");
  EXPECT_FLOAT_EQ(first->attrs.at("alpha").f, 0.1f);
  EXPECT_EQ(first->attrs.at("fused").i, 1);
  EXPECT_EQ(find_node(*g, "ScaleBiasLeakyRelu_1")->inputs[0]->name, "y0");
  EXPECT_EQ(g->opset("parity.plugins"), 1);
  EXPECT_NE(find_node(*g, "act2"), nullptr);

  // The user edits the config: only the second instance stays.
  const size_t second = config.find("  - inputs: [y0");
  ASSERT_NE(second, std::string::npos);
  write_file(dir / "edited.yaml", config.substr(0, config.find("  - inputs: [x")) + config.substr(second));
  const CommandResult one = run_parity({"plugin", "replace", model, "--config", (dir / "edited.yaml").string(), "-o",
                                        (dir / "one.onnx").string()});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_TRUE(contains(one.output, "replaced 1 instance(s) of ScaleBiasLeakyRelu")) << one.output;
  EXPECT_NE(find_node(*load_graph(dir / "one.onnx"), "mul0"), nullptr);
}

TEST(PolygraphyPlugin, BadPatternsAndConfigsAreOneClearError) {
  TempDir dir;
  fs::create_directories(dir / "plugins" / "Broken");
  write_file(dir / "plugins" / "Broken" / "pattern.yaml",
             "op: X\ninputs: [x]\noutputs: [y]\nnodes:\n  - {op: Relu, inputs: [q], outputs: [y]}\n");
  const std::string model = fixture("plugin_subgraphs.onnx").string();
  const CommandResult broken = run_parity({"plugin", "list", model, "--plugin-dir", (dir / "plugins").string()});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_TRUE(contains(broken.output, "pattern.yaml: pattern 'Broken': node 'Relu_0' reads 'q'")) << broken.output;
  EXPECT_EQ(run_parity({"plugin", "list", model, "--plugin-dir", (dir / "nowhere").string()}).exit_code, 1);
  // A config whose instance would leave a tensor without its producer: a3 is read by the Neg outside.
  write_file(dir / "bad.yaml", "name: P\nop: P\ninstances:\n  - inputs: [y2, scale, bias]\n    outputs: [y3]\n");
  const CommandResult refused = run_parity({"plugin", "replace", model, "--config", (dir / "bad.yaml").string(), "-o",
                                            (dir / "r.onnx").string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.output, "plugin 'P' instance 0: tensor 'a3' is computed inside the subgraph but node "
                                       "'neg' (Neg) outside it reads it"))
      << refused.output;
  EXPECT_FALSE(fs::exists(dir / "r.onnx"));
}


TEST(PolygraphyLint, LoadInputDataRunsTheModelOnIt) {
  TempDir dir;
  const std::string relu = fixture("ir9_relu.onnx").string();
  ASSERT_EQ(run_parity({"run", relu, "--ref", "--save-inputs", (dir / "relu_in.json").string()}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", fixture("unbounded_dds.onnx").string(), "--ref", "--save-inputs",
                        (dir / "dds_in.json").string()})
                .exit_code,
            0);
  const CommandResult good =
      run_parity({"check", "lint", relu, "--load-input-data", (dir / "relu_in.json").string(), "-o",
                  (dir / "good.json").string()});
  EXPECT_EQ(good.exit_code, 0) << good.output;
  EXPECT_TRUE(contains(read_file(dir / "good.json"), "The model runs on the loaded input data"));

  // Another model's inputs: 'x' has the wrong shape for Add with W ([1, 1, 4, 4] + [2, 2]), and
  // 't' and 'counts' are no inputs of this model.
  const CommandResult wrong = run_parity({"check", "lint", relu, "--load-inputs", (dir / "dds_in.json").string(), "-o",
                                          (dir / "wrong.json").string()});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  const json report = json::parse(read_file(dir / "wrong.json"));
  bool runtime_error = false, extra_warned = false;
  for (const auto& e : report["lint_entries"]) {
    if (e["source"] != "parity_runtime") continue;
    runtime_error = runtime_error || e["level"] == "exception";
    extra_warned = extra_warned || (e["level"] == "warning" && contains(e["message"].get<std::string>(), "'counts'"));
  }
  EXPECT_TRUE(runtime_error) << report.dump(2);
  EXPECT_TRUE(extra_warned) << report.dump(2);

  // Data the model cannot run on: Tile's repeats come out negative; the failing node is named.
  const auto filled = [](Shape shape, float value) {
    Tensor t(DType::kFloat32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
    return t;
  };
  write_inputs_json((dir / "negative.json").string(),
                    {TensorMap{{"x", filled({1, 1, 4, 4}, 3)}, {"t", filled({2}, 1)}, {"counts", filled({1}, -2)}}});
  const CommandResult failing = run_parity({"check", "lint", fixture("unbounded_dds.onnx").string(),
                                            "--load-input-data", (dir / "negative.json").string(), "-o",
                                            (dir / "failing.json").string()});
  EXPECT_EQ(failing.exit_code, 1) << failing.output;
  const json failed = json::parse(read_file(dir / "failing.json"));
  EXPECT_TRUE(has_name(failed["summary"]["failing"], "tile")) << failed.dump(2);
  EXPECT_TRUE(contains(failing.output, "Nodes: tile | Tile node 'tile': repeats (-2,) has a negative entry"))
      << failing.output;

  // Inputs that lack the model's input.
  ASSERT_EQ(run_parity({"run", fixture("attr_order.onnx").string(), "--ref", "--save-inputs",
                        (dir / "a_in.json").string()})
                .exit_code,
            0);
  const CommandResult missing = run_parity({"check", "lint", relu, "--load-input-data", (dir / "a_in.json").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.output, "graph input 'x' is not in the loaded input data (it has: a)")) << missing.output;
}


// The programs are built and run against the installed parity by install.templates
// (tests/install/template_test.sh); here, what the command writes and refuses.
TEST(PolygraphyTemplate, WritesAProgramAndItsCMakeSnippet) {
  TempDir dir;
  const CommandResult graph = run_parity({"template", "onnx-graph", fixture("attr_order.onnx").string(), "-o",
                                          (dir / "edit.cpp").string()});
  ASSERT_EQ(graph.exit_code, 0) << graph.output;
  const std::string edit = read_file(dir / "edit.cpp");
  EXPECT_TRUE(contains(edit, "void edit_graph(parity::model::Graph& graph)")) << edit;
  EXPECT_TRUE(contains(edit, "//     a [dtype=float32, shape=(1, 2)]")) << edit;
  EXPECT_TRUE(contains(edit, fixture("attr_order.onnx").string())) << edit;
  EXPECT_TRUE(contains(read_file(dir / "edit.cmake"), "add_executable(edit ${CMAKE_CURRENT_LIST_DIR}/edit.cpp)"));

  const CommandResult loader = run_parity({"template", "data-loader", fixture("unbounded_dds.onnx").string(), "-o",
                                           (dir / "loader.cpp").string(), "--iterations", "2"});
  ASSERT_EQ(loader.exit_code, 0) << loader.output;
  const std::string text = read_file(dir / "loader.cpp");
  EXPECT_TRUE(contains(text, "iteration < 2;")) << text;
  for (const char* input : {"feed.set(\"x\"", "feed.set(\"t\"", "feed.set(\"counts\""})
    EXPECT_TRUE(contains(text, input)) << input;
  EXPECT_TRUE(contains(text, "parity::Tensor t0(parity::DType::kFloat32, {1, 1, 4, 4});")) << text;

  const CommandResult missing =
      run_parity({"template", "onnx-graph", (dir / "nope.onnx").string(), "-o", (dir / "x.cpp").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "x.cpp"));
  EXPECT_EQ(run_parity({"template", "data-loader", "-o", (dir / "y.cpp").string(), "--iterations", "0"}).exit_code, 1);
}

}  // namespace
}  // namespace parity::testing
