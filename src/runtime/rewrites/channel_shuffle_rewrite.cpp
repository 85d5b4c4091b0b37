#include "runtime/rewrites/channel_shuffle_rewrite.h"

#include <algorithm>
#include <optional>
#include <set>

#include "runtime/rewrites/chain_replacement.h"

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
  ShuffleMatcher(const Subgraph& g, const std::vector<std::vector<int>>& uses) : g_(g), readers_(g, uses) {}

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

  int sole_reader(int slot) const { return readers_.sole_reader(slot); }

  const Subgraph& g_;
  SlotReaders readers_;
};

ChainReplacement replacement(const Shuffle& m) {
  ChainReplacement r;
  r.nodes = {m.first_reshape, m.transpose, m.last_reshape};
  r.input = m.input;
  r.op_type = "ChannelShuffle";
  r.recognized_from = "Reshape -> Transpose -> Reshape";
  model::Attribute groups;
  groups.name = "groups";
  groups.type = model::AttrType::kInt;
  groups.i = m.groups;
  r.attributes["groups"] = groups;
  model::Attribute shape;
  shape.name = "shape";
  shape.type = model::AttrType::kInts;
  shape.ints = m.shape;
  r.attributes["shape"] = shape;
  return r;
}

}  // namespace

int rewrite_channel_shuffles(Subgraph& g, std::vector<std::vector<int>>& uses,
                             const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel) {
  std::vector<ChainReplacement> chains;
  std::set<int> taken;
  const ShuffleMatcher matcher(g, uses);
  for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
    std::optional<Shuffle> m = matcher.match(n);
    if (!m || taken.count(m->first_reshape) || taken.count(m->transpose) || taken.count(m->last_reshape)) continue;
    taken.insert({m->first_reshape, m->transpose, m->last_reshape});
    chains.push_back(replacement(*m));
  }
  return replace_chains(g, uses, chains, make_kernel);
}

}  // namespace parity::runtime
