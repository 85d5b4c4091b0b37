// parity's schemas for the ONNX versions after the linked libonnx (ONNX 1.17, opset 22) up to ONNX
// 1.23 (opset 28): registered into libonnx's registry, with type/shape inference, so that the
// checker and shape inference judge ONNX 1.23's own node-test models and today's exported models
// without "No Op registered" and without older-schema guesses.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md
#include "model/schemas/newer_onnx.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <set>

#include "core/status.h"
#include "model/checker.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name, int32_t type,
               const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* v = values->Add();
  v->set_name(name);
  auto* tensor_type = v->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(type);
  for (int64_t d : dims) tensor_type->mutable_shape()->add_dim()->set_dim_value(d);
}

// One node `op` (ai.onnx at `opset`) over float inputs of the given shapes, outputs without types.
onnx::ModelProto one_node_model(const std::string& op, int opset, const std::vector<std::vector<int64_t>>& input_dims,
                                int outputs, int32_t input_type = onnx::TensorProto::FLOAT) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("g");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(op);
  for (size_t i = 0; i < input_dims.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    node->add_input(name);
    add_value(g->mutable_input(), name, input_type, input_dims[i]);
  }
  for (int i = 0; i < outputs; ++i) {
    node->add_output("out" + std::to_string(i));
    g->add_output()->set_name("out" + std::to_string(i));
  }
  return model;
}

void set_int(onnx::ModelProto& model, const std::string& name, int64_t value) {
  auto* attr = model.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

std::vector<int64_t> output_dims(const onnx::ModelProto& model, int index) {
  std::vector<int64_t> dims;
  for (const auto& d : model.graph().output(index).type().tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

int32_t output_type(const onnx::ModelProto& model, int index) {
  return model.graph().output(index).type().tensor_type().elem_type();
}

model::ShapeInferenceOptions strict() {
  model::ShapeInferenceOptions options;
  options.strict = true;
  return options;
}

TEST(NewerOnnxSchemas, RaiseTheKnownOpsetsToOnnx123) {
  model::register_newer_onnx_schemas();
  EXPECT_EQ(model::max_known_opset(""), 28);
  EXPECT_EQ(model::max_known_opset("ai.onnx.preview"), 1);
  EXPECT_EQ(model::max_known_ir_version(), 10);  // libonnx 1.17's IR
  struct Lookup {
    const char* op;
    int opset;
    int since;
  };
  for (const Lookup& l : {Lookup{"Gelu", 28, 20}, Lookup{"Attention", 23, 23}, Lookup{"Attention", 24, 24},
                          Lookup{"Attention", 28, 25}, Lookup{"Cast", 28, 25}, Lookup{"Cast", 22, 21},
                          Lookup{"RMSNormalization", 28, 23}, Lookup{"Swish", 24, 24}, Lookup{"BitCast", 26, 26},
                          Lookup{"SwiGLU", 28, 28}, Lookup{"Celu", 27, 12}, Lookup{"Celu", 28, 28},
                          Lookup{"Range", 27, 27}, Lookup{"DequantizeLinear", 25, 25}}) {
    SCOPED_TRACE(std::string(l.op) + " at opset " + std::to_string(l.opset));
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(l.op, l.opset, "");
    ASSERT_NE(schema, nullptr);
    EXPECT_EQ(schema->SinceVersion(), l.since);
  }
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Swish", 23, ""), nullptr);  // new in 24
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("FlexAttention", 1, "ai.onnx.preview"), nullptr);
  // Attributes added by a new version are known to it only.
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Cast", 23, "")->attributes().count("round_mode"), 0u);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("Cast", 24, "")->attributes().count("round_mode"), 1u);
}

TEST(NewerOnnxSchemas, AttentionInfersOutputAndCacheShapes) {
  // 4-D: Q (2, 8, 5, 16), K/V (2, 2, 5, 16/32) with a cache of 7 positions (grouped-query heads).
  onnx::ModelProto model = one_node_model("Attention", 24, {{2, 8, 5, 16}, {2, 2, 5, 16}, {2, 2, 5, 32}}, 4);
  auto* node = model.mutable_graph()->mutable_node(0);
  node->add_input("");  // no mask
  node->add_input("past_key");
  node->add_input("past_value");
  add_value(model.mutable_graph()->mutable_input(), "past_key", onnx::TensorProto::FLOAT, {2, 2, 7, 16});
  add_value(model.mutable_graph()->mutable_input(), "past_value", onnx::TensorProto::FLOAT, {2, 2, 7, 32});
  model::infer_shapes(model, strict());
  EXPECT_EQ(output_dims(model, 0), (std::vector<int64_t>{2, 8, 5, 32}));
  EXPECT_EQ(output_dims(model, 1), (std::vector<int64_t>{2, 2, 12, 16}));
  EXPECT_EQ(output_dims(model, 2), (std::vector<int64_t>{2, 2, 12, 32}));
  EXPECT_EQ(output_dims(model, 3), (std::vector<int64_t>{2, 8, 5, 12}));
  EXPECT_EQ(output_type(model, 0), onnx::TensorProto::FLOAT);

  // 3-D packed heads: Y is (batch, q_seq, q_heads * v_head).
  onnx::ModelProto packed = one_node_model("Attention", 23, {{2, 5, 64}, {2, 6, 32}, {2, 6, 48}}, 1);
  set_int(packed, "q_num_heads", 4);
  set_int(packed, "kv_num_heads", 2);
  model::infer_shapes(packed, strict());
  EXPECT_EQ(output_dims(packed, 0), (std::vector<int64_t>{2, 5, 96}));

  onnx::ModelProto missing_heads = one_node_model("Attention", 23, {{2, 5, 64}, {2, 6, 32}, {2, 6, 48}}, 1);
  EXPECT_THROW(model::infer_shapes(missing_heads, strict()), Error);
}

TEST(NewerOnnxSchemas, NormalizationAndActivationsKeepTheInputShape) {
  // Y takes the scale's type (V), X's shape.
  onnx::ModelProto rms = one_node_model("RMSNormalization", 23, {{3, 4, 8}, {8}}, 1);
  rms.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  model::infer_shapes(rms, strict());
  EXPECT_EQ(output_dims(rms, 0), (std::vector<int64_t>{3, 4, 8}));
  EXPECT_EQ(output_type(rms, 0), onnx::TensorProto::FLOAT16);
  onnx::ModelProto bad_axis = one_node_model("RMSNormalization", 23, {{3, 4, 8}, {8}}, 1);
  set_int(bad_axis, "axis", 3);
  EXPECT_THROW(model::infer_shapes(bad_axis, strict()), Error);

  onnx::ModelProto swiglu = one_node_model("SwiGLU", 28, {{2, 6}, {2, 6}}, 1);
  model::infer_shapes(swiglu, strict());
  EXPECT_EQ(output_dims(swiglu, 0), (std::vector<int64_t>{2, 6}));
  onnx::ModelProto mismatched = one_node_model("SwiGLU", 28, {{2, 6}, {2, 5}}, 1);
  EXPECT_THROW(model::infer_shapes(mismatched, strict()), Error);

  onnx::ModelProto conv = one_node_model("CausalConvWithState", 27, {{1, 4, 9}, {4, 1, 3}}, 2);
  model::infer_shapes(conv, strict());
  EXPECT_EQ(output_dims(conv, 0), (std::vector<int64_t>{1, 4, 9}));
  EXPECT_EQ(output_dims(conv, 1), (std::vector<int64_t>{1, 4, 2}));
}

TEST(NewerOnnxSchemas, BitCastNeedsTheSameBitWidth) {
  onnx::ModelProto cast = one_node_model("BitCast", 26, {{2, 3}}, 1);
  set_int(cast, "to", onnx::TensorProto::INT32);
  model::infer_shapes(cast, strict());
  EXPECT_EQ(output_type(cast, 0), onnx::TensorProto::INT32);
  EXPECT_EQ(output_dims(cast, 0), (std::vector<int64_t>{2, 3}));
  onnx::ModelProto wider = one_node_model("BitCast", 26, {{2, 3}}, 1);
  set_int(wider, "to", onnx::TensorProto::DOUBLE);
  try {
    model::infer_shapes(wider, strict());
    FAIL() << "BitCast float -> double was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("same bit width"), std::string::npos) << e.what();
  }
}

TEST(NewerOnnxSchemas, DequantizeLinear23TakesOutputDtype) {
  onnx::ModelProto model = one_node_model("DequantizeLinear", 23, {{4}, {}}, 1);
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT8);
  set_int(model, "output_dtype", onnx::TensorProto::FLOAT16);
  model::infer_shapes(model, strict());
  EXPECT_EQ(output_type(model, 0), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(output_dims(model, 0), (std::vector<int64_t>{4}));
}

TEST(NewerOnnxSchemas, CheckerJudgesOpset28NodesByTheirOwnSchema) {
  onnx::ModelProto model = one_node_model("Cast", 28, {{2}}, 1);
  set_int(model, "to", onnx::TensorProto::INT64);
  auto* round = model.mutable_graph()->mutable_node(0)->add_attribute();
  round->set_name("round_mode");
  round->set_type(onnx::AttributeProto::STRING);
  round->set_s("nearest");
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  EXPECT_TRUE(model::check_model_proto(model, fs::path()).empty());
  // An attribute Cast-28 does not have is an error, not a "newer than libonnx" warning.
  round->set_name("no_such_attribute");
  const auto findings = model::check_model_proto(model, fs::path());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(findings[0].error) << findings[0].message;
}

// ONNX 1.23's own node tests (opsets up to 28, ai.onnx.preview): every model passes the checker
// with no finding about a missing schema, and shape inference accepts it.
TEST(NewerOnnxSchemas, EveryOnnx123NodeTestModelChecksAndInfers) {
  const fs::path suite = source_dir() / ".cache/onnx-testdata-1.23/node";
  if (!fs::exists(suite)) {
    if (std::getenv("CI")) FAIL() << suite << " is missing; run scripts/setup.sh";
    GTEST_SKIP() << suite << " is missing (run scripts/setup.sh)";
  }
  // These give SpaceToDepth a `mode` attribute, which no SpaceToDepth version in ONNX 1.23's
  // operator documentation has (SpaceToDepth-13 takes only blocksize): the checker's error is right.
  const std::set<std::string> known_bad = {"test_spacetodepth_crd_mode_example", "test_spacetodepth_dcr_mode_example"};
  int models = 0;
  std::vector<std::string> problems;
  for (const auto& entry : fs::directory_iterator(suite)) {
    const fs::path path = entry.path() / "model.onnx";
    if (!fs::exists(path)) continue;
    ++models;
    if (known_bad.count(entry.path().filename().string())) {
      auto loaded = model::load_model(path);
      ASSERT_TRUE(loaded.is_ok());
      std::vector<std::string> errors;
      for (const auto& f : model::check_model_proto(loaded.value().proto(), entry.path()))
        if (f.error) errors.push_back(f.message);
      EXPECT_TRUE(errors.size() == 1 && errors[0].find("Unrecognized attribute: mode") != std::string::npos)
          << entry.path();
      continue;
    }
    auto loaded = model::load_model(path);
    if (!loaded.is_ok()) {
      problems.push_back(entry.path().filename().string() + ": " + loaded.error().what());
      continue;
    }
    for (const auto& f : model::check_model_proto(loaded.value().proto(), entry.path()))
      if (f.error || f.message.find("No Op registered") != std::string::npos ||
          f.message.find("older opset") != std::string::npos)
        problems.push_back(entry.path().filename().string() + ": " + f.message.substr(0, 200));
    onnx::ModelProto copy = loaded.value().proto();
    try {
      model::infer_shapes(copy, false);
    } catch (const Error& e) {
      problems.push_back(entry.path().filename().string() + ": shape inference: " + std::string(e.what()).substr(0, 200));
    }
  }
  EXPECT_EQ(models, 1884);
  std::string listed;
  for (const auto& p : problems) listed += p + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " models:\n" << listed;
}

}  // namespace
}  // namespace parity::testing
