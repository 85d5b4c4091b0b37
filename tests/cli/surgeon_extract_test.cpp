// End-to-end tests of `parity surgeon extract` and the shared output rules of the model-editing
// commands (overwrite guard, external data, bad names).
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"
#include "model/model.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// x -> Relu -> a -> Add(a, W) -> b -> Neg -> y, with W (4 KiB) external in w.bin.
std::filesystem::path write_chain(const testing::TempDir& tmp) {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1024});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {1024});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1024);
  std::vector<float> values(1024, 0.25f);
  w->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  testing::add_node(g, "Relu", {"x"}, {"a"}, "relu");
  testing::add_node(g, "Add", {"a", "W"}, {"b"}, "add");
  testing::add_node(g, "Neg", {"b"}, {"y"}, "neg");
  testing::externalize(m, "W", tmp.path(), "w.bin");
  testing::write_model(m, tmp / "chain.onnx");
  return tmp / "chain.onnx";
}

TEST(SurgeonExtract, CutsAndKeepsWeightsExternalWhenAsked) {
  testing::TempDir tmp;
  const auto model = write_chain(tmp);
  const auto out = tmp / "out" / "cut.onnx";
  const auto r = run_parity({"surgeon", "extract", model.string(), "--inputs", "a:auto:auto", "--outputs", "b:auto",
                             "-o", out.string(), "--external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.last_line(), "PASSED")) << r.output;
  model::Model cut = model::load_model(out).value();
  EXPECT_TRUE(cut.has_external_data());
  EXPECT_TRUE(std::filesystem::exists(tmp / "out" / "cut.onnx.data"));
  ASSERT_EQ(cut.proto().graph().node_size(), 1);
  EXPECT_EQ(cut.proto().graph().node(0).op_type(), "Add");
  EXPECT_EQ(cut.proto().graph().input(0).name(), "a");
  EXPECT_EQ(cut.proto().graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 1024);
  EXPECT_NO_THROW(onnx::checker::check_model(out.string()));
}

TEST(SurgeonExtract, UnknownTensorListsNearMatches) {
  testing::TempDir tmp;
  const auto model = write_chain(tmp);
  const auto r = run_parity({"surgeon", "extract", model.string(), "--outputs", "bb", "-o", (tmp / "o.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no tensor named 'bb'")) << r.output;
  EXPECT_TRUE(contains(r.output, "did you mean 'b'")) << r.output;
  EXPECT_TRUE(contains(r.last_line(), "FAILED")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(tmp / "o.onnx"));
}

TEST(SurgeonExtract, BoundaryWithoutProducerIsAnError) {
  testing::TempDir tmp;
  const auto model = write_chain(tmp);
  // Cutting at b but asking for y through a: y needs b only, fine; asking for b from input a only
  // works; asking for y with input W (a constant) leaves 'a' without a producer.
  const auto r = run_parity({"surgeon", "extract", model.string(), "--inputs", "W:auto:auto", "--outputs", "y",
                             "-o", (tmp / "o.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "node 'relu' (Relu) needs tensor 'x'")) << r.output;
}

TEST(SurgeonExtract, RefusesToOverwriteTheInputUnlessForced) {
  testing::TempDir tmp;
  const auto model = write_chain(tmp);
  const std::string before = testing::read_file(model);
  auto r = run_parity({"surgeon", "extract", model.string(), "--outputs", "b", "-o", model.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "is the input model")) << r.output;
  EXPECT_EQ(testing::read_file(model), before);
  // Writing the weights over the input's own weight file is refused as well.
  r = run_parity({"surgeon", "extract", model.string(), "--outputs", "b", "-o", (tmp / "other.onnx").string(),
                  "--external-data-location", "w.bin"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "input model's weight file")) << r.output;
  r = run_parity({"surgeon", "extract", model.string(), "--outputs", "b", "-o", model.string(), "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(model::load_model(model).value().proto().graph().output(0).name(), "b");
  EXPECT_NO_THROW(onnx::checker::check_model(model.string()));
}

}  // namespace
}  // namespace parity
