// The navigator's C++ API over a real workspace (made by `parity optimize` on the bundled demo
// model): PackageDescriptor queries, a runner from the package, set_verified surviving save and
// load into a fresh folder (where the formats are re-tested from the stored samples), the
// best-runtime strategies, and the Triton config.pbtxt parsed by protobuf's text format against
// a test-only subset of Triton's schema.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/formats/npz.h"
#include "core/status.h"
#include "support/test_support.h"
#include "tools/navigator/package.h"
#include "tools/navigator/triton.h"
#include "triton_model_config_subset.pb.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
namespace nav = tools::navigator;

class NavigatorPackageApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const CommandResult r = run_parity({"optimize", (source_dir() / "models" / "demo.onnx").string(), "--workspace",
                                        workspace().string(), "--runners", "ref", "--target-formats", "onnx",
                                        "onnx-sanitized", "plan-fp32", "plan-int8", "--sample-count", "2", "--window-ms",
                                        "10", "--max-trials", "3", "--atol", "1e-3"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path workspace() { return dir_->path() / "demo.nav.workspace"; }
  static TempDir* dir_;
};

TempDir* NavigatorPackageApi::dir_ = nullptr;

TEST_F(NavigatorPackageApi, QueriesRunnerAndVerificationSurviveSaveAndLoad) {
  nav::PackageDescriptor package(workspace());
  const auto formats = package.get_formats_status();
  EXPECT_TRUE(formats.at("onnx"));
  EXPECT_TRUE(formats.at("onnx-sanitized"));
  EXPECT_TRUE(formats.at("plan-fp32"));
  // The int8 plan is built but misses --atol 1e-3 (its measured error is a few 1e-3 on demo).
  EXPECT_FALSE(formats.at("plan-int8"));
  const nav::FormatStatus* int8 = package.status().find_format("plan-int8");
  EXPECT_TRUE(int8->export_step.ok()) << int8->export_step.reason;
  const nav::StepResult* int8_correctness = int8->find_runtime("ref")->find_step("correctness");
  EXPECT_EQ(int8_correctness->state, nav::StepState::kFail);
  EXPECT_NE(int8_correctness->reason.find("measured atol"), std::string::npos) << int8_correctness->reason;
  EXPECT_TRUE(fs::is_regular_file(workspace() / "plan-int8" / "calibration.cache"));
  EXPECT_GT(package.get_formats_performance().at("plan-fp32"), 0.0);
  EXPECT_TRUE(package.get_status("onnx", std::string("ref")));
  EXPECT_FALSE(package.get_status("onnx", std::string("ort")));
  EXPECT_EQ(package.get_model("plan-int8"), workspace() / "plan-int8" / "model.plan");
  EXPECT_THROW(package.get_model("plan-bf16"), Error);  // not among --target-formats

  // The runner reproduces the stored reference output of the correctness sample.
  auto runner = package.get_runner("plan-fp32", "ref");
  runners::ActiveRunner active(*runner);
  const TensorMap sample = read_npz((workspace() / "model_input" / "correctness" / "0.npz").string());
  TensorMap feed;
  for (const auto& [name, tensor] : sample) {
    Shape shape = tensor.shape();
    shape.insert(shape.begin(), 1);
    feed.set(name, tensor.reshaped(shape));
  }
  const TensorMap out = runner->infer(feed);
  const TensorMap expected = read_npz((workspace() / "model_output" / "correctness" / "0.npz").string());
  ASSERT_TRUE(out.contains("probs"));
  const auto a = out.at("probs").values<float>();
  const auto e = expected.at("probs").values<float>();
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-5);

  EXPECT_THROW(package.set_verified("plan-int8", "ref"), Error);
  package.set_verified("plan-fp32", "ref");
  EXPECT_TRUE(nav::read_status(workspace()).find_format("plan-fp32")->find_runtime("ref")->verified());

  TempDir elsewhere;
  const fs::path file = elsewhere / "demo.nav";
  package.save(file);
  EXPECT_THROW(package.save(file), Error);  // exists, no override
  package.save(file, {.override = true});
  const auto loaded = nav::PackageDescriptor::load(file, elsewhere / "fresh");
  EXPECT_TRUE(loaded.status().find_format("plan-fp32")->find_runtime("ref")->verified());
  EXPECT_TRUE(loaded.get_status("plan-fp32", std::string("ref")));
  EXPECT_TRUE(loaded.get_status("onnx", std::string("ref")));
  const auto best = loaded.best_runtime(nav::Strategy::kMinLatency, std::nullopt, /*verified_only=*/true);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->format, "plan-fp32");

  // --no-data: no samples, so no re-test.
  package.save(elsewhere / "nodata.nav", {.keep_data = false});
  EXPECT_LT(fs::file_size(elsewhere / "nodata.nav"), fs::file_size(file));
  try {
    nav::PackageDescriptor::load(elsewhere / "nodata.nav", elsewhere / "fresh2");
    ADD_FAILURE() << "a package without samples was re-tested";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no samples"), std::string::npos) << e.what();
  }
  package.set_verified("plan-fp32", "ref", false);
}

TEST_F(NavigatorPackageApi, TritonConfigParsesAgainstTheSchema) {
  nav::PackageDescriptor package(workspace());
  TempDir repository;
  nav::TritonOptions options;
  options.name = "demo";
  EXPECT_THROW(nav::deploy_to_triton(package, repository.path(), options), Error);  // nothing verified yet
  package.set_verified("onnx", "ref");
  const auto deployed = nav::deploy_to_triton(package, repository.path(), options);
  package.set_verified("onnx", "ref", false);
  EXPECT_EQ(deployed.choice.format, "onnx");
  EXPECT_TRUE(fs::is_regular_file(repository / "demo" / "1" / "model.onnx"));
  EXPECT_EQ(fs::file_size(repository / "demo" / "warmup" / "input"), 3u * 32 * 32 * sizeof(float));

  inference::ModelConfig config;
  const std::string text = read_file(repository / "demo" / "config.pbtxt");
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  EXPECT_EQ(config.name(), "demo");
  EXPECT_EQ(config.backend(), "onnxruntime");
  EXPECT_EQ(config.platform(), "onnxruntime_onnx");
  EXPECT_EQ(config.max_batch_size(), 1);  // demo's batch axis is static 1
  ASSERT_EQ(config.input_size(), 1);
  EXPECT_EQ(config.input(0).name(), "input");
  EXPECT_EQ(config.input(0).data_type(), inference::TYPE_FP32);
  EXPECT_EQ(std::vector<int64_t>(config.input(0).dims().begin(), config.input(0).dims().end()),
            (std::vector<int64_t>{3, 32, 32}));
  ASSERT_EQ(config.output_size(), 1);
  EXPECT_EQ(std::vector<int64_t>(config.output(0).dims().begin(), config.output(0).dims().end()),
            (std::vector<int64_t>{10}));
  ASSERT_EQ(config.instance_group_size(), 1);
  EXPECT_EQ(config.instance_group(0).kind(), inference::ModelInstanceGroup::KIND_CPU);
  EXPECT_EQ(config.instance_group(0).count(), 1);
  ASSERT_TRUE(config.has_dynamic_batching());
  ASSERT_EQ(config.model_warmup_size(), 1);
  const auto& warmup = config.model_warmup(0).inputs().at("input");
  EXPECT_EQ(warmup.input_data_file(), "input");
  EXPECT_EQ(warmup.dims_size(), 3);

  // A second deployment under the same name needs override.
  package.set_verified("onnx", "ref");
  EXPECT_THROW(nav::deploy_to_triton(package, repository.path(), options), Error);
  options.override = true;
  EXPECT_NO_THROW(nav::deploy_to_triton(package, repository.path(), options));
  package.set_verified("onnx", "ref", false);
}

nav::RuntimeStatus passed_cell(const std::string& runtime, std::vector<std::pair<double, double>> p50_and_throughput) {
  nav::RuntimeStatus r{runtime, {}};
  r.step("conversion").state = nav::StepState::kOk;
  r.step("correctness").state = nav::StepState::kOk;
  auto& perf = r.step("performance");
  perf.state = nav::StepState::kOk;
  int64_t batch = 1;
  for (const auto& [p50, throughput] : p50_and_throughput) {
    nav::BatchPerformance row;
    row.batch_size = batch;
    row.p50_ms = p50;
    row.throughput = throughput;
    perf.performance.push_back(row);
    batch *= 2;
  }
  return r;
}

TEST(NavigatorStrategies, PickAmongCellsThatPassed) {
  nav::WorkspaceStatus status;
  nav::FormatStatus a{"onnx", "onnx/model.onnx", {}, {}};
  a.export_step.state = nav::StepState::kOk;
  a.runtimes.push_back(passed_cell("ref", {{1.0, 1000}, {3.0, 1300}}));      // fastest at batch 1
  a.runtimes.push_back(passed_cell("ort", {{1.5, 700}, {2.0, 1000}, {4.0, 2000}}));  // widest, at batch 4
  nav::RuntimeStatus failed = passed_cell("opencv", {{0.1, 99999}});
  failed.step("correctness").state = nav::StepState::kFail;
  a.runtimes.push_back(failed);  // never chosen
  status.formats.push_back(a);

  auto fastest = nav::choose_runtime(status, nav::Strategy::kMinLatency);
  ASSERT_TRUE(fastest);
  EXPECT_EQ(fastest->runtime, "ref");
  auto widest = nav::choose_runtime(status, nav::Strategy::kMaxThroughput);
  ASSERT_TRUE(widest);
  EXPECT_EQ(widest->runtime, "ort");
  EXPECT_EQ(widest->batch_size, 4);
  auto budget = nav::choose_runtime(status, nav::Strategy::kMaxThroughputWithinLatency, 3.0);
  ASSERT_TRUE(budget);
  EXPECT_EQ(budget->runtime, "ref");  // ort's 2000/s needs 4 ms
  EXPECT_DOUBLE_EQ(budget->throughput, 1300);
  EXPECT_FALSE(nav::choose_runtime(status, nav::Strategy::kMaxThroughputWithinLatency, 0.5));
  EXPECT_FALSE(nav::choose_runtime(status, nav::Strategy::kMinLatencyAndMaxThroughput));  // both or fail
  EXPECT_FALSE(nav::choose_runtime(status, nav::Strategy::kMinLatency, std::nullopt, /*verified_only=*/true));
  EXPECT_THROW(nav::strategy_from_name("fastest"), Error);
}

}  // namespace
}  // namespace parity::testing
