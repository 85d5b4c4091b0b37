#include "runtime/rewrites/batch_norm_folding.h"
#include "runtime/rewrites/graph_constants.h"

#include <cmath>
#include <map>
#include <set>

namespace parity::runtime {

int fold_batch_norms_into_convs(Subgraph& g, std::vector<std::vector<int>>& uses, const RewrittenKernelFactory& make_kernel) {
  // `constants` points into g.constants_, which grows below by two per fold (at most one fold per
  // node): reserve first so it never reallocates.
  g.constants_.reserve(g.constants_.size() + 2 * g.nodes_.size());
  const auto constants = constant_tensors(g);
  std::vector<int> reader_count(g.slot_names_.size(), 0);
  for (const auto& u : uses)
    for (int s : u) ++reader_count[s];
  std::set<int> graph_outputs(g.output_slots_.begin(), g.output_slots_.end());
  auto constant_f32 = [&](int slot) -> const Tensor* {
    auto it = constants.find(slot);
    return it != constants.end() && it->second->dtype() == DType::kFloat32 ? it->second : nullptr;
  };

  std::map<int, int> bn_of_conv;  // conv position -> batch norm position
  for (size_t c = 0; c < g.nodes_.size(); ++c) {
    const PlannedNode& conv = g.nodes_[c];
    if (!conv.spec.domain.empty() || conv.spec.op_type != "Conv" || conv.outputs.size() != 1 || conv.outputs[0] < 0)
      continue;
    if (conv.inputs.size() < 2 || conv.inputs.size() > 3) continue;
    const int y = conv.outputs[0];
    if (graph_outputs.count(y) || reader_count[y] != 1) continue;
    const Tensor* w = constant_f32(conv.inputs[1]);
    if (!w || w->rank() < 3) continue;
    if (conv.inputs.size() == 3 && conv.inputs[2] >= 0 && !constant_f32(conv.inputs[2])) continue;
    for (size_t b = c + 1; b < g.nodes_.size(); ++b) {
      const PlannedNode& bn = g.nodes_[b];
      if (std::find(uses[b].begin(), uses[b].end(), y) == uses[b].end()) continue;
      const bool inference = bn.spec.domain.empty() && bn.spec.op_type == "BatchNormalization" &&
                             bn.spec.opset >= 9 && bn.inputs.size() == 5 && bn.inputs[0] == y &&
                             !(bn.spec.attributes.count("training_mode") && bn.spec.attributes.at("training_mode").i != 0);
      bool one_output = !bn.outputs.empty() && bn.outputs[0] >= 0;
      for (size_t k = 1; k < bn.outputs.size(); ++k) one_output &= bn.outputs[k] < 0;
      bool params = true;
      for (size_t k = 1; k <= 4 && inference; ++k) {
        const Tensor* p = constant_f32(bn.inputs[k]);
        params &= p && p->numel() == w->dim(0);
      }
      if (inference && one_output && params) bn_of_conv[static_cast<int>(c)] = static_cast<int>(b);
      break;
    }
  }
  if (bn_of_conv.empty()) return 0;

  std::set<int> folded_bns;
  for (const auto& [c, b] : bn_of_conv) {
    PlannedNode& conv = g.nodes_[c];
    const PlannedNode& bn = g.nodes_[b];
    const Tensor& w = *constant_f32(conv.inputs[1]);
    const Tensor* bias = conv.inputs.size() == 3 && conv.inputs[2] >= 0 ? constant_f32(conv.inputs[2]) : nullptr;
    const float* gamma = constant_f32(bn.inputs[1])->data<float>();
    const float* beta = constant_f32(bn.inputs[2])->data<float>();
    const float* mean = constant_f32(bn.inputs[3])->data<float>();
    const float* var = constant_f32(bn.inputs[4])->data<float>();
    const double epsilon = bn.spec.attributes.count("epsilon") ? bn.spec.attributes.at("epsilon").f : 1e-5;

    // y = (conv(x) - mean) * gamma / sqrt(var + eps) + beta, computed in double per channel.
    const int64_t channels = w.dim(0), per_channel = w.numel() / std::max<int64_t>(channels, 1);
    Tensor folded_w(DType::kFloat32, w.shape()), folded_b(DType::kFloat32, {channels});
    for (int64_t m = 0; m < channels; ++m) {
      const double scale = gamma[m] / std::sqrt(static_cast<double>(var[m]) + epsilon);
      for (int64_t i = 0; i < per_channel; ++i)
        folded_w.data<float>()[m * per_channel + i] = static_cast<float>(w.data<float>()[m * per_channel + i] * scale);
      const double b0 = bias ? bias->data<float>()[m] : 0.0;
      folded_b.data<float>()[m] = static_cast<float>((b0 - mean[m]) * scale + beta[m]);
    }
    const std::string prefix = conv.spec.outputs[0] + "__folded_" + bn.spec.name;
    const int w_slot = add_constant_slot(g, prefix + "_W", std::move(folded_w));
    const int b_slot = add_constant_slot(g, prefix + "_B", std::move(folded_b));

    NodeSpec spec = conv.spec;
    spec.inputs = {conv.spec.inputs[0], g.slot_names_[w_slot], g.slot_names_[b_slot]};
    spec.outputs = {bn.spec.outputs[0]};
    const std::vector<int> input_slots = {conv.inputs[0], w_slot, b_slot};
    std::unique_ptr<Kernel> kernel = make_kernel(spec, input_slots);
    conv.spec = std::move(spec);
    conv.inputs = input_slots;
    conv.outputs = {bn.outputs[0]};
    conv.kernel = std::move(kernel);
    conv.label += " (" + bn.label + " folded into its weights)";
    uses[c] = {input_slots[0], w_slot, b_slot};
    folded_bns.insert(b);
  }

  erase_nodes(g, uses, folded_bns);

  // Weights and statistics no node reads any more are dropped (they would double the memory).
  std::set<int> still_read(g.output_slots_.begin(), g.output_slots_.end());
  for (const auto& u : uses) still_read.insert(u.begin(), u.end());
  std::erase_if(g.constants_, [&](const auto& entry) {
    return !still_read.count(entry.first) &&
           std::find(g.input_slots_.begin(), g.input_slots_.end(), entry.first) == g.input_slots_.end();
  });
  return static_cast<int>(folded_bns.size());
}

}  // namespace parity::runtime
