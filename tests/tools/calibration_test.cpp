// int8 calibration (tools/calibration.h): the min-max calibrator's ranges over several feeds, and
// the cache file written, read back exactly, and refused with one line when malformed.
#include "tools/calibration.h"

#include <gtest/gtest.h>

#include "model/model.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity {
namespace {

TEST(Calibration, MinMaxRangesCoverEveryFeedAndEveryLayer) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 3}).output("y", DType::kFloat32, {1, 3});
  b.initializer("two", Tensor::from_vector<float>({1}, {2.0f}));
  b.node("Mul", {"x", "two"}, {"h"}, "double");
  b.node("Relu", {"h"}, {"y"}, "relu");
  runtime::Session session = runtime::Session::create(b.model()).value();
  compare::FeedList feeds({TensorMap{{"x", Tensor::from_vector<float>({1, 3}, {0.5f, -1.0f, 0.25f})}},
                           TensorMap{{"x", Tensor::from_vector<float>({1, 3}, {-3.0f, 0.1f, 2.0f})}}});
  const tools::CalibrationTable table = tools::calibrate_min_max(session, feeds);
  EXPECT_EQ(table.batches, 2u);
  EXPECT_FLOAT_EQ(table.scales.at("x"), 3.0f / 127);
  EXPECT_FLOAT_EQ(table.scales.at("h"), 6.0f / 127);
  EXPECT_FLOAT_EQ(table.scales.at("y"), 4.0f / 127);  // Relu drops the negative range

  compare::FeedList none;
  EXPECT_THROW(tools::calibrate_min_max(session, none), Error);
}

TEST(Calibration, EntropyClipsARareOutlierThatMinMaxKeeps) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 4096}).output("y", DType::kFloat32, {1, 4096});
  b.node("Relu", {"x"}, {"y"}, "relu");
  runtime::Session session = runtime::Session::create(b.model()).value();
  // Mostly |x| <= 1, with a single value of 100.
  Tensor x(DType::kFloat32, {1, 4096});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 1000.0f;
  x.data<float>()[17] = 100.0f;
  compare::FeedList feeds({TensorMap{{"x", x}}});
  const tools::CalibrationTable minmax = tools::calibrate_min_max(session, feeds);
  const tools::CalibrationTable entropy = tools::calibrate_entropy(session, feeds);
  EXPECT_EQ(entropy.algorithm, "entropy");
  EXPECT_FLOAT_EQ(minmax.scales.at("x"), 100.0f / 127);
  EXPECT_LT(entropy.scales.at("x"), 10.0f / 127);  // the threshold is near the bulk, not the outlier
  EXPECT_GT(entropy.scales.at("x"), 0.5f / 127);
}

TEST(Calibration, CacheRoundTripsExactlyAndRefusesMalformedLines) {
  testing::TempDir dir;
  tools::CalibrationTable table;
  table.scales = {{"x", 3.0f / 127}, {"conv:0 out", 0.1234567f}};
  tools::write_calibration_cache(dir / "cal.cache", table);
  const tools::CalibrationTable read = tools::read_calibration_cache(dir / "cal.cache");
  EXPECT_EQ(read.scales, table.scales);  // bit-exact: the scales are stored as their float bits
  EXPECT_EQ(read.algorithm, "minmax");
  table.algorithm = "entropy";
  tools::write_calibration_cache(dir / "cal.cache", table);
  EXPECT_EQ(tools::read_calibration_cache(dir / "cal.cache").algorithm, "entropy");

  testing::write_file(dir / "bad.cache", "parity-calibration-minmax-v1\nx: 3c23d70a\ny 12\n");
  try {
    tools::read_calibration_cache(dir / "bad.cache");
    FAIL() << "a malformed cache was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  testing::write_file(dir / "other.cache", "TRT-8601-EntropyCalibration2\n");
  EXPECT_THROW(tools::read_calibration_cache(dir / "other.cache"), Error);
}

TEST(Calibration, CacheRecordsItsModelAndIsRefusedForAnotherNamingBoth) {
  testing::TempDir dir;
  const model::Model demo = model::load_model(testing::source_dir() / "models/demo.onnx").value();
  const model::Model mobilenet =
      model::load_model(testing::source_dir() / ".cache/bench-models/mobilenet_v2.onnx").value();
  EXPECT_NE(tools::calibration_fingerprint(demo.proto()), tools::calibration_fingerprint(mobilenet.proto()));
  EXPECT_EQ(tools::calibration_fingerprint(demo.proto()), tools::calibration_fingerprint(model::Model(demo).proto()));

  tools::CalibrationTable table;
  table.scales = {{"x", 3.0f / 127}};
  table.model_fingerprint = tools::calibration_fingerprint(demo.proto());
  table.model_name = "demo.onnx";
  tools::write_calibration_cache(dir / "demo.cache", table);
  const tools::CalibrationTable read = tools::read_calibration_cache_for(dir / "demo.cache", demo.proto(), "demo.onnx");
  EXPECT_EQ(read.scales, table.scales);
  EXPECT_EQ(read.model_name, "demo.onnx");
  try {
    tools::read_calibration_cache_for(dir / "demo.cache", mobilenet.proto(), "mobilenet_v2.onnx");
    FAIL() << "a cache made for demo.onnx was applied to mobilenet_v2.onnx";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("made for model 'demo.onnx' (fingerprint " + table.model_fingerprint + ")"),
              std::string::npos) << message;
    EXPECT_NE(message.find("not for 'mobilenet_v2.onnx' (fingerprint " +
                           tools::calibration_fingerprint(mobilenet.proto()) + ")"),
              std::string::npos) << message;
  }
  // Caches written before they recorded their model still read (nothing to check them against).
  testing::write_file(dir / "v1.cache", "parity-calibration-minmax-v1\nx: 3c23d70a\n");
  EXPECT_EQ(tools::read_calibration_cache_for(dir / "v1.cache", mobilenet.proto(), "m").scales.size(), 1u);
}

}  // namespace
}  // namespace parity
