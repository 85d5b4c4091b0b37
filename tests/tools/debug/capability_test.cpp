// find_capability: node-by-node support, partitions of consecutive nodes, and supported groups
// that fail as a whole split until their pieces run.
#include "tools/debug/capability.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../../model/test_models.h"

namespace parity::tools::debug {
namespace {

// x -> Relu -> Neg -> Exp -> Abs -> Sigmoid -> y (a chain of five nodes).
model::Model chain_model() {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  testing::add_node(g, "Relu", {"x"}, {"a"}, "relu");
  testing::add_node(g, "Neg", {"a"}, {"b"}, "neg");
  testing::add_node(g, "Exp", {"b"}, {"c"}, "exp");
  testing::add_node(g, "Abs", {"c"}, {"d"}, "abs");
  testing::add_node(g, "Sigmoid", {"d"}, {"y"}, "sigmoid");
  return model::Model(std::make_unique<onnx::ModelProto>(m));
}

bool has_op(const Cut& cut, const std::string& op) {
  for (const auto& node : cut.model.proto().graph().node())
    if (node.op_type() == op) return true;
  return false;
}

TEST(Capability, PartitionsByNodeSupportAndSplitsGroupsThatFailTogether) {
  const model::Model base = chain_model();
  const auto values = record_all_values(base, {TensorMap{{"x", Tensor::from_vector<float>({4}, {-1.f, 0.f, 1.f, 2.f})}}});
  const GraphCutter cutter(with_observed_types(base, values[0]));
  // Exp is unsupported; Relu and Neg run alone but not together.
  const SupportCheck runs = [](const Cut& cut, const std::vector<TensorMap>& feeds) -> Status {
    EXPECT_EQ(feeds.size(), 1u);
    if (has_op(cut, "Exp")) return Error(ErrorCode::kUnsupported, "no Exp\nsecond line");
    if (has_op(cut, "Relu") && has_op(cut, "Neg")) return Error(ErrorCode::kRuntime, "Relu+Neg");
    return Status::ok();
  };
  const Capability capability = find_capability(cutter, values, runs);
  EXPECT_EQ(capability.supported_count(), 4u);
  EXPECT_EQ(capability.nodes[2].reason, "no Exp");
  ASSERT_EQ(capability.partitions.size(), 4u);
  EXPECT_EQ(capability.partitions[0].nodes, NodeSet{0});
  EXPECT_EQ(capability.partitions[1].nodes, NodeSet{1});
  EXPECT_FALSE(capability.partitions[2].supported);
  EXPECT_EQ(capability.partitions[2].nodes, NodeSet{2});
  EXPECT_EQ(capability.partitions[3].nodes, (NodeSet{3, 4}));
  EXPECT_TRUE(capability.partitions[3].supported);
}

}  // namespace
}  // namespace parity::tools::debug
