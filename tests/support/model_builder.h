// Builds small ONNX models in memory for tests (executor, inference and limits tests).
#pragma once

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/proto_convert.h"

namespace parity::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  /// Adds a tensor input; dims < 0 are dynamic.
  ModelBuilder& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    set_tensor_type(graph().add_input(), name, dtype, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    set_tensor_type(graph().add_output(), name, dtype, dims);
    return *this;
  }
  /// An output with neither type nor shape, for tests of what inference fills in.
  ModelBuilder& untyped_output(const std::string& name) {
    graph().add_output()->set_name(name);
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const Tensor& t) {
    model::tensor_to_proto(t, graph().add_initializer(), name);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, const std::string& name = {}) {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  const onnx::ModelProto& model() const { return model_; }

  static void set_tensor_type(onnx::ValueInfoProto* v, const std::string& name, DType dtype,
                              const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(dtype));
    auto* shape = tt->mutable_shape();
    for (auto d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else dim->set_dim_param("N");
    }
  }

 private:
  onnx::ModelProto model_;
};

inline void add_int_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void add_float_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void add_string_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void add_ints_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void add_graph_attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

/// Float32 values uniform in [-1, 1) from a fixed seed (weights and feeds for tests).
inline Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return t;
}

}  // namespace parity::testing
