// Runs planned graphs: one frame of value slots per graph invocation, kernels in plan order,
// values released after their last use, nested graphs run with their captures.
#include <algorithm>
#include <chrono>
#include <new>
#include <optional>
#include <utility>

#include "runtime/concat_in_place.h"
#include "runtime/session.h"
#include "runtime/shared_buffer_frame.h"
#include "runtime/subgraph.h"
#include "runtime/thread_pool.h"

namespace parity::runtime {

namespace {

class ExecContext : public KernelContext, public PlacedOutputs {
 public:
  ExecContext(const PlannedNode& node, std::vector<Value>& frame, RunState& state, SharedBufferFrame& shared)
      : node_(node), frame_(frame), state_(state), shared_(shared) {}

  size_t num_inputs() const override { return node_.inputs.size(); }
  size_t num_outputs() const override { return node_.outputs.size(); }
  bool has_input(size_t i) const override {
    return i < node_.inputs.size() && node_.inputs[i] >= 0 && !frame_[node_.inputs[i]].is_empty();
  }
  const Value& input_value(size_t i) const override {
    if (!has_input(i)) fail("input ", i, " is missing");
    return frame_[node_.inputs[i]];
  }
  bool has_output(size_t i) const override { return i < node_.outputs.size() && node_.outputs[i] >= 0; }
  void set_output(size_t i, Value value) override { output_value(i) = std::move(value); }
  Value& output_value(size_t i) override {
    if (i >= node_.outputs.size()) fail("output ", i, " does not exist (the node has ", node_.outputs.size(), ")");
    if (node_.outputs[i] >= 0) return frame_[node_.outputs[i]];
    if (scratch_.size() <= i) scratch_.resize(node_.outputs.size());
    return scratch_[i];
  }
  std::vector<Value> run_subgraph(const Subgraph& graph, std::vector<Value> inputs) override {
    std::vector<Value> frame = execute_graph(graph, std::move(inputs), &frame_, state_, false);
    std::vector<Value> outputs;
    outputs.reserve(graph.output_slots_.size());
    for (int s : graph.output_slots_) outputs.push_back(frame[s]);
    return outputs;
  }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override {
    if (state_.pool) state_.pool->parallel_for(n, fn);
    else if (n > 0) fn(0, n);
  }
  int num_threads() const override { return state_.pool ? state_.pool->num_threads() : 1; }
  Precision precision() const override { return state_.precision; }
  uint64_t next_random_seed() override {
    // splitmix64 over (session seed, call number): reproducible run to run.
    uint64_t z = state_.seed + 0x9e3779b97f4a7c15ULL * (++state_.random_calls);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::string node_label() const override { return node_.label; }
  std::string node_error_name() const override { return runtime::node_error_name(node_.spec); }

  std::optional<Tensor> claim_placed_output(size_t i, DType dtype, const Shape& shape) override {
    if (!shared_.active() || i >= node_.outputs.size() || node_.outputs[i] < 0) return std::nullopt;
    if (claimed_.size() <= i) claimed_.resize(node_.outputs.size(), false);
    if (claimed_[i]) return std::nullopt;  // a second allocation of the output: not the one that stays
    std::optional<Tensor> slice = shared_.view_of(node_.outputs[i]);
    if (!slice || slice->dtype() != dtype || slice->shape() != shape) return std::nullopt;
    claimed_[i] = true;
    return slice;
  }

 private:
  const PlannedNode& node_;
  std::vector<Value>& frame_;
  RunState& state_;
  SharedBufferFrame& shared_;
  std::vector<Value> scratch_;
  std::vector<bool> claimed_;  // per output: its slice was handed out
};

}  // namespace

void rethrow_at_node(const PlannedNode& node, const Error& e) {
  const std::string name = node_error_name(node.spec);
  if (e.node() == name) throw e;
  throw e.prefixed(node.label).with_node(name);
}

namespace {

/// Bytes a value's tensors hold (views sharing storage count in full: an upper bound).
int64_t value_bytes(const Value& v) {
  if (v.is_tensor()) return static_cast<int64_t>(v.tensor().size_bytes());
  int64_t bytes = 0;
  if (v.is_sequence())
    for (const auto& t : v.sequence_items()) bytes += static_cast<int64_t>(t.size_bytes());
  return bytes;
}

}  // namespace

std::vector<Value> execute_graph(const Subgraph& graph, std::vector<Value> inputs, const std::vector<Value>* outer,
                                 RunState& state, bool is_main) {
  std::vector<Value> frame(graph.slot_names_.size());
  for (const auto& [slot, value] : graph.constants_) frame[slot] = value;
  for (const auto& [slot, value] : graph.plan_time_values_) frame[slot] = value;
  if (!graph.captures_.empty()) {
    PARITY_ASSERT(outer, "a graph with outer-scope captures is run without an enclosing frame");
    for (const auto& [local, outer_slot] : graph.captures_) frame[local] = (*outer)[outer_slot];
  }
  PARITY_CHECK(inputs.size() <= graph.input_slots_.size(), kRuntime, "a graph with ",
               graph.input_slots_.size(), " inputs was given ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].is_empty()) frame[graph.input_slots_[i]] = std::move(inputs[i]);

  const bool hook = is_main && state.hook && *state.hook;
  const std::vector<bool>* keep = is_main ? state.keep_slots : nullptr;
  std::vector<NodeTiming>* profile = is_main ? state.profile : nullptr;
  int64_t* peak = is_main ? state.peak_activation_bytes : nullptr;
  int64_t live_bytes = 0;
  std::vector<int64_t> counted_bytes(peak ? graph.slot_names_.size() : 0, 0);  // per slot produced by a node
  SharedBufferFrame shared(graph);
  for (size_t index = 0; index < graph.nodes_.size(); ++index) {
    const PlannedNode& node = graph.nodes_[index];
    ExecContext ctx(node, frame, state, shared);
    const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    try {
      // Plan-time folded values (Constant nodes) are already in the frame; a placed Concat whose
      // inputs were written in place is a view of them.
      const bool joined = node.placed_concat && shared.join_in_place(node, frame);
      if (!node.folded && !joined) node.kernel->compute(ctx);
      if (shared.active()) {
        shared.settle_outputs(node, frame);
        shared.release_after(static_cast<int>(index));
      }
    } catch (const Error& e) {
      rethrow_at_node(node, e);
    } catch (const std::bad_alloc&) {
      fail_at({.node = node_error_name(node.spec)}, ErrorCode::kRuntime, node.label, ": out of memory");
    } catch (const std::exception& e) {
      fail_at({.node = node_error_name(node.spec)}, ErrorCode::kInternal, node.label, ": ", e.what());
    }
    if (profile)
      profile->push_back({node.label, node.spec.op_type,
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    if (hook)
      for (int s : node.outputs)
        if (s >= 0 && !frame[s].is_empty()) (*state.hook)(graph.slot_names_[s], frame[s]);
    if (peak && !node.folded) {
      for (int s : node.outputs)
        if (s >= 0) {
          counted_bytes[s] = value_bytes(frame[s]);
          live_bytes += counted_bytes[s];
        }
      *peak = std::max(*peak, live_bytes);
    }
    for (int s : node.release)
      if (!keep || !(*keep)[s]) {
        if (peak) live_bytes -= std::exchange(counted_bytes[s], 0);
        frame[s] = Value();
      }
    if (is_main && state.stop_slot >= 0 &&
        std::find(node.outputs.begin(), node.outputs.end(), state.stop_slot) != node.outputs.end())
      break;
  }
  return frame;
}

}  // namespace parity::runtime
