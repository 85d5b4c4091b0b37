#include "runtime/ops/tensor_op_tester.h"

#include <cmath>

namespace parity::runtime::testing {
namespace {

class TestInit final : public KernelInit {
 public:
  TestInit(const NodeSpec& spec, Precision precision, const std::vector<std::optional<Tensor>>& inputs,
           const std::vector<bool>& constant)
      : KernelInit(spec, precision), inputs_(inputs), constant_(constant) {}
  std::optional<Tensor> constant_input(size_t i) const override {
    if (i < inputs_.size() && constant_[i] && inputs_[i]) return *inputs_[i];
    return std::nullopt;
  }

 private:
  const std::vector<std::optional<Tensor>>& inputs_;
  const std::vector<bool>& constant_;
};

class TestContext final : public KernelContext {
 public:
  TestContext(const NodeSpec& spec, Precision precision, std::vector<Value> inputs)
      : spec_(spec), precision_(precision), inputs_(std::move(inputs)), outputs_(spec.outputs.size()) {}

  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t i) const override { return i < inputs_.size() && !inputs_[i].is_empty(); }
  const Value& input_value(size_t i) const override {
    PARITY_ASSERT(has_input(i));
    return inputs_[i];
  }
  bool has_output(size_t i) const override { return i < spec_.outputs.size() && !spec_.outputs[i].empty(); }
  void set_output(size_t i, Value value) override {
    PARITY_ASSERT(i < outputs_.size(), "output ", i, " out of range");
    outputs_[i] = std::move(value);
  }
  Value& output_value(size_t i) override {
    PARITY_ASSERT(i < outputs_.size());
    return outputs_[i];
  }
  std::vector<Value> run_subgraph(const Subgraph&, std::vector<Value>) override {
    fail("subgraphs are not supported in op tests");
  }
  // Uneven chunks so kernels that split work are exercised with several ranges.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override {
    const int64_t chunk = std::max<int64_t>(1, n / 3);
    for (int64_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk));
  }
  int num_threads() const override { return 1; }
  Precision precision() const override { return precision_; }
  uint64_t next_random_seed() override { return ++seed_; }
  std::string node_label() const override { return spec_.op_type + " node '" + spec_.name + "'"; }

  std::vector<Value>& outputs() { return outputs_; }

 private:
  const NodeSpec& spec_;
  Precision precision_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  uint64_t seed_ = 0;
};

Attribute named(const std::string& name, AttrType type) {
  Attribute a;
  a.name = name;
  a.type = type;
  return a;
}

}  // namespace

Tensor iota_f32(const Shape& shape) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

::testing::AssertionResult tensors_match(const Tensor& expected, const Tensor& actual, double atol, double rtol) {
  if (expected.dtype() != actual.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << ", expected "
                                         << dtype_name(expected.dtype());
  if (expected.shape() != actual.shape())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(actual.shape()) << ", expected "
                                         << shape_to_string(expected.shape());
  if (is_floating(expected.dtype())) {
    for (int64_t i = 0; i < expected.numel(); ++i) {
      const double e = expected.value_as_double(i);
      const double a = actual.value_as_double(i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (e == a) continue;
      if (!(std::abs(a - e) <= atol + rtol * std::abs(e)))
        return ::testing::AssertionFailure() << "element " << i << " is " << a << ", expected " << e;
    }
    return ::testing::AssertionSuccess();
  }
  if (expected.dtype() == DType::kString) {
    for (int64_t i = 0; i < expected.numel(); ++i)
      if (expected.data<std::string>()[i] != actual.data<std::string>()[i])
        return ::testing::AssertionFailure() << "element " << i << " is '" << actual.data<std::string>()[i]
                                             << "', expected '" << expected.data<std::string>()[i] << "'";
    return ::testing::AssertionSuccess();
  }
  if (!expected.bit_equal(actual)) {
    for (int64_t i = 0; i < expected.numel(); ++i)
      if (!is_complex(expected.dtype()) && expected.value_as_double(i) != actual.value_as_double(i))
        return ::testing::AssertionFailure() << "element " << i << " is " << actual.value_as_double(i)
                                             << ", expected " << expected.value_as_double(i);
    return ::testing::AssertionFailure() << "values differ";
  }
  return ::testing::AssertionSuccess();
}

OpTester::OpTester(std::string op_type, int opset, std::string domain) {
  spec_.name = "node0";
  spec_.op_type = std::move(op_type);
  spec_.domain = std::move(domain);
  spec_.opset = opset;
}

OpTester& OpTester::attr(const std::string& name, int64_t value) {
  Attribute a = named(name, AttrType::kInt);
  a.i = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, float value) {
  Attribute a = named(name, AttrType::kFloat);
  a.f = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const std::string& value) {
  Attribute a = named(name, AttrType::kString);
  a.s = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const std::vector<int64_t>& values) {
  Attribute a = named(name, AttrType::kInts);
  a.ints = values;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const std::vector<float>& values) {
  Attribute a = named(name, AttrType::kFloats);
  a.floats = values;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const std::vector<std::string>& values) {
  Attribute a = named(name, AttrType::kStrings);
  a.strings = values;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const Tensor& value) {
  Attribute a = named(name, AttrType::kTensor);
  a.t = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const Attribute& attribute) {
  spec_.attributes[attribute.name] = attribute;
  return *this;
}

OpTester& OpTester::input(Tensor value, bool constant) {
  spec_.inputs.push_back("in" + std::to_string(spec_.inputs.size()));
  inputs_.push_back(std::move(value));
  constant_.push_back(constant);
  return *this;
}
OpTester& OpTester::missing_input() {
  spec_.inputs.push_back("");
  inputs_.push_back(std::nullopt);
  constant_.push_back(false);
  return *this;
}
OpTester& OpTester::output(Tensor expected) {
  spec_.outputs.push_back("out" + std::to_string(spec_.outputs.size()));
  expected_.push_back(std::move(expected));
  output_checked_.push_back(true);
  return *this;
}
OpTester& OpTester::any_output() {
  spec_.outputs.push_back("out" + std::to_string(spec_.outputs.size()));
  expected_.push_back(std::nullopt);
  output_checked_.push_back(false);
  return *this;
}
OpTester& OpTester::missing_output() {
  spec_.outputs.push_back("");
  expected_.push_back(std::nullopt);
  output_checked_.push_back(false);
  return *this;
}
OpTester& OpTester::tolerance(double atol, double rtol) {
  atol_ = atol;
  rtol_ = rtol;
  return *this;
}
OpTester& OpTester::precision(Precision p) {
  precision_ = p;
  return *this;
}

std::vector<Tensor> OpTester::execute() {
  const KernelDef* def = KernelRegistry::instance().resolve(spec_.domain, spec_.op_type, spec_.opset);
  PARITY_CHECK(def, kUnsupported, "no kernel for ", spec_.op_type, " at opset ", spec_.opset);
  spec_.since_version = def->since_version;
  TestInit init(spec_, precision_, inputs_, constant_);
  std::unique_ptr<Kernel> kernel = def->create(init);
  std::vector<Value> values;
  for (const auto& in : inputs_) values.push_back(in ? Value(*in) : Value());
  TestContext ctx(spec_, precision_, std::move(values));
  kernel->compute(ctx);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < spec_.outputs.size(); ++i) {
    Value& v = ctx.outputs()[i];
    if (spec_.outputs[i].empty()) {
      outputs.emplace_back();
      continue;
    }
    PARITY_CHECK(v.is_tensor(), kInternal, "output ", i, " was not produced");
    outputs.push_back(v.tensor());
  }
  return outputs;
}

std::vector<Tensor> OpTester::run() {
  std::vector<Tensor> outputs;
  try {
    outputs = execute();
  } catch (const Error& e) {
    ADD_FAILURE() << spec_.op_type << " failed: " << e.what();
    return {};
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (output_checked_[i]) EXPECT_TRUE(tensors_match(*expected_[i], outputs[i], atol_, rtol_)) << "output " << i;
  return outputs;
}

void OpTester::expect_error(ErrorCode code, const std::string& part) {
  if (spec_.outputs.empty()) any_output();
  try {
    execute();
    ADD_FAILURE() << spec_.op_type << " succeeded, expected an error containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), std::string(error_code_name(code))) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node0"), std::string::npos) << e.what();
  }
}

}  // namespace parity::runtime::testing
