// Sizes that come from a file are checked before anything is allocated: element counts that
// overflow, dims larger than the stored values, protobuf's 2 GiB and nesting limits. Each gives
// one error line, through the library and through `parity run`.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <fstream>
#include <tuple>

#include "core/status.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/proto_convert.h"
#include "model/shape_inference.h"
#include "support/model_builder.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// y = Add(x, w) with initializer w: dims and stored values as the test wants them.
onnx::ModelProto model_with_initializer(const std::vector<int64_t>& dims, int stored_floats) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("limits");
  for (const char* name : {"x", "y"}) {
    onnx::ValueInfoProto* v = std::string(name) == "x" ? g->add_input() : g->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  }
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) w->add_dims(d);
  for (int i = 0; i < stored_floats; ++i) w->add_float_data(1.0f);
  onnx::NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("y");
  return model;
}

void save(const onnx::ModelProto& model, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

// Runs `parity run MODEL --ref` and returns its error line, checking exit code 1.
std::string run_error(const fs::path& model, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run", model.string(), "--ref"};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult r = run_parity(args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const size_t e = r.output.find("[E] ");
  EXPECT_NE(e, std::string::npos) << r.output;
  return e == std::string::npos ? "" : r.output.substr(e, r.output.find('\n', e) - e);
}

TEST(ModelLimits, DimsLargerThanTheStoredValuesFailBeforeAllocating) {
  // 2^40 x 2^20 floats (4 PiB) over one stored value: must not try to allocate.
  const onnx::ModelProto model = model_with_initializer({int64_t{1} << 40, int64_t{1} << 20}, 1);
  const std::string message =
      user_error_of([&] { model::tensor_from_proto(model.graph().initializer(0), fs::path()); });
  EXPECT_NE(message.find("needs 1152921504606846976 values but the model stores 1"), std::string::npos) << message;

  TempDir dir;
  save(model, dir / "huge_dims.onnx");
  EXPECT_NE(run_error(dir / "huge_dims.onnx").find("the model stores 1"), std::string::npos);
}

TEST(ModelLimits, RawDataShorterThanTheShapeFailsBeforeAllocating) {
  onnx::ModelProto model = model_with_initializer({int64_t{1} << 45}, 0);
  model.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(8, '\0'));
  const std::string message =
      user_error_of([&] { model::tensor_from_proto(model.graph().initializer(0), fs::path()); });
  EXPECT_NE(message.find("needs 140737488355328 bytes, got 8"), std::string::npos) << message;
}

TEST(ModelLimits, ElementCountOverflowingInt64IsOneLine) {
  const onnx::ModelProto model = model_with_initializer({int64_t{1} << 62, 4, 4}, 1);
  const std::string message =
      user_error_of([&] { model::tensor_from_proto(model.graph().initializer(0), fs::path()); });
  EXPECT_NE(message.find("has more elements than a 64-bit count can hold"), std::string::npos) << message;
  EXPECT_EQ(shape_numel({0, int64_t{1} << 62, 1024}), 0);  // empty stays empty, no overflow
}

TEST(ModelLimits, AbsurdInputShapesAreOneLine) {
  TempDir dir;
  onnx::ModelProto model = model_with_initializer({1}, 1);
  // Dynamic x so --input-shapes may choose any size.
  for (auto* v : {model.mutable_graph()->mutable_input(0), model.mutable_graph()->mutable_output(0)})
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("n");
  save(model, dir / "dynamic.onnx");
  EXPECT_NE(run_error(dir / "dynamic.onnx", {"--input-shapes", "x:[9223372036854775807,4]"})
                .find("more elements than a 64-bit count can hold"),
            std::string::npos);
  EXPECT_NE(run_error(dir / "dynamic.onnx", {"--input-shapes", "x:[0,9223372036854775807,4]"})
                .find("more elements than a 64-bit count can hold"),
            std::string::npos);
  // Representable but larger than memory: refused before allocating, naming the shape.
  const std::string big = run_error(dir / "dynamic.onnx", {"--input-shapes", "x:[1125899906842624]"});
  EXPECT_NE(big.find("tensor of shape (1125899906842624,) needs"), std::string::npos) << big;
  EXPECT_NE(big.find("parity may allocate"), std::string::npos) << big;

  // The same through a model whose own input shape is absurd.
  onnx::ModelProto fixed = model;
  fixed.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_value(int64_t{1} << 50);
  save(fixed, dir / "absurd_input.onnx");
  EXPECT_NE(run_error(dir / "absurd_input.onnx").find("parity may allocate"), std::string::npos);
}

TEST(ModelLimits, SubgraphsNestedPastProtobufsDepthLimitAreOneLine) {
  // If -> then_branch -> If -> ... 60 levels: 3 protobuf messages per level, past protobuf's 100.
  onnx::ModelProto model = model_with_initializer({1}, 1);
  onnx::GraphProto* graph = model.mutable_graph();
  for (int level = 0; level < 60; ++level) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("If");
    node->add_input("cond");
    node->add_output("out" + std::to_string(level));
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name("then_branch");
    attr->set_type(onnx::AttributeProto::GRAPH);
    graph = attr->mutable_g();
    graph->set_name("level" + std::to_string(level));
  }
  TempDir dir;
  save(model, dir / "deep.onnx");
  const std::string message = user_error_of([&] { model::load_model(dir / "deep.onnx").value(); });
  EXPECT_NE(message.find("nested deeper than"), std::string::npos) << message;
  const std::string line = run_error(dir / "deep.onnx");
  EXPECT_NE(line.find("nested deeper than"), std::string::npos) << line;
}

TEST(ModelLimits, ModelFilesOfTwoGigabytesOrMoreAreRefusedWithoutReading) {
  TempDir dir;
  const fs::path path = dir / "huge.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out << "x";
  }
  // A sparse file: 2 GiB + 1 byte on paper, nothing on disk, never read by the check.
  ASSERT_EQ(::truncate(path.c_str(), (int64_t{2} << 30) + 1), 0);
  const std::string message = user_error_of([&] { model::load_model(path).value(); });
  EXPECT_NE(message.find("protobuf cannot parse messages of 2 GiB or more"), std::string::npos) << message;
}

// Found by fuzz_model_load: libonnx's Scan inference read num_scan_inputs without checking that it
// exists and crashed `inspect model --shape-inference`.
TEST(ModelLimits, NodeLackingARequiredAttributeIsOneLineNotACrash) {
  onnx::ModelProto model;
  {
    std::ifstream in(onnx_testdata_dir() / "node" / "test_scan9_sum" / "model.onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  onnx::NodeProto* scan = model.mutable_graph()->mutable_node(0);
  ASSERT_EQ(scan->op_type(), "Scan");
  scan->set_name("scan_node");
  auto* attributes = scan->mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i) {
    if (attributes->Get(i).name() == "num_scan_inputs") attributes->DeleteSubrange(i--, 1);
  }
  onnx::ModelProto copy = model;
  const std::string message = user_error_of([&] { model::infer_shapes(copy); });
  EXPECT_NE(message.find("node 'scan_node' (Scan) lacks its required attribute 'num_scan_inputs'"), std::string::npos)
      << message;

  const TempDir dir;
  const fs::path path = dir.path() / "scan_without_num_scan_inputs.onnx";
  save(model, path);
  const CommandResult r = run_parity({"inspect", "model", path.string(), "--shape-inference"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[E] "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("num_scan_inputs"), std::string::npos) << r.output;
}

/// `inspect model --shape-inference` and `check lint` on a model file holding `bytes`.
struct InspectAndLint {
  CommandResult inspect, lint;
};
InspectAndLint inspect_and_lint(const std::string& bytes, const std::string& file_name) {
  const TempDir dir;
  const fs::path path = dir.path() / file_name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return {run_parity({"inspect", "model", path.string(), "--shape-inference"}), run_parity({"check", "lint", path.string()})};
}

/// y = Einsum(x) with `equation`, x of `x_dims`, opset 12; with `reduce_first`, x is first
/// ReduceSum'd over its last axis (keepdims 0), so the Einsum's input rank comes from inference.
onnx::ModelProto einsum_model(const std::string& equation, const std::vector<int64_t>& x_dims, bool reduce_first = false) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(12);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("einsum");
  onnx::ValueInfoProto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x_dims) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  std::string einsum_input = "x";
  if (reduce_first) {
    onnx::NodeProto* reduce = g->add_node();
    reduce->set_op_type("ReduceSum");
    reduce->add_input("x");
    reduce->add_output("r");
    onnx::AttributeProto* axes = reduce->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(-1);
    onnx::AttributeProto* keepdims = reduce->add_attribute();
    keepdims->set_name("keepdims");
    keepdims->set_type(onnx::AttributeProto::INT);
    keepdims->set_i(0);
    einsum_input = "r";
  }
  onnx::NodeProto* einsum = g->add_node();
  einsum->set_op_type("Einsum");
  einsum->set_name("einsum_node");
  einsum->add_input(einsum_input);
  if (equation.find(',') != std::string::npos) einsum->add_input(einsum_input);
  einsum->add_output("y");
  onnx::AttributeProto* attr = einsum->add_attribute();
  attr->set_name("equation");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(equation);
  return model;
}

// Found by fuzz_model_load: libonnx 1.17's Einsum inference indexes the input shape by the
// equation's letters before it checks the rank, and crashed `inspect model --shape-inference` on
// 'ij->i' over a rank-1 input. The rank may come from inference itself, so the check runs inside
// Einsum's inference (model/schemas/inference_guards.cpp).
TEST(ModelLimits, EinsumEquationNotFittingItsInputsIsOneLineNotACrash) {
  struct Case {
    std::string equation;
    std::vector<int64_t> dims;
    bool reduce_first;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"ij->i", {3}, false, "term 'ij' has 2 indices but input 0 has rank 1"},
      {"ijk->i", {3, 4}, true, "term 'ijk' has 3 indices but input 0 has rank 1"},
      {"...->a", {3}, false, "output index 'a' occurs in no input term"},
      {"...ij,...j->...i", {2, 3}, false, "stand for different numbers of dimensions"},
      {"i...jk->i", {2}, false, "term 'i...jk' has 3 indices but input 0 has rank 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    onnx::ModelProto model = einsum_model(c.equation, c.dims, c.reduce_first);
    if (c.equation == "...ij,...j->...i") {  // a second input of another rank: [2, 3] and [5, 6, 3]
      onnx::ValueInfoProto* z = model.mutable_graph()->add_input();
      z->set_name("z");
      z->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      for (int64_t d : {5, 6, 3}) z->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
      model.mutable_graph()->mutable_node(0)->set_input(1, "z");
    }
    // Lenient inference (the default) skips the node, leaving y's shape unknown; strict names it.
    onnx::ModelProto lenient = model;
    model::infer_shapes(lenient);
    EXPECT_FALSE(lenient.graph().output(0).type().tensor_type().has_shape());
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    const std::string message = user_error_of([&] { model::infer_shapes(model, strict); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
  // Equations that fit still infer their output shapes through libonnx's own function.
  for (const auto& [equation, dims, want] :
       std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>>>{
           {"ij->ji", {2, 3}, {3, 2}}, {"...ij->...i", {4, 2, 3}, {4, 2}}, {"ij,ij->i", {2, 3}, {2}}}) {
    onnx::ModelProto model = einsum_model(equation, dims);
    model::infer_shapes(model);
    const auto& shape = model.graph().output(0).type().tensor_type().shape();
    ASSERT_EQ(shape.dim_size(), static_cast<int>(want.size())) << equation;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(shape.dim(static_cast<int>(i)).dim_value(), want[i]) << equation;
  }

  // The fuzzer's input itself, through the CLI.
  const std::string crash(
      "\x08\x07\x12\x0c\x62\x61\x63\x6b\x65\x6e\x64\x2d\x74\x65\x73\x74\x3a\x5d\x0a\x24\x0a\x01\x78\x12"
      "\x01\x79\x22\x06\x45\x69\x6e\x73\x75\x6d\x2a\x14\x0a\x08\x65\x71\x75\x61\x74\x69\x6f\x6e\x22\x05"
      "\x69\x6a\x2d\x3e\x69\xa0\x01\x03\x12\x0f\x74\x65\x43\x6f\x6e\x76\x69\x6e\x73\x75\x6d\x5f\x71\x75"
      "\x6d\x5a\x13\x0a\x01\x78\x12\x0e\x0a\x0c\x08\x0b\x12\x08\x0a\x02\x08\x03\x28\x02\x08\x04\x62\x0f"
      "\x0a\x01\x79\x12\x0a\x0a\x08\x08\x0b\x12\x04\x0a\x02\x08\x03\x42\x04\x0a\x00\x10\x0c",
      117);
  const auto [inspect, lint] = inspect_and_lint(crash, "einsum_rank_mismatch.onnx");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  // libonnx's inference only warns; ONNX Runtime's node-by-node pass then reports the node as an error.
  EXPECT_EQ(lint.exit_code, 1) << lint.output;
  EXPECT_NE(lint.output.find("term 'ij' has 2 indices but input 0 has rank 1"), std::string::npos) << lint.output;
  EXPECT_NE(lint.output.find("[E] LINT | Nodes: polygraphy_unnamed_node_0 | "), std::string::npos) << lint.output;
}

/// y = `op`(x, w) at `opset`, x of `x_dims`, w of `w_dims`, kernel_shape [3, 3].
onnx::ModelProto conv_transpose_model(int opset, const std::vector<int64_t>& x_dims, const std::vector<int64_t>& w_dims,
                                      const std::string& op = "ConvTranspose") {
  ModelBuilder builder(opset);
  builder.input("x", DType::kFloat32, x_dims).input("w", DType::kFloat32, w_dims).untyped_output("y");
  add_ints_attr(builder.node(op, {"x", "w"}, {"y"}, "deconv"), "kernel_shape", {3, 3});
  return builder.model();
}

// Found by fuzz_model_load: libonnx 1.17's ConvTranspose inference (every version) reads the
// weight's second dim for the output channels without checking the weight's rank, and a rank-1
// weight under a rank-4 input crashed `inspect model --shape-inference`. The ranks are checked
// inside ConvTranspose's inference (model/schemas/inference_guards.cpp).
TEST(ModelLimits, ConvTransposeWeightOfAnotherRankIsOneLineNotACrash) {
  for (int opset : {8, 11, 22}) {
    SCOPED_TRACE(opset);
    const onnx::ModelProto model = conv_transpose_model(opset, {1, 1, 3, 3}, {2});
    onnx::ModelProto lenient = model;
    model::infer_shapes(lenient);
    EXPECT_FALSE(lenient.graph().output(0).type().tensor_type().has_shape());
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    onnx::ModelProto strict_model = model;
    const std::string message = user_error_of([&] { model::infer_shapes(strict_model, strict); });
    EXPECT_NE(message.find("ConvTranspose: the weight (input 1) has rank 1 but the input has rank 4"), std::string::npos)
        << message;

    // A weight of the input's rank still infers through libonnx's own function: 1x2x3x3 -> 1x2x5x5.
    onnx::ModelProto valid = conv_transpose_model(opset, {1, 1, 3, 3}, {1, 2, 3, 3});
    model::infer_shapes(valid, strict);
    const auto& shape = valid.graph().output(0).type().tensor_type().shape();
    ASSERT_EQ(shape.dim_size(), 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(shape.dim(i).dim_value(), (std::vector<int64_t>{1, 2, 5, 5}[i]));
  }

  // Conv-22 takes one kernel dim per weight dim past 2 and indexed the input's dims with them.
  for (int opset : {11, 22}) {
    onnx::ModelProto conv = conv_transpose_model(opset, {1, 1, 3, 3}, {1, 1, 3, 3, 3, 3}, "Conv");
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    const std::string message = user_error_of([&] { model::infer_shapes(conv, strict); });
    EXPECT_NE(message.find("Conv: the weight (input 1) has rank 6 but the input has rank 4"), std::string::npos)
        << message;
  }

  // The fuzzer's input itself (opset 8, output_shape and strides given), through the CLI.
  const std::string crash(
      "\x08\x03\x12\x0c\x62\x61\x63\x6b\x65\x6e\x64\x2d\x74\x65\x73\x74\x3a\xf0\x01\x0a\x77\x0a\x01\x78"
      "\x0a\x01\x77\x12\x01\x79\x1a\x04\x74\x65\x73\x74\x22\x0d\x43\x6f\x6e\x76\x54\x72\x61\x6e\x73\x70"
      "\x6f\x73\x65\x2a\x15\x0a\x0c\x6b\x65\x72\x6e\x65\x6c\x5f\x73\x68\x61\x70\x65\x40\x03\x40\x03\xa0"
      "\x01\x07\x2a\x17\x0a\x0e\x6f\x75\x74\x70\x75\x74\x5f\x70\x61\x64\x64\x69\x6e\x67\x40\x01\x40\x01"
      "\xa0\x01\x07\x2a\x15\x0a\x0c\x6f\x75\x74\x70\x75\x74\x5f\x73\x68\x61\x70\x65\x40\x0a\x40\x08\xa0"
      "\x01\x07\x2a\x10\x0a\x07\x73\x74\x72\x69\x64\x65\x73\x40\x03\x40\x02\xa0\x01\x07\x12\x1e\x74\x65"
      "\x73\x74\x5f\x63\x6f\x6e\x76\x74\x72\x61\x6e\x73\x70\x6f\x73\x65\x5f\x77\x69\x74\x68\x5f\x6b\x65"
      "\x72\x6e\x65\x6c\x5a\x1b\x0a\x01\x78\x12\x16\x0a\x14\x08\x01\x12\x10\x0a\x02\x08\x01\x0a\x02\x08"
      "\x01\x0a\x02\x08\x03\x0a\x02\x08\x03\x5a\x1b\x0a\x01\x77\x12\x16\x0a\x14\x08\x01\x12\x10\x0a\x02"
      "\x08\x01\xf9\x02\x08\x02\x0a\x02\x08\x03\x0a\x02\x08\x03\x62\x1b\x0a\x01\x79\x12\x16\x0a\x14\x08"
      "\x01\x12\x10\x0a\x02\x08\x01\x0a\x02\x08\x02\x0a\x02\x08\x0a\x0a\x02\x08\x08\x42\x02\x10\x08",
      263);
  const auto [inspect, lint] = inspect_and_lint(crash, "conv_transpose_rank_1_weight.onnx");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_TRUE(lint.exit_code == 0 || lint.exit_code == 1) << lint.exit_code << "\n" << lint.output;
  // The node is named with one reason: parity's schema check, or ONNX Runtime's where it blames the node first.
  const bool named = lint.output.find("the weight (input 1) has rank 1 but the input has rank 4") != std::string::npos ||
                     lint.output.find("[E] LINT | Nodes: test |  Weight tensor must have at least 3 dimensions") !=
                         std::string::npos;
  EXPECT_TRUE(named) << lint.output;
}

// Found by a rank sweep of the ONNX node tests under ASan (each input redeclared at ranks 0-5):
// libonnx 1.17's data propagation for Add/Sub/Mul/Div broadcasts an operand's propagated value
// by reading its element 0, also when that value is empty (the Shape of a scalar) and the other
// has one element. Shape inference with data propagation (`inspect model --shape-inference`)
// crashed. An empty operand now propagates nothing (model/schemas/inference_guards.cpp).
TEST(ModelLimits, ArithmeticOnTheEmptyShapeOfAScalarIsNotACrash) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    ModelBuilder builder(14);
    builder.input("x", DType::kFloat32, {}).initializer("one", Tensor::from_vector<int64_t>({1}, {1})).untyped_output("y");
    builder.node("Shape", {"x"}, {"s"});
    builder.node(op, {"s", "one"}, {"y"});
    onnx::ModelProto model = builder.model();

    // [0] broadcast with [1] is [0]: inference still gives y its shape, data propagation gives nothing.
    model::infer_shapes(model, /*data_prop=*/true);
    const auto& y = model.graph().output(0).type().tensor_type();
    ASSERT_EQ(y.shape().dim_size(), 1);
    EXPECT_EQ(y.shape().dim(0).dim_value(), 0);

    const TempDir dir;
    const fs::path path = dir.path() / "shape_of_scalar.onnx";
    std::string bytes;
    ASSERT_TRUE(model.SerializeToString(&bytes));
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const CommandResult inspect = run_parity({"inspect", "model", path.string(), "--shape-inference"});
    EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  }
}

/// y = `op`(inputs...) at `opset`: every input float of `dims` (GatherND's indices int64),
/// `attribute` an INT or INTS.
onnx::ModelProto one_node_model(const std::string& op, int opset, const std::vector<std::vector<int64_t>>& input_dims,
                                const std::string& attribute, const std::vector<int64_t>& values, bool ints) {
  ModelBuilder builder(opset);
  onnx::NodeProto& node = builder.node(op, {}, {"y"});
  for (size_t i = 0; i < input_dims.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    builder.input(name, i == 1 && op == "GatherND" ? DType::kInt64 : DType::kFloat32, input_dims[i]);
    node.add_input(name);
  }
  builder.untyped_output("y");
  if (ints) add_ints_attr(node, attribute, values);
  else add_int_attr(node, attribute, values.at(0));
  return builder.model();
}

// Found by the attribute sweep (tests/model/inference_rank_sweep_test.cpp) under ASan: libonnx
// uses these attributes as indices or divisors unchecked; a stride of 0 divided by zero (LpPool),
// LayerNormalization's axis and GatherND's batch_dims indexed past the input's dims.
TEST(ModelLimits, AttributesUsedAsIndicesOrDivisorsAreCheckedBeforeInference) {
  struct Case {
    onnx::ModelProto model;
    std::string expected;
  };
  std::vector<Case> cases;
  cases.push_back({one_node_model("LpPool", 22, {{1, 1, 8}}, "strides", {0}, true),
                   "LpPool: attribute strides has the value 0; it must be 1 or more"});
  cases.back().model.mutable_graph()->mutable_node(0)->add_attribute()->CopyFrom(
      one_node_model("LpPool", 22, {{1}}, "kernel_shape", {2}, true).graph().node(0).attribute(0));
  cases.push_back({one_node_model("LayerNormalization", 17, {{2, 3}}, "axis", {INT64_MAX}, false),
                   "LayerNormalization: axis 9223372036854775807 is outside [-2, 1]"});
  cases.push_back({one_node_model("GatherND", 13, {{2, 3}, {2, 1}}, "batch_dims", {-100}, false),
                   "GatherND: batch_dims -100 must be in [0, 2)"});
  for (Case& c : cases) {
    SCOPED_TRACE(c.expected);
    onnx::ModelProto lenient = c.model;
    model::infer_shapes(lenient);
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    const std::string message = user_error_of([&] { model::infer_shapes(c.model, strict); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// Found by the constant-input value sweep (tests/runtime/run_value_sweep_test.cpp): libonnx's
// SplitToSequence inference takes the axis modulo a constant scalar split (SIGFPE at 0) and sums a
// constant 1-D split unchecked (signed overflow).
TEST(ModelLimits, ConstantSplitToSequenceSizesAreCheckedBeforeInference) {
  struct Case {
    Tensor split;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {Tensor::scalar<int64_t>(0), "SplitToSequence: the scalar split is 0; it must be 1 or more"},
      {Tensor::scalar<int64_t>(INT64_MIN), "the scalar split is -9223372036854775808"},
      {Tensor::from_vector<int64_t>({2}, {INT64_MAX, INT64_MAX}), "the split overflows at 9223372036854775807"},
      {Tensor::from_vector<int32_t>({2}, {4, -1}), "the split has the negative entry -1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    ModelBuilder builder(11);
    builder.input("x", DType::kFloat32, {6, 2}).initializer("split", c.split).untyped_output("seq");
    builder.node("SplitToSequence", {"x", "split"}, {"seq"});
    onnx::ModelProto model = builder.model();
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    const std::string message = user_error_of([&] { model::infer_shapes(model, strict); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

// Found by fuzz_model_load: EyeLike-9 with a dtype attribute over a value nothing defines made
// libonnx's inference copy the shape of a null type, and `inspect model --shape-inference` and
// `check lint` segfaulted. Every schema's inference now refuses a required input without a type
// first (model/schemas/inference_guards.cpp), as libonnx's own type propagation does.
TEST(ModelLimits, RequiredInputWithoutATypeFailsInferenceNotACrash) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(9);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("eye_like_of_nothing");
  onnx::NodeProto* eye = g->add_node();
  eye->set_op_type("EyeLike");
  eye->set_name("eye");
  eye->add_input("undefined_value");
  eye->add_output("y");
  onnx::AttributeProto* dtype = eye->add_attribute();
  dtype->set_name("dtype");
  dtype->set_type(onnx::AttributeProto::INT);
  dtype->set_i(onnx::TensorProto::FLOAT);
  g->add_output()->set_name("y");

  onnx::ModelProto lenient = model;
  model::infer_shapes(lenient);
  EXPECT_FALSE(lenient.graph().output(0).type().tensor_type().has_shape());
  model::ShapeInferenceOptions strict;
  strict.strict = true;
  onnx::ModelProto strict_model = model;
  const std::string message = user_error_of([&] { model::infer_shapes(strict_model, strict); });
  EXPECT_NE(message.find("Input 0 expected to have type but instead is null"), std::string::npos) << message;

  const TempDir dir;
  const fs::path path = dir.path() / "eye_like_of_nothing.onnx";
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"inspect", "model", path.string(), "--shape-inference"}, {"check", "lint", path.string()}}) {
    const CommandResult r = run_parity(args);
    SCOPED_TRACE(args[0]);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << "\n" << r.output;
    EXPECT_EQ(r.output.find("internal"), std::string::npos) << r.output;
  }
}

// Found by fuzz_model_load: a Split node with no outputs (and no split) made libonnx's Split-2
// inference divide the axis by the output count, 0, and `inspect model --shape-inference` and
// `check lint` died of SIGFPE. Every schema's inference now refuses a node with fewer outputs than
// the schema requires first (model/schemas/inference_guards.cpp), as the checker does.
TEST(ModelLimits, NodeWithFewerOutputsThanItsSchemaRequiresFailsInferenceNotACrash) {
  for (const int opset : {6, 11, 13}) {
    SCOPED_TRACE(opset);
    ModelBuilder builder(opset);
    builder.input("x", DType::kFloat32, {6, 2});
    add_int_attr(builder.node("Split", {"x"}, {}), "axis", 0);
    onnx::ModelProto lenient = builder.model();
    model::infer_shapes(lenient);
    model::ShapeInferenceOptions strict;
    strict.strict = true;
    onnx::ModelProto strict_model = builder.model();
    const std::string message = user_error_of([&] { model::infer_shapes(strict_model, strict); });
    EXPECT_NE(message.find(": the node has 0 outputs; it needs at least 1"), std::string::npos) << message;
  }

  // The fuzzer's input itself (IR 19, opset 6: Split-2 with axis 1 over a [5, 6, 7] input), through the CLI.
  const std::string crash(
      "\x08\x13\x12\x07\x70\x79\x74\x6f\x72\x63\x68\x1a\x03\x30\x2e\x33\x3a\x84\x01\x0a\x1d\x0a\x01\x30"
      "\x08\x03\x42\x02\x01\x32\x22\x05\x53\x70\x6c\x69\x74\x2a\x0b\x0a\x04\x61\x78\x69\x73\x18\x01\xa0"
      "\x01\x02\x0a\x0f\x0a\x01\x32\x12\x01\x36\x22\x07\x53\x69\x67\x6d\x6f\x69\x64\x0a\x0e\x0a\x01\x31"
      "\x0a\x01\x33\x12\x01\x35\x22\x03\x4d\x75\x6c\x12\x10\x74\x6f\x23\x63\x68\x2d\x6a\x69\x74\x2d\x65"
      "\x78\x70\x6f\x72\x74\x5a\x17\x0a\x01\x30\x12\x12\x0a\x10\x08\x01\x12\x0c\x0a\x02\x08\x05\x0a\x02"
      "\x08\x06\x0a\x02\x08\x07\x62\x17\x0a\x01\x33\x12\x12\x0a\x10\x08\x01\x12\x0c\x0a\x02\x08\x05\x0a"
      "\x02\x08\x03\x0a\x02\x08\x07\x42\x02\x10\x06",
      155);
  const auto [inspect, lint] = inspect_and_lint(crash, "split_without_outputs.onnx");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  // The checker's arity error makes lint fail; inference says the same instead of crashing.
  EXPECT_EQ(lint.exit_code, 1) << lint.output;
  EXPECT_NE(lint.output.find("has output size 0 not in range [min=1"), std::string::npos) << lint.output;
  EXPECT_NE(lint.output.find("Split-2: the node has 0 outputs; it needs at least 1"), std::string::npos) << lint.output;
}

// Found by fuzz_model_save: an initializer whose dims multiply past 64 bits loads (its values are
// read only when used), and saving it overflowed the byte count the writer computes from the dims
// (UBSan: signed overflow in model.cpp). The count saturates, and the save refuses the tensor.
TEST(ModelLimits, SavingATensorWhoseDimsOverflowIsRefusedNotUndefined) {
  const std::string crash(
      "\x08\x21\x12\x07\x70\x79\x74\x6f\x72\x63\x68\x1a\x06\x31\x2e\x31\x33\x2e\x30\x3a\xb0\x02\x0a\x33"
      "\x61\x0c\x0a\x74\x62\x6c\x65\x2e\x77\x65\x69\x67\x68\x74\x0a\x03\x69\xfb\x73\x12\x07\x76\x65\x63"
      "\x74\x6f\x72\x73\x1a\x0d\x2f\x74\x61\x62\x6c\x65\x2f\x47\x61\x74\x68\x65\x72\x22\x06\x47\x61\x74"
      "\x68\x65\x72\x12\x09\x74\x6f\x72\x63\x68\x5f\x6a\x69\x74\x2a\xb7\x01\x08\x0a\x08\x04\x10\x01\x0a"
      "\x0c\x74\x61\x62\x6c\x65\x2e\x77\x65\x69\x67\x68\x74\x4a\xa0\x01\x5a\xfb\x0e\x00\x00\x00\x00\x00"
      "\x00\x00\xf0\xbc\x6e\x02\xdc\xbf\xf6\xaa\x96\xbe\x08\xd3\xc4\x3f\x5b\x33\xe0\x3f\x7a\x1e\x42\xbf"
      "\x42\xe6\x43\x3f\x25\x9d\x6a\xbe\xfe\x17\x10\x3f\x8f\x9a\x43\x6f\x6e\x73\x74\x61\x6e\x74\x4f\x66"
      "\x53\x68\x61\x70\x65\x14\x5b\x3f\x25\x9f\xbf\x3e\x50\xc4\xaa\x3e\x4c\x43\x27\xbf\x62\x69\x64\xbf"
      "\xa0\xf9\x64\xbe\xec\x60\xe0\x3e\x80\xf4\xae\xbf\xaf\x17\xce\xbf\xb9\xfe\xa1\xbf\x0a\xea\x5c\x3f"
      "\xfa\x0d\x0d\xc0\x7b\x65\xa6\xbf\x2b\x3b\x96\xbe\x04\x3f\x44\xbf\x17\xbf\x5f\xbe\x0e\xfc\x39\x3e"
      "\xdf\x77\x6c\xbf\x27\x53\x00\xbe\x29\x3f\x33\xc0\xc4\xef\xb1\x3c\xa0\x02\x65\x3e\x9c\x03\x7c\xbf"
      "\x3c\xcc\xa1\x3f\xfb\x87\x0e\xbc\x5a\x15\x0a\x03\x69\x64\x73\x12\x0e\x0a\x0c\x08\x07\x12\x08\x0a"
      "\x02\x08\x02\x0a\x02\x08\x03\x62\x1d\x0a\x07\x76\x65\x63\x74\x6f\x72\x73\x12\x12\x0a\x10\x08\x01"
      "\x12\x0c\x0a\x02\x08\x02\x0a\x02\x08\x03\x0a\x02\x08\x04\x42\x02\x10\x0d",
      330);
  const TempDir dir;
  auto loaded = model::load_model_from_bytes(crash, dir.path());
  ASSERT_TRUE(loaded.is_ok()) << loaded.error().what();
  // Inline, the tensor is written as it was read.
  ASSERT_TRUE(model::save_model(loaded.value(), dir.path() / "inline.onnx").is_ok());
  EXPECT_TRUE(model::load_model(dir.path() / "inline.onnx").is_ok());
  // Moved to external data, its bytes would be counted from the dims: refused with one line.
  model::SaveOptions options;
  options.external_data = true;
  options.size_threshold = 0;
  const Status saved = model::save_model(loaded.value(), dir.path() / "external.onnx", options);
  ASSERT_FALSE(saved.is_ok());
  EXPECT_NE(saved.error().code(), ErrorCode::kInternal) << saved.error().what();
  EXPECT_FALSE(fs::exists(dir.path() / "external.onnx"));
}

// Found by fuzz_model_save: a Constant's complex64 value with no elements (dims [0], no
// float_data) loads; saving the model converts attribute tensors, and the converter copied the
// empty field with memcpy from its null data() (UBSan: null argument). Empty complex tensors now
// copy nothing.
TEST(ModelLimits, EmptyComplexTensorsConvertWithoutCopyingFromNull) {
  for (const auto type : {onnx::TensorProto::COMPLEX64, onnx::TensorProto::COMPLEX128}) {
    onnx::TensorProto empty;
    empty.set_data_type(type);
    empty.add_dims(0);
    const Tensor t = model::tensor_from_proto(empty, {});
    EXPECT_EQ(t.numel(), 0);
  }
  const std::string crash(
      "\x08\x07\x12\x07\x70\x79\x74\x6f\x72\x63\x68\x1a\x06\x72\x6f\x08\x6b\x65\x6c\x0a\x02\x08\x02\x0a"
      "\x02\x08\x05\x62\x1e\x0a\x0c\x64\x19\x00\x62\x6c\x65\x64\x5f\x72\x74\x70\x75\x74\x5f\x30\x0a\x0a"
      "\x08\x08\x01\x12\x04\x0a\x02\x08\x02\x42\x02\x08\x07\x12\x07\x70\x79\x74\x6f\x72\x63\x68\x1a\x06"
      "\x30\x2e\x31\x33\x2e\x30\x3a\x89\x03\x0a\x20\x0a\x01\x78\x12\x0e\x2f\x52\x65\x6c\x75\x5f\x6f\x75"
      "\x74\x70\x75\x27\x5f\x30\x1a\x05\x2f\x52\x65\x6c\x75\x7a\x04\x52\x65\x6c\x75\x0a\x3f\x12\x12\x2f"
      "\x43\x6f\x6e\x73\x74\x61\x6e\x74\x5f\x6f\x75\x74\x70\x75\x74\x5f\x30\x1a\x09\x2f\x43\x6f\x6e\x73"
      "\x74\x61\x6e\x74\x22\x08\x43\x6f\x6e\x73\x74\x61\x6e\x74\x2a\x14\x0a\x05\x76\x61\x6c\x75\x65\x2a"
      "\x08\x10\x05\x0a\x04\x00\x00\x00\x40\xa0\x01\x04\x0a\x3d\x0a\x0e\x2f\x52\x65\x6c\x75\x5f\x6f\x75"
      "\x74\x70\x89\x74\x5f\x30\x0a\x12\x2f\x43\x6f\x6e\x73\x74\x61\x6e\x74\x5f\x6f\x75\x74\x70\x75\x74"
      "\x5f\x30\x12\x0c\x64\x6f\x75\x62\x6c\x65\x64\x5f\x72\x65\x6c\x75\x1a\x04\x2f\x4d\x75\x6c\x22\x03"
      "\x4d\x75\x6c\x0a\x45\x12\x11\x6f\x6e\x6e\x78\x3a\x3a\x52\x65\x64\x75\x63\x65\x53\x75\x6d\x5f\x34"
      "\x1a\x0a\x43\x6f\x6e\x73\x74\x61\x6e\x74\x5f\x33\x22\x08\x43\x6f\x6e\x73\x74\x61\x6e\x74\x2a\x1a"
      "\x0a\x05\x76\x61\x6c\x75\x65\x2a\x0e\x08\x01\x10\x0e\x0a\x08\x01\x01\x00\x00\x00\x00\x00\x00\xa0"
      "\x01\x04\x1a\x47\x0a\x01\x78\x0a\x11\x6f\x6e\x6e\x78\x3a\x3a\x52\x65\x64\x75\x63\x65\x53\x75\x6d"
      "\x5f\x33\x12\x07\x72\x6f\x77\x5f\x73\x73\x68\x61\x70\x65\x52\x65\x64\x75\x63\x65\x53\x75\x6d\x22"
      "\x09\x52\x65\x64\x75\x63\x65\x53\x75\x6d\x2a\x0f\x0a\x08\x6b\x65\x65\x70\x64\x69\x6d\x73\x18\x00"
      "\xa0\x01\x02\x12\x09\x74\x6f\x72\x63\x68\x5f\x6a\x69\x74\x5a\x13\x0a\x01\x78\x12\x0e\x0a\x0c\x08"
      "\x01\x12\x08\x0a\x02\x08\x02\x0a\x02\x08\x05\x72\x1e\x0a\x0c\x64\x6f\x75\x62\x6c\x65\x64\x5f\x72"
      "\x65\x6c\x75\x12\x0e\x0a\x0c\x08\x01\x12\x08\x0a\x02\x08\x02\x0a\x02\x08\x05\x62\x15\x0a\x07\x72"
      "\x6f\x77\x5f\x73\x75\x6d\x12\x0a\x0a\x08\x08\x01\x12\x04\x0a\x02\x08\x02\x42\x02\x10\x0d\x52\x65"
      "\x73\x68\x61\x70\x65\x08\x07\x12\x73\x18\x00\xa0\x01\x02\x12\x09\x74\x6f\x72\x63\x68\x5f\x6a\x69"
      "\x74\x5a\x13\x0a\x01\x78\x12\x0e\x0a\x0c\x08\x01\x08\x05\x62\x1e\x0a\x0c\x64\x6f\x75\x62\x6c\xba"
      "\x03\xbb\x02\x30\x60\x00\x10\x2f\x00\x13\x0a\x01\x78\x12\x5a\x13\x0a\x01\x78\x12\x0e\x0a\x0c\x08"
      "\x01\x08\x05\x62\x1e\x0a\x0c\x64\x6f\x75\x62\x6c\xba\x03\xbb\x02\x30\x60\x00\x10\x2f\x00\x65\x64"
      "\x5f\x72\x65\x6c\x75\x12\x0e\x0a\x0c\x08\x01\x12\x08\x0a\x02\x08\x02\x5d\x02\x08\x05\xe2\x15\x0a"
      "\x07\x72\x6f\x77\x5f\x73\x75\x6d\x12\x0a\x0a\x08\x08\x01\x12\x47\x61\x74\x68\x65\x72\x04\x0a\x02"
      "\x08\x02\x42\x02\x10\x2f",
      630);
  const TempDir dir;
  auto loaded = model::load_model_from_bytes(crash, dir.path());
  ASSERT_TRUE(loaded.is_ok()) << loaded.error().what();
  for (const bool external : {false, true}) {
    model::SaveOptions options;
    options.external_data = external;
    options.size_threshold = 0;
    const fs::path out = dir.path() / (external ? "external.onnx" : "inline.onnx");
    const Status saved = model::save_model(loaded.value(), out, options);
    if (!saved.is_ok()) {
      EXPECT_NE(saved.error().code(), ErrorCode::kInternal) << saved.error().what();
      continue;
    }
    auto again = model::load_model(out);
    ASSERT_TRUE(again.is_ok()) << again.error().what();
    EXPECT_EQ(again.value().proto().graph().node_size(), loaded.value().proto().graph().node_size());
  }
}

}  // namespace
}  // namespace parity::testing
