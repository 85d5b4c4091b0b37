// The bundled demo model and the third-party models scripts/setup.sh fetches (PP-OCRv4 detection
// and recognition, the PP-OCR direction classifier, openWakeWord heads) on the peer runners: ONNX Runtime runs them; OpenCV DNN
// 4.6 either agrees with ORT or names the first node it cannot import, on one line.
#include "runners/ort/ort_config.h"

#if PARITY_WITH_ORT_RUNNER
#include <gtest/gtest.h>

#include <random>

#include "peer_runner_test_util.h"
#include "runners/ort/ort_library.h"
#include "runners/ort/ort_runner.h"
#include "runners/registry.h"

namespace parity::testing {
namespace {

struct ModelCase {
  std::string file;  // relative to the source tree
  Shape input_shape;
  Shape output_shape;
  bool probabilities;  // sigmoid/softmax outputs lie in [0, 1]
};

Tensor seeded_uniform(const Shape& shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return t;
}

class DeployModels : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    path_ = source_dir() / GetParam().file;
    PARITY_REQUIRE_FILE(path_);
  }
  std::filesystem::path path_;
};

TEST_P(DeployModels, OrtRunsThem) {
  PARITY_REQUIRE_RUNNER("ort");
  const ModelCase& c = GetParam();
  auto runner = runners::ort::make_ort_runner(path_.string(), {});
  runners::ActiveRunner active(*runner);
  const std::string input = active->input_metadata().names().at(0);
  const TensorMap out = active->infer({{input, seeded_uniform(c.input_shape, 1)}});
  ASSERT_EQ(out.size(), 1u);
  const Tensor& y = out.begin()->second;
  EXPECT_EQ(y.shape(), c.output_shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double v = y.value_as_double(i);
    ASSERT_TRUE(std::isfinite(v)) << i;
    if (c.probabilities) ASSERT_TRUE(v >= 0.0 && v <= 1.0) << i << ": " << v;
  }
}

TEST_P(DeployModels, OpenCvAgreesOrNamesTheFirstUnsupportedNode) {
  const runners::RunnerInfo* opencv = runners::RunnerRegistry::instance().find("opencv");
  PARITY_REQUIRE_RUNNER("opencv");
  PARITY_REQUIRE_RUNNER("ort");
  auto cv_runner = opencv->create({.model_path = path_.string()});
  try {
    cv_runner->activate();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << what;
    EXPECT_NE(what.find("first unsupported node is node #"), std::string::npos) << what;
    EXPECT_NE(what.find(", op "), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return;
  }
  auto ort_runner = runners::ort::make_ort_runner(path_.string(), {});
  runners::ActiveRunner o(*ort_runner);
  const std::string input = o->input_metadata().names().at(0);
  const TensorMap feed{{input, seeded_uniform(GetParam().input_shape, 1)}};
  const TensorMap expected = o->infer(feed);
  const TensorMap actual = cv_runner->infer(feed);
  for (const auto& [name, tensor] : expected) EXPECT_TRUE(tensors_close(actual.at(name), tensor, 1e-3, 1e-4)) << name;
  cv_runner->deactivate();
}

INSTANTIATE_TEST_SUITE_P(
    PeerRunners, DeployModels,
    ::testing::Values(
        ModelCase{"models/demo.onnx", {1, 3, 32, 32}, {1, 10}, true},
        ModelCase{".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx", {1, 3, 64, 96}, {1, 1, 64, 96}, true},
        ModelCase{".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 96}, {1, 12, 6625}, true},
        ModelCase{".cache/npm/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}, {1, 2}, true},
        ModelCase{".cache/npm/openwakeword/models/hello_deepa.onnx", {1, 25, 96}, {1, 1}, true},
        ModelCase{".cache/npm/openwakeword/models/namaste_deepa.onnx", {1, 24, 96}, {1, 1}, true}),
    [](const auto& info) {
      std::string name = std::filesystem::path(info.param.file).stem().string();
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_WITH_ORT_RUNNER
