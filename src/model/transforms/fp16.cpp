#include "model/transforms/fp16.h"

#include <onnx/defs/schema.h>

#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/logger.h"

namespace parity::model::transforms {

namespace {

constexpr float kFp16Max = 65504.0f;

// float32 values as float16; finite values beyond float16's range saturate instead of becoming inf.
Tensor to_fp16(const Tensor& t) {
  PARITY_ASSERT(t.dtype() == DType::kFloat32);
  Tensor clamped = t.clone();
  for (float& v : clamped.values<float>())
    if (std::isfinite(v)) v = std::max(-kFp16Max, std::min(kFp16Max, v));
  return clamped.cast(DType::kFloat16);
}

// float16 allowed for the idx-th input (or output) of a schema; nullopt when the schema has no
// such slot.
std::optional<bool> slot_allows_fp16(const std::vector<onnx::OpSchema::FormalParameter>& params, size_t idx) {
  if (params.empty()) return std::nullopt;
  const onnx::OpSchema::FormalParameter* p = nullptr;
  if (idx < params.size()) p = &params[idx];
  else if (params.back().GetOption() == onnx::OpSchema::Variadic) p = &params.back();
  else return std::nullopt;
  for (const auto* type : p->GetTypes())
    if (*type == "tensor(float16)") return true;
  return false;
}

struct NodePlan {
  bool keep = false;
  std::vector<DType> want_inputs;  // dtype each input must have
  std::vector<DType> new_outputs;  // dtype each output will have
};

class Converter {
 public:
  Converter(model::Graph& g, const Fp16Options& options) : g_(g), options_(options) {}

  Fp16Report run() {
    std::vector<NodePlan> plans;
    for (const auto& c : g_.initializers) known_values_[c.get()] = &c->values();
    for (const auto& node : g_.nodes)
      if (node->op_type == "Constant" && node->outputs.size() == 1 && node->outputs[0])
        if (auto it = node->attrs.find("value"); it != node->attrs.end() && it->second.type == AttrType::kTensor)
          known_values_[node->outputs[0].get()] = &it->second.t;
    for (const auto& node : g_.nodes) plans.push_back(plan(*node));
    // A Constant node whose consumers want float32 (Resize scales, kept ops) stays float32 rather
    // than round-tripping through float16.
    std::unordered_map<const model::Value*, bool> consumers_fp16;
    for (size_t n = 0; n < g_.nodes.size(); ++n)
      for (size_t i = 0; i < g_.nodes[n]->inputs.size(); ++i)
        if (const auto& in = g_.nodes[n]->inputs[i]) {
          auto [it, _] = consumers_fp16.emplace(in.get(), true);
          it->second = it->second && plans[n].want_inputs[i] == DType::kFloat16;
        }
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& node = *g_.nodes[n];
      if (node.op_type != "Constant" || plans[n].keep || node.outputs.size() != 1 || !node.outputs[0]) continue;
      auto it = consumers_fp16.find(node.outputs[0].get());
      if (it == consumers_fp16.end() || it->second) continue;
      plans[n].new_outputs[0] = node.outputs[0]->dtype;
      plans[n].keep = true;
      --report_.converted_nodes;
    }

    // Graph inputs.
    for (const auto& in : g_.inputs) {
      if (in->dtype == DType::kFloat32 && !options_.keep_io_types) in->dtype = DType::kFloat16;
      variants_[in.get()][in->dtype] = in;
    }
    // Node outputs get their new dtypes; pinned values (graph outputs, values used inside
    // subgraphs) keep name and dtype through a Cast from a renamed float16 value.
    std::unordered_set<const model::Value*> pinned;
    for (const auto& out : g_.outputs)
      if (options_.keep_io_types) pinned.insert(out.get());
    for (const auto& node : g_.nodes)
      for (const auto& [_, sub] : node->subgraphs)
        for (const auto& ref : sub->outer_references()) pinned.insert(ref.get());
    std::vector<model::NodePtr> edge_casts;
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      auto& node = *g_.nodes[n];
      for (size_t j = 0; j < node.outputs.size(); ++j) {
        const model::ValuePtr out = node.outputs[j];  // a copy: the slot is reassigned below
        if (!out) continue;
        const DType new_dtype = plans[n].new_outputs[j];
        if (new_dtype == out->dtype) {
          variants_[out.get()][out->dtype] = out;
          continue;
        }
        if (pinned.count(out.get())) {
          auto narrow = model::Value::variable(unique_name(out->name + "_fp16"), new_dtype, out->shape);
          node.outputs[j] = narrow;
          edge_casts.push_back(make_cast(narrow, out, out->dtype));
          variants_[out.get()][out->dtype] = out;
          variants_[out.get()][new_dtype] = narrow;
        } else {
          out->dtype = new_dtype;
          variants_[out.get()][new_dtype] = out;
        }
      }
      if (!plans[n].keep) update_dtype_attributes(node, plans[n]);
    }
    // Constants all of whose consumers want float16 are converted in place.
    std::unordered_map<const model::Value*, bool> all_fp16;
    for (size_t n = 0; n < g_.nodes.size(); ++n)
      for (size_t i = 0; i < g_.nodes[n]->inputs.size(); ++i) {
        const auto& in = g_.nodes[n]->inputs[i];
        if (!in || !in->is_constant() || in->dtype != DType::kFloat32) continue;
        auto [it, _] = all_fp16.emplace(in.get(), true);
        it->second = it->second && plans[n].want_inputs[i] == DType::kFloat16;
      }
    for (const auto& c : g_.initializers) {
      auto it = all_fp16.find(c.get());
      const bool is_output = std::any_of(g_.outputs.begin(), g_.outputs.end(), [&](const auto& o) { return o == c; });
      if (it != all_fp16.end() && it->second && !is_output && !pinned.count(c.get())) {
        c->set_values(to_fp16(c->values()));
        ++report_.constants_converted;
      }
      variants_[c.get()][c->dtype] = c;
    }
    // Wire every input to a value of the dtype its node wants.
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      auto& node = *g_.nodes[n];
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (node.inputs[i]) node.inputs[i] = as_dtype(node.inputs[i], plans[n].want_inputs[i]);
    }
    for (auto& c : edge_casts) g_.nodes.push_back(c);
    for (auto& c : new_casts_) g_.nodes.push_back(c);
    for (auto& c : new_constants_) g_.initializers.push_back(c);
    report_.casts_added = edge_casts.size() + new_casts_.size();
    g_.toposort();
    return report_;
  }

 private:
  NodePlan plan(const model::Node& node) {
    NodePlan p;
    for (const auto& in : node.inputs) p.want_inputs.push_back(in ? in->dtype : DType::kUndefined);
    for (const auto& out : node.outputs) p.new_outputs.push_back(out ? out->dtype : DType::kUndefined);
    const bool touches_fp32 =
        std::any_of(node.inputs.begin(), node.inputs.end(), [](const auto& v) { return v && v->dtype == DType::kFloat32; }) ||
        std::any_of(node.outputs.begin(), node.outputs.end(), [](const auto& v) { return v && v->dtype == DType::kFloat32; });
    if (!touches_fp32) return p;
    const onnx::OpSchema* schema =
        node.domain.empty() ? onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(g_.opset("")), "") : nullptr;
    const bool unknown_output_type =
        std::any_of(node.outputs.begin(), node.outputs.end(), [](const auto& v) { return v && v->dtype == DType::kUndefined; });
    p.keep = !schema || !node.subgraphs.empty() || unknown_output_type || default_fp32_ops().count(node.op_type) ||
             options_.keep_ops.count(node.op_type) || reads_values_beyond_fp16(node);
    if (p.keep) {
      ++report_.kept_nodes;
      return p;
    }
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] && node.inputs[i]->dtype == DType::kFloat32 && slot_allows_fp16(schema->inputs(), i).value_or(false))
        p.want_inputs[i] = DType::kFloat16;
    for (size_t j = 0; j < node.outputs.size(); ++j)
      if (node.outputs[j] && node.outputs[j]->dtype == DType::kFloat32 &&
          slot_allows_fp16(schema->outputs(), j).value_or(false))
        p.new_outputs[j] = DType::kFloat16;
    ++report_.converted_nodes;
    return p;
  }

  // A node fed float32 constants that float16 cannot hold (e.g. BatchNormalization variances of 1e7)
  // must compute in float32: saturating them would change its results.
  bool reads_values_beyond_fp16(const model::Node& node) const {
    for (const auto& in : node.inputs) {
      if (!in || in->dtype != DType::kFloat32) continue;
      auto it = known_values_.find(in.get());
      if (it == known_values_.end() || it->second->dtype() != DType::kFloat32) continue;
      for (float v : it->second->values<float>())
        if (std::isfinite(v) && std::abs(v) > kFp16Max) return true;
    }
    return false;
  }

  // Attributes that name an output dtype or hold float32 values of an output.
  void update_dtype_attributes(model::Node& node, const NodePlan& p) {
    const bool fp16_out = std::any_of(p.new_outputs.begin(), p.new_outputs.end(), [](DType d) { return d == DType::kFloat16; });
    if (!fp16_out) return;
    constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;
    for (const char* key : {"to", "dtype"}) {
      auto it = node.attrs.find(key);
      if (it != node.attrs.end() && it->second.type == AttrType::kInt && it->second.i == kOnnxFloat)
        it->second.i = kOnnxFloat16;
    }
    auto value = node.attrs.find("value");
    if (value != node.attrs.end() && value->second.type == AttrType::kTensor && value->second.t.dtype() == DType::kFloat32)
      value->second.t = to_fp16(value->second.t);
    if (node.op_type == "Constant") {
      for (const char* key : {"value_float", "value_floats"}) {
        auto it = node.attrs.find(key);
        if (it == node.attrs.end()) continue;
        Attribute tensor_attr;
        tensor_attr.name = "value";
        tensor_attr.type = AttrType::kTensor;
        tensor_attr.t = it->second.type == AttrType::kFloat
                            ? to_fp16(Tensor::scalar<float>(it->second.f))
                            : to_fp16(Tensor::from_vector<float>({static_cast<int64_t>(it->second.floats.size())},
                                                                 it->second.floats));
        node.attrs.erase(it);
        node.attrs["value"] = std::move(tensor_attr);
      }
    }
  }

  model::ValuePtr as_dtype(const model::ValuePtr& v, DType want) {
    if (want == DType::kUndefined || v->dtype == DType::kUndefined) return v;
    auto& known = variants_[v.get()];
    if (known.empty()) known[v->dtype] = v;
    if (auto it = known.find(want); it != known.end()) return it->second;
    // Only float16 <-> float32 changes happen here.
    if (!((want == DType::kFloat16 || want == DType::kFloat32) && (known.count(DType::kFloat16) || known.count(DType::kFloat32))))
      return v;
    const model::ValuePtr source = known.count(DType::kFloat32) ? known[DType::kFloat32] : known[DType::kFloat16];
    model::ValuePtr made;
    if (source->is_constant() && want == DType::kFloat16) {
      made = model::Value::constant(unique_name(source->name + "_fp16"), to_fp16(source->values()));
      new_constants_.push_back(made);
      ++report_.constants_converted;
    } else if (source->is_constant()) {
      made = model::Value::constant(unique_name(source->name + "_fp32"), source->values().cast(DType::kFloat32));
      new_constants_.push_back(made);
    } else {
      made = model::Value::variable(unique_name(source->name + (want == DType::kFloat16 ? "_fp16" : "_fp32")), want,
                                 source->shape);
      new_casts_.push_back(make_cast(source, made, want));
    }
    known[want] = made;
    return made;
  }

  model::NodePtr make_cast(const model::ValuePtr& from, const model::ValuePtr& to, DType dtype) {
    auto node = std::make_shared<model::Node>("Cast", std::vector<model::ValuePtr>{from}, std::vector<model::ValuePtr>{to},
                                           unique_name(to->name + "_cast"));
    Attribute attr;
    attr.name = "to";
    attr.type = AttrType::kInt;
    attr.i = static_cast<int64_t>(dtype);
    node->attrs["to"] = attr;
    return node;
  }

  std::string unique_name(const std::string& base) {
    if (names_.empty()) {
      for (const auto& [n, _] : g_.tensors(true)) names_.insert(n);
      for (const auto& node : g_.nodes) names_.insert(node->name);
    }
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  model::Graph& g_;
  const Fp16Options& options_;
  Fp16Report report_;
  std::unordered_map<const model::Value*, std::map<DType, model::ValuePtr>> variants_;
  std::unordered_map<const model::Value*, const Tensor*> known_values_;  // float32 constants by value
  std::vector<model::NodePtr> new_casts_;
  std::vector<model::ValuePtr> new_constants_;
  std::unordered_set<std::string> names_;
};

}  // namespace

const std::set<std::string>& default_fp32_ops() {
  static const std::set<std::string> ops = {"NonMaxSuppression", "RoiAlign", "TopK",     "Range",
                                            "CumSum",            "Resize",   "Upsample", "RandomNormal",
                                            "RandomUniform",     "RandomNormalLike", "RandomUniformLike", "Multinomial"};
  return ops;
}

Fp16Report convert_to_fp16(model::Graph& graph, const Fp16Options& options) {
  Converter converter(graph, options);
  return converter.run();
}

}  // namespace parity::model::transforms
