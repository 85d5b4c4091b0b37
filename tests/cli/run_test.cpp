// End-to-end tests of `parity run`: Polygraphy-identical inputs and comparisons, runner order,
// layer-by-layer comparison and bad input.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "compare/layerwise.h"
#include "core/formats/polygraphy_json.h"
#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

const std::string kFixtures = (polygraphy_fixtures_dir()).string();
const std::string kIdentityModel = kFixtures + "/identity_inputs_seed1.onnx";
const std::string kRunResults = kFixtures + "/run_results.json";

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// Conv -> BatchNormalization -> MaxPool -> Conv -> AveragePool on x[1, 3, 16, 16], seeded weights.
void write_conv_model(const std::string& path) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("convnet");
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto init = [&](const std::string& name, std::vector<int64_t> dims, float scale, float offset) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(offset + scale * normal(rng));
  };
  init("w1", {8, 3, 3, 3}, 0.3f, 0);
  init("b1", {8}, 1, 0);
  init("scale", {8}, 0.1f, 1);
  init("bias", {8}, 1, 0);
  init("mean", {8}, 1, 0);
  init("var", {8}, 0.1f, 1);
  init("w2", {4, 8, 3, 3}, 0.1f, 0);
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out + "_node");
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto ints = [](onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  ints(node("Conv", {"x", "w1", "b1"}, "c1"), "pads", {1, 1, 1, 1});
  node("BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, "bn");
  auto* pool = node("MaxPool", {"bn"}, "p1");
  ints(pool, "kernel_shape", {2, 2});
  ints(pool, "strides", {2, 2});
  ints(node("Conv", {"p1", "w2"}, "c2"), "pads", {1, 1, 1, 1});
  auto* avg = node("AveragePool", {"c2"}, "y");
  ints(avg, "kernel_shape", {2, 2});
  ints(avg, "strides", {2, 2});
  auto io = [](onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  io(g->add_input(), "x", {1, 3, 16, 16});
  io(g->add_output(), "y", {1, 4, 4, 4});
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
}

TEST(RunCommand, SaveInputsReproducesPolygraphyBitForBit) {
  TempDir tmp;
  const std::string saved = (tmp / "in.json").string();
  auto r = run_parity({"run", kIdentityModel, "--ref", "--seed", "1", "--iterations", "2", "--val-range", "ids:[0,10]",
                       "k:[-5,5]", "--save-inputs", saved});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_file(saved), read_file(kFixtures + "/inputs_seed1.json"));
}

TEST(RunCommand, LoadedPolygraphyResultsCompareAsPolygraphyDoes) {
  // Figures and verdicts printed by `polygraphy run --load-outputs run_results.json` (0.49.27).
  auto r = run_parity({"run", "--load-outputs", kRunResults});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  for (const char* line : {
           "Minimum Required Tolerance: elemwise error | [abs=9.8884e-05] OR [rel=0.00010005] (requirements may be "
           "lower if both abs/rel tolerances are set)",
           "Absolute Difference | Stats: mean=4.7783e-05, std-dev=3.0654e-05, var=9.3966e-10, median=4.2021e-05, "
           "min=1.1438e-08 at (0, 0, 0, 2), max=9.8884e-05 at (0, 2, 2, 0), avg-magnitude=4.7783e-05, p90=8.834e-05, "
           "p95=9.4074e-05, p99=9.7932e-05",
           "Relative Difference | Stats: mean=0.00010001, std-dev=2.503e-08, var=6.265e-16, median=0.00010002, "
           "min=9.9955e-05 at (0, 1, 0, 1), max=0.00010005 at (0, 1, 2, 3), avg-magnitude=0.00010001, "
           "p90=0.00010004, p95=0.00010004, p99=0.00010005",
           "Minimum Required Tolerance: elemwise error | [abs=9.65e-05] OR [rel=0.00010004]",
           "FAILED | Output: 'y' | Difference exceeds tolerance (rel=1e-05, abs=1e-05)",
           "PASSED | Output: 'y_half' | Difference is within tolerance (rel=1e-05, abs=1e-05)",
           "PASSED | Output: 'argmax' | Difference is within tolerance (rel=1e-05, abs=1e-05)",
           "Minimum Required Tolerance: elemwise error | [abs=0] OR [rel=nan]",
           "PASSED | Output: 'positive' | Difference is within tolerance (rel=1e-05, abs=1e-05)",
           "FAILED | Mismatched outputs: ['y']",
           "Accuracy Summary | onnxrt-runner-N0-01/02/26-10:00:00 vs. trt-runner-N0-01/02/26-10:00:01 | Passed: 0/2 "
           "iterations | Pass Rate: 0.0%",
       })
    EXPECT_TRUE(contains(r, line)) << "missing: " << line << "\n" << r.output;

  auto loose = run_parity({"run", "--load-outputs", kRunResults, "--atol", "1e-4"});
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  EXPECT_TRUE(contains(loose, "Passed: 2/2 iterations | Pass Rate: 100.0%")) << loose.output;

  auto mean = run_parity({"run", "--load-outputs", kRunResults, "--check-error-stat", "mean", "--atol", "4.5e-5"});
  EXPECT_EQ(mean.exit_code, 1);
  EXPECT_TRUE(contains(mean, "Minimum Required Tolerance: mean error | [abs=4.7783e-05] OR [rel=0.00010001]"));
  EXPECT_TRUE(contains(mean, "Passed: 1/2 iterations | Pass Rate: 50.0%")) << mean.output;

  auto per_output = run_parity({"run", "--load-outputs", kRunResults, "--atol", "y:1e-4"});
  EXPECT_EQ(per_output.exit_code, 0) << per_output.output;
}

TEST(RunCommand, RefAloneAndRunnersInFlagOrder) {
  auto alone = run_parity({"run", kIdentityModel, "--ref"});
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  auto twice = run_parity({"run", kIdentityModel, "--ref", "--ref", "--iterations", "2", "--val-range", "[0,5]"});
  EXPECT_EQ(twice.exit_code, 0) << twice.output;
  EXPECT_TRUE(contains(twice, "Passed: 2/2 iterations")) << twice.output;
  PARITY_REQUIRE_RUNNER("ort");
  auto both = run_parity({"run", kIdentityModel, "--ort", "--ref"});
  EXPECT_EQ(both.exit_code, 0) << both.output;
  const size_t ort_pos = both.output.find("ort-runner"), ref_pos = both.output.find("ref-runner");
  EXPECT_LT(ort_pos, ref_pos) << "runners must run in the order of their flags";
  auto first = run_parity({"run", kIdentityModel, "--ref", "--ort", "--ort", "--compare-to", "first"});
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first, "Accuracy Comparison | ref-runner-N0") && contains(first, "vs. ort-runner-N2")) << first.output;
  EXPECT_TRUE(contains(first, "Accuracy Comparison | ref-runner-N0")) << first.output;
}

TEST(RunCommand, RepeatedRunnerFlagsFollowTheCommandLineExactly) {
  PARITY_REQUIRE_RUNNER("ort");
  // Polygraphy allows a runner twice; each occurrence is its own instance, in command-line order.
  auto r = run_parity({"run", kIdentityModel, "--ref", "--ort", "--ref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Accuracy Comparison | ref-runner-N0")) << r.output;
  EXPECT_TRUE(contains(r, "vs. ort-runner-N1")) << r.output;
  EXPECT_TRUE(contains(r, "Accuracy Comparison | ort-runner-N1")) << r.output;
  EXPECT_TRUE(contains(r, "vs. ref-runner-N2")) << r.output;
  EXPECT_FALSE(contains(r, "ref-runner-N1")) << "a repeated flag must not be moved next to its first occurrence\n"
                                             << r.output;
}

// Replaces every JSON key "from" by "to" in a saved RunResults file.
void rename_output_key(const std::string& path, const std::string& from, const std::string& to) {
  std::string json = read_file(path);
  const std::string key = "\"" + from + "\":";
  size_t n = 0;
  for (size_t pos = json.find(key); pos != std::string::npos; pos = json.find(key, pos + 1), ++n)
    json.replace(pos, key.size(), "\"" + to + "\":");
  ASSERT_GT(n, 0u) << "no key " << from << " in " << path;
  write_file(path, json);
}

TEST(RunCommand, TriviallyDifferentOutputNamesArePairedWithAWarning) {
  TempDir tmp;
  const std::string saved = (tmp / "saved.json").string();
  ASSERT_EQ(run_parity({"run", kIdentityModel, "--ref", "--save-outputs", saved}).exit_code, 0);
  // The saved run names its output "x_out:0" (TensorFlow style); the model says "x_out".
  rename_output_key(saved, "x_out", "x_out:0");
  auto r = run_parity({"run", kIdentityModel, "--ref", "--load-outputs", saved});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "output 'x_out' with")) << r.output;
  EXPECT_TRUE(contains(r, "output 'x_out:0'")) << r.output;
  EXPECT_TRUE(contains(r, "Comparing Output: 'x_out' (dtype=float32, shape=(1, 3, 4, 4)) with 'x_out:0'")) << r.output;
  EXPECT_TRUE(contains(r, "[W]")) << r.output;

  // Two candidates ("x_out:0" and "x_out:1" for "x_out") are no unique match: the sets differ.
  const std::string ambiguous = (tmp / "ambiguous.json").string();
  ASSERT_EQ(run_parity({"run", kIdentityModel, "--ref", "--save-outputs", ambiguous}).exit_code, 0);
  rename_output_key(ambiguous, "x_out", "x_out:0");
  rename_output_key(ambiguous, "h_out", "x_out:1");
  auto bad = run_parity({"run", kIdentityModel, "--ref", "--load-outputs", ambiguous});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad, "differ: ")) << bad.output;
  EXPECT_TRUE(contains(bad, "x_out:0, ids_out, mask_out, x_out:1, k_out")) << bad.output;
}

TEST(RunCommand, LoadInputsSaveOutputsAndValidate) {
  TempDir tmp;
  const std::string in = (tmp / "in.json").string(), out = (tmp / "out.json").string();
  ASSERT_EQ(run_parity({"run", kIdentityModel, "--ref", "--save-inputs", in}).exit_code, 0);
  auto r = run_parity({"run", kIdentityModel, "--ref", "--load-inputs", in, "--save-outputs", out, "--validate"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "PASSED | Output Validation")) << r.output;
  const RunResults saved = read_run_results(out);
  ASSERT_EQ(saved.size(), 1u);
  const auto feeds = read_inputs_json(in);
  EXPECT_TRUE(saved.runs[0].second[0].outputs.at("x_out").bit_equal(feeds[0].at("x")));
  // The saved results compare against a fresh run of the same model.
  auto again = run_parity({"run", kIdentityModel, "--ref", "--load-inputs", in, "--load-outputs", out});
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

// numpy's default float64 data for a float32 input is cast with a warning, as Polygraphy casts it.
TEST(RunCommand, LoadedFloat64InputsAreCastToTheModelsFloat32) {
  TempDir tmp;
  TensorMap wide = read_inputs_json(kFixtures + "/inputs_seed1.json")[0];
  wide.set("x", wide.at("x").cast(DType::kFloat64));
  const std::string in = (tmp / "wide.json").string();
  write_inputs_json(in, {wide});
  const auto r = run_parity({"run", kIdentityModel, "--ref", "--load-inputs", in});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Input tensor: x | Buffer dtype (float64) does not match expected input dtype (float32), "
                          "attempting to cast.")) << r.output;
}

TEST(RunCommand, LayerwiseMarkAllReportsEveryTensor) {
  TempDir tmp;
  const std::string model = (tmp / "convnet.onnx").string();
  write_conv_model(model);
  auto stats = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(contains(stats, "Layer-wise Statistics")) << stats.output;
  EXPECT_TRUE(contains(stats, "Memory | peak resident:")) << stats.output;
  PARITY_REQUIRE_RUNNER("ort");
  auto r = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "1e-4", "--rtol",
                       "1e-3", "--mark-all-window-mb", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* t : {" c1 ", " bn ", " p1 ", " c2 ", " y "}) EXPECT_TRUE(contains(r, t)) << t << "\n" << r.output;
  EXPECT_TRUE(contains(r, "PASSED | All 5 compared tensor(s) are within tolerance")) << r.output;
  // A tolerance nothing meets: the first layer is reported as where the runners diverge.
  auto strict = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_TRUE(contains(strict, "First divergence beyond tolerance at layer")) << strict.output;
  // Per-tensor tolerances apply to intermediate tensors too, and must name one.
  auto per_tensor = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "0", "--rtol",
                                "0", "c1:1", "bn:1", "p1:1", "c2:1", "y:1"});
  EXPECT_EQ(per_tensor.exit_code, 0) << per_tensor.output;
  auto unknown = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "zz:1"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown, "--atol: no tensor named 'zz'; tensors: c1, bn, p1, c2, y")) << unknown.output;
}

// x[1, 4, 256, 256] through `steps` alternating Neg and Abs nodes: every intermediate is 1 MiB, and
// the working set of either runtime is a few of them.
void write_chain_model(const std::string& path, int steps) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("chain");
  std::string prev = "x";
  for (int i = 0; i < steps; ++i) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(i % 2 ? "Abs" : "Neg");
    n->set_name("step" + std::to_string(i));
    n->add_input(prev);
    prev = i + 1 == steps ? "y" : "t" + std::to_string(i);
    n->add_output(prev);
  }
  for (auto [vi, name] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 4, 256, 256}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
}

// "256.0 MiB" / "1.30 GiB" / "12.0 KiB" after `label` in the output, in MiB.
double mib_after(const std::string& output, const std::string& label) {
  const size_t at = output.find(label);
  if (at == std::string::npos) return -1;
  size_t end = 0;
  const double v = std::stod(output.substr(at + label.size()), &end);
  const std::string unit = output.substr(at + label.size() + end + 1, 3);
  return unit == "GiB" ? v * 1024 : unit == "KiB" ? v / 1024 : v;
}

// The runtimes take turns window by window: the peer is never alive while the reference runs, and
// no more than one window of its outputs is held.
TEST(Layerwise, RuntimesTakeTurnsHoldingOneWindow) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir tmp;
  const std::string model = (tmp / "chain.onnx").string();
  write_chain_model(model, 40);
  TensorMap feed;
  Tensor x(DType::kFloat32, {1, 4, 256, 256});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (float& v : x.values<float>()) v = uniform(rng);
  feed.set("x", x);
  compare::LayerwiseOptions options;
  options.window_bytes = int64_t{4} << 20;
  const compare::LayerwiseReport report = compare::compare_layerwise(model, "ort", {}, feed, options);
  EXPECT_TRUE(report.passed());
  ASSERT_EQ(report.layers.size(), 40u);
  for (const auto& layer : report.layers) EXPECT_TRUE(layer.compared) << layer.name << ": " << layer.note;
  EXPECT_EQ(report.peer_runs, 10);
  EXPECT_LE(report.peak_peer_bytes_held, options.window_bytes);
  EXPECT_EQ(report.reference_steps_with_peer_alive, 0);
}

// Peak memory of `mark all` stays near one runtime's working set plus a window, far below the sum of
// all intermediates (200 MiB per runtime here), measured by the process itself (getrusage).
TEST(RunCommand, MarkAllPeakMemoryIsFarBelowAllTensors) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir tmp;
  const std::string model = (tmp / "chain.onnx").string();
  write_chain_model(model, 200);
  auto r = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--mark-all-window-mb", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double peak = mib_after(r.output, "peak resident: ");
  const double all = mib_after(r.output, "all intermediate tensors together: ");
  EXPECT_NEAR(all, 400.0, 1.0) << r.output;
  EXPECT_GT(peak, 0) << r.output;
  EXPECT_LT(peak, all / 4) << r.output;  // measured: 66 MiB of 400 MiB
}

TEST(RunCommand, OnnxOutputsSelectsTensors) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir tmp;
  const std::string model = (tmp / "convnet.onnx").string();
  write_conv_model(model);
  auto r = run_parity({"run", model, "--ref", "--ort", "--onnx-outputs", "c1", "p1", "--atol", "1e-4", "--rtol", "1e-3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Outputs: ['c1', 'p1']")) << r.output;
  auto bad = run_parity({"run", model, "--ref", "--onnx-outputs", "nope"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad, "no tensor of that name; tensors include: c1, bn, p1, c2, y")) << bad.output;
}

TEST(RunCommand, BadInputIsOneClearErrorExit1) {
  TempDir tmp;
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::string inputs = "x, ids, mask, h, k";
  std::vector<Case> cases = {
      {{"run", kIdentityModel, "--ref", "--input-shapes", "nope:[1,2]"}, "input shape given for 'nope', but the model has no such input; inputs: " + inputs},
      {{"run", kIdentityModel, "--ref", "--val-range", "nope:[0,1]"}, "value range given for 'nope', but the model has no such input; inputs: " + inputs},
      {{"run", kIdentityModel, "--ref", "--input-shapes", "x:[1,3,5,5]"}, "input shape (1, 3, 5, 5) for 'x' contradicts the model's shape"},
      {{"run", "--load-outputs", kRunResults, "--atol", "nope:1e-3"}, "--atol: no output named 'nope'; outputs: y, y_half, argmax, positive"},
      {{"run", kIdentityModel, "--ref", "--load-outputs", kRunResults}, "the outputs of ref-runner"},
      {{"run", kIdentityModel, "--ref", "--val-range", "[0]"}, "must be [name:][min,max]"},
      {{"run", (tmp / "missing.onnx").string(), "--ref"}, "does not exist"},
      {{"run", kIdentityModel, "--ref", "--check-error-stat", "worst"}, "invalid --check-error-stat 'worst'"},
  };
  // Loaded inputs with a missing input and with a wrong dtype.
  TensorMap only_x;
  only_x.set("x", Tensor(DType::kFloat32, {1, 3, 4, 4}));
  write_inputs_json((tmp / "missing.json").string(), {only_x});
  cases.push_back({{"run", kIdentityModel, "--ref", "--load-inputs", (tmp / "missing.json").string()},
                   "input 'ids' of ref-runner"});
  const auto good = read_inputs_json(kFixtures + "/inputs_seed1.json");
  TensorMap wrong = good[0];
  wrong.set("x", wrong.at("x").cast(DType::kInt32));
  write_inputs_json((tmp / "wrong.json").string(), {wrong});
  cases.push_back({{"run", kIdentityModel, "--ref", "--load-inputs", (tmp / "wrong.json").string()},
                   "input 'x' of iteration 0 has dtype int32 but ref-runner"});
  for (const auto& c : cases) {
    auto r = run_parity(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r, c.expected)) << "expected: " << c.expected << "\n" << r.output;
    EXPECT_TRUE(contains(r, "[E]")) << r.output;
  }
}

TEST(RunCommand, BundledDemoModel) {
  const std::string demo = (source_dir() / "models" / "demo.onnx").string();
  auto r = run_parity({"run", demo, "--ref", "--validate"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  PARITY_REQUIRE_RUNNER("ort");
  auto both = run_parity({"run", demo, "--ref", "--ort", "--atol", "1e-5", "--rtol", "1e-4"});
  EXPECT_EQ(both.exit_code, 0) << both.output;
  auto layers = run_parity({"run", demo, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--atol", "1e-5", "--rtol", "1e-3"});
  EXPECT_EQ(layers.exit_code, 0) << layers.output;
}

}  // namespace
}  // namespace parity::testing

namespace parity::testing {
namespace {

// A real third-party model: PaddleOCR's PP-OCRv4 text detector (scripts/setup.sh fetches it).
TEST(RunCommand, PPOCRv4DetectionEndToEnd) {
  const std::string model = (source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
  PARITY_REQUIRE_FILE(model);
  auto ref = run_parity({"run", model, "--ref", "--input-shapes", "x:[1,3,320,320]", "--validate"});
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  PARITY_REQUIRE_RUNNER("ort");
  auto both = run_parity({"run", model, "--ref", "--ort", "--input-shapes", "x:[1,3,320,320]", "--atol", "1e-4",
                          "--rtol", "1e-2", "--check-error-stat", "median"});
  EXPECT_EQ(both.exit_code, 0) << both.output;
  // Every layer, streamed in windows of at most 8 MiB of ORT outputs.
  auto layers = run_parity({"run", model, "--ref", "--ort", "--input-shapes", "x:[1,3,320,320]", "--onnx-outputs",
                            "mark", "all", "--mark-all-window-mb", "8", "--atol", "1e-3", "--rtol", "1e-3",
                            "--check-error-stat", "median"});
  EXPECT_TRUE(contains(layers, "Layer-wise Comparison")) << layers.output;
  EXPECT_TRUE(contains(layers, "672 tensor(s)")) << layers.output;
  EXPECT_TRUE(contains(layers, "conv2d_")) << layers.output;
  EXPECT_TRUE(contains(layers, "Memory | peak resident:")) << layers.output;
  EXPECT_FALSE(contains(layers, "ort runs (windows): 1\n")) << "expected several windows\n" << layers.output;
}

TEST(RunCommand, TrtexecErrorStatisticsOnTheDemoModel) {
  PARITY_REQUIRE_RUNNER("ort");
  const std::string demo = (source_dir() / "models" / "demo.onnx").string();
  // ref and ORT agree to float32 rounding: every norm is far below these tolerances.
  for (const std::string stat : {"l1", "l2", "linf"}) {
    auto r = run_parity({"run", demo, "--ref", "--ort", "--check-error-stat", stat, "--atol", "1e-4"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "Checking " + stat + " error")) << r.output;
    EXPECT_TRUE(contains(r, "Minimum Required Tolerance: " + stat + " norm of the difference")) << r.output;
  }
  auto cosine = run_parity({"run", demo, "--ref", "--ort", "--check-error-stat", "cosine", "--atol", "1e-6"});
  EXPECT_EQ(cosine.exit_code, 0) << cosine.output;
  EXPECT_TRUE(contains(cosine, "cosine distance (1 - cos)")) << cosine.output;
  auto l0 = run_parity({"run", demo, "--ref", "--ort", "--check-error-stat", "l0", "--atol", "1e-4"});
  EXPECT_EQ(l0.exit_code, 0) << l0.output;
  EXPECT_TRUE(contains(l0, "Fraction of elements outside atol + rtol*|ref|: 0 ")) << l0.output;
  // Zero tolerances: the differing float32 roundings fail the norms (both forms exceed 0).
  auto strict = run_parity({"run", demo, "--ref", "--ort", "--check-error-stat", "l2", "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  auto bad = run_parity({"run", demo, "--ref", "--check-error-stat", "l3"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad, "invalid --check-error-stat 'l3'; valid: elemwise, max, mean, median, quantile, l0, l1, "
                            "l2, linf, cosine")) << bad.output;
}

TEST(RunCommand, LoadOutputsReadsOnnxTestDataFolders) {
  const auto test_dir = onnx_testdata_dir() / "node" / "test_add";
  PARITY_REQUIRE_FILE(test_dir / "model.onnx");
  const std::string model = (test_dir / "model.onnx").string();
  // A folder of test_data_set_N folders, and one set folder (output_K.pb files) directly.
  for (const auto& data : {test_dir, test_dir / "test_data_set_0"}) {
    auto r = run_parity({"run", model, "--ref", "--load-inputs", data.string(), "--load-outputs", data.string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r, "vs. onnx-test-data")) << r.output;
    EXPECT_TRUE(contains(r, "PASSED | Output: 'sum'")) << r.output;
  }
  // Expected outputs of another test fail the comparison.
  const auto other = onnx_testdata_dir() / "node" / "test_sub";
  auto wrong = run_parity({"run", model, "--ref", "--load-inputs", test_dir.string(), "--load-outputs", other.string()});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  // A folder without test data is one clear error.
  TempDir tmp;
  auto empty = run_parity({"run", model, "--ref", "--load-inputs", test_dir.string(), "--load-outputs", tmp.path().string()});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_TRUE(contains(empty, "holds neither output_K.pb files nor test_data_set_N folders")) << empty.output;
}

}  // namespace
}  // namespace parity::testing
