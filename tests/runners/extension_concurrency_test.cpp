// runners/extension.h's and runners/registry.h's thread contract: threads loading one extension
// at once load it once; once loaded, threads look runners up, build them and plan sessions with
// the extension's kernels at once. Also built under ThreadSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compare/data_loader.h"
#include "runners/extension.h"
#include "runners/registry.h"
#include "runtime/session.h"
#include "support/concurrency.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

constexpr int kThreads = 4;

std::string good_extension() { return std::string(PARITY_TEST_EXTENSION_DIR) + "/good/libparity_test_extension.so"; }
std::string custom_op_model() { return (source_dir() / "tests/data/extensions/model_with_custom_op.onnx").string(); }

TensorMap feed_of(int k) {
  compare::DataLoader loader;
  loader.seed(k + 1).val_range("", {-2.0, 2.0});
  TensorMetadata inputs;
  inputs.add("x", DType::kFloat32, DimShape(Shape{2, 3, 4}));
  loader.input_metadata(inputs);
  return loader.generate(0);
}

// y = 2 * relu(x + 1), what the custom-op model computes.
void expect_model_outputs(const TensorMap& feed, const TensorMap& outputs, const std::string& context) {
  const Tensor& x = feed.at("x");
  const Tensor& y = outputs.at("y");
  ASSERT_EQ(y.shape(), x.shape()) << context;
  for (int64_t i = 0; i < x.numel(); ++i)
    ASSERT_FLOAT_EQ(y.data<float>()[i], 2.0f * std::max(0.0f, x.data<float>()[i] + 1.0f)) << context << ", " << i;
}

TEST(ExtensionConcurrency, ThreadsLoadingOneExtensionAtOnceLoadItOnce) {
  std::vector<char> ok(kThreads, 0);  // not vector<bool>: its bits share words
  run_on_threads(kThreads, [&](int t) { ok[static_cast<size_t>(t)] = runners::load_extension(good_extension()).is_ok(); });
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(ok[static_cast<size_t>(t)]) << "thread " << t;
  const auto& records = runners::loaded_extensions();
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const auto& r) { return r.name == "test_extension"; }), 1);
  const auto runners_now = runners::RunnerRegistry::instance().all();
  EXPECT_EQ(std::count_if(runners_now.begin(), runners_now.end(), [](const auto& r) { return r.name == "plugin-ref"; }), 1);
}

// After loading: threads at once look the extension's runner up, build and run it, and plan
// ref sessions that resolve the extension's kernel.
TEST(ExtensionConcurrency, LoadedExtensionsRunnersAndKernelsServeThreadsAtOnce) {
  ASSERT_TRUE(runners::load_extension(good_extension()).is_ok());
  run_on_threads(kThreads, [&](int t) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("plugin-ref");
    ASSERT_NE(info, nullptr);
    ASSERT_TRUE(info->availability({}).is_ok());
    auto runner = info->create(runners::RunnerConfig{custom_op_model()});
    runners::ActiveRunner active(*runner);
    const TensorMap feed = feed_of(t);
    expect_model_outputs(feed, runner->infer(feed), "plugin-ref on thread " + std::to_string(t));

    const runtime::Session session = runtime::Session::create(custom_op_model()).value();
    expect_model_outputs(feed, session.run(feed), "ref session on thread " + std::to_string(t));
  });
}

}  // namespace
}  // namespace parity::testing
