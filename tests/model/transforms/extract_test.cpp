#include "model/transforms/extract.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../test_models.h"
#include "tools/runtime_types.h"
#include "transform_test_util.h"

namespace parity::model::transforms {
namespace {

using testing::add_node;
using testing::add_tensor_info;

// x -> Relu -> a -> Neg -> b -> Add(b, W) -> c -> Sigmoid -> y, plus a side branch a -> Exp -> e.
model::Model chain_model() {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_tensor_info(g->add_output(), "e", onnx::TensorProto::FLOAT, {4});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  for (float v : {1.f, 2.f, 3.f, 4.f}) w->add_float_data(v);
  add_node(g, "Relu", {"x"}, {"a"}, "relu");
  add_node(g, "Neg", {"a"}, {"b"}, "neg");
  add_node(g, "Add", {"b", "W"}, {"c"}, "add");
  add_node(g, "Sigmoid", {"c"}, {"y"}, "sigmoid");
  add_node(g, "Exp", {"a"}, {"e"}, "exp");
  return model::Model(std::make_unique<onnx::ModelProto>(m));
}

TEST(Extract, CutsBetweenTensorsWithInferredTypes) {
  ExtractOptions options;
  options.inputs = {parse_input_spec("a:auto:auto")};
  options.outputs = {parse_output_spec("c:auto")};
  auto g = extract_subgraph(chain_model(), options);
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0]->op_type, "Neg");
  EXPECT_EQ(g->nodes[1]->op_type, "Add");
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->inputs[0]->name, "a");
  EXPECT_EQ(g->inputs[0]->dtype, DType::kFloat32);
  EXPECT_EQ(g->inputs[0]->shape.to_string(), "(4,)");
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->outputs[0]->dtype, DType::kFloat32);
  ASSERT_EQ(g->initializers.size(), 1u);  // W stays, nothing else
  model::Model out = g->to_model();
  EXPECT_NO_THROW(onnx::checker::check_model(out.proto()));
}

TEST(Extract, ExplicitTypesWin) {
  ExtractOptions options;
  options.inputs = {parse_input_spec("b:['N']:float32")};
  options.outputs = {parse_output_spec("y")};
  auto g = extract_subgraph(chain_model(), options);
  EXPECT_EQ(g->inputs[0]->shape.dims.at(0).symbol, "N");
  EXPECT_EQ(g->nodes.size(), 2u);
}

// The fallback for `auto` fields shape inference cannot settle: run parity's runtime on generated
// inputs and read the types and shapes off the values.
TEST(Extract, RuntimeResolvesTypesOfIntermediates) {
  const TensorMetadata found = tools::resolve_types_by_running(chain_model(), {"b", "c"});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found.at("b").dtype, DType::kFloat32);
  EXPECT_EQ(found.at("c").shape.to_static(), (Shape{4}));
}

TEST(Extract, ResolverFillsWhatInferenceLeavesUnknown) {
  // A custom-domain node hides the type of its output from shape inference.
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_node(g, "Mystery", {"x"}, {"a"}, "mystery")->set_domain("example.custom");
  auto* op = m.add_opset_import();
  op->set_domain("example.custom");
  op->set_version(1);
  add_node(g, "Relu", {"a"}, {"y"}, "relu");
  ExtractOptions options;
  options.inputs = {parse_input_spec("a:auto:auto")};
  std::vector<std::string> asked;
  options.resolve_types = [&](const model::Model&, const std::vector<std::string>& names) {
    asked = names;
    TensorMetadata meta;
    meta.add("a", DType::kFloat32, DimShape{4});
    return meta;
  };
  auto cut = extract_subgraph(model::Model(std::make_unique<onnx::ModelProto>(m)), options);
  EXPECT_EQ(asked, std::vector<std::string>{"a"});
  EXPECT_EQ(cut->inputs[0]->dtype, DType::kFloat32);
  EXPECT_EQ(cut->nodes.size(), 1u);
  // Without a resolver an unknown input dtype is a clear error.
  options.resolve_types = nullptr;
  try {
    extract_subgraph(model::Model(std::make_unique<onnx::ModelProto>(m)), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not determine the dtype of input 'a'"), std::string::npos) << e.what();
  }
}

TEST(Extract, UnknownNamesSuggestNearMatches) {
  ExtractOptions options;
  options.outputs = {parse_output_spec("sigmod")};
  try {
    extract_subgraph(chain_model(), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    const std::string what = e.what();
    EXPECT_NE(what.find("--outputs: no tensor named 'sigmod'"), std::string::npos) << what;
  }
  options.outputs = {parse_output_spec("c")};
  options.inputs = {parse_input_spec("bb:auto:auto")};
  try {
    extract_subgraph(chain_model(), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'b'"), std::string::npos) << e.what();
  }
}

TEST(Extract, BoundaryLeavingANodeWithoutProducerIsRefused) {
  ExtractOptions options;
  options.inputs = {parse_input_spec("b:auto:auto")};
  options.outputs = {parse_output_spec("y"), parse_output_spec("e")};  // e needs a, which nothing produces now
  try {
    extract_subgraph(chain_model(), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'relu' (Relu) needs tensor 'x'"), std::string::npos) << what;
    EXPECT_NE(what.find("add 'x' to --inputs"), std::string::npos) << what;
  }
}

// The PP-OCRv4 detector cut in its middle: the extracted model, fed the original's intermediate
// values at the cut, reproduces the original's values at the new outputs.
TEST(Extract, OcrDetectorMiddleMatchesOriginalIntermediates) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  PARITY_REQUIRE_FILE(path);
  PARITY_REQUIRE_RUNNER("ort");
  model::Model model = model::load_model(path).value();
  // Pick a cut: the output of the 10th Conv is the input, the output of the 30th Conv the output.
  std::vector<std::string> conv_outputs;
  for (const auto& n : model.proto().graph().node())
    if (n.op_type() == "Conv") conv_outputs.push_back(n.output(0));
  ASSERT_GT(conv_outputs.size(), 30u);
  const std::string cut_in = conv_outputs[10], cut_out = conv_outputs[30];

  testing::TempDir tmp;
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 3)}};
  const TensorMap original =
      testing::run_with_ort(testing::with_outputs(path, {cut_in, cut_out}, tmp / "marked.onnx"), feed);

  ExtractOptions options;
  options.inputs = {parse_input_spec(cut_in + ":[1,-1,-1,-1]:auto")};
  options.outputs = {parse_output_spec(cut_out + ":auto")};
  auto g = extract_subgraph(model, options);
  EXPECT_LT(g->nodes.size(), static_cast<size_t>(model.proto().graph().node_size()));
  model::save_model(g->to_model(), tmp / "cut.onnx").throw_if_error();
  EXPECT_NO_THROW(onnx::checker::check_model((tmp / "cut.onnx").string()));
  const TensorMap extracted = testing::run_with_ort(tmp / "cut.onnx", {{cut_in, *original.find(cut_in)}});
  const Tensor* want = original.find(cut_out);
  const Tensor* got = extracted.find(cut_out);
  ASSERT_TRUE(want && got);
  EXPECT_LE(testing::max_abs_diff(*got, *want), 1e-5);
}

}  // namespace
}  // namespace parity::model::transforms
