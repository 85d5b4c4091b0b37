#include "runtime/ops/common/reference_chain.h"

#include <algorithm>
#include <atomic>
#include <utility>

namespace parity::runtime::ops {
namespace {

/// A node's view of a subset of the fused node's values: its own inputs and outputs, everything
/// else (threads, subgraphs, labels) forwarded to the fused node's context.
class ForwardingContext final : public KernelContext {
 public:
  ForwardingContext(KernelContext& outer, std::vector<const Value*> inputs, size_t outputs)
      : outer_(outer), inputs_(std::move(inputs)), outputs_(outputs) {}

  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t i) const override { return i < inputs_.size() && inputs_[i] && !inputs_[i]->is_empty(); }
  const Value& input_value(size_t i) const override {
    if (!has_input(i)) fail("input ", i, " is missing");
    return *inputs_[i];
  }
  bool has_output(size_t i) const override { return i == 0; }
  void set_output(size_t i, Value value) override { outputs_.at(i) = std::move(value); }
  Value& output_value(size_t i) override { return outputs_.at(i); }
  std::vector<Value> run_subgraph(const Subgraph& graph, std::vector<Value> inputs) override {
    return outer_.run_subgraph(graph, std::move(inputs));
  }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { outer_.parallel_for(n, fn); }
  int num_threads() const override { return outer_.num_threads(); }
  Precision precision() const override { return outer_.precision(); }
  uint64_t next_random_seed() override { return outer_.next_random_seed(); }
  std::string node_label() const override { return outer_.node_label(); }
  std::string node_error_name() const override { return outer_.node_error_name(); }

  Value take_output() { return std::move(outputs_.at(0)); }

 private:
  KernelContext& outer_;
  std::vector<const Value*> inputs_;
  std::vector<Value> outputs_;
};

std::atomic<uint64_t> g_fallbacks{0};

}  // namespace

ReferenceChain::ReferenceChain(std::unique_ptr<Kernel> head, size_t head_inputs)
    : head_(std::move(head)), head_inputs_(head_inputs) {}

void ReferenceChain::add_tail(const KernelInit& tail, size_t first_extra_input, size_t position) {
  Tail t;
  t.kernel = tail.create_reference_kernel();
  t.first_extra_input = first_extra_input;
  t.position = position;
  t.inputs = std::max(tail.num_inputs(), position + 1);
  t.outputs = tail.num_outputs() > 0 ? tail.num_outputs() : 1;
  tails_.push_back(std::move(t));
}

uint64_t ReferenceChain::fallback_count() { return g_fallbacks.load(); }

void ReferenceChain::compute(KernelContext& ctx, const std::map<size_t, Value>& replaced) const {
  ++g_fallbacks;
  if (tails_.empty() && replaced.empty()) {
    head_->compute(ctx);
    return;
  }
  auto optional_input = [&](size_t i) -> const Value* {
    if (auto it = replaced.find(i); it != replaced.end()) return &it->second;
    return ctx.has_input(i) ? &ctx.input_value(i) : nullptr;
  };
  std::vector<const Value*> head_inputs;
  for (size_t i = 0; i < head_inputs_; ++i) head_inputs.push_back(optional_input(i));
  ForwardingContext head_ctx(ctx, std::move(head_inputs), 1);
  head_->compute(head_ctx);
  Value current = head_ctx.take_output();
  for (const Tail& tail : tails_) {
    std::vector<const Value*> inputs(tail.inputs);
    for (size_t k = 0, next = tail.first_extra_input; k < tail.inputs; ++k)
      inputs[k] = k == tail.position ? &current : optional_input(next++);
    ForwardingContext tail_ctx(ctx, std::move(inputs), tail.outputs);
    tail.kernel->compute(tail_ctx);
    current = tail_ctx.take_output();
  }
  ctx.set_output(0, std::move(current));
}

}  // namespace parity::runtime::ops
