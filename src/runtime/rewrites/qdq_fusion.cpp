#include "runtime/rewrites/qdq_fusion.h"
#include "runtime/rewrites/graph_constants.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace parity::runtime {

namespace {

bool is_op(const PlannedNode& n, const char* op) { return n.spec.domain.empty() && n.spec.op_type == op; }

/// One matched Conv or MatMul: the nodes around it and the QLinearConv / QLinearMatMul inputs,
/// as slots.
struct QdqConv {
  int conv = -1, quantize = -1;
  std::vector<int> dequantizes;  // x, w and (optional) bias DequantizeLinear nodes
  std::vector<int> inputs;       // x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, bias]
  std::string fused_op;          // QLinearConv or QLinearMatMul
};

class Matcher {
 public:
  Matcher(const Subgraph& g, const std::vector<std::vector<int>>& uses) : g_(g), constants_(constant_tensors(g)) {
    producer_.assign(g.slot_names_.size(), -1);
    readers_.assign(g.slot_names_.size(), 0);
    for (size_t n = 0; n < g.nodes_.size(); ++n) {
      for (int s : g.nodes_[n].outputs)
        if (s >= 0) producer_[s] = static_cast<int>(n);
      for (int s : uses[n]) ++readers_[s];
    }
    graph_outputs_.insert(g.output_slots_.begin(), g.output_slots_.end());
  }

  std::optional<QdqConv> match(int c) const {
    const PlannedNode& node = g_.nodes_[c];
    if (is_op(node, "Conv")) return match_conv(c);
    if (is_op(node, "MatMul")) return match_matmul(c);
    return {};
  }

  /// MatMul(DequantizeLinear(a), DequantizeLinear(constant 2-D int8 B, scalar scale, zero point
  /// 0)) -> QuantizeLinear: QLinearMatMul (whose reference takes scalar scales only).
  std::optional<QdqConv> match_matmul(int c) const {
    const PlannedNode& mm = g_.nodes_[c];
    if (mm.inputs.size() != 2) return {};
    const PlannedNode* dq_x = activation_dequantize(mm);
    const PlannedNode* dq_w = dequantize_of(mm.inputs[1]);
    if (!dq_x || !dq_w || dq_w->inputs.size() < 2) return {};
    const Tensor* w = constant(dq_w->inputs[0]);
    if (!w || w->dtype() != DType::kInt8 || w->rank() != 2 || !scalar(dq_w->inputs[1], DType::kFloat32)) return {};
    const int w_zp_slot = zero_weight_zero_point(*dq_w, 1);
    if (w_zp_slot == kNotZero) return {};
    const int q = output_quantize(mm);
    if (q < 0) return {};
    const PlannedNode& quantize = g_.nodes_[q];
    QdqConv m;
    m.conv = c;
    m.quantize = q;
    m.fused_op = "QLinearMatMul";
    m.dequantizes = {producer_[mm.inputs[0]], producer_[mm.inputs[1]]};
    m.inputs = {dq_x->inputs[0], dq_x->inputs[1], dq_x->inputs[2], dq_w->inputs[0], dq_w->inputs[1], w_zp_slot,
                quantize.inputs[1], quantize.inputs[2]};
    return m;
  }

  std::optional<QdqConv> match_conv(int c) const {
    const PlannedNode& conv = g_.nodes_[c];
    if (conv.inputs.size() < 2) return {};
    QdqConv m;
    m.conv = c;
    m.fused_op = "QLinearConv";
    const PlannedNode* dq_x = activation_dequantize(conv);
    if (!dq_x) return {};
    // The weights: DequantizeLinear(constant int8, scales along axis 0, zero points 0).
    const PlannedNode* dq_w = dequantize_of(conv.inputs[1]);
    if (!dq_w || dq_w->inputs.size() < 2) return {};
    const Tensor* w = constant(dq_w->inputs[0]);
    const Tensor* w_scale = constant(dq_w->inputs[1]);
    if (!w || w->dtype() != DType::kInt8 || w->rank() != 4 || !w_scale || w_scale->dtype() != DType::kFloat32) return {};
    const int64_t out_channels = w->dim(0);
    if (w_scale->numel() != 1) {
      auto axis = dq_w->spec.attributes.find("axis");
      const int64_t a = axis == dq_w->spec.attributes.end() ? 1 : axis->second.i;
      if ((a != 0 && a != -4) || w_scale->rank() != 1 || w_scale->numel() != out_channels) return {};
    }
    const int w_zp_slot = zero_weight_zero_point(*dq_w, w_scale->numel());
    if (w_zp_slot == kNotZero) return {};
    const int q = output_quantize(conv);
    if (q < 0) return {};
    const PlannedNode& quantize = g_.nodes_[q];
    m.quantize = q;
    m.dequantizes = {producer_[conv.inputs[0]], producer_[conv.inputs[1]]};
    m.inputs = {dq_x->inputs[0], dq_x->inputs[1], dq_x->inputs[2], dq_w->inputs[0], dq_w->inputs[1], w_zp_slot,
                quantize.inputs[1], quantize.inputs[2]};
    // The bias: DequantizeLinear(constant int32) with scale x_scale * w_scale (zero point 0).
    if (conv.inputs.size() >= 3 && conv.inputs[2] >= 0) {
      const PlannedNode* dq_b = dequantize_of(conv.inputs[2]);
      if (!dq_b || dq_b->inputs.size() < 2) return {};
      const Tensor* b = constant(dq_b->inputs[0]);
      const Tensor* b_scale = constant(dq_b->inputs[1]);
      if (!b || b->dtype() != DType::kInt32 || b->numel() != out_channels || !b_scale ||
          b_scale->dtype() != DType::kFloat32)
        return {};
      const double x_scale = constant(dq_x->inputs[1])->data<float>()[0];
      for (int64_t o = 0; o < out_channels; ++o) {
        const double want = x_scale * w_scale->data<float>()[w_scale->numel() == 1 ? 0 : o];
        const double got = b_scale->data<float>()[b_scale->numel() == 1 ? 0 : o];
        if (std::fabs(got - want) > 1e-6 * std::fabs(want)) return {};
      }
      if (dq_b->inputs.size() >= 3 && dq_b->inputs[2] >= 0) {
        const Tensor* b_zp = constant(dq_b->inputs[2]);
        if (!b_zp) return {};
        for (int64_t i = 0; i < b_zp->numel(); ++i)
          if (b_zp->value_as_double(i) != 0) return {};
      }
      m.dequantizes.push_back(producer_[conv.inputs[2]]);
      m.inputs.push_back(dq_b->inputs[0]);
    }
    return m;
  }

  /// The DequantizeLinear(x, scalar scale, scalar 8-bit zero point) that feeds `node`'s input 0.
  const PlannedNode* activation_dequantize(const PlannedNode& node) const {
    const PlannedNode* dq = dequantize_of(node.inputs[0]);
    if (!dq || dq->inputs.size() < 3 || !scalar(dq->inputs[1], DType::kFloat32)) return nullptr;
    const Tensor* zp = scalar(dq->inputs[2]);
    return zp && (zp->dtype() == DType::kUInt8 || zp->dtype() == DType::kInt8) ? dq : nullptr;
  }

  /// The only reader of `node`'s single output when it is QuantizeLinear(y, scalar scale, scalar
  /// 8-bit zero point) and the output is no graph output; -1 otherwise.
  int output_quantize(const PlannedNode& node) const {
    if (node.outputs.size() != 1 || node.outputs[0] < 0) return -1;
    const int y = node.outputs[0];
    if (graph_outputs_.count(y) || readers_[y] != 1) return -1;
    int q = -1;
    for (size_t n = 0; n < g_.nodes_.size() && q < 0; ++n)
      if (std::find(g_.nodes_[n].inputs.begin(), g_.nodes_[n].inputs.end(), y) != g_.nodes_[n].inputs.end())
        q = static_cast<int>(n);
    if (q < 0) return -1;
    const PlannedNode& quantize = g_.nodes_[q];
    if (!is_op(quantize, "QuantizeLinear") || quantize.inputs.size() < 3 || quantize.inputs[0] != y ||
        !scalar(quantize.inputs[1], DType::kFloat32) || quantize.outputs.size() != 1 || quantize.outputs[0] < 0)
      return -1;
    const Tensor* y_zp = scalar(quantize.inputs[2]);
    return y_zp && (y_zp->dtype() == DType::kUInt8 || y_zp->dtype() == DType::kInt8) ? q : -1;
  }

  static constexpr int kNotZero = -2;
  /// A weight DequantizeLinear's zero point slot when it is constant int8 zeros (`count`
  /// values), -1 when absent, kNotZero otherwise.
  int zero_weight_zero_point(const PlannedNode& dq_w, int64_t count) const {
    if (dq_w.inputs.size() < 3 || dq_w.inputs[2] < 0) return -1;
    const Tensor* zp = constant(dq_w.inputs[2]);
    if (!zp || zp->dtype() != DType::kInt8 || zp->numel() != count) return kNotZero;
    for (int64_t i = 0; i < zp->numel(); ++i)
      if (zp->data<int8_t>()[i] != 0) return kNotZero;
    return dq_w.inputs[2];
  }

  /// Whether every output of node `n` is read by `conv` alone (the node may go with the rewrite).
  bool only_feeds(int n) const {
    for (int s : g_.nodes_[n].outputs)
      if (s >= 0 && (readers_[s] != 1 || graph_outputs_.count(s))) return false;
    return true;
  }

 private:
  const Tensor* constant(int slot) const {
    auto it = slot >= 0 ? constants_.find(slot) : constants_.end();
    return it == constants_.end() ? nullptr : it->second;
  }
  const Tensor* scalar(int slot, DType want = DType::kUndefined) const {
    const Tensor* t = constant(slot);
    return t && t->numel() == 1 && (want == DType::kUndefined || t->dtype() == want) ? t : nullptr;
  }
  const PlannedNode* dequantize_of(int slot) const {
    if (slot < 0 || producer_[slot] < 0) return nullptr;
    const PlannedNode& n = g_.nodes_[producer_[slot]];
    return is_op(n, "DequantizeLinear") && n.outputs.size() == 1 ? &n : nullptr;
  }

  const Subgraph& g_;
  std::map<int, const Tensor*> constants_;
  std::vector<int> producer_, readers_;
  std::set<int> graph_outputs_;
};


}  // namespace

int fuse_qdq_layers(Subgraph& g, std::vector<std::vector<int>>& uses, const RewrittenKernelFactory& make_kernel) {
  std::vector<QdqConv> matches;
  {
    const Matcher matcher(g, uses);
    for (size_t c = 0; c < g.nodes_.size(); ++c)
      if (std::optional<QdqConv> m = matcher.match(static_cast<int>(c))) matches.push_back(std::move(*m));
    // Dequantize nodes read by nothing else go with the rewrite; the others stay for their readers.
    for (QdqConv& m : matches)
      std::erase_if(m.dequantizes, [&](int n) { return n < 0 || !matcher.only_feeds(n); });
  }
  if (matches.empty()) return 0;
  g.constants_.reserve(g.constants_.size() + matches.size());
  std::set<int> removed;
  for (QdqConv& m : matches) {
    PlannedNode& conv = g.nodes_[m.conv];
    const PlannedNode& quantize = g.nodes_[m.quantize];
    if (m.inputs[5] < 0)  // weight zero point absent: the fused ops require one
      m.inputs[5] = add_constant_slot(g, conv.spec.outputs[0] + "__qdq_w_zero_point", Tensor::from_vector<int8_t>({}, {0}));
    NodeSpec spec = conv.spec;
    spec.op_type = m.fused_op;
    spec.opset = std::max(spec.opset, 10);
    spec.inputs.clear();
    for (int s : m.inputs) spec.inputs.push_back(g.slot_names_[s]);
    spec.outputs = quantize.spec.outputs;
    std::unique_ptr<Kernel> kernel = make_kernel(spec, m.inputs);
    conv.label = m.fused_op + " node '" + conv.spec.name + "' (" + conv.label + " with its DequantizeLinear inputs and " +
                 quantize.label + ")";
    conv.spec = std::move(spec);
    conv.inputs = m.inputs;
    conv.outputs = quantize.outputs;
    conv.kernel = std::move(kernel);
    uses[m.conv] = m.inputs;
    removed.insert(m.quantize);
    removed.insert(m.dequantizes.begin(), m.dequantizes.end());
  }
  erase_nodes(g, uses, removed);
  return static_cast<int>(removed.size());
}

}  // namespace parity::runtime
