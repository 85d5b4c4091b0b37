#include "model/cost.h"

#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/dtype.h"
#include "core/status.h"
#include "model/shape_inference.h"

namespace parity::model {

namespace {

/// Initializers larger than this keep their dims but lose their values in the copy given to shape
/// inference (data propagation only reads small shape tensors).
constexpr int64_t kKeptInitializerBytes = 4096;

struct ValueType {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;  // every dim known
};

ValueType value_type(const onnx::TypeProto& type) {
  ValueType v;
  if (!type.has_tensor_type()) return v;
  v.dtype = static_cast<DType>(type.tensor_type().elem_type());
  if (!type.tensor_type().has_shape()) return v;
  Shape shape;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return v;
    shape.push_back(d.dim_value());
  }
  v.shape = std::move(shape);
  return v;
}

int64_t int_attr(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

/// The copy shape inference runs on: input dims fixed, big initializer values dropped.
onnx::ModelProto inference_copy(const onnx::ModelProto& model, const std::map<std::string, Shape>& input_shapes) {
  onnx::ModelProto copy;
  copy.CopyFrom(model);
  auto* graph = copy.mutable_graph();
  for (auto& t : *graph->mutable_initializer()) {
    int64_t numel = 1;
    for (int64_t d : t.dims()) numel *= d;
    const int64_t bytes = numel * static_cast<int64_t>(dtype_size(static_cast<DType>(t.data_type())));
    if (bytes <= kKeptInitializerBytes) continue;
    t.clear_raw_data();
    t.clear_float_data();
    t.clear_double_data();
    t.clear_int32_data();
    t.clear_int64_data();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  for (auto& input : *graph->mutable_input()) {
    auto it = input_shapes.find(input.name());
    if (it == input_shapes.end() || !input.type().has_tensor_type()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
  }
  graph->clear_value_info();
  return copy;
}

/// The matrix work of one node; nullopt when a shape it needs is unknown.
std::optional<int64_t> node_macs(const onnx::NodeProto& node, const std::vector<ValueType>& in,
                                 const std::vector<ValueType>& out) {
  const std::string& op = node.op_type();
  const bool onnx_domain = node.domain().empty() || node.domain() == "ai.onnx";
  if (!onnx_domain) return 0;
  auto known = [&](const std::vector<ValueType>& v, size_t i) { return i < v.size() && v[i].shape; };
  if (op == "Conv") {
    if (!known(in, 1) || !known(out, 0)) return std::nullopt;
    const Shape& w = *in[1].shape;  // [M, C/group, k...]
    int64_t per_output = 1;
    for (size_t d = 1; d < w.size(); ++d) per_output *= w[d];
    return shape_numel(*out[0].shape) * per_output;
  }
  if (op == "ConvTranspose") {
    if (!known(in, 0) || !known(in, 1)) return std::nullopt;
    const Shape& w = *in[1].shape;  // [C, M/group, k...]: every input element meets M/group * k weights
    int64_t per_input = 1;
    for (size_t d = 1; d < w.size(); ++d) per_input *= w[d];
    return shape_numel(*in[0].shape) * per_input;
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "FusedMatMul") {
    if (!known(in, 0) || !known(out, 0) || in[0].shape->empty()) return std::nullopt;
    return shape_numel(*out[0].shape) * in[0].shape->back();
  }
  if (op == "Gemm") {
    if (!known(in, 0) || !known(out, 0) || in[0].shape->size() != 2) return std::nullopt;
    const int64_t k = int_attr(node, "transA", 0) ? (*in[0].shape)[0] : (*in[0].shape)[1];
    return shape_numel(*out[0].shape) * k;
  }
  if (op == "RNN" || op == "GRU" || op == "LSTM") {
    if (!known(in, 0) || !known(in, 2) || in[0].shape->size() != 3 || in[2].shape->size() != 3) return std::nullopt;
    const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    const Shape& r = *in[2].shape;  // [dirs, gates*H, H]
    const int64_t dirs = r[0], hidden = r[2];
    const Shape& x = *in[0].shape;  // [T, B, I] or, with layout 1, [B, T, I]: either way T * B rows
    const int64_t steps_times_batch = x[0] * x[1], features = x[2];
    return dirs * steps_times_batch * gates * hidden * (features + hidden);
  }
  return 0;
}

}  // namespace

ModelCost count_cost(const onnx::ModelProto& model, const std::map<std::string, Shape>& input_shapes) {
  onnx::ModelProto inferred = inference_copy(model, input_shapes);
  try {
    infer_shapes(inferred, /*data_prop=*/true);
  } catch (const Error&) {
    // Lenient mode rarely throws; then the declared shapes are all there is.
  }
  const auto& graph = inferred.graph();
  std::map<std::string, ValueType> types;
  for (const auto& v : graph.input()) types[v.name()] = value_type(v.type());
  for (const auto& v : graph.value_info()) types[v.name()] = value_type(v.type());
  for (const auto& v : graph.output()) types[v.name()] = value_type(v.type());
  std::map<std::string, int64_t> initializer_numel;
  for (const auto& t : graph.initializer()) {
    Shape dims(t.dims().begin(), t.dims().end());
    types[t.name()] = ValueType{static_cast<DType>(t.data_type()), dims};
    initializer_numel[t.name()] = shape_numel(dims);
  }

  ModelCost cost;
  for (const auto& [name, numel] : initializer_numel) cost.params += numel;
  for (const auto& node : graph.node()) {
    NodeCost c;
    c.name = node.name();
    c.op_type = node.op_type();
    std::vector<ValueType> in, out;
    for (const auto& name : node.input()) {
      auto it = types.find(name);
      in.push_back(it == types.end() ? ValueType{} : it->second);
      if (auto p = initializer_numel.find(name); p != initializer_numel.end()) c.params += p->second;
    }
    for (const auto& name : node.output()) {
      auto it = types.find(name);
      out.push_back(it == types.end() ? ValueType{} : it->second);
      if (name.empty()) continue;
      if (out.back().shape && out.back().dtype != DType::kUndefined)
        c.activation_bytes += shape_numel(*out.back().shape) * static_cast<int64_t>(dtype_size(out.back().dtype));
      else
        c.shapes_known = false;
    }
    if (std::optional<int64_t> macs = node_macs(node, in, out)) c.macs = *macs;
    else c.shapes_known = false;
    cost.macs += c.macs;
    cost.activation_bytes += c.activation_bytes;
    if (!c.shapes_known) ++cost.nodes_with_unknown_shapes;
    cost.nodes.push_back(std::move(c));
  }
  return cost;
}

std::string format_count(double value) {
  const char* suffixes[] = {"", " k", " M", " G", " T"};
  int i = 0;
  while (value >= 1000.0 && i < 4) {
    value /= 1000.0;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f}", value);
  return fmt::format("{:.3g}{}", value, suffixes[i]);
}

std::string cost_table_text(const ModelCost& cost) {
  size_t name_width = 4, op_width = 2;
  for (const auto& n : cost.nodes) {
    name_width = std::max(name_width, n.name.size());
    op_width = std::max(op_width, n.op_type.size());
  }
  name_width = std::min<size_t>(name_width, 60);
  std::string text = "---- Cost (static: MACs of Conv/ConvTranspose/MatMul/Gemm/RNN/GRU/LSTM) ----\n";
  text += fmt::format("{:<{}}  {:<{}}  {:>10}  {:>6}  {:>10}  {:>10}\n", "node", name_width, "op", op_width, "MACs",
                      "share", "params", "out bytes");
  const double total = static_cast<double>(std::max<int64_t>(cost.macs, 1));
  for (const auto& n : cost.nodes) {
    std::string name = n.name.size() > name_width ? "..." + n.name.substr(n.name.size() - name_width + 3) : n.name;
    text += fmt::format("{:<{}}  {:<{}}  {:>10}  {:>5.1f}%  {:>10}  {:>10}{}\n", name, name_width, n.op_type, op_width,
                        format_count(static_cast<double>(n.macs)), 100.0 * static_cast<double>(n.macs) / total,
                        format_count(static_cast<double>(n.params)),
                        format_count(static_cast<double>(n.activation_bytes)), n.shapes_known ? "" : "  (shape unknown)");
  }
  text += fmt::format("Total: {} MACs ({} FLOPs), {} parameters, {} activation bytes over {} nodes",
                      format_count(static_cast<double>(cost.macs)), format_count(cost.flops()),
                      format_count(static_cast<double>(cost.params)),
                      format_count(static_cast<double>(cost.activation_bytes)), cost.nodes.size());
  if (cost.nodes_with_unknown_shapes)
    text += fmt::format(" ({} nodes with unknown shapes count as lower bounds)", cost.nodes_with_unknown_shapes);
  return text;
}

}  // namespace parity::model
