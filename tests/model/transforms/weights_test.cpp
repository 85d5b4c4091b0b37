#include "model/transforms/weights.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../test_models.h"
#include "model/external_data.h"
#include "model/transforms/proto_walk.h"
#include "transform_test_util.h"

namespace parity::model::transforms {
namespace {

// parity's size-based selection: these models keep weights where Polygraphy's patterns do not look
// (an Add, Constant nodes); the pattern selection has its own tests in tests/cli.
const StripOptions kBySize{.polygraphy_selection = false, .size_threshold = 1024};

size_t valueless_tensors(model::Model& model) {
  size_t n = 0;
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (t.doc_string() == kWeightlessDocString && model::is_weightless(t) && t.has_raw_data() &&
        !model::has_external_data(t))
      ++n;
  });
  return n;
}

TEST(Weights, StripKeepsTypesAndSmallOrIntegerTensors) {
  std::vector<float> w(512, 0.5f);  // 2 KiB: stripped
  model::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model(w)));
  auto* shape = model.proto().mutable_graph()->add_initializer();  // integer: kept
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(512);
  const auto report = strip_weights(model, kBySize);
  EXPECT_EQ(report.stripped_tensors, 1u);
  EXPECT_EQ(report.stripped_bytes, 2048u);
  const auto& init = model.proto().graph().initializer(0);
  // Polygraphy's form: raw_data present but empty, "TRT_WEIGHTLESS/", the model marked too.
  EXPECT_EQ(init.doc_string(), "TRT_WEIGHTLESS/");
  EXPECT_EQ(init.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(init.dims(0), 512);
  EXPECT_TRUE(init.has_raw_data());
  EXPECT_TRUE(init.raw_data().empty());
  EXPECT_EQ(model.proto().doc_string(), "TRT_WEIGHTLESS");
  EXPECT_EQ(model.proto().graph().initializer(1).int64_data(0), 512);

  const auto rebuilt = reconstruct_weights(model, 7);
  EXPECT_EQ(rebuilt.reconstructed_tensors, 1u);
  EXPECT_EQ(model.proto().graph().initializer(0).raw_data().size(), 2048u);
  EXPECT_TRUE(model.proto().graph().initializer(0).doc_string().empty());
  EXPECT_TRUE(model.proto().doc_string().empty());
  EXPECT_NO_THROW(onnx::checker::check_model(model.proto()));

  // Same seed, same weights.
  model::Model again(std::make_unique<onnx::ModelProto>(testing::add_relu_model(w)));
  strip_weights(again, kBySize);
  reconstruct_weights(again, 7);
  EXPECT_EQ(again.proto().graph().initializer(0).raw_data(), model.proto().graph().initializer(0).raw_data());
}

TEST(Weights, StripDropsExternalReferences) {
  testing::TempDir tmp;
  std::vector<float> w(1024, 1.0f);
  onnx::ModelProto proto = testing::add_relu_model(w);
  testing::externalize(proto, "W", tmp.path(), "w.bin");
  testing::write_model(proto, tmp / "m.onnx");
  model::Model model = model::load_model(tmp / "m.onnx").value();
  ASSERT_TRUE(model.has_external_data());
  strip_weights(model, kBySize);
  EXPECT_FALSE(model.has_external_data());
  EXPECT_EQ(valueless_tensors(model), 1u);
}

// libonnx's checker refuses Polygraphy's empty inline raw_data; the empty side file form passes it,
// loads in parity without reading anything, and reconstructs like the inline form.
TEST(Weights, WeightlessSideFileFormPassesTheChecker) {
  testing::TempDir tmp;
  std::vector<float> w(1024, 1.0f);
  model::Model model(std::make_unique<onnx::ModelProto>(testing::add_relu_model(w)));
  strip_weights(model, kBySize);
  model::save_model(model, tmp / "inline.onnx").throw_if_error();
  EXPECT_THROW(onnx::checker::check_model((tmp / "inline.onnx").string()), std::exception);

  EXPECT_EQ(reference_weightless_file(model, "s.onnx.weightless"), 1u);
  EXPECT_EQ(weightless_locations(model), std::vector<std::string>{"s.onnx.weightless"});
  model::save_model(model, tmp / "s.onnx").throw_if_error();
  testing::write_file(tmp / "s.onnx.weightless", "");
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "s.onnx").string()));

  model::Model loaded = model::load_model(tmp / "s.onnx").value();
  const auto& t = loaded.proto().graph().initializer(0);
  EXPECT_TRUE(model::is_weightless(t));
  EXPECT_TRUE(model::has_external_data(t));
  EXPECT_EQ(reconstruct_weights(loaded, 3).reconstructed_tensors, 1u);
  EXPECT_FALSE(model::has_external_data(loaded.proto().graph().initializer(0)));
  EXPECT_EQ(loaded.proto().graph().initializer(0).raw_data().size(), 4096u);
  EXPECT_NO_THROW(onnx::checker::check_model(loaded.proto()));
}

// PP-OCRv4's detector keeps its weights in Constant nodes: stripping empties them, reconstruction
// gives a model of the same architecture that runs and gives finite probabilities.
TEST(Weights, OcrDetectorRoundTripRuns) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  PARITY_REQUIRE_FILE(path);
  model::Model model = model::load_model(path).value();
  const auto stripped = strip_weights(model, kBySize);
  EXPECT_GT(stripped.stripped_tensors, 50u);
  EXPECT_EQ(valueless_tensors(model), stripped.stripped_tensors);
  testing::TempDir tmp;
  model::save_model(model, tmp / "weightless.onnx").throw_if_error();
  EXPECT_LT(std::filesystem::file_size(tmp / "weightless.onnx"), std::filesystem::file_size(path) / 10);

  model::Model loaded = model::load_model(tmp / "weightless.onnx").value();
  const auto rebuilt = reconstruct_weights(loaded, 1);
  EXPECT_EQ(rebuilt.reconstructed_tensors, stripped.stripped_tensors);
  EXPECT_EQ(rebuilt.reconstructed_bytes, stripped.stripped_bytes);
  model::save_model(loaded, tmp / "rebuilt.onnx").throw_if_error();
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "rebuilt.onnx").string()));
  PARITY_REQUIRE_RUNNER("ort");
  const TensorMap out = testing::run_with_ort(tmp / "rebuilt.onnx", {{"x", testing::seeded_uniform({1, 3, 64, 96}, 1)}});
  const Tensor& y = out.begin()->second;
  EXPECT_EQ(y.shape(), (Shape{1, 1, 64, 96}));
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(y.value_as_double(i))) << i;
}

}  // namespace
}  // namespace parity::model::transforms
