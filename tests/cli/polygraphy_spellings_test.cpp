// Polygraphy's own command lines, typed as its tests/tools/test_*.py type them (with `polygraphy`
// replaced by `parity`): its runner flags (--onnxrt, --pluginref), --providers, --log-format,
// --model-type, --convert-to, --save-results/--load-results, --iterations=0, the same runner twice
// with `mark all`, a run without runners, surgeon insert of a custom op in the default domain, and
// TensorRT/TensorFlow options refused with parity's closest option. The models are Polygraphy's
// test models `identity` and `identity_identity`, rebuilt here.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/formats/polygraphy_json.h"
#include "model/model.h"
#include "runtime/plan/plan_file.h"
#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// Polygraphy's tests/models/identity.onnx: x [1,1,2,2] -> Identity -> y.
std::string identity_model(const TempDir& dir) {
  ModelBuilder b(13);
  b.input("x", DType::kFloat32, {1, 1, 2, 2}).output("y", DType::kFloat32, {1, 1, 2, 2});
  b.node("Identity", {"x"}, {"y"}, "onnx_graphsurgeon_node_1");
  const std::string path = (dir / "identity.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), path).throw_if_error();
  return path;
}

// Polygraphy's identity_identity.onnx: X -> Identity -> identity_out_0 -> Identity -> identity_out_2.
std::string identity_identity_model(const TempDir& dir) {
  ModelBuilder b(13);
  b.input("X", DType::kFloat32, {64, 64}).output("identity_out_2", DType::kFloat32, {64, 64});
  b.node("Identity", {"X"}, {"identity_out_0"}, "onnx_graphsurgeon_node_1");
  b.node("Identity", {"identity_out_0"}, {"identity_out_2"}, "onnx_graphsurgeon_node_3");
  const std::string path = (dir / "identity_identity.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), path).throw_if_error();
  return path;
}

std::vector<std::string> op_types(const fs::path& path) {
  std::vector<std::string> ops;
  const model::Model model = model::load_model(path).value();
  for (const auto& node : model.proto().graph().node()) ops.push_back(node.op_type());
  return ops;
}

// test_run.py TestOnnxrt / TestPluginRef / TestOther: the runner flags as Polygraphy spells them.
TEST(PolygraphySpellings, OnnxrtAndPluginrefSelectOnnxRuntimeAndTheRefRuntime) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  CommandResult r = run_parity({"run", identity, "--pluginref"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "ref-runner-")) << r.output;
  PARITY_REQUIRE_RUNNER("ort");
  r = run_parity({"run", identity, "--onnxrt"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "ort-runner-")) << r.output;
  // Each occurrence is its own runner, compared with the next (test_check_error_stat).
  for (const char* stat : {"max", "median", "mean", "quantile"}) {
    r = run_parity({"run", identity, "--onnxrt", "--onnxrt", "--check-error-stat", stat});
    EXPECT_EQ(r.exit_code, 0) << stat << "\n" << r.output;
    EXPECT_TRUE(contains(r, "Difference is within tolerance")) << r.output;
  }
  r = run_parity({"run", identity, "--pluginref", "--onnxrt"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Difference is within tolerance")) << r.output;
}

TEST(PolygraphySpellings, ProvidersAndExecutionProvidersChooseOrtProviders) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  const std::string identity = identity_model(dir);
  for (const char* flag : {"--providers", "--execution-providers"}) {
    CommandResult r = run_parity({"run", identity, "--onnxrt", flag, "cpu"});
    EXPECT_EQ(r.exit_code, 0) << flag << "\n" << r.output;
  }
  const CommandResult bad = run_parity({"run", identity, "--onnxrt", "--providers", "no_such_provider"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad, "execution provider 'no_such_provider' is not in this build")) << bad.output;
}

TEST(PolygraphySpellings, LogFormatTimestampLineInfoAndNoColors) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  CommandResult r = run_parity({"run", identity, "--pluginref", "--log-format", "timestamp", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\[I\] \(\d\d:\d\d:\d\d\) PASSED \| Runtime)"))) << r.output;
  r = run_parity({"run", identity, "--pluginref", "--log-format", "line-info"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", identity, "--pluginref", "--log-format", "colors"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "invalid choice 'colors' for --log-format")) << r.output;
}

// test_convert.py: --model-type, --convert-to, and engines under any name.
TEST(PolygraphySpellings, ConvertModelTypeAndConvertTo) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  // TestConvertToTrt.test_onnx_to_trt: an .engine output is parity's engine, a plan.
  const std::string engine = (dir / "out.engine").string();
  CommandResult r = run_parity({"convert", identity, "--model-type=onnx", "-o", engine});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(runtime::plan::is_plan_file(engine));
  r = run_parity({"run", engine, "--model-type=engine", "--ref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", engine, "--model-type=onnx", "--ref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "is a parity plan, not an ONNX model")) << r.output;
  r = run_parity({"run", identity, "--model-type=engine", "--ref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "is not a parity plan")) << r.output;

  // --convert-to=trt with an output without extension (test_tf_to_onnx_to_trt's form).
  const std::string no_extension = (dir / "outmodel").string();
  r = run_parity({"convert", identity, "--model-type=onnx", "--convert-to=trt", "-o", no_extension});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(runtime::plan::is_plan_file(no_extension));

  // TestConvertToOnnx.test_fp_to_fp16: --convert-to=onnx, I/O types unchanged.
  const std::string fp16 = (dir / "fp16_model").string();
  r = run_parity({"convert", identity_identity_model(dir), "--convert-to=onnx", "--fp-to-fp16", "-o", fp16});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(op_types(fp16), (std::vector<std::string>{"Cast", "Identity", "Identity", "Cast"}));
  const model::Model converted = model::load_model(fp16).value();
  const auto& graph = converted.proto().graph();
  EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);

  r = run_parity({"convert", identity, "--convert-to=onnx-like-trt-network", "-o", (dir / "like").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--convert-to onnx-like-trt-network needs TensorRT, which parity does not have; closest "
                          "in parity: `parity inspect model X.plan --show layers`"))
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "like"));
  // test_tf2onnx: a TensorFlow model type.
  r = run_parity({"convert", identity, "--model-type=frozen", "-o", (dir / "tf.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--model-type frozen needs TensorFlow, which parity does not have")) << r.output;
}

// Seed 002's engine name: a plan under any name, its header decides how it is read.
TEST(PolygraphySpellings, PlansUnderAnyFileName) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  for (const std::string name : {"identity.engine", "identity.plan", "identity"}) {
    SCOPED_TRACE(name);
    const std::string plan = (dir / name).string();
    CommandResult r = run_parity({"convert", identity, "--fp16", "-o", plan});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(runtime::plan::is_plan_file(plan));
    r = run_parity({"run", plan, "--ref"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = run_parity({"inspect", "model", plan});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "==== parity Plan ====")) << r.output;
  }
  // .onnx stays ONNX: --fp16 there points to --fp-to-fp16.
  const CommandResult r = run_parity({"convert", identity, "--fp16", "-o", (dir / "x.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--fp-to-fp16")) << r.output;
}

// test_run.py TestOther.test_save_load_outputs with Polygraphy's other spellings of the options.
TEST(PolygraphySpellings, SaveResultsAndLoadResults) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  const std::string out0 = (dir / "outputs0.json").string(), out1 = (dir / "outputs1.json").string();
  ASSERT_EQ(run_parity({"run", identity, "--pluginref", "--save-results", out0}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", identity, "--pluginref", "--save-results", out1}).exit_code, 0);
  EXPECT_EQ(read_run_results(out0).runs.size(), 1u);
  CommandResult r = run_parity({"run", identity, "--pluginref", "--load-results", out0, out1});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Difference is within tolerance")) << r.output;
  r = run_parity({"run", identity, "--load-results", out0});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r, "Difference is within tolerance")) << r.output;
  r = run_parity({"run", identity, "--load-results", out0, out0});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Difference is within tolerance")) << r.output;
  // --save-input-data / --load-input-data (test_save_load_inputs).
  const std::string in0 = (dir / "in0.json").string(), in1 = (dir / "in1.json").string();
  ASSERT_EQ(run_parity({"run", identity, "--pluginref", "--save-input-data", in0}).exit_code, 0);
  ASSERT_EQ(run_parity({"run", identity, "--pluginref", "--load-input-data", in0, "--save-input-data", in1}).exit_code, 0);
  r = run_parity({"run", identity, "--pluginref", "--load-input-data", in0, in1});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// test_run.py TestOther.test_0_iterations and test_custom_tolerance.
TEST(PolygraphySpellings, ZeroIterationsRunsNothingAndPasses) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  CommandResult r = run_parity({"run", identity, "--pluginref", "--iterations=0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  PARITY_REQUIRE_RUNNER("ort");
  r = run_parity({"run", identity, "--onnxrt", "--iterations=0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", identity, "--onnxrt", "--onnxrt", "--iterations=0", "--atol=1.0", "--rtol=1.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", identity, "--onnxrt", "--iterations=-1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--iterations must be at least 0, got -1")) << r.output;
}

// test_run.py TestOther.test_custom_per_output_tolerance: the same runner twice with `mark all`
// compares every tensor of the two runs.
TEST(PolygraphySpellings, SameRunnerTwiceWithMarkAll) {
  TempDir dir;
  const std::string model = identity_identity_model(dir);
  const std::vector<std::string> tolerances = {"--atol", "identity_out_0:1.0", "identity_out_2:3.0", "0.5",
                                               "--rtol", "identity_out_0:1.0", "identity_out_2:3.0", "0.5"};
  for (const char* runner : {"--pluginref", "--onnxrt"}) {
    SCOPED_TRACE(runner);
    if (std::string(runner) == "--onnxrt") PARITY_REQUIRE_RUNNER("ort");
    std::vector<std::string> args = {"run", model, runner, runner, "--onnx-outputs", "mark", "all"};
    args.insert(args.end(), tolerances.begin(), tolerances.end());
    const CommandResult r = run_parity(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "PASSED | Output: 'identity_out_0'")) << r.output;
    EXPECT_TRUE(contains(r, "PASSED | Output: 'identity_out_2'")) << r.output;
  }
}

// test_run.py TestOnnxrt and TestOther, case by case, as the tests type them.
TEST(PolygraphySpellings, TestRunOnnxrtCasesVerbatim) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  const std::string identity = identity_model(dir);
  const std::string both = identity_identity_model(dir);
  const std::string out0 = (dir / "outputs0.json").string(), layers = (dir / "layers.json").string();
  const std::string excluded = (dir / "excluded.json").string(), saved = (dir / "saved.onnx").string();
  const std::vector<std::vector<std::string>> passing = {
      {"run", identity, "--onnxrt", "--save-onnx", saved},
      {"run", both, "--onnxrt", "--onnx-outputs", "identity_out_0"},
      {"run", both, "--onnxrt", "--onnx-outputs", "mark", "all", "--save-outputs", layers},
      {"run", both, "--onnxrt", "--onnx-outputs", "mark", "all", "--onnx-exclude-outputs", "identity_out_2",
       "--save-outputs", excluded},
      {"run", identity, "--onnxrt", "--use-subprocess"},
      {"run", identity, "--onnxrt", "--save-outputs", out0, "--seed=1"},
      {"run", both, "--onnxrt", "--val-range", "X:[1.0,2.0]", "[0.5,1.5]"},
      {"run", identity, "--onnxrt", "--postprocess", "top-1", "--compare-func=indices"},
  };
  for (const auto& args : passing) {
    const CommandResult r = run_parity(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_FALSE(model::load_model(saved).value().proto().graph().node().empty());
  const RunResults all = read_run_results(layers);
  ASSERT_EQ(all.runs.size(), 1u);
  EXPECT_EQ(all.runs[0].second.at(0).outputs.names().size(), 2u);
  EXPECT_TRUE(all.runs[0].second.at(0).outputs.contains("identity_out_0"));
  EXPECT_TRUE(all.runs[0].second.at(0).outputs.contains("identity_out_2"));
  const RunResults one = read_run_results(excluded);
  EXPECT_EQ(one.runs.at(0).second.at(0).outputs.names(), std::vector<std::string>{"identity_out_0"});
  // test_exit_status_on_fail_comparison: other inputs, other outputs.
  const CommandResult r = run_parity({"run", identity, "--onnxrt", "--load-outputs", out0, "--seed=2"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

// test_run.py TestLogging: `polygraphy run --silent` and `--log-file` without a model or runner.
TEST(PolygraphySpellings, RunWithoutRunnersWarnsAndPasses) {
  TempDir dir;
  CommandResult r = run_parity({"run", "--silent"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
  for (const fs::path log : {dir / "example" / "example.log", dir / "example.log"}) {
    r = run_parity({"run", "--log-file", log.string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "No runners have been selected. Inference will not be run!")) << r.output;
    EXPECT_NE(read_file(log).find("No runners have been selected"), std::string::npos);
  }
  r = run_parity({"run", identity_model(dir)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "No runners have been selected")) << r.output;
}

// Lines as test_inspect.py's check_lines_match compares them: without "Loading" lines, [V] and
// [W] lines, trailing spaces and parity's closing PASSED line (Polygraphy's inspect prints none).
std::vector<std::string> inspect_lines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find("Loading") != std::string::npos || line.rfind("[V]", 0) == 0 || line.rfind("[W]", 0) == 0) continue;
    if (line.rfind("[I] PASSED | Runtime: ", 0) == 0) continue;
    line.erase(line.find_last_not_of(' ') + 1);
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> expected_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// test_inspect.py's ONNX_CASES for identity and identity_with_initializer: Polygraphy's text, line
// for line (parity's IR version and weights summary only with --show info).
TEST(PolygraphySpellings, InspectModelPrintsPolygraphysText) {
  TempDir dir;
  ModelBuilder identity(8);
  identity.graph().set_name("test_identity");
  identity.input("x", DType::kFloat32, {1, 1, 2, 2}).output("y", DType::kFloat32, {1, 1, 2, 2});
  identity.node("Identity", {"x"}, {"y"});
  const std::string identity_path = (dir / "identity.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(identity.model())), identity_path).throw_if_error();
  ModelBuilder with_init(11);
  with_init.graph().set_name("onnx_graphsurgeon");
  with_init.output("Y", DType::kFloat32, {2, 2});
  Tensor ones(DType::kFloat32, {2, 2});
  for (int64_t i = 0; i < 4; ++i) ones.data<float>()[i] = 1.0f;
  with_init.initializer("X", ones);
  with_init.node("Identity", {"X"}, {"Y"});
  const std::string with_init_path = (dir / "identity_with_initializer.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(with_init.model())), with_init_path).throw_if_error();

  struct Case {
    std::string model;
    std::vector<std::string> show;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {identity_path, {}, R"([I] ==== ONNX Model ====
    Name: test_identity | ONNX Opset: 8

    ---- 1 Graph Input(s) ----
    {x [dtype=float32, shape=(1, 1, 2, 2)]}

    ---- 1 Graph Output(s) ----
    {y [dtype=float32, shape=(1, 1, 2, 2)]}

    ---- 0 Initializer(s) ----

    ---- 1 Node(s) ----)"},
      {identity_path, {"layers"}, R"([I] ==== ONNX Model ====
    Name: test_identity | ONNX Opset: 8

    ---- 1 Graph Input(s) ----
    {x [dtype=float32, shape=(1, 1, 2, 2)]}

    ---- 1 Graph Output(s) ----
    {y [dtype=float32, shape=(1, 1, 2, 2)]}

    ---- 0 Initializer(s) ----
    {}

    ---- 1 Node(s) ----
    Node 0    |  [Op: Identity]
        {x [dtype=float32, shape=(1, 1, 2, 2)]}
         -> {y [dtype=float32, shape=(1, 1, 2, 2)]})"},
      {with_init_path, {"layers"}, R"([I] ==== ONNX Model ====
    Name: onnx_graphsurgeon | ONNX Opset: 11

    ---- 0 Graph Input(s) ----
    {}

    ---- 1 Graph Output(s) ----
    {Y [dtype=float32, shape=(2, 2)]}

    ---- 1 Initializer(s) ----
    {X [dtype=float32, shape=(2, 2)]}

    ---- 1 Node(s) ----
    Node 0    |  [Op: Identity]
        {Initializer | X [dtype=float32, shape=(2, 2)]}
         -> {Y [dtype=float32, shape=(2, 2)]})"},
      {with_init_path, {"layers", "attrs", "weights"}, R"([I] ==== ONNX Model ====
    Name: onnx_graphsurgeon | ONNX Opset: 11

    ---- 0 Graph Input(s) ----
    {}

    ---- 1 Graph Output(s) ----
    {Y [dtype=float32, shape=(2, 2)]}

    ---- 1 Initializer(s) ----
    Initializer | X [dtype=float32, shape=[2, 2]] | Values:
        [[1. 1.]
         [1. 1.]]

    ---- 1 Node(s) ----
    Node 0    |  [Op: Identity]
        {Initializer | X [dtype=float32, shape=(2, 2)]}
         -> {Y [dtype=float32, shape=(2, 2)]})"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"inspect", "model", c.model};
    if (!c.show.empty()) args.push_back("--show");
    args.insert(args.end(), c.show.begin(), c.show.end());
    const CommandResult r = run_parity(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(inspect_lines(r.output), expected_lines(c.expected)) << r.output;
  }
  // parity's additions, asked for.
  const CommandResult info = run_parity({"inspect", "model", identity_path, "--show", "info"});
  EXPECT_TRUE(contains(info, "IR Version: 8")) << info.output;
  EXPECT_TRUE(contains(info, "---- Weights ----")) << info.output;
}

// test_check.py TestLint.test_renaming with Polygraphy's renamable model: unnamed nodes are named
// as Polygraphy's lint names them, unique even against nodes already so named.
TEST(PolygraphySpellings, LintNamesUnnamedNodesAsPolygraphyDoes) {
  TempDir dir;
  ModelBuilder b(11);
  b.input("a", DType::kFloat32, {1, 1}).output("e", DType::kFloat32, {2, 1});
  b.node("Identity", {"a"}, {"b"}, "");
  b.node("Dropout", {"b"}, {"c"}, "polygraphy_unnamed_node_0");
  b.node("Identity", {"c"}, {"d"}, "polygraphy_unnamed_node_0_0");
  b.node("Dropout", {"d"}, {"e"}, "");
  const std::string model = (dir / "renamable.onnx").string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(b.model())), model).throw_if_error();
  const std::string report = (dir / "lint.json").string();
  const CommandResult r = run_parity({"check", "lint", model, "-o", report});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(read_file(report));
  std::vector<std::string> names = json["summary"]["passing"].get<std::vector<std::string>>();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"polygraphy_unnamed_node_0", "polygraphy_unnamed_node_0_0",
                                             "polygraphy_unnamed_node_0_1", "polygraphy_unnamed_node_3"}))
      << json.dump(2);
}

nlohmann::json lint_report(const TempDir& dir, const onnx::ModelProto& proto, const std::string& name, int expected_exit) {
  const std::string model = (dir / (name + ".onnx")).string(), report = (dir / (name + ".json")).string();
  model::save_model(model::Model(std::make_unique<onnx::ModelProto>(proto)), model).throw_if_error();
  const CommandResult r = run_parity({"check", "lint", model, "-o", report});
  EXPECT_EQ(r.exit_code, expected_exit) << r.output;
  return nlohmann::json::parse(read_file(report));
}

// test_check.py's test_duplicate_node_names_caught and test_cleanable_warning, entry for entry.
TEST(PolygraphySpellings, LintEntriesOfOnnxGraphsurgeonChecks) {
  TempDir dir;
  ModelBuilder dup(11);
  dup.graph().set_name("bad_graph_with_duplicate_node_names");
  dup.input("inp", DType::kFloat32, {4, 5}).output("out", DType::kFloat32, {4, 5});
  dup.node("Identity", {"inp"}, {"inter1"}, "identical");
  dup.node("Identity", {"inter1"}, {"out"}, "identical");
  const nlohmann::json duplicate = lint_report(dir, dup.model(), "duplicate", 1);
  ASSERT_FALSE(duplicate["lint_entries"].empty()) << duplicate.dump(2);
  const nlohmann::json expected = {
      {"level", "exception"},
      {"nodes", {"identical"}},
      {"message", "Duplicate node name: 'identical' for nodes with topological IDs: [0, 1] found."},
      {"source", "onnx_graphsurgeon"}};
  EXPECT_EQ(duplicate["lint_entries"][0], expected) << duplicate.dump(2);
  EXPECT_NE(std::find(duplicate["summary"]["failing"].begin(), duplicate["summary"]["failing"].end(), "identical"),
            duplicate["summary"]["failing"].end());

  ModelBuilder cleanable(11);
  cleanable.input("e", DType::kFloat32, {1, 1}).input("f", DType::kFloat32, {1, 1});
  cleanable.output("i", DType::kFloat32, {1, 1});
  add_int_attr(cleanable.node("Concat", {"e", "f"}, {"g"}, "G"), "axis", 0);
  cleanable.node("Dropout", {"f"}, {"h"}, "H");
  cleanable.node("Identity", {"h"}, {"i"}, "I");
  const nlohmann::json report = lint_report(dir, cleanable.model(), "cleanable", 0);
  const auto& entries = report["lint_entries"];
  ASSERT_EQ(entries.size(), 2u) << report.dump(2);
  EXPECT_NE(entries[0]["message"].get<std::string>().find("Input: 'e' does not affect outputs, can be removed"),
            std::string::npos);
  EXPECT_EQ(entries[0]["source"], "onnx_graphsurgeon");
  EXPECT_EQ(entries[0]["level"], "warning");
  EXPECT_NE(entries[1]["message"].get<std::string>().find("Does not affect outputs, can be removed"), std::string::npos);
  EXPECT_EQ(entries[1]["source"], "onnx_graphsurgeon");
  EXPECT_EQ(entries[1]["level"], "warning");
  EXPECT_EQ(entries[1]["nodes"], nlohmann::json::array({"G"}));
}

// test_check.py's test_onnx_spec_check (bad_graph_with_no_name): an exception from onnx_checker.
TEST(PolygraphySpellings, LintReportsAGraphWithoutAName) {
  TempDir dir;
  ModelBuilder b(11);
  b.graph().clear_name();
  b.input("x", DType::kFloat32, {1, 2}).output("y", DType::kFloat32, {1, 2});
  b.node("Identity", {"x"}, {"y"}, "identity");
  const nlohmann::json report = lint_report(dir, b.model(), "no_name", 1);
  bool found = false;
  for (const auto& e : report["lint_entries"])
    found = found || (e["level"] == "exception" && e["source"] == "onnx_checker");
  EXPECT_TRUE(found) << report.dump(2);
}

// test_surgeon.py TestSurgeonInsert: a custom op without --domain lands in the default domain.
TEST(PolygraphySpellings, SurgeonInsertFakeOpWithoutDomain) {
  TempDir dir;
  const std::string model = identity_identity_model(dir);
  struct Case {
    std::string at;
    std::vector<std::string> ops;
  };
  for (const Case& c : {Case{"identity_out_0", {"Identity", "FakeOp", "Identity"}},
                        Case{"identity_out_2", {"Identity", "Identity", "FakeOp"}},
                        Case{"X", {"FakeOp", "Identity", "Identity"}}}) {
    SCOPED_TRACE(c.at);
    const std::string out = (dir / ("outmodel_" + c.at)).string();
    const CommandResult r = run_parity(
        {"surgeon", "insert", model, "-o", out, "--inputs=" + c.at, "--outputs=" + c.at, "--op=FakeOp"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "[W] --op: 'FakeOp' is not an ONNX operator at opset 13")) << r.output;
    EXPECT_EQ(op_types(out), c.ops);
    const model::Model inserted = model::load_model(out).value();
    const auto& graph = inserted.proto().graph();
    ASSERT_EQ(graph.output_size(), 1);
    EXPECT_EQ(graph.output(0).name(), "identity_out_2");
    EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    EXPECT_EQ(graph.input(0).name(), "X");
    for (const auto& node : graph.node()) EXPECT_EQ(node.domain(), "");
  }
}

// test_run.py's TensorRT and TensorFlow cases: one line naming what is missing and what to use.
TEST(PolygraphySpellings, TensorRtAndTensorFlowOptionsNameTheClosestParityOption) {
  TempDir dir;
  const std::string identity = identity_model(dir);
  const std::string both = identity_identity_model(dir);
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"run", identity, "--trt"}, "--trt needs TensorRT, which parity does not have; closest in parity: --plan"},
      {{"run", identity, "--pluginref", "--onnxrt", "--trt"}, "--trt needs TensorRT"},
      {{"run", both, "--trt", "--trt-outputs", "identity_out_0"}, "--trt needs TensorRT"},
      {{"run", both, "--pluginref", "--trt-outputs", "mark", "all"},
       "--trt-outputs needs TensorRT, which parity does not have; closest in parity: --onnx-outputs"},
      {{"run", both, "--pluginref", "--trt-exclude-outputs", "identity_out_2"}, "closest in parity: --onnx-exclude-outputs"},
      {{"run", identity, "--trt", "--plugins", "libnvinfer_plugin.so"}, "--trt needs TensorRT"},
      {{"run", identity, "--pluginref", "--plugins", "libnvinfer_plugin.so"}, "closest in parity: --extension"},
      {{"run", identity, "--pluginref", "--pool-limit", "workspace:1G"}, "--pool-limit needs TensorRT"},
      {{"run", identity, "--pluginref", "--tf32"}, "--tf32 needs TensorRT"},
      {{"convert", identity, "--sparse-weights", "-o", (dir / "s.plan").string()}, "`parity inspect sparsity`"},
      {{"convert", identity, "--version-compatible", "-o", (dir / "v.plan").string()}, "--version-compatible needs TensorRT"},
      {{"run", identity, "--tf"}, "--tf needs TensorFlow, which parity does not have; closest in parity: --ort or --ref"},
      {{"run", identity, "--pluginref", "--tf-outputs", "y"}, "--tf-outputs needs TensorFlow"},
      {{"run", identity, "--onnxrt", "--model-type=frozen"}, "--model-type frozen needs TensorFlow"},
      {{"run", identity, "--pluginref", "--model-type=trt-network-script"}, "--model-type trt-network-script needs TensorRT"},
  };
  for (const auto& c : cases) {
    const CommandResult r = run_parity(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r, c.expected)) << "expected: " << c.expected << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "s.plan"));
  // Refused options stay out of --help and of typo suggestions.
  const CommandResult help = run_parity({"run", "--help"});
  EXPECT_FALSE(contains(help, "--tf32")) << help.output;
  EXPECT_TRUE(contains(help, "--onnxrt")) << help.output;
  EXPECT_TRUE(contains(help, "--pluginref")) << help.output;
}

}  // namespace
}  // namespace parity::testing
