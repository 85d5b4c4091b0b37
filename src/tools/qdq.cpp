#include "tools/qdq.h"

#include <cmath>
#include <set>

#include <onnx/onnx_pb.h>

#include "core/status.h"
#include "model/proto_convert.h"
#include "model/transforms/opset.h"
#include "runtime/reduced_precision.h"

namespace parity::tools {

namespace {

constexpr int kFirstPerAxisOpset = 13;

bool is_default_domain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

bool is_qdq_node(const onnx::NodeProto& node) {
  return is_default_domain(node) && (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear");
}

bool is_quantizable_layer(const onnx::NodeProto& node) {
  if (!is_default_domain(node)) return false;
  const std::string& op = node.op_type();
  return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm";
}

/// Every name the graph uses (values, nodes), so that added names never collide.
class NameTable {
 public:
  explicit NameTable(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& n : g.node()) {
      used_.insert(n.name());
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& i : n.input()) used_.insert(i);
    }
  }
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

/// The graph's constant values by name: initializers and Constant nodes' tensors.
class Constants {
 public:
  Constants(const onnx::GraphProto& g, const std::filesystem::path& base_dir) : base_dir_(base_dir) {
    std::set<std::string> inputs;
    for (const auto& v : g.input()) inputs.insert(v.name());
    // An initializer that is also a graph input is a default the caller may override.
    for (const auto& t : g.initializer())
      if (!inputs.count(t.name())) protos_[t.name()] = &t;
    for (const auto& n : g.node())
      if (is_default_domain(n) && n.op_type() == "Constant" && n.output_size() == 1)
        for (const auto& a : n.attribute())
          if (a.name() == "value" && a.has_t()) protos_[n.output(0)] = &a.t();
  }
  bool has(const std::string& name) const { return protos_.count(name) > 0; }
  std::optional<Tensor> get(const std::string& name) const {
    auto it = protos_.find(name);
    if (it == protos_.end()) return std::nullopt;
    return model::tensor_from_proto(*it->second, base_dir_);
  }

 private:
  std::map<std::string, const onnx::TensorProto*> protos_;
  std::filesystem::path base_dir_;
};

int64_t int_attribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

void add_initializer(onnx::GraphProto& g, const std::string& name, const Tensor& t) {
  model::tensor_to_proto(t, g.add_initializer(), name);
}

onnx::NodeProto make_node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                          const std::string& output) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  for (auto& i : inputs) node.add_input(std::move(i));
  node.add_output(output);
  return node;
}

/// The axis parity's int8 kernels scale the weights of `layer` along (runtime/reduced_precision.h).
int64_t weight_axis(const onnx::NodeProto& layer, int64_t rank) {
  runtime::NodeSpec spec;
  spec.op_type = layer.op_type();
  if (layer.op_type() == "Gemm") {
    model::Attribute trans_b;
    trans_b.name = "transB";
    trans_b.type = model::AttrType::kInt;
    trans_b.i = int_attribute(layer, "transB", 0);
    spec.attributes["transB"] = trans_b;
  }
  return runtime::int8_weight_axis(spec, 1, rank);
}

bool usable_scale(float scale) { return std::isfinite(scale) && scale > 0; }

class QdqWriter {
 public:
  QdqWriter(model::Model& model, const std::map<std::string, float>& scales)
      : model_(model), g_(*model.proto().mutable_graph()), scales_(scales), names_(g_),
        constants_(g_, model.base_dir()) {}

  QdqExportReport run() {
    std::vector<onnx::NodeProto> nodes(g_.node().begin(), g_.node().end());
    std::vector<onnx::NodeProto> out;
    out.reserve(nodes.size() * 2);
    for (auto& node : nodes) {
      if (is_quantizable_layer(node) && node.input_size() >= 2) quantize_layer(node, out);
      out.push_back(std::move(node));
    }
    g_.clear_node();
    for (auto& n : out) *g_.add_node() = std::move(n);
    remove_unused_initializers();
    return report_;
  }

 private:
  void quantize_layer(onnx::NodeProto& layer, std::vector<onnx::NodeProto>& out) {
    const std::string& x = layer.input(0);
    const std::string& w = layer.input(1);
    const bool x_ok = !constants_.has(x) && has_scale(x);
    const bool w_constant = constants_.has(w) && constants_.get(w)->dtype() == DType::kFloat32;
    const bool w_ok = w_constant || (!constants_.has(w) && has_scale(w));
    if (!x_ok || !w_ok) {
      ++report_.skipped_layers;
      return;
    }
    layer.set_input(0, activation_pair(x, out));
    layer.set_input(1, w_constant ? quantized_weight(layer, w, out) : activation_pair(w, out));
    ++report_.layers;
  }

  bool has_scale(const std::string& name) const {
    auto it = scales_.find(name);
    return it != scales_.end() && usable_scale(it->second);
  }

  /// The DequantizeLinear output standing for activation `x` (one pair per tensor).
  std::string activation_pair(const std::string& x, std::vector<onnx::NodeProto>& out) {
    auto [it, added] = activation_dq_.try_emplace(x);
    if (!added) return it->second;
    const std::string scale = names_.fresh(x + "_scale"), zero = names_.fresh(x + "_zero_point");
    add_initializer(g_, scale, Tensor::scalar<float>(scales_.at(x)));
    add_initializer(g_, zero, Tensor::scalar<int8_t>(0));
    const std::string quantized = names_.fresh(x + "_quantized"), dequantized = names_.fresh(x + "_dequantized");
    out.push_back(make_node("QuantizeLinear", names_.fresh(x + "_QuantizeLinear"), {x, scale, zero}, quantized));
    out.push_back(
        make_node("DequantizeLinear", names_.fresh(x + "_DequantizeLinear"), {quantized, scale, zero}, dequantized));
    ++report_.activation_pairs;
    return it->second = dequantized;
  }

  /// The DequantizeLinear output of constant weight `w` stored as per-channel int8.
  std::string quantized_weight(const onnx::NodeProto& layer, const std::string& w, std::vector<onnx::NodeProto>& out) {
    const Tensor weights = *constants_.get(w);
    const int64_t axis = weight_axis(layer, weights.rank());
    auto [it, added] = weight_dq_.try_emplace({w, axis});
    if (!added) return it->second;
    runtime::QuantizedWeights q = runtime::quantize_weights_int8(weights, axis);
    // An all-zero channel has no range; any positive scale dequantizes its zeros exactly.
    for (float& s : q.scales)
      if (!usable_scale(s)) s = 1.0f;
    const int64_t channels = static_cast<int64_t>(q.scales.size());
    const bool per_channel = axis >= 0;
    const Shape scale_shape = per_channel ? Shape{channels} : Shape{};
    const std::string values = names_.fresh(w + "_quantized"), scale = names_.fresh(w + "_scale"),
                      zero = names_.fresh(w + "_zero_point"), dequantized = names_.fresh(w + "_dequantized");
    add_initializer(g_, values, q.values);
    add_initializer(g_, scale, Tensor::from_vector<float>(scale_shape, q.scales));
    add_initializer(g_, zero, Tensor::from_vector<int8_t>(scale_shape, std::vector<int8_t>(channels, 0)));
    onnx::NodeProto dq = make_node("DequantizeLinear", names_.fresh(w + "_DequantizeLinear"), {values, scale, zero},
                                   dequantized);
    if (per_channel) {
      auto* attr = dq.add_attribute();
      attr->set_name("axis");
      attr->set_type(onnx::AttributeProto::INT);
      attr->set_i(axis);
    }
    out.push_back(std::move(dq));
    replaced_weights_.insert(w);
    ++report_.weights;
    return it->second = dequantized;
  }

  void remove_unused_initializers() {
    std::set<std::string> read;
    for (const auto& n : g_.node())
      for (const auto& i : n.input()) read.insert(i);
    for (const auto& o : g_.output()) read.insert(o.name());
    auto dead = [&](const std::string& name) { return replaced_weights_.count(name) && !read.count(name); };
    auto* inits = g_.mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i)
      if (dead(inits->Get(i).name())) inits->DeleteSubrange(i, 1);
    // Weights held by Constant nodes (exporters of older opsets write them so).
    auto* nodes = g_.mutable_node();
    for (int i = nodes->size() - 1; i >= 0; --i)
      if (nodes->Get(i).op_type() == "Constant" && nodes->Get(i).output_size() == 1 && dead(nodes->Get(i).output(0)))
        nodes->DeleteSubrange(i, 1);
  }

  model::Model& model_;
  onnx::GraphProto& g_;
  const std::map<std::string, float>& scales_;
  NameTable names_;
  Constants constants_;
  std::map<std::string, std::string> activation_dq_;
  std::map<std::pair<std::string, int64_t>, std::string> weight_dq_;
  std::set<std::string> replaced_weights_;
  QdqExportReport report_;
};

void set_default_opset_at_least(model::Model& model, int64_t opset) {
  if (model.opset("") < opset) model::transforms::convert_opset(model, opset);
}

/// Every QuantizeLinear/DequantizeLinear of `g` and its subgraphs, with the graph's constants.
template <typename Visit>
void visit_qdq_nodes(const onnx::GraphProto& g, const std::filesystem::path& base_dir, const Visit& visit) {
  const Constants constants(g, base_dir);
  for (const auto& node : g.node()) {
    if (is_qdq_node(node)) visit(node, constants);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) visit_qdq_nodes(a.g(), base_dir, visit);
      for (const auto& sub : a.graphs()) visit_qdq_nodes(sub, base_dir, visit);
    }
  }
}

// --- import ---

/// Reads the symmetric int8 QDQ form back (import_qdq); every method returns false for anything
/// outside it.
class QdqReader {
 public:
  QdqReader(onnx::ModelProto& proto, const std::filesystem::path& base_dir)
      : g_(*proto.mutable_graph()), constants_(g_, base_dir) {}

  std::optional<QdqImport> run() {
    std::map<std::string, std::vector<int>> readers;
    for (int i = 0; i < g_.node_size(); ++i)
      for (const auto& in : g_.node(i).input()) readers[in].push_back(i);
    std::set<std::string> graph_outputs;
    for (const auto& o : g_.output()) graph_outputs.insert(o.name());
    for (int i = 0; i < g_.node_size(); ++i) {
      const onnx::NodeProto& node = g_.node(i);
      if (!is_qdq_node(node) || removed_.count(i)) continue;
      const bool ok = node.op_type() == "QuantizeLinear" ? fold_pair(i, readers, graph_outputs)
                                                         : fold_constant_dequantize(i, graph_outputs);
      if (!ok) return std::nullopt;
    }
    rewrite_graph();
    return std::move(import_);
  }

 private:
  /// The scalar scale of a symmetric int8 Q/DQ node, nullopt when it is not one.
  std::optional<float> symmetric_scale(const onnx::NodeProto& node) const {
    if (node.input_size() < 3 || node.input(2).empty()) return std::nullopt;  // no zero point: uint8
    const std::optional<Tensor> scale = constants_.get(node.input(1)), zero = constants_.get(node.input(2));
    if (!scale || !zero || scale->numel() != 1 || scale->dtype() != DType::kFloat32) return std::nullopt;
    if (zero->dtype() != DType::kInt8 || zero->numel() != 1 || zero->data<int8_t>()[0] != 0) return std::nullopt;
    return scale->data<float>()[0];
  }

  bool fold_pair(int q, const std::map<std::string, std::vector<int>>& readers,
                 const std::set<std::string>& graph_outputs) {
    const onnx::NodeProto& quantize = g_.node(q);
    const std::optional<float> scale = symmetric_scale(quantize);
    if (!scale || quantize.output_size() != 1 || graph_outputs.count(quantize.output(0))) return false;
    auto it = readers.find(quantize.output(0));
    if (it == readers.end()) return false;
    for (int d : it->second) {
      const onnx::NodeProto& dq = g_.node(d);
      if (!is_default_domain(dq) || dq.op_type() != "DequantizeLinear" || dq.input(0) != quantize.output(0)) return false;
      if (symmetric_scale(dq) != scale || graph_outputs.count(dq.output(0))) return false;
      renamed_[dq.output(0)] = quantize.input(0);
      removed_.insert(d);
    }
    auto [entry, added] = import_.scales.emplace(quantize.input(0), *scale);
    if (!added && entry->second != *scale) return false;
    removed_.insert(q);
    ++import_.activation_pairs;
    return true;
  }

  /// A DequantizeLinear of constant integers (weights, biases) becomes its float result.
  bool fold_constant_dequantize(int d, const std::set<std::string>& graph_outputs) {
    const onnx::NodeProto& dq = g_.node(d);
    const std::optional<Tensor> values = constants_.get(dq.input(0));
    const std::optional<Tensor> scale = dq.input_size() > 1 ? constants_.get(dq.input(1)) : std::nullopt;
    if (!values || !scale || scale->dtype() != DType::kFloat32 || graph_outputs.count(dq.output(0))) return false;
    if (values->dtype() != DType::kInt8 && values->dtype() != DType::kInt32) return false;
    if (dq.input_size() > 2 && !dq.input(2).empty()) {
      const std::optional<Tensor> zero = constants_.get(dq.input(2));
      if (!zero) return false;
      for (int64_t i = 0; i < zero->numel(); ++i)
        if (zero->value_as_double(i) != 0) return false;
    }
    // A per-channel bias (rank 1) has one axis whatever the attribute's default says.
    int64_t axis = values->rank() == 1 ? 0 : int_attribute(dq, "axis", 1);
    if (axis < 0) axis += values->rank();
    const int64_t channels = scale->numel();
    if (channels != 1 && (axis < 0 || axis >= values->rank() || values->dim(axis) != channels)) return false;
    int64_t inner = 1;
    for (int64_t k = axis + 1; channels != 1 && k < values->rank(); ++k) inner *= values->dim(k);
    Tensor result(DType::kFloat32, values->shape());
    float* dst = result.data<float>();
    const float* s = scale->data<float>();
    for (int64_t i = 0; i < values->numel(); ++i)
      dst[i] = static_cast<float>(values->value_as_double(i)) * s[channels == 1 ? 0 : (i / inner) % channels];
    folded_.emplace_back(dq.output(0), std::move(result));
    removed_.insert(d);
    ++import_.weights;
    return true;
  }

  void rewrite_graph() {
    std::vector<onnx::NodeProto> kept;
    for (int i = 0; i < g_.node_size(); ++i) {
      if (removed_.count(i)) continue;
      onnx::NodeProto node = g_.node(i);
      for (auto& in : *node.mutable_input()) {
        auto it = renamed_.find(in);
        if (it != renamed_.end()) in = it->second;
      }
      kept.push_back(std::move(node));
    }
    g_.clear_node();
    for (auto& n : kept) *g_.add_node() = std::move(n);
    for (const auto& [name, tensor] : folded_) add_initializer(g_, name, tensor);
    std::set<std::string> read;
    for (const auto& n : g_.node())
      for (const auto& in : n.input()) read.insert(in);
    for (const auto& o : g_.output()) read.insert(o.name());
    std::set<std::string> inputs;
    for (const auto& v : g_.input()) inputs.insert(v.name());
    auto* inits = g_.mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i)
      if (!read.count(inits->Get(i).name()) && !inputs.count(inits->Get(i).name())) inits->DeleteSubrange(i, 1);
  }

  onnx::GraphProto& g_;
  Constants constants_;
  QdqImport import_;
  std::set<int> removed_;
  std::map<std::string, std::string> renamed_;  // DequantizeLinear output -> the tensor it stood for
  std::vector<std::pair<std::string, Tensor>> folded_;
};

}  // namespace

QdqExportReport export_qdq(model::Model& model, const std::map<std::string, float>& scales) {
  set_default_opset_at_least(model, kFirstPerAxisOpset);
  return QdqWriter(model, scales).run();
}

bool has_qdq_nodes(const model::Model& model) {
  for (const auto& node : model.proto().graph().node())
    if (is_qdq_node(node)) return true;
  return false;
}

void check_qdq_scales(const model::Model& model, const std::string& model_name) {
  visit_qdq_nodes(model.proto().graph(), model.base_dir(), [&](const onnx::NodeProto& node, const Constants& constants) {
    if (node.input_size() < 2) return;
    const std::optional<Tensor> scale = constants.get(node.input(1));
    if (!scale || (scale->dtype() != DType::kFloat32 && scale->dtype() != DType::kFloat64)) return;
    for (int64_t i = 0; i < scale->numel(); ++i) {
      const double s = scale->value_as_double(i);
      PARITY_CHECK(std::isfinite(s) && s > 0, kInvalidArgument, "QDQ model '", model_name, "': ", node.op_type(),
                   " node '", node.name(), "' has scale ", s, scale->numel() > 1 ? " in channel " + std::to_string(i) : "",
                   " (input '", node.input(1), "'); scales must be positive finite numbers");
    }
  });
}

std::optional<QdqImport> import_qdq(model::Model& model) {
  if (!has_qdq_nodes(model)) return std::nullopt;
  onnx::ModelProto copy = model.proto();
  std::optional<QdqImport> result = QdqReader(copy, model.base_dir()).run();
  if (result) model.proto() = std::move(copy);
  return result;
}

}  // namespace parity::tools
