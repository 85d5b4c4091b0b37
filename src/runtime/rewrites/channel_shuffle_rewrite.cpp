#include "runtime/rewrites/channel_shuffle_rewrite.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "runtime/rewrites/activation_rewrite.h"  // kParityDomain

namespace parity::runtime {

namespace {

struct Shuffle {
  int first_reshape = -1, transpose = -1, last_reshape = -1;
  int input = -1;
  int64_t groups = 0;
  std::vector<int64_t> shape;  // the final Reshape's target, -1 resolved
};

class ShuffleMatcher {
 public:
  ShuffleMatcher(const Subgraph& g, const std::vector<std::vector<int>>& uses) : g_(g), readers_(g.slot_names_.size()) {
    for (size_t n = 0; n < uses.size(); ++n)
      for (int s : uses[n]) readers_[s].push_back(static_cast<int>(n));
    is_output_.assign(g.slot_names_.size(), false);
    for (int s : g.output_slots_) is_output_[s] = true;
  }

  std::optional<Shuffle> match(int reshape) const {
    Shuffle m;
    m.first_reshape = reshape;
    const std::optional<std::vector<int64_t>> split = reshape_target(reshape);
    if (!split || split->size() < 4) return std::nullopt;
    for (int64_t d : *split)
      if (d <= 0) return std::nullopt;
    m.input = g_.nodes_[reshape].inputs[0];
    m.transpose = sole_reader(g_.nodes_[reshape].outputs[0]);
    if (!is_op(m.transpose, "Transpose", 1)) return std::nullopt;
    std::vector<int64_t> swap(split->size());
    for (size_t d = 0; d < swap.size(); ++d) swap[d] = static_cast<int64_t>(d);
    std::swap(swap[1], swap[2]);
    const model::Attribute* perm = attribute(m.transpose, "perm");
    if (!perm || perm->ints != swap) return std::nullopt;
    m.last_reshape = sole_reader(g_.nodes_[m.transpose].outputs[0]);
    const std::optional<std::vector<int64_t>> merged = reshape_target(m.last_reshape);
    if (!merged || g_.nodes_[m.last_reshape].inputs[0] != g_.nodes_[m.transpose].outputs[0]) return std::nullopt;
    m.shape = {(*split)[0], (*split)[1] * (*split)[2]};
    m.shape.insert(m.shape.end(), split->begin() + 3, split->end());
    if (merged->size() != m.shape.size() || std::count(merged->begin(), merged->end(), -1) > 1) return std::nullopt;
    for (size_t d = 0; d < m.shape.size(); ++d)
      if ((*merged)[d] != m.shape[d] && (*merged)[d] != -1) return std::nullopt;
    m.groups = (*split)[1];
    return m;
  }

 private:
  bool is_op(int n, const char* op, size_t inputs) const {
    if (n < 0) return false;
    const PlannedNode& node = g_.nodes_[n];
    return node.spec.domain.empty() && node.spec.op_type == op && node.inputs.size() == inputs &&
           node.outputs.size() == 1 && node.outputs[0] >= 0 && !node.folded;
  }

  const model::Attribute* attribute(int n, const char* name) const {
    const auto& attrs = g_.nodes_[n].spec.attributes;
    auto it = attrs.find(name);
    return it == attrs.end() ? nullptr : &it->second;
  }

  /// The target of a Reshape (opset 5 on, allowzero 0) whose shape is a plan-time constant.
  std::optional<std::vector<int64_t>> reshape_target(int n) const {
    if (!is_op(n, "Reshape", 2) || g_.nodes_[n].spec.opset < 5) return std::nullopt;
    if (const model::Attribute* a = attribute(n, "allowzero"); a && a->i != 0) return std::nullopt;
    const Value* shape = constant(g_.nodes_[n].inputs[1]);
    if (!shape || !shape->is_tensor() || shape->tensor().dtype() != DType::kInt64 || shape->tensor().rank() != 1)
      return std::nullopt;
    const Tensor& t = shape->tensor();
    const auto* values = static_cast<const int64_t*>(t.raw_data());
    return std::vector<int64_t>(values, values + t.numel());
  }

  /// A plan-time value (a folded Constant or an initializer that is not also a graph input).
  const Value* constant(int slot) const {
    if (slot < 0) return nullptr;
    if (auto it = g_.plan_time_values_.find(slot); it != g_.plan_time_values_.end()) return &it->second;
    if (std::find(g_.input_slots_.begin(), g_.input_slots_.end(), slot) != g_.input_slots_.end()) return nullptr;
    for (const auto& [s, value] : g_.constants_)
      if (s == slot) return &value;
    return nullptr;
  }

  int sole_reader(int slot) const {
    if (slot < 0 || is_output_[slot] || readers_[slot].size() != 1) return -1;
    return readers_[slot][0];
  }

  const Subgraph& g_;
  std::vector<std::vector<int>> readers_;
  std::vector<bool> is_output_;
};

}  // namespace

int rewrite_channel_shuffles(Subgraph& g, std::vector<std::vector<int>>& uses,
                             const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel) {
  std::map<int, Shuffle> replace_at;  // by the last Reshape's position
  std::set<int> removed;
  {
    const ShuffleMatcher matcher(g, uses);
    for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
      std::optional<Shuffle> m = matcher.match(n);
      if (!m || removed.count(m->first_reshape) || removed.count(m->transpose) || removed.count(m->last_reshape))
        continue;
      removed.insert({m->first_reshape, m->transpose, m->last_reshape});
      replace_at[m->last_reshape] = *m;
    }
  }
  if (replace_at.empty()) return 0;
  // The replacement takes the last Reshape's place: its input is produced before the first one.
  std::vector<PlannedNode> nodes;
  std::vector<std::vector<int>> node_uses;
  for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
    if (auto it = replace_at.find(n); it != replace_at.end()) {
      const Shuffle& m = it->second;
      const PlannedNode& last = g.nodes_[n];
      PlannedNode node;
      node.spec.name = last.spec.name;
      node.spec.op_type = "ChannelShuffle";
      node.spec.domain = kParityDomain;
      node.spec.opset = 1;
      node.spec.since_version = 1;
      node.spec.inputs = {g.slot_names_[m.input]};
      node.spec.outputs = {last.spec.outputs[0]};
      model::Attribute groups;
      groups.name = "groups";
      groups.type = model::AttrType::kInt;
      groups.i = m.groups;
      node.spec.attributes["groups"] = groups;
      model::Attribute shape;
      shape.name = "shape";
      shape.type = model::AttrType::kInts;
      shape.ints = m.shape;
      node.spec.attributes["shape"] = shape;
      node.inputs = {m.input};
      node.outputs = {last.outputs[0]};
      node.label = std::string(kParityDomain) + "::ChannelShuffle node '" + last.spec.name +
                   "' (recognized from Reshape -> Transpose -> Reshape)";
      node.kernel = make_kernel(node.spec);
      nodes.push_back(std::move(node));
      node_uses.push_back({m.input});
      continue;
    }
    if (removed.count(n)) continue;
    nodes.push_back(std::move(g.nodes_[n]));
    node_uses.push_back(std::move(uses[n]));
  }
  g.nodes_ = std::move(nodes);
  uses = std::move(node_uses);
  return static_cast<int>(replace_at.size());
}

}  // namespace parity::runtime
