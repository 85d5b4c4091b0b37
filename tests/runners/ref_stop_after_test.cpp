// RunOptions::stop_after through the ref runner: the layer-by-layer comparison stops each
// reference run at its window's last tensor this way (no exception to unwind the executor).
#include <gtest/gtest.h>

#include "runners/ref/ref_runner.h"
#include "runners/registry.h"
#include "support/test_support.h"

namespace parity {
namespace {

std::unique_ptr<runners::Runner> demo_runner() {
  const std::string model = (testing::source_dir() / "models" / "demo.onnx").string();
  return runners::RunnerRegistry::instance().find("ref")->create(runners::RunnerConfig{model});
}

TensorMap demo_feed() { return {{"input", Tensor(DType::kFloat32, {1, 3, 32, 32})}}; }

TEST(RefStopAfter, EndsTheRunAfterTheNamedValue) {
  auto runner = demo_runner();
  auto* ref = dynamic_cast<runners::RefRunner*>(runner.get());
  ASSERT_NE(ref, nullptr);
  runners::ActiveRunner active(*runner);
  const std::vector<std::string> all = ref->session().intermediate_names();
  ASSERT_GE(all.size(), 3u);

  std::vector<std::string> seen;
  runtime::RunOptions options;
  options.hook = [&](const std::string& name, const runtime::Value&) { seen.push_back(name); };
  options.stop_after = all[1];
  ref->set_run_options(options);
  const TensorMap out = runner->infer(demo_feed());
  EXPECT_TRUE(out.names().empty()) << "a stopped run returns no values";
  EXPECT_EQ(seen, (std::vector<std::string>{all[0], all[1]}));

  // Without it the same session runs to the end again.
  seen.clear();
  options.stop_after.clear();
  ref->set_run_options(options);
  EXPECT_EQ(runner->infer(demo_feed()).names(), (std::vector<std::string>{"probs"}));
  EXPECT_EQ(seen, all);
}

TEST(RefStopAfter, UnknownValueIsAnError) {
  auto runner = demo_runner();
  auto* ref = dynamic_cast<runners::RefRunner*>(runner.get());
  runners::ActiveRunner active(*runner);
  runtime::RunOptions options;
  options.stop_after = "no_such_value";
  ref->set_run_options(options);
  try {
    runner->infer(demo_feed());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("cannot stop after 'no_such_value'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity
