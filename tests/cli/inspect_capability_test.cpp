// `parity inspect capability`: per runner, which nodes run, and partitions that each run and,
// stitched back together, compute what the whole model computes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "model/model.h"
#include "runtime/session.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string det_model() {
  return (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
}
std::string extension() { return std::string(PARITY_TEST_EXTENSION_DIR) + "/good/libparity_test_extension.so"; }

TEST(InspectCapability, OpenCvPartitionsOfDetEachRunAndStitchToTheWholeModel) {
  PARITY_REQUIRE_FILE(det_model());
  PARITY_REQUIRE_RUNNER("opencv");
  testing::TempDir tmp;
  const auto r = run_parity({"inspect", "capability", det_model(), "--runners", "opencv", "--input-shapes",
                             "x:[1,3,64,64]", "-o", (tmp / "caps").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // OpenCV 4.6 imports Clip only with min/max as attributes (opset < 11); det's 24 Clips take them as inputs.
  EXPECT_TRUE(contains(r.output, "Runner opencv: 306 of 330 nodes supported")) << r.output;
  EXPECT_TRUE(contains(r.output, "Clip x24")) << r.output;
  const fs::path dir = tmp / "caps" / "opencv";
  EXPECT_TRUE(fs::exists(dir / "results.txt"));

  std::vector<fs::path> supported, unsupported;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("supported_subgraph-", 0) == 0) supported.push_back(entry.path());
    if (name.rfind("unsupported_subgraph-", 0) == 0) unsupported.push_back(entry.path());
  }
  ASSERT_EQ(unsupported.size(), 24u);
  ASSERT_EQ(supported.size(), 25u);

  // Each supported partition runs on OpenCV (spot-checked: the first, one from the middle, the last).
  for (const char* name : {"supported_subgraph-0.onnx", "supported_subgraph-12.onnx", "supported_subgraph-24.onnx"}) {
    const auto run = run_parity({"run", (dir / name).string(), "--opencv"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
  }

  // Stitched: run every partition when its inputs are known, starting from the model's input.
  const model::Model whole = model::load_model(det_model()).value();
  const Tensor x = Tensor::from_vector<float>({1, 3, 64, 64}, std::vector<float>(3 * 64 * 64, 0.25f));
  TensorMap values{{"x", x}};
  std::vector<fs::path> pending = supported;
  pending.insert(pending.end(), unsupported.begin(), unsupported.end());
  while (!pending.empty()) {
    bool progressed = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const model::Model part = model::load_model(*it).value();
      TensorMap feed;
      bool ready = true;
      for (const auto& input : part.proto().graph().input()) {
        if (const Tensor* t = values.find(input.name())) feed.set(input.name(), *t);
        else ready = false;
      }
      if (!ready) {
        ++it;
        continue;
      }
      auto session = runtime::Session::create(part.proto(), {}, part.base_dir()).value();
      for (const auto& [name, tensor] : session.run(feed)) values.set(name, tensor.clone());
      it = pending.erase(it);
      progressed = true;
    }
    ASSERT_TRUE(progressed) << pending.size() << " partitions wait for inputs no partition computes";
  }
  runtime::SessionOptions options;
  auto full = runtime::Session::create(whole.proto(), options, whole.base_dir()).value();
  const TensorMap expected = full.run({{"x", x}});
  const Tensor& want = expected.at("sigmoid_0.tmp_0");
  const Tensor& got = values.at("sigmoid_0.tmp_0");
  ASSERT_EQ(got.numel(), want.numel());
  // Equal up to rounding: kernels fuse differently across partition boundaries and folded constants.
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-4 * std::abs(want.data<float>()[i]) + 1e-20) << i;
}

TEST(InspectCapability, ExtensionRunnersAndCustomOps) {
  const std::string model = (testing::source_dir() / "tests/data/extensions/model_with_custom_op.onnx").string();
  // ORT without the custom-op library cannot run test.parity::AddOne; the extension's runner can.
  const auto r = run_parity({"--extension", extension(), "inspect", "capability", model, "--runners", "ort,plugin-ref"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Runner ort: 2 of 3 nodes supported, 2 partition(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "AddOne x1: ONNX Runtime cannot load")) << r.output;
  EXPECT_TRUE(contains(r.output, "Runner plugin-ref: 3 of 3 nodes supported, 1 partition(s)")) << r.output;
  const auto bad = run_parity({"inspect", "capability", model, "--runners", "nosuch"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
}

}  // namespace
}  // namespace parity
