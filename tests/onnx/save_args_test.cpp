// Shared ONNX save options: parsing and their effect on a saved model.
#include "onnx/save_args.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx/external_data.h"
#include "onnx/graph.h"
#include "onnx/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

cli::Args parse(const std::vector<std::string>& argv) {
  cli::ArgParser parser("parity test", "test");
  onnx_io::add_model_save_options(parser);
  return parser.parse(argv);
}

TEST(OnnxSaveArgs, Defaults) {
  auto o = onnx_io::model_save_options(parse({}));
  EXPECT_FALSE(o.external_data);
  EXPECT_EQ(o.size_threshold, 1024u);
  EXPECT_TRUE(o.all_tensors_to_one_file);
}

TEST(OnnxSaveArgs, ExternalDataOptions) {
  auto o = onnx_io::model_save_options(
      parse({"--external-data-location", "w.bin", "--external-data-size-threshold", "4K"}));
  EXPECT_TRUE(o.external_data);
  EXPECT_EQ(o.location, "w.bin");
  EXPECT_EQ(o.size_threshold, 4096u);
  EXPECT_EQ(onnx_io::parse_size("1.5M", "x"), 1572864u);
  EXPECT_EQ(onnx_io::parse_size("2g", "x"), uint64_t{2} << 30);
  EXPECT_THROW(onnx_io::parse_size("12 apples", "x"), Error);
  EXPECT_THROW(onnx_io::parse_size("-3", "x"), Error);
}

TEST(OnnxSaveArgs, ThresholdDecidesWhatGoesExternal) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model();  // W is 16 bytes
  auto* big = proto.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(512);
  for (int i = 0; i < 512; ++i) big->add_float_data(static_cast<float>(i));  // typed field, not raw_data
  onnx_io::Model model(std::make_unique<onnx::ModelProto>(proto));
  auto options = onnx_io::model_save_options(parse({"--external-data", "--external-data-size-threshold", "1K"}));
  ASSERT_TRUE(onnx_io::save_model(model, dir / "m.onnx", options).is_ok());
  auto saved = onnx_io::load_model(dir / "m.onnx").value();
  const auto& inits = saved.proto().graph().initializer();
  EXPECT_FALSE(onnx_io::has_external_data(inits[0]));
  EXPECT_TRUE(onnx_io::has_external_data(inits[1]));
  auto g = ir::Graph::from_model(saved);
  EXPECT_EQ(g->tensor("big")->values().to_vector<float>()[511], 511.0f);
  EXPECT_EQ(std::filesystem::file_size(dir / "m.onnx.data"), 2048u);
}

TEST(OnnxMappedFile, WritesThroughTensorsNeverReachTheFile) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model({1, 2, 3, 4});
  externalize(proto, "W", dir.path(), "w.bin");
  write_model(proto, dir / "m.onnx");
  auto g = ir::Graph::from_model(onnx_io::load_model(dir / "m.onnx").value());
  Tensor w = g->tensor("W")->values();
  w.data<float>()[0] = 100.0f;
  EXPECT_EQ(g->tensor("W")->values().data<float>()[0], 100.0f);  // same mapping
  auto fresh = ir::Graph::from_model(onnx_io::load_model(dir / "m.onnx").value());
  const std::string bytes = read_file(dir / "w.bin");
  float first = 0;
  std::memcpy(&first, bytes.data(), 4);
  EXPECT_EQ(first, 1.0f);
}

}  // namespace
}  // namespace parity::testing
