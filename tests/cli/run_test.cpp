// End-to-end tests of `parity run`: Polygraphy-identical inputs and comparisons, runner order,
// layer-by-layer comparison and bad input.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/formats/polygraphy_json.h"
#include "runners/registry.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

const std::string kFixtures = (fixtures_dir() / "polygraphy").string();
const std::string kIdentityModel = kFixtures + "/identity_inputs_seed1.onnx";
const std::string kRunResults = kFixtures + "/run_results.json";

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

bool ort_available() {
  const RunnerInfo* ort = RunnerRegistry::instance().find("ort");
  return ort && (!ort->availability || ort->availability(nullptr).is_ok());
}

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
  if (!ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
  auto both = run_parity({"run", kIdentityModel, "--ort", "--ref"});
  EXPECT_EQ(both.exit_code, 0) << both.output;
  const size_t ort_pos = both.output.find("ort-runner"), ref_pos = both.output.find("ref-runner");
  EXPECT_LT(ort_pos, ref_pos) << "runners must run in the order of their flags";
  auto first = run_parity({"run", kIdentityModel, "--ref", "--ort", "--ort", "--compare-to", "first"});
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first, "Accuracy Comparison | ref-runner-N0") && contains(first, "vs. ort-runner-N2")) << first.output;
  EXPECT_TRUE(contains(first, "Accuracy Comparison | ref-runner-N0")) << first.output;
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

TEST(RunCommand, LayerwiseMarkAllReportsEveryTensor) {
  TempDir tmp;
  const std::string model = (tmp / "convnet.onnx").string();
  write_conv_model(model);
  auto stats = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(contains(stats, "Layer-wise Statistics")) << stats.output;
  EXPECT_TRUE(contains(stats, "Memory | peak resident:")) << stats.output;
  if (!ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
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

TEST(RunCommand, OnnxOutputsSelectsTensors) {
  if (!ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
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
      {{"run", kIdentityModel}, "nothing to run"},
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
  wrong.set("x", wrong.at("x").cast(DType::kFloat64));
  write_inputs_json((tmp / "wrong.json").string(), {wrong});
  cases.push_back({{"run", kIdentityModel, "--ref", "--load-inputs", (tmp / "wrong.json").string()},
                   "input 'x' of iteration 0 has dtype float64 but ref-runner"});
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
  if (contains(r, "has no kernel for op")) GTEST_SKIP() << "ref kernels missing: " << r.last_line();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (!ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
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
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "PP-OCRv4 model not fetched (run scripts/setup.sh)";
  auto ref = run_parity({"run", model, "--ref", "--input-shapes", "x:[1,3,320,320]", "--validate"});
  if (contains(ref, "has no kernel for op")) GTEST_SKIP() << "ref kernels missing: " << ref.last_line();
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  if (!ort_available()) GTEST_SKIP() << "ONNX Runtime unavailable";
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

}  // namespace
}  // namespace parity::testing
