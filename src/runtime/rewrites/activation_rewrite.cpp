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
  PlanIndex(const Subgraph& g, const std::vector<std::vector<int>>& uses) : g_(g), readers_(g, uses) {
    for (const auto& [slot, value] : g.constants_) constants_[slot] = &value;
    for (const auto& [slot, value] : g.plan_time_values_) constants_[slot] = &value;
  }

  int sole_reader(int slot) const { return readers_.sole_reader(slot); }

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
  SlotReaders readers_;
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

ChainReplacement replacement(const Match& m) {
  ChainReplacement r;
  r.nodes = m.nodes;
  r.input = m.input;
  r.op_type = m.op;
  r.recognized_from = std::to_string(m.nodes.size()) + " nodes";
  if (m.sqrt2) {
    model::Attribute a;
    a.name = "sqrt2";
    a.type = model::AttrType::kFloat;
    a.f = *m.sqrt2;
    r.attributes["sqrt2"] = a;
  }
  return r;
}

}  // namespace

int rewrite_decomposed_activations(Subgraph& g, std::vector<std::vector<int>>& uses,
                                   const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel) {
  std::vector<ChainReplacement> chains;
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
    chains.push_back(replacement(*m));
  }
  return replace_chains(g, uses, chains, make_kernel);
}

}  // namespace parity::runtime
