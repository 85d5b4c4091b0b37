// Shared ONNX save options: parsing and their effect on a saved model.
#include "model/save_args.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "model/external_data.h"
#include "model/graph.h"
#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

options::Args parse(const std::vector<std::string>& argv) {
  options::ArgParser parser("parity test", "test");
  model::ModelSaveArgs().add_to(parser);
  return parser.parse(argv);
}

TEST(OnnxSaveArgs, Defaults) {
  auto o = model::ModelSaveArgs().parse(parse({}));
  EXPECT_FALSE(o.external_data);
  EXPECT_EQ(o.size_threshold, 1024u);
  EXPECT_TRUE(o.all_tensors_to_one_file);
}

TEST(OnnxSaveArgs, ExternalDataOptions) {
  auto o = model::ModelSaveArgs().parse(
      parse({"--external-data-location", "w.bin", "--external-data-size-threshold", "4K"}));
  EXPECT_TRUE(o.external_data);
  EXPECT_EQ(o.location, "w.bin");
  EXPECT_EQ(o.size_threshold, 4096u);
}

TEST(OnnxSaveArgs, ThresholdDecidesWhatGoesExternal) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model();  // W is 16 bytes
  auto* big = proto.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(512);
  for (int i = 0; i < 512; ++i) big->add_float_data(static_cast<float>(i));  // typed field, not raw_data
  model::Model model(std::make_unique<onnx::ModelProto>(proto));
  auto options = model::ModelSaveArgs().parse(parse({"--external-data", "--external-data-size-threshold", "1K"}));
  ASSERT_TRUE(model::save_model(model, dir / "m.onnx", options).is_ok());
  auto saved = model::load_model(dir / "m.onnx").value();
  const auto& inits = saved.proto().graph().initializer();
  EXPECT_FALSE(model::has_external_data(inits[0]));
  EXPECT_TRUE(model::has_external_data(inits[1]));
  auto g = model::Graph::from_model(saved);
  EXPECT_EQ(g->tensor("big")->values().to_vector<float>()[511], 511.0f);
  EXPECT_EQ(std::filesystem::file_size(dir / "m.onnx.data"), 2048u);
}

TEST(OnnxMappedFile, WritesThroughTensorsNeverReachTheFile) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model({1, 2, 3, 4});
  externalize(proto, "W", dir.path(), "w.bin");
  write_model(proto, dir / "m.onnx");
  auto g = model::Graph::from_model(model::load_model(dir / "m.onnx").value());
  Tensor w = g->tensor("W")->values();
  w.data<float>()[0] = 100.0f;
  EXPECT_EQ(g->tensor("W")->values().data<float>()[0], 100.0f);  // same mapping
  auto fresh = model::Graph::from_model(model::load_model(dir / "m.onnx").value());
  const std::string bytes = read_file(dir / "w.bin");
  float first = 0;
  std::memcpy(&first, bytes.data(), 4);
  EXPECT_EQ(first, 1.0f);
}

}  // namespace
}  // namespace parity::testing
