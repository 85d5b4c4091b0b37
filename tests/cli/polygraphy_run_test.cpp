// Polygraphy's `run`/`convert`/`check lint` options from issue 21 on parity: `mark all` with ONNX
// Runtime alone (saved as a golden run and compared with it), --onnx-exclude-outputs with it,
// --save-onnx, convert --onnx-outputs, and --external-data-dir on run and lint. Models: the
// bundled demo model and tests/data/polygraphy_cli (scripts/make_polygraphy_cli_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/formats/polygraphy_json.h"
#include "model/graph.h"
#include "model/model.h"
#include "runners/registry.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDemo = (source_dir() / "models" / "demo.onnx").string();

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void require_ort() {
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  if (ort && (!ort->availability || ort->availability({}).is_ok())) return;
  if (std::getenv("CI")) FAIL() << "ONNX Runtime unavailable; run scripts/setup.sh";
  GTEST_SKIP() << "ONNX Runtime unavailable (run scripts/setup.sh)";
}

std::vector<std::string> output_names(const fs::path& model) {
  const auto graph = model::Graph::from_model(model::load_model(model).value());
  std::vector<std::string> names;
  for (const auto& v : graph->outputs) names.push_back(v->name);
  return names;
}

// Every tensor a node of the model produces, in node order.
std::vector<std::string> produced_names(const fs::path& model) {
  const auto graph = model::Graph::from_model(model::load_model(model).value());
  std::vector<std::string> names;
  for (const auto& node : graph->nodes)
    for (const auto& out : node->outputs)
      if (out && std::find(names.begin(), names.end(), out->name) == names.end()) names.push_back(out->name);
  return names;
}

TEST(PolygraphyRun, MarkAllWithOrtAloneSavesEveryTensorAndIsAGoldenRun) {
  require_ort();
  TempDir dir;
  const std::string golden = (dir / "ort_all.json").string();
  const std::string inputs = (dir / "inputs.json").string();
  CommandResult r = run_parity({"run", kDemo, "--ort", "--onnx-outputs", "mark", "all", "--save-outputs", golden,
                                "--save-inputs", inputs, "--mark-all-window-mb", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Layer-wise Statistics | ort-runner-")) << r.output;
  const RunResults saved = read_run_results(golden);
  ASSERT_EQ(saved.runs.size(), 1u);
  EXPECT_EQ(saved.runs[0].first.rfind("ort-runner-", 0), 0u) << saved.runs[0].first;
  const TensorMap& tensors = saved.runs[0].second.at(0).outputs;
  const std::vector<std::string> expected = produced_names(kDemo);
  ASSERT_EQ(tensors.names().size(), expected.size());
  for (const auto& name : expected) EXPECT_TRUE(tensors.contains(name)) << name;

  // The ORT golden run against parity's runtime, layer by layer, and ORT against it again.
  r = run_parity({"run", kDemo, "--ref", "--onnx-outputs", "mark", "all", "--load-inputs", inputs, "--load-outputs",
                  golden});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "PASSED | All " + std::to_string(expected.size()) + " compared tensor(s)")) << r.output;
  r = run_parity({"run", kDemo, "--ort", "--onnx-outputs", "mark", "all", "--load-inputs", inputs, "--load-outputs",
                  golden, "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "PASSED | All " + std::to_string(expected.size()) + " compared tensor(s)")) << r.output;
}

TEST(PolygraphyRun, MarkAllExcludeOutputsLeavesThemOutOfEveryRunner) {
  require_ort();
  TempDir dir;
  const std::vector<std::string> all = produced_names(kDemo);
  ASSERT_GE(all.size(), 3u);
  const std::string excluded = all[1];
  for (const char* runners : {"--ort", "--ref"}) {
    SCOPED_TRACE(runners);
    const std::string out = (dir / (std::string(runners + 2) + ".json")).string();
    const CommandResult r = run_parity({"run", kDemo, runners, "--onnx-outputs", "mark", "all",
                                        "--onnx-exclude-outputs", excluded, "--save-outputs", out});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const RunResults saved = read_run_results(out);
    const TensorMap& tensors = saved.runs.at(0).second.at(0).outputs;
    EXPECT_EQ(tensors.names().size(), all.size() - 1);
    EXPECT_FALSE(tensors.contains(excluded));
  }
  const CommandResult bad =
      run_parity({"run", kDemo, "--ort", "--onnx-outputs", "mark", "all", "--onnx-exclude-outputs", "no_such"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "cannot exclude 'no_such'")) << bad.output;
}

// Runners that layer-by-layer streaming does not pair (the same peer twice) run as Polygraphy runs
// them: every tensor an output of each run, every one compared.
TEST(PolygraphyRun, MarkAllWithTwoPeersAndNoRefComparesEveryTensor) {
  require_ort();
  const CommandResult r = run_parity({"run", kDemo, "--ort", "--ort", "--onnx-outputs", "mark", "all"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const auto& name : produced_names(kDemo))
    EXPECT_TRUE(contains(r.output, "PASSED | Output: '" + name + "'")) << name << "\n" << r.output;
  const CommandResult fp16 =
      run_parity({"run", kDemo, "--ort", "--ort", "--onnx-outputs", "mark", "all", "--check-fp16-range"});
  EXPECT_EQ(fp16.exit_code, 1) << fp16.output;
  EXPECT_TRUE(contains(fp16.output, "--check-fp16-range checks the ref run's tensors layer by layer")) << fp16.output;
}

TEST(PolygraphyRun, SaveOnnxWritesTheModelTheRunnersLoad) {
  TempDir dir;
  const std::vector<std::string> all = produced_names(kDemo);
  CommandResult r = run_parity({"run", kDemo, "--ref", "--onnx-outputs", all[0], "--save-onnx",
                                (dir / "one.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(output_names(dir / "one.onnx"), std::vector<std::string>{all[0]});
  r = run_parity({"run", kDemo, "--ref", "--onnx-outputs", "mark", "all", "--save-onnx", (dir / "all.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(output_names(dir / "all.onnx").size(), all.size());
  // Without output changes it is the model itself.
  r = run_parity({"run", kDemo, "--ref", "--save-onnx", (dir / "same.onnx").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(output_names(dir / "same.onnx"), output_names(kDemo));
  // The saved model runs and matches the original's outputs.
  r = run_parity({"run", (dir / "all.onnx").string(), "--ref", "--onnx-outputs", output_names(kDemo).at(0)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(PolygraphyConvert, OnnxOutputsMarksAndExcludesOutputs) {
  TempDir dir;
  const std::vector<std::string> all = produced_names(kDemo);
  CommandResult r = run_parity({"convert", kDemo, "-o", (dir / "all.onnx").string(), "--onnx-outputs", "mark", "all",
                                "--onnx-exclude-outputs", all[0]});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> outputs = output_names(dir / "all.onnx");
  EXPECT_EQ(outputs.size(), all.size() - 1);
  EXPECT_EQ(std::count(outputs.begin(), outputs.end(), all[0]), 0);
  // Every marked output has a type, so the model runs on both sides.
  const auto graph = model::Graph::from_model(model::load_model(dir / "all.onnx").value());
  for (const auto& v : graph->outputs) EXPECT_NE(v->dtype, DType::kUndefined) << v->name;
  r = run_parity({"convert", kDemo, "-o", (dir / "two.onnx").string(), "--onnx-outputs", all[1], all[2]});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(output_names(dir / "two.onnx"), (std::vector<std::string>{all[1], all[2]}));
  r = run_parity({"convert", kDemo, "-o", (dir / "bad.onnx").string(), "--onnx-outputs", "no_such_tensor"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(fs::exists(dir / "bad.onnx"));
}

TEST(PolygraphyRun, ExternalDataDirOnRunAndLint) {
  TempDir dir;
  fs::create_directories(dir / "model");
  fs::create_directories(dir / "weights");
  CommandResult r = run_parity({"convert", kDemo, "-o", (dir / "model" / "m.onnx").string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::rename(dir / "model" / "m.onnx.data", dir / "weights" / "m.onnx.data");
  const std::string model = (dir / "model" / "m.onnx").string(), weights = (dir / "weights").string();

  r = run_parity({"run", model, "--ref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::vector<std::vector<std::string>> runs = {{"--ref"}, {"--ref", "--onnx-outputs", "mark", "all"}};
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  if (ort && (!ort->availability || ort->availability({}).is_ok())) {
    runs.push_back({"--ref", "--ort"});
    runs.push_back({"--ort", "--onnx-outputs", "mark", "all"});
  }
  for (const auto& runners : runs) {
    for (const char* flag : {"--external-data-dir", "--load-external-data", "--ext"}) {
      std::vector<std::string> args = {"run", model, flag, weights};
      args.insert(args.end(), runners.begin(), runners.end());
      r = run_parity(args);
      EXPECT_EQ(r.exit_code, 0) << flag << " " << r.output;
    }
  }
  // The run leaves nothing behind in the weights folder.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "weights"), fs::directory_iterator{}), 1);

  r = run_parity({"check", "lint", model});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = run_parity({"check", "lint", model, "--ext", weights});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace parity::testing
