// int8 plans with post-training calibration on CNNs (#14's done-means), for the entropy and
// min-max calibrators, calibrated on one seeded input set and judged on another:
// - PP-OCRv4 rec (trained weights, from scripts/setup.sh's npm models; a convolutional backbone,
//   a small SVTR neck and a 6625-class CTC head): the top-1 class of every output column against
//   the fp32 model's, on synthetic text lines (dark strokes on a light background);
// - MobileNetV2 (scripts/setup.sh's torchvision export): every convolution and the classifier
//   on the int8 kernels. Its weights are random, so every image lands in one class: it gives no
//   accuracy figure, only the layers and the speed.
// The figures (agreement, CPU time per inference of the fp32 and int8 plans, alternating) are
// printed for the record; speed is not asserted (bench/ holds performance targets).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <random>
#include <set>

#include "model/model.h"
#include "runtime/reduced_precision.h"
#include "runtime/subgraph.h"
#include "support/require.h"
#include "support/test_support.h"
#include "tools/plan_build.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

fs::path mobilenet() { return testing::source_dir() / ".cache/bench-models/mobilenet_v2.onnx"; }
fs::path ocr_rec() { return testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx"; }
fs::path ocr_cls() { return testing::source_dir() / ".cache/npm/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"; }

/// A seeded synthetic text line [1, 3, 48, kW] as PP-OCR normalizes it ((v - 0.5) / 0.5): a light,
/// slightly uneven background with a row of glyph-like groups of dark strokes.
template <int kW = 320>
Tensor seeded_text_line(uint32_t seed) {
  constexpr int kH = 48;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> gray(kH * kW);
  const float paper = 0.75f + 0.2f * u(gen);
  for (float& v : gray) v = paper + 0.04f * (u(gen) - 0.5f);
  const float ink = 0.05f + 0.25f * u(gen);
  const int glyph = 18 + static_cast<int>(u(gen) * 14);  // glyph width in pixels
  for (int x0 = 4 + static_cast<int>(u(gen) * 10); x0 + glyph < kW - 4; x0 += glyph + static_cast<int>(u(gen) * 6)) {
    if (u(gen) < 0.12f) continue;  // a space
    const int strokes = 2 + static_cast<int>(u(gen) * 4);
    for (int k = 0; k < strokes; ++k) {
      // A straight stroke between two points of the glyph's box, 2-3 pixels thick.
      const float ax = x0 + u(gen) * glyph, ay = 10 + u(gen) * 28, bx = x0 + u(gen) * glyph, by = 10 + u(gen) * 28;
      const float thick = 1.0f + u(gen);
      const float len = std::max(1.0f, std::hypot(bx - ax, by - ay));
      for (float t = 0; t <= 1.0f; t += 0.5f / len)
        for (int dy = -2; dy <= 2; ++dy)
          for (int dx = -2; dx <= 2; ++dx) {
            const int px = static_cast<int>(ax + t * (bx - ax)) + dx, py = static_cast<int>(ay + t * (by - ay)) + dy;
            if (px < 0 || px >= kW || py < 0 || py >= kH || std::hypot(float(dx), float(dy)) > thick) continue;
            gray[py * kW + px] = ink;
          }
    }
  }
  Tensor t(DType::kFloat32, {1, 3, kH, kW});
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < kH * kW; ++i) t.data<float>()[c * kH * kW + i] = (gray[i] - 0.5f) / 0.5f;
  return t;
}

/// A seeded image-like input [1, 3, 224, 224], ImageNet-normalized: a few smooth gradients and
/// blobs per channel plus pixel noise, so that activations vary the way a photo's do rather
/// than like white noise.
Tensor seeded_image(uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Tensor t(DType::kFloat32, {1, 3, 224, 224});
  const float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
  for (int c = 0; c < 3; ++c) {
    const float gx = u(gen) - 0.5f, gy = u(gen) - 0.5f, base = u(gen);
    float bx[3], by[3], br[3], bv[3];
    for (int k = 0; k < 3; ++k) {
      bx[k] = u(gen) * 224;
      by[k] = u(gen) * 224;
      br[k] = 10 + u(gen) * 60;
      bv[k] = u(gen) - 0.5f;
    }
    float* plane = t.data<float>() + c * 224 * 224;
    for (int y = 0; y < 224; ++y)
      for (int x = 0; x < 224; ++x) {
        float v = base + gx * (x / 224.0f) + gy * (y / 224.0f) + 0.08f * (u(gen) - 0.5f);
        for (int k = 0; k < 3; ++k) {
          const float dx = x - bx[k], dy = y - by[k];
          v += bv[k] * std::exp(-(dx * dx + dy * dy) / (2 * br[k] * br[k]));
        }
        plane[y * 224 + x] = (std::clamp(v, 0.0f, 1.0f) - mean[c]) / stdev[c];
      }
  }
  return t;
}

/// The top-1 class of each row of the last dim (one per output column of a CTC head).
std::vector<int64_t> top1_per_row(const Tensor& scores) {
  const int64_t classes = scores.shape().back(), rows = scores.numel() / classes;
  std::vector<int64_t> out(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = scores.data<float>() + r * classes;
    out[r] = std::max_element(p, p + classes) - p;
  }
  return out;
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Agreement {
  int agree = 0, total = 0;
  std::set<int64_t> classes;  // the fp32 model's top-1 classes over the images
  double max_logit_error = 0, max_logit = 0;
  double fp32_cpu_ms = 0, int8_cpu_ms = 0;
};

/// Top-1 agreement of `int8` with `fp32` over the evaluation inputs (`make(seed)`, seeds from
/// 10000), row by row of the output's last dim, and CPU time per inference of each, the two
/// sessions alternating input by input.
template <typename Make>
Agreement judge(const runtime::Session& fp32, const runtime::Session& int8, int images, const Make& make) {
  Agreement a;
  const std::string input = fp32.input_metadata().begin()->name;
  for (int i = 0; i < images; ++i) {
    const TensorMap feed{{input, make(10000 + i)}};
    double t0 = cpu_seconds();
    const Tensor want = fp32.run(feed).begin()->second;
    double t1 = cpu_seconds();
    const Tensor got = int8.run(feed).begin()->second;
    double t2 = cpu_seconds();
    if (i > 0) {  // the first run of each builds its primitives
      a.fp32_cpu_ms += (t1 - t0) * 1e3;
      a.int8_cpu_ms += (t2 - t1) * 1e3;
    }
    const std::vector<int64_t> want_top1 = top1_per_row(want), got_top1 = top1_per_row(got);
    for (size_t r = 0; r < want_top1.size(); ++r) {
      a.agree += want_top1[r] == got_top1[r];
      a.classes.insert(want_top1[r]);
      ++a.total;
    }
    for (int64_t j = 0; j < want.numel(); ++j) {
      a.max_logit_error = std::max(a.max_logit_error, double(std::fabs(want.data<float>()[j] - got.data<float>()[j])));
      a.max_logit = std::max(a.max_logit, double(std::fabs(want.data<float>()[j])));
    }
  }
  a.fp32_cpu_ms /= images - 1;
  a.int8_cpu_ms /= images - 1;
  return a;
}

/// An int8 plan of `model` calibrated with `algorithm` on `count` inputs from `make` (seeds 0..).
template <typename Make>
tools::BuiltPlan int8_plan(const model::Model& model, const fs::path& dir, const std::string& algorithm, int count,
                           const Make& make) {
  tools::PlanBuildOptions options;
  options.precision.int8 = true;
  options.calibration_algorithm = algorithm;
  options.calibration_feeds = [&] {
    std::vector<TensorMap> feeds;
    for (int i = 0; i < count; ++i) feeds.push_back({{"x", make(i)}});
    return std::make_unique<compare::FeedList>(std::move(feeds));
  };
  return tools::build_plan(model, dir, options);
}

/// How many layers of `op` run int8 on int8 kernels, of how many.
std::pair<int, int> native_int8_layers(const runtime::Session& session, const std::string& op) {
  int all = 0, native = 0;
  for (const auto& node : session.plan().nodes_) {
    if (node.folded || node.spec.op_type != op) continue;
    ++all;
    native += node.precision == DType::kInt8 && runtime::runs_native_int8(*node.kernel);
  }
  return {native, all};
}

/// The int8-precision layers of `op` (on int8 kernels or computing in fp32 on quantized values).
int int8_layers(const runtime::Session& session, const std::string& op) {
  int count = 0;
  for (const auto& node : session.plan().nodes_)
    count += !node.folded && node.spec.op_type == op && node.precision == DType::kInt8;
  return count;
}

/// `native` of `layers` int8 layers run on int8 kernels: all of them with VNNI; without
/// (runtime::native_int8_available) those whose source is >= 0, the others compute in fp32 on
/// quantized values (docs/int8.md).
void expect_native_layers(int native, int layers) {
  if (runtime::native_int8_available()) EXPECT_EQ(native, layers) << "every layer runs on the int8 kernels";
  else EXPECT_LE(native, layers);
}

TEST(Int8Accuracy, PpOcrRecCalibratedInt8PlanKeepsPerColumnTop1AgreementWithFp32) {
  PARITY_REQUIRE_FILE(ocr_rec());
  const model::Model model = model::load_model(ocr_rec()).value();
  constexpr int kCalibrationLines = 8, kEvaluationLines = 24;
  const tools::BuiltPlan fp32 = tools::build_plan(model, ocr_rec().parent_path(), {});
  for (const std::string algorithm : {"entropy", "minmax"}) {
    SCOPED_TRACE(algorithm);
    const tools::BuiltPlan int8 =
        int8_plan(model, ocr_rec().parent_path(), algorithm, kCalibrationLines, seeded_text_line<320>);
    const auto [native, convs] = native_int8_layers(int8.session, "Conv");
    expect_native_layers(native, convs);
    EXPECT_EQ(int8_layers(int8.session, "Conv"), convs);
    EXPECT_GT(convs, 20);
    const Agreement a = judge(fp32.session, int8.session, kEvaluationLines, seeded_text_line<320>);
    std::cout << "[int8] PP-OCRv4 rec " << algorithm << ": per-column top-1 agreement " << a.agree << "/" << a.total
              << " (" << a.classes.size() << " distinct fp32 classes), max |score error| " << a.max_logit_error
              << ", CPU ms/inference fp32 plan " << a.fp32_cpu_ms << ", int8 plan " << a.int8_cpu_ms << " ("
              << tools::layer_precision_summary(int8.session) << ")\n";
    EXPECT_GE(a.classes.size(), 8u) << "the lines must not all read alike";
    // At least 97% of the columns keep the fp32 model's class.
    EXPECT_GE(a.agree * 100, a.total * 97) << a.agree << "/" << a.total;
  }
}

/// A seeded text line [1, 3, 48, 192] for the direction classifier, upside down for odd seeds.
Tensor seeded_oriented_line(uint32_t seed) {
  Tensor t = seeded_text_line<192>(seed);
  if (seed % 2 == 0) return t;
  Tensor flipped(DType::kFloat32, t.shape());
  const int64_t plane = 48 * 192;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < plane; ++i) flipped.data<float>()[c * plane + i] = t.data<float>()[c * plane + plane - 1 - i];
  return flipped;
}

TEST(Int8Accuracy, PpOcrClassifierInt8PlanKeepsTop1AgreementWithFp32) {
  // PP-OCR's text direction classifier (trained weights, 0 or 180 degrees) on 256 seeded lines,
  // half of them upside down.
  PARITY_REQUIRE_FILE(ocr_cls());
  const model::Model model = model::load_model(ocr_cls()).value();
  const tools::BuiltPlan fp32 = tools::build_plan(model, ocr_cls().parent_path(), {});
  const tools::BuiltPlan int8 = int8_plan(model, ocr_cls().parent_path(), "minmax", 8, seeded_oriented_line);
  const auto [native, convs] = native_int8_layers(int8.session, "Conv");
  expect_native_layers(native, convs);
  EXPECT_GT(convs, 10);
  const Agreement a = judge(fp32.session, int8.session, 256, seeded_oriented_line);
  // Lines the fp32 model reads with a clear direction (top probability >= 0.75): on the others its
  // decision is near a coin flip, which any rounding may turn.
  int clear = 0, clear_agree = 0;
  for (int i = 0; i < 256; ++i) {
    const TensorMap feed{{"x", seeded_oriented_line(10000 + i)}};
    const Tensor want = fp32.session.run(feed).begin()->second, got = int8.session.run(feed).begin()->second;
    const float* p = want.data<float>();
    if (std::max(p[0], p[1]) < 0.75f) continue;
    ++clear;
    clear_agree += top1_per_row(want) == top1_per_row(got);
  }
  std::cout << "[int8] PP-OCR classifier minmax: top-1 agreement " << a.agree << "/" << a.total << ", on clearly read lines "
            << clear_agree << "/" << clear << " (" << a.classes.size() << " distinct fp32 classes), max |score error| "
            << a.max_logit_error << ", CPU ms/inference fp32 plan " << a.fp32_cpu_ms << ", int8 plan " << a.int8_cpu_ms
            << " (" << tools::layer_precision_summary(int8.session) << ")\n";
  EXPECT_EQ(a.total, 256);
  EXPECT_EQ(a.classes.size(), 2u) << "the lines must not all read alike";
  EXPECT_GE(clear, 128) << "most lines must read clearly";
  EXPECT_GE(clear_agree * 100, clear * 97) << clear_agree << "/" << clear;
  EXPECT_GE(a.agree * 100, a.total * 90) << a.agree << "/" << a.total;
}

TEST(Int8Accuracy, MobileNetV2Int8PlanRunsEveryConvolutionAndTheClassifierOnInt8Kernels) {
  PARITY_REQUIRE_FILE(mobilenet());
  const model::Model model = model::load_model(mobilenet()).value();
  const tools::BuiltPlan fp32 = tools::build_plan(model, mobilenet().parent_path(), {});
  auto image = [](uint32_t seed) { return seeded_image(seed); };
  tools::PlanBuildOptions options;
  options.precision.int8 = true;
  options.calibration_feeds = [&] {
    std::vector<TensorMap> feeds;
    for (int i = 0; i < 8; ++i) feeds.push_back({{"input", image(i)}});
    return std::make_unique<compare::FeedList>(std::move(feeds));
  };
  const tools::BuiltPlan int8 = tools::build_plan(model, mobilenet().parent_path(), options);
  const auto [native_convs, convs] = native_int8_layers(int8.session, "Conv");
  EXPECT_EQ(convs, 52);
  expect_native_layers(native_convs, convs);
  const auto [native_gemms, gemms] = native_int8_layers(int8.session, "Gemm");
  EXPECT_EQ(gemms, 1);
  expect_native_layers(native_gemms, gemms);
  EXPECT_EQ(int8_layers(int8.session, "Conv"), 52);
  EXPECT_EQ(int8_layers(int8.session, "Gemm"), 1);
  const Agreement a = judge(fp32.session, int8.session, 24, image);
  std::cout << "[int8] MobileNetV2 (random weights) minmax: max |logit error| " << a.max_logit_error << " (max |logit| "
            << a.max_logit << "), CPU ms/inference fp32 plan " << a.fp32_cpu_ms << ", int8 plan " << a.int8_cpu_ms
            << " (" << tools::layer_precision_summary(int8.session) << ")\n";
  EXPECT_LT(a.max_logit_error, 0.5 * a.max_logit);  // not garbage
}

}  // namespace
}  // namespace parity
