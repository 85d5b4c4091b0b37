// model::unknown_operators: the ops of ONNX's own domains a model uses that no schema of this build
// covers at the model's opset, grouped per (op, domain, opset), nested graphs included; custom
// domains and known (also deprecated) ops are not reported.
#include "model/known_operators.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "test_models.h"

namespace parity::testing {
namespace {

TEST(KnownOperators, EveryOpOfAnOpset28ModelIsKnown) {
  onnx::ModelProto m = empty_model(28);
  add_node(m.mutable_graph(), "RMSNormalization", {"x", "scale"}, {"y"}, "norm");
  add_node(m.mutable_graph(), "Attention", {"q", "k", "v"}, {"a"}, "attention");
  add_node(m.mutable_graph(), "Upsample", {"a", "s"}, {"u"}, "deprecated_upsample");
  EXPECT_TRUE(model::unknown_operators(m).empty());
}

TEST(KnownOperators, NewerOpsetIsOneEntryPerOpNamingItsNodes) {
  onnx::ModelProto m = empty_model(29);
  add_node(m.mutable_graph(), "Relu", {"x"}, {"a"}, "first");
  add_node(m.mutable_graph(), "Relu", {"a"}, {"b"}, "second");
  add_node(m.mutable_graph(), "Gelu", {"b"}, {"c"}, "gelu");
  const auto unknown = model::unknown_operators(m);
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(unknown[0].op_type, "Relu");
  EXPECT_EQ(unknown[0].domain, "");
  EXPECT_EQ(unknown[0].opset, 29);
  EXPECT_EQ(unknown[0].nodes, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(unknown[0].message,
            "Relu node 'first': op 'Relu' at ai.onnx opset 29 is newer than parity knows (it knows ai.onnx up to "
            "opset 28 as of ONNX 1.23); the newest version parity knows is 14");
  EXPECT_EQ(unknown[1].op_type, "Gelu");
  EXPECT_NE(unknown[1].message.find("the newest version parity knows is 20"), std::string::npos) << unknown[1].message;
}

TEST(KnownOperators, UnknownOpInsideAnIfBranchIsFound) {
  onnx::ModelProto m = empty_model(21);
  onnx::NodeProto* branch_node = add_node(m.mutable_graph(), "If", {"cond"}, {"y"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* attribute = branch_node->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    attribute->mutable_g()->set_name(name);
    add_node(attribute->mutable_g(), std::string(name) == "then_branch" ? "Identity" : "NoSuchOp", {"x"}, {"z"});
  }
  const auto unknown = model::unknown_operators(m);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].nodes, (std::vector<std::string>{""}));
  EXPECT_EQ(unknown[0].message,
            "NoSuchOp node (output 'z'): op 'NoSuchOp' is no ai.onnx operator parity knows (opset 21; ONNX 1.23 "
            "defines ai.onnx up to opset 28); parity knows no version of it");
}

TEST(KnownOperators, CustomDomainsAndOpsBeforeTheirFirstVersion) {
  onnx::ModelProto m = empty_model(19);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(3);
  add_node(m.mutable_graph(), "Widget", {"x"}, {"w"}, "widget")->set_domain("com.example");
  add_node(m.mutable_graph(), "Gelu", {"w"}, {"g"}, "gelu");
  const auto unknown = model::unknown_operators(m);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].message,
            "Gelu node 'gelu': op 'Gelu' does not exist at ai.onnx opset 19 (it was introduced later); the newest "
            "version parity knows is 20");
}

}  // namespace
}  // namespace parity::testing
