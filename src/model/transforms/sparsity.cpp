#include "model/transforms/sparsity.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/logger.h"
#include "model/external_data.h"
#include "model/proto_convert.h"

namespace parity::model::transforms {

namespace {

bool sparsity_dtype(int data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16 ||
         data_type == onnx::TensorProto::BFLOAT16;
}

// Follows a weight input back to its initializer, mapping the axis through what lies between.
class CandidateFinder {
 public:
  explicit CandidateFinder(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) initializers_[t.name()] = &t;
    for (const auto& n : g.node())
      for (const auto& o : n.output()) producers_[o] = &n;
  }

  void trace(const std::string& tensor, int64_t axis) {
    if (auto it = initializers_.find(tensor); it != initializers_.end()) {
      if (!found_.count(tensor)) order_.push_back(tensor);
      found_[tensor] = axis;
      return;
    }
    auto it = producers_.find(tensor);
    if (it == producers_.end()) return;
    const onnx::NodeProto& p = *it->second;
    static const std::set<std::string> kAxisKeeping = {"QuantizeLinear", "DequantizeLinear", "Cast",
                                                       "TRT_FP8QuantizeLinear", "TRT_FP8DequantizeLinear"};
    if (kAxisKeeping.count(p.op_type()) && p.input_size() > 0) {
      trace(p.input(0), axis);
    } else if (p.op_type() == "Transpose" && p.input_size() > 0) {
      for (const auto& a : p.attribute()) {
        if (a.name() != "perm") continue;
        const auto at = std::find(a.ints().begin(), a.ints().end(), axis);
        if (at != a.ints().end()) trace(p.input(0), at - a.ints().begin());
      }
    }
    // Anything else (Reshape, Concat, Mul, ...) changes the layout: the search stops there.
  }

  std::vector<SparsityCandidate> candidates() const {
    std::vector<SparsityCandidate> out;
    for (const auto& name : order_) {
      const onnx::TensorProto& t = *initializers_.at(name);
      const int64_t axis = found_.at(name);
      if (!sparsity_dtype(t.data_type()) || axis >= t.dims_size() || t.dims(static_cast<int>(axis)) % 4 != 0) continue;
      out.push_back({name, axis});
    }
    return out;
  }

 private:
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, const onnx::NodeProto*> producers_;
  std::map<std::string, int64_t> found_;
  std::vector<std::string> order_;
};

int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

// Calls fn(first, stride) for every group of four along `axis`: elements first + k*stride.
template <typename Fn>
void for_each_group(const Shape& shape, int64_t axis, Fn&& fn) {
  PARITY_CHECK(axis >= 0 && axis < static_cast<int64_t>(shape.size()) && shape[static_cast<size_t>(axis)] % 4 == 0,
               kInvalidArgument, "2:4 sparsity needs an axis whose length is a multiple of 4; shape ",
               shape_to_string(shape), ", axis ", axis);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t length = shape[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t a = 0; a < length; a += 4) fn(o * length * inner + a * inner + i, inner);
}

}  // namespace

std::vector<SparsityCandidate> sparsity_candidates(const onnx::ModelProto& model) {
  const onnx::GraphProto& g = model.graph();
  CandidateFinder finder(g);
  for (const auto& n : g.node()) {
    if (n.op_type() == "MatMul" && n.input_size() >= 2) {
      finder.trace(n.input(0), 1);
      finder.trace(n.input(1), 0);
    } else if (n.op_type() == "Gemm" && n.input_size() >= 2) {
      finder.trace(n.input(0), int_attribute(n, "transA", 0) ? 0 : 1);
      finder.trace(n.input(1), int_attribute(n, "transB", 0) ? 1 : 0);
    } else if (n.op_type() == "Conv" && n.input_size() >= 2) {
      finder.trace(n.input(1), 1);
    }
  }
  return finder.candidates();
}

bool is_2_4_sparse(const Tensor& tensor, int64_t axis) {
  const Tensor values = tensor.dtype() == DType::kFloat32 ? tensor : tensor.cast(DType::kFloat32);
  const float* v = values.data<float>();
  bool sparse = true;
  for_each_group(values.shape(), axis, [&](int64_t first, int64_t stride) {
    int zeros = 0;
    for (int k = 0; k < 4; ++k) zeros += v[first + k * stride] == 0.0f;
    sparse = sparse && zeros >= 2;
  });
  return sparse;
}

void prune_2_4(Tensor& tensor, int64_t axis) {
  const Tensor values = tensor.dtype() == DType::kFloat32 ? tensor : tensor.cast(DType::kFloat32);
  const float* v = values.data<float>();
  auto* bytes = static_cast<unsigned char*>(tensor.raw_data());
  const size_t width = dtype_size(tensor.dtype());
  for_each_group(values.shape(), axis, [&](int64_t first, int64_t stride) {
    int64_t index[4];
    for (int k = 0; k < 4; ++k) index[k] = first + k * stride;
    // The two smallest magnitudes go (the first of equals first, as Polygraphy picks them).
    std::stable_sort(index, index + 4, [&](int64_t a, int64_t b) { return std::fabs(v[a]) < std::fabs(v[b]); });
    for (int k = 0; k < 2; ++k) std::memset(bytes + static_cast<size_t>(index[k]) * width, 0, width);  // +0.0 in every float type
  });
}

std::set<std::string> sparse_2_4_tensors(const model::Model& model) {
  std::set<std::string> sparse;
  std::map<std::string, int64_t> axes;
  for (const auto& c : sparsity_candidates(model.proto())) axes[c.name] = c.axis;
  for (const auto& t : model.proto().graph().initializer()) {
    auto it = axes.find(t.name());
    if (it == axes.end() || model::is_weightless(t)) continue;
    if (!model::has_external_data(t) && t.raw_data().empty() && t.float_data_size() == 0 && t.int32_data_size() == 0)
      continue;
    if (is_2_4_sparse(tensor_from_proto(t, model.base_dir()), it->second)) sparse.insert(t.name());
  }
  return sparse;
}

std::vector<std::string> prune_model_2_4(model::Model& model, const std::set<std::string>& skip) {
  std::map<std::string, int64_t> axes;
  for (const auto& c : sparsity_candidates(model.proto()))
    if (!skip.count(c.name)) axes[c.name] = c.axis;
  std::vector<std::string> pruned;
  for (auto& t : *model.proto().mutable_graph()->mutable_initializer()) {
    auto it = axes.find(t.name());
    if (it == axes.end()) continue;
    Tensor values = tensor_from_proto(t, model.base_dir()).clone();  // external data is mapped read-only
    prune_2_4(values, it->second);
    const std::string name = t.name();
    const std::string doc = t.doc_string();
    tensor_to_proto(values, &t, name);
    if (!doc.empty()) t.set_doc_string(doc);
    pruned.push_back(name);
  }
  return pruned;
}

}  // namespace parity::model::transforms
