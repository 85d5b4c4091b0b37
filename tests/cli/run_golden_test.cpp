// `run --onnx-outputs mark all` against a stored golden run (--load-outputs) and saving one
// (--save-outputs): Polygraphy's two-machine workflow, streamed.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/formats/polygraphy_json.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

const std::string kFixtures = (polygraphy_fixtures_dir()).string();
const std::string kGolden = kFixtures + "/hello_deepa_markall_outputs.json";
const std::string kGoldenInputs = kFixtures + "/hello_deepa_markall_inputs.json";
const std::string kHelloDeepa = (source_dir() / ".cache/npm/openwakeword/models/hello_deepa.onnx").string();

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// The number before `unit` after `label` ("peak resident: 21.6 MiB"), in MiB.
double mib_after(const std::string& output, const std::string& label) {
  const size_t at = output.find(label);
  if (at == std::string::npos) return -1;
  size_t end = 0;
  const double v = std::stod(output.substr(at + label.size()), &end);
  const std::string unit = output.substr(at + label.size() + end + 1, 3);
  return unit == "GiB" ? v * 1024 : unit == "KiB" ? v / 1024 : v;
}

// x[1, 4, 256, 256] through `steps` alternating Neg/Abs nodes: 1 MiB per intermediate.
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

// Polygraphy 0.49's `mark all` run of hello_deepa on ONNX Runtime, compared layer by layer with
// parity's ref on the same inputs: every stored tensor is compared, constants (which Polygraphy
// does not mark) are named as not stored.
TEST(RunGolden, ComparesPolygraphysMarkAllFileLayerByLayer) {
  ASSERT_TRUE(std::filesystem::exists(kHelloDeepa)) << "run scripts/setup.sh (openwakeword models)";
  auto r = run_parity({"run", kHelloDeepa, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", kGolden,
                       "--load-inputs", kGoldenInputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "vs. onnxrt-runner-N0-11/23/26-06:01:35 | 29 tensor(s)")) << r.output;
  EXPECT_TRUE(contains(r, "PASSED | All 25 compared tensor(s) are within tolerance")) << r.output;
  EXPECT_TRUE(contains(r, "skipped (not in hello_deepa_markall_outputs.json)")) << r.output;
  EXPECT_TRUE(contains(r, "stored tensors held at once: 9.4 KiB of the file's 27.4 KiB")) << r.output;

  // A tolerance tighter than ORT's Gemm differences: the first divergence is named.
  auto tight = run_parity({"run", kHelloDeepa, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", kGolden,
                           "--load-inputs", kGoldenInputs, "--atol", "1e-9", "--rtol", "1e-9"});
  EXPECT_EQ(tight.exit_code, 1) << tight.output;
  EXPECT_TRUE(contains(tight, "First divergence beyond tolerance at layer 1: tensor '/layer1/Gemm_output_0'"))
      << tight.output;
}

TEST(RunGolden, AGoldenRunOfAnotherModelIsOneClearLine) {
  auto r = run_parity({"run", (source_dir() / "models/demo.onnx").string(), "--ref", "--onnx-outputs", "mark", "all",
                       "--load-outputs", kGolden});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "was not saved from")) << r.output;
  EXPECT_TRUE(contains(r, "25 of its 25 tensor(s) are produced by no node of the model")) << r.output;
  auto inputs = run_parity({"run", kHelloDeepa, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs",
                            kGoldenInputs});
  EXPECT_EQ(inputs.exit_code, 1) << inputs.output;
  EXPECT_TRUE(contains(inputs, "not a Polygraphy RunResults file")) << inputs.output;
  // More feeds than stored iterations.
  auto more = run_parity({"run", kHelloDeepa, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", kGolden,
                          "--iterations", "2"});
  EXPECT_EQ(more.exit_code, 1) << more.output;
  EXPECT_TRUE(contains(more, "has 1 iteration(s) but this run feeds more")) << more.output;
}

// `mark all --save-outputs` writes a RunResults file with every layer of both runners, which
// `inspect data` and the whole-file reader read, and which serves as the golden run next time.
TEST(RunGolden, SavedMarkAllFileIsPolygraphysFormatAndAGoldenRun) {
  TempDir tmp;
  const std::string saved = (tmp / "golden.json").string();
  auto r = run_parity({"run", kHelloDeepa, "--ref", "--ort", "--onnx-outputs", "mark", "all", "--save-outputs", saved,
                       "--load-inputs", kGoldenInputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunResults results = read_run_results(saved);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results.runs[0].first.rfind("ref-runner-", 0), 0u);
  EXPECT_EQ(results.runs[1].first.rfind("ort-runner-", 0), 0u);
  for (const auto& run : results.runs) {
    ASSERT_EQ(run.second.size(), 1u);
    EXPECT_EQ(run.second[0].outputs.size(), 29u) << run.first;  // constants included: parity marks them
  }
  EXPECT_EQ(read_file(saved), run_results_to_json(results));  // exactly as Polygraphy's serializer writes it
  auto inspect = run_parity({"inspect", "data", saved});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_TRUE(contains(inspect, "Run Results (2 runners)")) << inspect.output;
  EXPECT_TRUE(contains(inspect, "/layer1/Gemm_output_0 [dtype=float32, shape=(1, 32)]")) << inspect.output;

  auto again = run_parity({"run", kHelloDeepa, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", saved,
                           "--load-inputs", kGoldenInputs});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again, "PASSED | All 29 compared tensor(s) are within tolerance")) << again.output;
}

// The peak resident memory of comparing a 1-layer chain against its saved outputs: the process's own
// footprint (libraries, the operator schemas) plus one tensor, the baseline of the test below.
double comparing_peak_of_one_layer(const TempDir& tmp) {
  const std::string model = (tmp / "chain1.onnx").string();
  write_chain_model(model, 1);
  const std::string saved = (tmp / "golden1.json").string();
  auto save = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--save-outputs", saved});
  EXPECT_EQ(save.exit_code, 0) << save.output;
  auto r = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", saved});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return mib_after(r.output, "peak resident: ");
}

// Saving and comparing stream: a 60-layer run of 1 MiB tensors is saved (80 MiB of JSON) and compared
// against with the process's peak memory below the file's size, and comparing holds about what a
// 1-layer comparison holds (a quarter of the file allowed for allocator slack), not the file.
TEST(RunGolden, PeakMemoryStaysBelowTheGoldenFilesSize) {
  TempDir tmp;
  const double baseline = comparing_peak_of_one_layer(tmp);
  ASSERT_GT(baseline, 0);
  const std::string model = (tmp / "chain.onnx").string();
  write_chain_model(model, 60);
  const std::string saved = (tmp / "golden.json").string();
  auto save = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--save-outputs", saved});
  ASSERT_EQ(save.exit_code, 0) << save.output;
  const double file_mib = static_cast<double>(std::filesystem::file_size(saved)) / (1 << 20);
  EXPECT_GT(file_mib, 75.0);
  EXPECT_LT(mib_after(save.output, "peak resident: "), file_mib) << save.output;

  auto r = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--load-outputs", saved});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "PASSED | All 60 compared tensor(s) are within tolerance")) << r.output;
  EXPECT_NEAR(mib_after(r.output, "stored tensors held at once: "), 1.0, 0.01) << r.output;
  const double peak = mib_after(r.output, "peak resident: ");
  EXPECT_GT(peak, 0) << r.output;
  EXPECT_LT(peak, baseline + file_mib / 4) << r.output;
  std::cout << "golden file " << file_mib << " MiB; saving peak " << mib_after(save.output, "peak resident: ")
            << " MiB; comparing peak " << peak << " MiB (1-layer comparison " << baseline << " MiB)\n";
}

}  // namespace
}  // namespace parity::testing
