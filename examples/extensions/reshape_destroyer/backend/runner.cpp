#include "backend/runner.h"

#include <chrono>
#include <map>
#include <thread>

namespace reshape_destroyer {

Speed speed_from_name(const std::string& name) {
  if (name == "slow") return Speed::kSlow;
  if (name == "medium") return Speed::kMedium;
  if (name == "fast") return Speed::kFast;
  parity::fail(parity::ErrorCode::kInvalidArgument, "invalid --res-des-speed '", name,
               "'; valid speeds: slow, medium, fast");
}

IdentityOnlyRunner::IdentityOnlyRunner(GraphLoader graph, Speed speed)
    : Runner(parity::runners::make_runner_name("res-des")), loader_(std::move(graph)), speed_(speed) {}

void IdentityOnlyRunner::activate_impl() {
  graph_ = loader_();
  // Checked once here rather than on every inference: a model this runner cannot run fails early.
  for (const auto& node : graph_->nodes)
    PARITY_CHECK(node->op_type == "Identity" && node->domain.empty(), kUnsupported,
                 "the res-des runner supports Identity nodes only; ", node->label(), " is a ", node->op_type);
}

parity::TensorMetadata IdentityOnlyRunner::input_metadata_impl() {
  parity::TensorMetadata meta;
  for (const auto& input : graph_->inputs)
    if (!input->is_constant()) meta.add(input->name, input->dtype, input->shape);
  return meta;
}

parity::TensorMap IdentityOnlyRunner::infer_impl(const parity::TensorMap& feed) {
  // An Identity output is its input: bind every node output to the tensor of its input.
  std::map<std::string, parity::Tensor> values;
  for (const auto& name : feed.names()) values.emplace(name, feed.at(name));
  for (const auto& node : graph_->nodes) {
    auto it = values.find(node->inputs[0]->name);
    PARITY_CHECK(it != values.end(), kInvalidModel, node->label(), " reads '", node->inputs[0]->name,
                 "', which nothing produced");
    values.insert_or_assign(node->outputs[0]->name, it->second);
  }
  parity::TensorMap outputs;
  for (const auto& output : graph_->outputs) {
    auto it = values.find(output->name);
    PARITY_CHECK(it != values.end(), kInvalidModel, "graph output '", output->name, "' is produced by no node");
    outputs.set(output->name, it->second);
  }
  // The artificial delay, so that fast mode shows "massive performance gains".
  const auto delay = speed_ == Speed::kSlow ? std::chrono::milliseconds(1000)
                     : speed_ == Speed::kMedium ? std::chrono::milliseconds(500)
                                                : std::chrono::milliseconds(0);
  std::this_thread::sleep_for(delay);
  return outputs;
}

}  // namespace reshape_destroyer
