#include "runtime/ops/nn_harness.h"

#include <cmath>
#include <map>
#include <random>

#include "runtime/ops/op_tester.h"

namespace parity::testing::nn {

namespace fs = std::filesystem;
using runtime::Precision;
using runtime::Value;

namespace {

model::Attribute make_attr(const std::string& name, model::AttrType type) {
  model::Attribute a;
  a.name = name;
  a.type = type;
  return a;
}

}  // namespace

NodeBuilder::NodeBuilder(std::string op_type, int opset) {
  spec_.name = "test_node";
  spec_.op_type = std::move(op_type);
  spec_.opset = opset;
  spec_.outputs = {"y0"};
}
NodeBuilder& NodeBuilder::i(const std::string& n, int64_t v) {
  model::Attribute a = make_attr(n, model::AttrType::kInt);
  a.i = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::f(const std::string& n, float v) {
  model::Attribute a = make_attr(n, model::AttrType::kFloat);
  a.f = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::s(const std::string& n, const std::string& v) {
  model::Attribute a = make_attr(n, model::AttrType::kString);
  a.s = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::ints(const std::string& n, std::vector<int64_t> v) {
  model::Attribute a = make_attr(n, model::AttrType::kInts);
  a.ints = std::move(v);
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::floats(const std::string& n, std::vector<float> v) {
  model::Attribute a = make_attr(n, model::AttrType::kFloats);
  a.floats = std::move(v);
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::strings(const std::string& n, std::vector<std::string> v) {
  model::Attribute a = make_attr(n, model::AttrType::kStrings);
  a.strings = std::move(v);
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::outputs(size_t n) {
  spec_.outputs.clear();
  for (size_t k = 0; k < n; ++k) spec_.outputs.push_back("y" + std::to_string(k));
  return *this;
}
NodeBuilder& NodeBuilder::omit_output(size_t index) {
  spec_.outputs.at(index).clear();
  return *this;
}

std::vector<Tensor> NodeBuilder::run(const std::vector<Tensor>& inputs, Precision precision) const {
  OpTester tester(spec_.op_type, spec_.opset, spec_.domain);
  tester.precision(precision);
  for (const auto& [name, a] : spec_.attributes) tester.attribute(a);
  for (const Tensor& t : inputs) {
    if (t.defined()) tester.input(t);
    else tester.missing_input();
  }
  for (const auto& name : spec_.outputs) {
    if (name.empty()) tester.missing_output();
    else tester.output_shape_only(DType::kUndefined, {});  // run_outputs does not check
  }
  return tester.run_outputs();
}

Tensor ft(const Shape& shape, std::vector<float> values) { return Tensor::from_vector<float>(shape, values); }

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return ft(shape, v);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  PARITY_CHECK(a.shape() == b.shape(), kInvalidArgument, "shape mismatch ", shape_to_string(a.shape()), " vs ",
               shape_to_string(b.shape()));
  double m = 0;
  for (int64_t k = 0; k < a.numel(); ++k) m = std::max(m, std::abs(a.value_as_double(k) - b.value_as_double(k)));
  return m;
}

}  // namespace parity::testing::nn
