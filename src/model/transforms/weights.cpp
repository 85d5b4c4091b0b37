#include "model/transforms/weights.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <unordered_map>
#include <random>
#include <unordered_set>

#include "core/tensor.h"
#include "model/external_data.h"
#include "model/transforms/proto_walk.h"
#include "model/transforms/sparsity.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model::transforms {

namespace {

int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

bool is_float_type(int data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16 ||
         data_type == onnx::TensorProto::DOUBLE || data_type == onnx::TensorProto::BFLOAT16;
}

bool has_values(const onnx::TensorProto& t) {
  if (model::has_external_data(t)) return !model::is_weightless(t);
  return !t.raw_data().empty() || t.float_data_size() || t.int32_data_size() || t.int64_data_size() ||
         t.double_data_size() || t.uint64_data_size() || t.string_data_size();
}

// Polygraphy joins the model's doc_string and the marker with '-'.
void mark_model_weightless(onnx::ModelProto& model) {
  if (model.doc_string().find(kWeightlessMarker) != std::string::npos) return;
  model.set_doc_string(model.doc_string().empty() ? std::string(kWeightlessMarker)
                                                  : model.doc_string() + "-" + kWeightlessMarker);
}

void unmark_model_weightless(onnx::ModelProto& model) {
  std::string doc = model.doc_string();
  const size_t at = doc.find(kWeightlessMarker);
  if (at == std::string::npos) return;
  size_t begin = at, end = at + std::string(kWeightlessMarker).size();
  if (begin > 0 && doc[begin - 1] == '-') --begin;
  doc.erase(begin, end - begin);
  model.set_doc_string(doc);
}

void clear_values(onnx::TensorProto& t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
  t.clear_external_data();
  t.clear_data_location();
}

// Tensors a BatchNormalization uses as scale or variance (initializers, or the values of the
// Constant nodes feeding it): random values there must be positive or the rebuilt model produces NaNs.
std::unordered_set<const onnx::TensorProto*> positive_tensors(onnx::ModelProto& model) {
  std::unordered_set<std::string> names;
  for_each_node(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (node.op_type() != "BatchNormalization") return;
    for (int i : {1, 4})
      if (node.input_size() > i) names.insert(node.input(i));
  });
  std::unordered_set<const onnx::TensorProto*> tensors;
  for (const auto& t : model.graph().initializer())
    if (names.count(t.name())) tensors.insert(&t);
  for_each_node(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || !names.count(node.output(0))) return;
    for (const auto& attr : node.attribute())
      if (attr.has_t()) tensors.insert(&attr.t());
  });
  return tensors;
}

}  // namespace

namespace {

// Polygraphy's weight-strip patterns, as what each node reads: which inputs may hold weights, and
// the element count below which they stay (Gather/Slice weights are often small lookup tables).
struct StripRule {
  std::vector<int> inputs;  // empty: every input
  int64_t min_elements = 0;
};

const std::map<std::string, StripRule>& base_rules() {
  static const std::map<std::string, StripRule> rules = {
      {"Conv", {{}, 1}}, {"ConvTranspose", {{}, 1}}, {"Gemm", {{}, 1}}, {"MatMul", {{}, 0}},
      {"Gather", {{}, 1024}}, {"Slice", {{0}, 1024}}};
  return rules;
}

bool is_onnx_operator(const onnx::NodeProto& node) {
  model::register_newer_onnx_schemas();
  return onnx::OpSchemaRegistry::Schema(node.op_type(), std::numeric_limits<int>::max(), "") != nullptr ||
         onnx::OpSchemaRegistry::Schema(node.op_type(), std::numeric_limits<int>::max(), "ai.onnx.ml") != nullptr;
}

class StripSelection {
 public:
  StripSelection(const onnx::GraphProto& g, std::set<std::string>& exclude) : exclude_(exclude) {
    for (const auto& t : g.initializer()) initializers_[t.name()] = &t;
    for (const auto& n : g.node())
      for (const auto& o : n.output()) producers_[o] = &n;
    for (const auto& n : g.node()) visit(n);
  }
  const std::set<std::string>& names() const { return names_; }

 private:
  void visit(const onnx::NodeProto& n) {
    if (auto rule = base_rules().find(n.op_type()); rule != base_rules().end()) {
      for (int i = 0; i < n.input_size(); ++i) {
        const auto& allowed = rule->second.inputs;
        if (allowed.empty() || std::find(allowed.begin(), allowed.end(), i) != allowed.end())
          consider(n.input(i), rule->second.min_elements);
      }
      if (n.op_type() != "Gather" && n.op_type() != "Slice")
        for (const auto& in : n.input()) consider_producer(in);
    } else if (!is_onnx_operator(n)) {
      for (const auto& in : n.input()) consider(in, 0);  // a plugin's inputs are its weights
    }
  }

  // Weights reaching the op through QuantizeLinear -> DequantizeLinear (the float weight, Q's input
  // 0) or through a Transpose.
  void consider_producer(const std::string& tensor) {
    const onnx::NodeProto* p = producer(tensor);
    if (!p) return;
    if (p->op_type() == "Transpose" && p->input_size() > 0) {
      consider(p->input(0), 0);
    } else if (p->op_type() == "DequantizeLinear" && p->input_size() > 0) {
      const onnx::NodeProto* q = producer(p->input(0));
      if (q && q->op_type() == "QuantizeLinear" && q->input_size() > 0) consider(q->input(0), 0);
    }
  }

  void consider(const std::string& tensor, int64_t min_elements) {
    auto it = initializers_.find(tensor);
    if (it == initializers_.end()) return;
    const onnx::TensorProto& t = *it->second;
    if (t.data_type() == onnx::TensorProto::UINT8) return;
    if (exclude_.count(tensor)) {
      excluded_seen_.insert(tensor);
      return;
    }
    if (element_count(t) < min_elements) return;
    names_.insert(tensor);
  }

  const onnx::NodeProto* producer(const std::string& tensor) const {
    auto it = producers_.find(tensor);
    return it == producers_.end() ? nullptr : it->second;
  }

  std::set<std::string>& exclude_;
  std::set<std::string> excluded_seen_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, const onnx::NodeProto*> producers_;
  std::set<std::string> names_;

 public:
  const std::set<std::string>& excluded_seen() const { return excluded_seen_; }
};

void strip_tensor(onnx::TensorProto& t, bool sparse, StripReport& report) {
  const uint64_t bytes = static_cast<uint64_t>(element_count(t)) * dtype_size(static_cast<DType>(t.data_type()));
  clear_values(t);
  t.set_raw_data(std::string());  // present but empty, as Polygraphy writes it
  t.set_doc_string(std::string(kWeightlessDocString) + (sparse ? kSparseMarker : ""));
  ++report.stripped_tensors;
  report.stripped_bytes += bytes;
  report.sparse_tensors += sparse;
}

}  // namespace

std::set<std::string> read_exclude_list(const std::filesystem::path& path) {
  std::ifstream in(path);
  PARITY_CHECK(in, kNotFound, "--exclude-list: cannot read '", path.string(), "'");
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) names.insert(line);
  }
  return names;
}

StripReport strip_weights(model::Model& model, const StripOptions& options) {
  StripReport report;
  std::set<std::string> exclude = options.exclude;
  std::set<std::string> chosen;
  std::set<std::string> excluded_seen;
  if (options.polygraphy_selection) {
    StripSelection selection(model.proto().graph(), exclude);
    chosen = selection.names();
    excluded_seen = selection.excluded_seen();
  }
  const std::set<std::string> sparse = sparse_2_4_tensors(model);
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (!has_values(t)) return;
    bool strip = chosen.count(t.name()) > 0;
    if (!strip && options.size_threshold > 0 && is_float_type(t.data_type())) {
      const uint64_t bytes = static_cast<uint64_t>(element_count(t)) * dtype_size(static_cast<DType>(t.data_type()));
      if (exclude.count(t.name())) excluded_seen.insert(t.name());
      else strip = bytes >= options.size_threshold;
    }
    if (strip) strip_tensor(t, sparse.count(t.name()) > 0, report);
  });
  for (const auto& name : exclude)
    if (!excluded_seen.count(name)) report.unknown_excluded.push_back(name);
  if (report.stripped_tensors) mark_model_weightless(model.proto());
  return report;
}

size_t reference_weightless_file(model::Model& model, const std::string& location) {
  size_t count = 0;
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (!model::is_weightless(t)) return;
    clear_values(t);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = t.add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    ++count;
  });
  return count;
}

std::vector<std::string> weightless_locations(const model::Model& model) {
  std::vector<std::string> locations;
  for_each_dense_tensor(const_cast<onnx::ModelProto&>(model.proto()), [&](onnx::TensorProto& t) {
    if (!model::is_weightless(t) || !model::has_external_data(t)) return;
    const std::string location = model::parse_external_data(t).location;
    if (std::find(locations.begin(), locations.end(), location) == locations.end()) locations.push_back(location);
  });
  return locations;
}

ReconstructReport reconstruct_weights(model::Model& model, uint64_t seed) {
  ReconstructReport report;
  const auto positive = positive_tensors(model.proto());
  std::set<std::string> sparse;  // SPARSE_2_4-marked tensors, pruned once filled
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (t.doc_string().find(std::string(kWeightlessMarker) + "/" + kSparseMarker) != std::string::npos)
      sparse.insert(t.name());
  });
  std::mt19937_64 gen(seed);
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    const bool marked = t.doc_string().find(kWeightlessMarker) != std::string::npos;
    const int64_t numel = element_count(t);
    // A marked tensor with values was rebuilt already (Polygraphy's reconstruction keeps the marker).
    if (has_values(t) || numel == 0) return;
    const auto dtype = static_cast<DType>(t.data_type());
    PARITY_CHECK(is_float_type(t.data_type()), kUnsupported, "tensor '", t.name(), "' has no values and dtype ",
                 dtype_name(dtype), "; only floating-point weights can be reconstructed");
    const bool is_positive = positive.count(&t) > 0;
    std::uniform_real_distribution<float> dist(is_positive ? 0.5f : -0.1f, is_positive ? 1.5f : 0.1f);
    Tensor values(DType::kFloat32, Shape(t.dims().begin(), t.dims().end()));
    for (float& v : values.values<float>()) v = dist(gen);
    if (dtype != DType::kFloat32) values = values.cast(dtype);
    clear_values(t);
    t.set_raw_data(values.raw_data(), values.size_bytes());
    if (marked) t.clear_doc_string();
    ++report.reconstructed_tensors;
    report.reconstructed_bytes += values.size_bytes();
  });
  if (!sparse.empty()) {
    // Only main-graph initializers can be sparsity candidates (Polygraphy's pruner looks there).
    std::set<std::string> skip;
    for (const auto& t : model.proto().graph().initializer())
      if (!sparse.count(t.name())) skip.insert(t.name());
    report.sparse_tensors = prune_model_2_4(model, skip).size();
  }
  if (report.reconstructed_tensors) unmark_model_weightless(model.proto());
  return report;
}

}  // namespace parity::model::transforms
