// Small ONNX models built in code for the onnx and CLI tests (header-only).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace parity::testing {

inline void add_tensor_info(onnx::ValueInfoProto* info, const std::string& name, int elem_type,
                            const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d >= 0) shape->add_dim()->set_dim_value(d);
    else shape->add_dim()->set_dim_param("N");
  }
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                                 const std::vector<std::string>& outs, const std::string& name = {}) {
  auto* n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

inline onnx::ModelProto empty_model(int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("parity-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("test_graph");
  return m;
}

/// y = Relu(x + W), W a float initializer of `w` (inline raw data).
inline onnx::ModelProto add_relu_model(const std::vector<float>& w = {1.f, -2.f, 3.f, -4.f}) {
  onnx::ModelProto m = empty_model();
  auto* g = m.mutable_graph();
  const int64_t n = static_cast<int64_t>(w.size());
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {n});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {n});
  auto* init = g->add_initializer();
  init->set_name("W");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(n);
  init->set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  add_node(g, "Add", {"x", "W"}, {"sum"}, "add0");
  add_node(g, "Relu", {"sum"}, {"y"}, "relu0");
  return m;
}

/// Moves initializer `name`'s bytes to `dir/location` as external data.
inline void externalize(onnx::ModelProto& m, const std::string& name, const std::filesystem::path& dir,
                        const std::string& location) {
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != name) continue;
    std::ofstream(dir / location, std::ios::binary) << t.raw_data();
    const size_t length = t.raw_data().size();
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t.add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    kv = t.add_external_data();
    kv->set_key("offset");
    kv->set_value("0");
    kv = t.add_external_data();
    kv->set_key("length");
    kv->set_value(std::to_string(length));
  }
}

inline void write_model(const onnx::ModelProto& m, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
}

/// a -> Relu -> b -> Neg -> c -> Add(c, x) -> a : a cycle through three nodes.
inline onnx::ModelProto cyclic_model() {
  onnx::ModelProto m = empty_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  add_tensor_info(g->add_output(), "c", onnx::TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"a"}, {"b"}, "relu_in_cycle");
  add_node(g, "Neg", {"b"}, {"c"}, "neg_in_cycle");
  add_node(g, "Add", {"c", "x"}, {"a"}, "add_in_cycle");
  return m;
}

}  // namespace parity::testing
