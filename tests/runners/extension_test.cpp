// Extension modules through the C++ API: the test extension (tests/data/extensions) registers a
// custom-op kernel and a runner; broken builds of it are refused with their reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "compare/comparator.h"
#include "compare/loaders.h"
#include "runners/extension.h"
#include "runners/ort/ort_runner.h"
#include "runners/registry.h"
#include "runtime/session.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

std::string extension(const std::string& variant) {
  return std::string(PARITY_TEST_EXTENSION_DIR) + "/" + variant + "/libparity_test_extension.so";
}
std::string custom_op_model() {
  return (source_dir() / "tests" / "data" / "extensions" / "model_with_custom_op.onnx").string();
}

// y = 2 * relu(x + 1), what the model computes.
void expect_model_outputs(const TensorMap& feed, const TensorMap& outputs) {
  const Tensor& x = feed.at("x");
  const Tensor& y = outputs.at("y");
  ASSERT_EQ(y.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_FLOAT_EQ(y.data<float>()[i], 2.0f * std::max(0.0f, x.data<float>()[i] + 1.0f)) << i;
}

TEST(Extension, RegistersKernelAndRunner) {
  ASSERT_TRUE(runners::load_extension(extension("good")).is_ok());
  EXPECT_TRUE(runners::load_extension(extension("good")).is_ok()) << "loading twice is harmless";
  EXPECT_NE(runtime::KernelRegistry::instance().resolve("test.parity", "AddOne", 1), nullptr);
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("plugin-ref");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->flag, "--plugin-ref");
  EXPECT_NE(info->description.find("test extension"), std::string::npos) << "the declared description";
  EXPECT_NE(info->details({}).find("extension test_extension 0.1.0"), std::string::npos);
  const auto& records = runners::loaded_extensions();
  const auto it = std::find_if(records.begin(), records.end(), [](const auto& r) { return r.name == "test_extension"; });
  ASSERT_NE(it, records.end());
  EXPECT_EQ(it->kernels, std::vector<std::string>{"test.parity::AddOne"});
}

TEST(Extension, InstalledFolderIsBesideLibparity) {
  // <libdir>/parity/extensions: in this build tree, next to build/src/libparity.so.
  const std::filesystem::path dir = runners::installed_extension_dir();
  EXPECT_EQ(dir.filename(), "extensions");
  EXPECT_EQ(dir.parent_path().filename(), "parity");
  EXPECT_TRUE(std::filesystem::exists(dir.parent_path().parent_path() / "libparity.so")) << dir;
}

TEST(Extension, RefAndExtensionRunnerAgreeThroughTheComparator) {
  ASSERT_TRUE(runners::load_extension(extension("good")).is_ok());
  using namespace compare;
  auto ref = loaders::RunnerFromOnnx("ref", loaders::OnnxFromPath(custom_op_model()));
  auto plugin = loaders::RunnerFromOnnx("plugin-ref", loaders::OnnxFromPath(custom_op_model()));
  DataLoader data;
  data.seed(3).val_range("", {-2.0, 2.0});
  RunResults results = Comparator::run({ref.get(), plugin.get()}, data);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results.runs[1].first.find("plugin-ref-runner"), std::string::npos);
  EXPECT_TRUE(static_cast<bool>(Comparator::compare_accuracy(results)));
  expect_model_outputs(data.feed(0).value(), results.runs[0].second[0].outputs);
}

TEST(Extension, OrtRunsTheCustomOpFromACustomOpLibrary) {
  PARITY_REQUIRE_RUNNER("ort");
  runners::ort::OrtRunnerOptions options;
  options.custom_op_libraries = {extension("ort_only")};
  auto runner = runners::ort::make_ort_runner(custom_op_model(), options);
  runners::ActiveRunner active(*runner);
  compare::DataLoader data;
  data.seed(5).val_range("", {-2.0, 2.0});
  data.set_input_metadata(runner->input_metadata());
  const TensorMap feed = data.feed(0).value();
  expect_model_outputs(feed, runner->infer(feed));
}

TEST(Extension, OrtWithoutTheLibraryNamesTheMissingOp) {
  PARITY_REQUIRE_RUNNER("ort");
  auto runner = runners::ort::make_ort_runner(custom_op_model(), {});
  try {
    runner->activate();
    FAIL() << "ORT loaded a model with an unknown op";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("AddOne"), std::string::npos) << e.what();
  }
}

TEST(Extension, BadCustomOpLibraryIsAUserError) {
  PARITY_REQUIRE_RUNNER("ort");
  runners::ort::OrtRunnerOptions options;
  options.custom_op_libraries = {"/nonexistent/libops.so"};
  auto runner = runners::ort::make_ort_runner(custom_op_model(), options);
  try {
    runner->activate();
    FAIL() << "a missing custom-op library was accepted";
  } catch (const Error& e) {
    EXPECT_FALSE(e.is_internal());
    EXPECT_NE(std::string(e.what()).find("--ort-custom-op-library /nonexistent/libops.so"), std::string::npos)
        << e.what();
  }
}

TEST(Extension, RefusedLibrariesSayWhy) {
  const Status wrong_abi = runners::load_extension(extension("wrong_abi"));
  ASSERT_FALSE(wrong_abi.is_ok());
  EXPECT_EQ(wrong_abi.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(wrong_abi.message().find("was built for extension ABI 1001; this parity implements ABI 1"),
            std::string::npos) << wrong_abi.message();

  const Status signature = runners::load_extension(extension("wrong_signature"));
  EXPECT_NE(signature.message().find("was built with another C++ standard library or other parity headers"),
            std::string::npos) << signature.message();

  const Status throwing = runners::load_extension(extension("throwing"));
  EXPECT_NE(throwing.message().find("its init failed: the test extension was built to fail at init"),
            std::string::npos) << throwing.message();

  const Status not_extension = runners::load_extension(extension("ort_only"));
  EXPECT_NE(not_extension.message().find("is not a parity extension"), std::string::npos) << not_extension.message();

  const Status missing = runners::load_extension("/nonexistent/libext.so");
  EXPECT_NE(missing.message().find("extension file /nonexistent/libext.so does not exist"), std::string::npos);

  // A throwing init registered nothing.
  for (const auto& r : runners::loaded_extensions())
    if (r.path.find("/throwing/") != std::string::npos) {
      EXPECT_TRUE(r.kernels.empty());
    }
}

}  // namespace
}  // namespace parity::testing
