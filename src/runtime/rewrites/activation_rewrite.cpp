#include "runtime/rewrites/activation_rewrite.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace parity::runtime {

namespace {

/// Readers of every slot and the scalar constants of one planned graph.
class PlanIndex {
 public:
  PlanIndex(const Subgraph& g, const std::vector<std::vector<int>>& uses) : g_(g), readers_(g.slot_names_.size()) {
    for (size_t n = 0; n < uses.size(); ++n)
      for (int s : uses[n]) readers_[s].push_back(static_cast<int>(n));
    is_output_.assign(g.slot_names_.size(), false);
    for (int s : g.output_slots_) is_output_[s] = true;
    for (const auto& [slot, value] : g.constants_) constants_[slot] = &value;
    for (const auto& [slot, value] : g.plan_time_values_) constants_[slot] = &value;
  }

  /// The one node reading `slot` (inside nested graphs included), if exactly one does and the
  /// value is not a graph output.
  int sole_reader(int slot) const {
    if (slot < 0 || is_output_[slot] || readers_[slot].size() != 1) return -1;
    return readers_[slot][0];
  }

  /// A one-element floating constant's value (graph inputs with initializers are not constant).
  std::optional<double> scalar(int slot) const {
    auto it = constants_.find(slot);
    if (it == constants_.end() || !it->second->is_tensor()) return std::nullopt;
    if (std::find(g_.input_slots_.begin(), g_.input_slots_.end(), slot) != g_.input_slots_.end()) return std::nullopt;
    const Tensor& t = it->second->tensor();
    if (t.numel() != 1 || !is_floating(t.dtype())) return std::nullopt;
    return t.value_as_double(0);
  }

  const PlannedNode& node(int n) const { return g_.nodes_[n]; }

 private:
  const Subgraph& g_;
  std::vector<std::vector<int>> readers_;
  std::vector<bool> is_output_;
  std::map<int, const Value*> constants_;
};

bool is_op(const PlanIndex& index, int n, const char* op, size_t inputs) {
  if (n < 0) return false;
  const PlannedNode& node = index.node(n);
  return node.spec.domain.empty() && node.spec.op_type == op && node.inputs.size() == inputs &&
         node.outputs.size() == 1 && node.outputs[0] >= 0;
}

/// The other input slot of a two-input node, given one of them; -1 if `known` is not an input.
int other_input(const PlannedNode& node, int known) {
  if (node.inputs.size() != 2) return -1;
  if (node.inputs[0] == known) return node.inputs[1];
  if (node.inputs[1] == known) return node.inputs[0];
  return -1;
}

bool equals(std::optional<double> v, double expected) {
  return v && std::abs(*v - expected) <= 1e-6 * std::max(1.0, std::abs(expected));
}

struct Match {
  std::vector<int> nodes;  // positions of the chain's nodes, the last one producing the result
  int input = -1;
  std::string op;          // "HardSwish", "Gelu" or "Swish"
  std::optional<float> sqrt2;
};

/// x -> Add(x, 3) -> Clip(., 0, 6) -> Mul(x, .) -> Div(., 6)
std::optional<Match> match_hard_swish(const PlanIndex& index, int add) {
  if (!is_op(index, add, "Add", 2)) return std::nullopt;
  const PlannedNode& add_node = index.node(add);
  for (int x : add_node.inputs) {
    if (!equals(index.scalar(other_input(add_node, x)), 3.0)) continue;
    const int clip = index.sole_reader(add_node.outputs[0]);
    if (!is_op(index, clip, "Clip", 3) || index.node(clip).inputs[0] != add_node.outputs[0]) continue;
    if (!equals(index.scalar(index.node(clip).inputs[1]), 0.0) || !equals(index.scalar(index.node(clip).inputs[2]), 6.0))
      continue;
    const int mul = index.sole_reader(index.node(clip).outputs[0]);
    if (!is_op(index, mul, "Mul", 2) || other_input(index.node(mul), index.node(clip).outputs[0]) != x) continue;
    const int div = index.sole_reader(index.node(mul).outputs[0]);
    if (!is_op(index, div, "Div", 2) || index.node(div).inputs[0] != index.node(mul).outputs[0] ||
        !equals(index.scalar(index.node(div).inputs[1]), 6.0))
      continue;
    return Match{{add, clip, mul, div}, x, "HardSwish", std::nullopt};
  }
  return std::nullopt;
}

/// x -> Sigmoid -> Mul(x, .): SiLU (Swish with alpha 1), EfficientNet's and YOLO's activation.
/// x itself has another reader (the Mul), which is what keeps a Conv from absorbing the pair as
/// tails; as one node it becomes a single swish post-op.
std::optional<Match> match_silu(const PlanIndex& index, int sigmoid) {
  if (!is_op(index, sigmoid, "Sigmoid", 1)) return std::nullopt;
  const PlannedNode& sigmoid_node = index.node(sigmoid);
  const int x = sigmoid_node.inputs[0];
  const int mul = index.sole_reader(sigmoid_node.outputs[0]);
  if (!is_op(index, mul, "Mul", 2) || other_input(index.node(mul), sigmoid_node.outputs[0]) != x) return std::nullopt;
  return Match{{sigmoid, mul}, x, "Swish", std::nullopt};
}

/// x -> Div(x, sqrt2) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5)
std::optional<Match> match_gelu(const PlanIndex& index, int div) {
  if (!is_op(index, div, "Div", 2)) return std::nullopt;
  const PlannedNode& div_node = index.node(div);
  const int x = div_node.inputs[0];
  const auto sqrt2 = index.scalar(div_node.inputs[1]);
  if (!equals(sqrt2, std::sqrt(2.0))) return std::nullopt;
  const int erf = index.sole_reader(div_node.outputs[0]);
  if (!is_op(index, erf, "Erf", 1)) return std::nullopt;
  const int add = index.sole_reader(index.node(erf).outputs[0]);
  if (!is_op(index, add, "Add", 2) || !equals(index.scalar(other_input(index.node(add), index.node(erf).outputs[0])), 1.0))
    return std::nullopt;
  const int mul = index.sole_reader(index.node(add).outputs[0]);
  if (!is_op(index, mul, "Mul", 2) || other_input(index.node(mul), index.node(add).outputs[0]) != x) return std::nullopt;
  const int half = index.sole_reader(index.node(mul).outputs[0]);
  if (!is_op(index, half, "Mul", 2) || !equals(index.scalar(other_input(index.node(half), index.node(mul).outputs[0])), 0.5))
    return std::nullopt;
  return Match{{div, erf, add, mul, half}, x, "Gelu", static_cast<float>(*sqrt2)};
}

}  // namespace

int rewrite_decomposed_activations(Subgraph& g, std::vector<std::vector<int>>& uses,
                                   const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel) {
  std::vector<Match> matches;
  {
    const PlanIndex index(g, uses);
    std::set<int> taken;
    for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
      std::optional<Match> m = match_hard_swish(index, n);
      if (!m) m = match_gelu(index, n);
      if (!m) m = match_silu(index, n);
      if (!m) continue;
      bool overlaps = false;
      for (int k : m->nodes) overlaps |= taken.count(k) > 0;
      if (overlaps) continue;
      taken.insert(m->nodes.begin(), m->nodes.end());
      matches.push_back(*m);
    }
  }
  if (matches.empty()) return 0;

  // The replacement takes the place of the chain's last node: everything it reads (x) is
  // produced before the chain's first node, so the order stays valid.
  std::map<int, const Match*> replace_at;
  std::set<int> removed;
  for (const auto& m : matches) {
    replace_at[m.nodes.back()] = &m;
    removed.insert(m.nodes.begin(), m.nodes.end());
  }
  std::vector<PlannedNode> nodes;
  std::vector<std::vector<int>> node_uses;
  for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
    if (auto it = replace_at.find(n); it != replace_at.end()) {
      const Match& m = *it->second;
      const PlannedNode& last = g.nodes_[n];
      PlannedNode node;
      node.spec.name = last.spec.name;
      node.spec.op_type = m.op;
      node.spec.domain = kParityDomain;
      node.spec.opset = 1;
      node.spec.since_version = 1;
      node.spec.inputs = {g.slot_names_[m.input]};
      node.spec.outputs = {last.spec.outputs[0]};
      if (m.sqrt2) {
        model::Attribute a;
        a.name = "sqrt2";
        a.type = model::AttrType::kFloat;
        a.f = *m.sqrt2;
        node.spec.attributes["sqrt2"] = a;
      }
      node.inputs = {m.input};
      node.outputs = {last.outputs[0]};
      node.label = std::string(kParityDomain) + "::" + m.op + " node '" + last.spec.name + "' (recognized from " +
                   std::to_string(m.nodes.size()) + " nodes)";
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
  return static_cast<int>(matches.size());
}

}  // namespace parity::runtime
