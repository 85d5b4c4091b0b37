#include "runtime/ops/op_tester.h"

#include <cmath>
#include <memory>
#include <random>

#include "core/low_precision.h"

namespace parity::testing {

namespace {
using runtime::KernelContext;
using runtime::KernelInit;
using runtime::Value;

class TesterInit : public KernelInit {
 public:
  TesterInit(const runtime::NodeSpec& spec, runtime::Precision precision,
             const std::vector<std::optional<Tensor>>& constants,
             const std::vector<std::optional<runtime::Value>>& inputs)
      : KernelInit(spec, precision), constants_(constants), inputs_(inputs) {}
  std::optional<Tensor> constant_input(size_t i) const override {
    if (i < constants_.size() && constants_[i]) return constants_[i];
    return std::nullopt;
  }
  // Like a model with full shape information: the planner knows every input's type.
  DType input_dtype(size_t i) const override {
    const Tensor* t = input_tensor(i);
    return t ? t->dtype() : DType::kUndefined;
  }
  std::optional<Shape> input_static_shape(size_t i) const override {
    const Tensor* t = input_tensor(i);
    return t ? std::optional<Shape>(t->shape()) : std::nullopt;
  }

 private:
  const Tensor* input_tensor(size_t i) const {
    if (i >= inputs_.size() || !inputs_[i] || !inputs_[i]->is_tensor()) return nullptr;
    return &inputs_[i]->tensor();
  }
  const std::vector<std::optional<Tensor>>& constants_;
  const std::vector<std::optional<runtime::Value>>& inputs_;
};

class TesterContext : public KernelContext {
 public:
  TesterContext(const runtime::NodeSpec& spec, std::vector<Value> inputs, runtime::Precision precision)
      : spec_(spec), inputs_(std::move(inputs)), outputs_(spec.outputs.size()), precision_(precision) {}
  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t i) const override { return i < inputs_.size() && !inputs_[i].is_empty(); }
  const Value& input_value(size_t i) const override {
    if (!has_input(i)) fail("input ", i, " is missing");
    return inputs_[i];
  }
  bool has_output(size_t i) const override { return i < spec_.outputs.size() && !spec_.outputs[i].empty(); }
  void set_output(size_t i, Value value) override {
    PARITY_ASSERT(i < outputs_.size(), "output index ", i, " out of range");
    outputs_[i] = std::move(value);
  }
  Value& output_value(size_t i) override {
    PARITY_ASSERT(i < outputs_.size(), "output index ", i, " out of range");
    return outputs_[i];
  }
  std::vector<Value> run_subgraph(const runtime::Subgraph&, std::vector<Value>) override {
    fail("subgraphs are not supported by OpTester");
  }
  // Uneven chunks so kernels that mis-handle chunk boundaries fail in unit tests.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override {
    int64_t begin = 0;
    int64_t chunk = 1;
    while (begin < n) {
      const int64_t end = std::min(n, begin + chunk);
      fn(begin, end);
      begin = end;
      chunk *= 3;
    }
  }
  int num_threads() const override { return 3; }
  runtime::Precision precision() const override { return precision_; }
  uint64_t next_random_seed() override { return seed_++; }
  std::string node_label() const override { return spec_.op_type + " node '" + spec_.name + "'"; }
  std::vector<Value>& outputs() { return outputs_; }

 private:
  const runtime::NodeSpec& spec_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  runtime::Precision precision_;
  uint64_t seed_ = 42;
};

model::Attribute make_attr(const std::string& name, model::AttrType type) {
  model::Attribute a;
  a.name = name;
  a.type = type;
  return a;
}
}  // namespace

OpTester::OpTester(std::string op_type, int opset, std::string domain) {
  spec_.name = "test_node";
  spec_.op_type = std::move(op_type);
  spec_.domain = std::move(domain);
  spec_.opset = opset;
}

OpTester& OpTester::attr(const std::string& name, int64_t value) {
  auto a = make_attr(name, model::AttrType::kInt);
  a.i = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, float value) {
  auto a = make_attr(name, model::AttrType::kFloat);
  a.f = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const std::string& value) {
  auto a = make_attr(name, model::AttrType::kString);
  a.s = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr(const std::string& name, const Tensor& value) {
  auto a = make_attr(name, model::AttrType::kTensor);
  a.t = value;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr_ints(const std::string& name, const std::vector<int64_t>& values) {
  auto a = make_attr(name, model::AttrType::kInts);
  a.ints = values;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr_floats(const std::string& name, const std::vector<float>& values) {
  auto a = make_attr(name, model::AttrType::kFloats);
  a.floats = values;
  spec_.attributes[name] = a;
  return *this;
}
OpTester& OpTester::attr_strings(const std::string& name, const std::vector<std::string>& values) {
  auto a = make_attr(name, model::AttrType::kStrings);
  a.strings = values;
  spec_.attributes[name] = a;
  return *this;
}

OpTester& OpTester::attribute(const model::Attribute& a) {
  spec_.attributes[a.name] = a;
  return *this;
}

OpTester& OpTester::input(const Tensor& value) {
  spec_.inputs.push_back("in" + std::to_string(spec_.inputs.size()));
  inputs_.push_back(Value(value));
  constants_.push_back(std::nullopt);
  return *this;
}
OpTester& OpTester::constant_input(const Tensor& value) {
  input(value);
  constants_.back() = value;
  return *this;
}
OpTester& OpTester::missing_input() {
  spec_.inputs.push_back("");
  inputs_.push_back(std::nullopt);
  constants_.push_back(std::nullopt);
  return *this;
}
OpTester& OpTester::output(const Tensor& expected) {
  spec_.outputs.push_back("out" + std::to_string(spec_.outputs.size()));
  Expected e;
  e.present = true;
  e.tensor = expected;
  e.dtype = expected.dtype();
  e.shape = expected.shape();
  expected_.push_back(e);
  return *this;
}
OpTester& OpTester::output_shape_only(DType dtype, const Shape& shape) {
  spec_.outputs.push_back("out" + std::to_string(spec_.outputs.size()));
  Expected e;
  e.present = true;
  e.shape_only = true;
  e.dtype = dtype;
  e.shape = shape;
  expected_.push_back(e);
  return *this;
}
OpTester& OpTester::missing_output() {
  spec_.outputs.push_back("");
  expected_.push_back(Expected{});
  return *this;
}
OpTester& OpTester::tolerance(double atol, double rtol) {
  atol_ = atol;
  rtol_ = rtol;
  return *this;
}
OpTester& OpTester::precision(runtime::Precision precision) {
  precision_ = precision;
  return *this;
}
OpTester& OpTester::kernels(runtime::KernelTier tier) {
  tier_ = tier;
  return *this;
}

std::vector<Tensor> OpTester::run_outputs(runtime::KernelTier tier, bool* used_optimized) {
  const auto& registry = runtime::KernelRegistry::instance();
  const auto* def = registry.resolve(spec_.domain, spec_.op_type, spec_.opset);
  if (!def) fail(ErrorCode::kUnsupported, "no kernel for ", spec_.op_type, " at opset ", spec_.opset);
  spec_.since_version = def->since_version;
  TesterInit init(spec_, precision_, constants_, inputs_);
  std::unique_ptr<runtime::Kernel> kernel;
  if (tier == runtime::KernelTier::kOptimized && precision_ == runtime::Precision::kFloat32)
    if (const auto* optimized = registry.resolve_optimized(*def, spec_.opset)) kernel = optimized->create(init);
  if (used_optimized) *used_optimized = kernel != nullptr;
  if (!kernel) kernel = def->create(init);
  std::vector<Value> inputs;
  for (const auto& in : inputs_) inputs.push_back(in ? *in : Value());
  TesterContext ctx(spec_, std::move(inputs), precision_);
  kernel->compute(ctx);
  std::vector<Tensor> out;
  for (size_t i = 0; i < spec_.outputs.size(); ++i) {
    const Value& v = ctx.outputs()[i];
    out.push_back(v.is_tensor() ? v.tensor() : Tensor());
  }
  return out;
}

void OpTester::run() {
  std::vector<Tensor> outputs;
  try {
    outputs = run_outputs(tier_);
  } catch (const Error& e) {
    ADD_FAILURE() << spec_.op_type << " failed: [" << error_code_name(e.code()) << "] " << e.what();
    return;
  }
  for (size_t i = 0; i < expected_.size(); ++i) {
    const Expected& e = expected_[i];
    if (!e.present) continue;
    const Tensor& actual = outputs[i];
    if (!actual.defined()) {
      ADD_FAILURE() << "output " << i << " was not produced";
      continue;
    }
    if (e.shape_only) {
      EXPECT_EQ(actual.dtype(), e.dtype) << "output " << i;
      EXPECT_EQ(actual.shape(), e.shape) << "output " << i;
      continue;
    }
    EXPECT_TRUE(tensors_close(actual, e.tensor, atol_, rtol_)) << "output " << i << " of " << spec_.op_type;
  }
}

void OpTester::compare_tiers(bool expect_optimized) {
  std::vector<Tensor> reference, optimized;
  bool used_optimized = false;
  try {
    reference = run_outputs(runtime::KernelTier::kReference);
    optimized = run_outputs(runtime::KernelTier::kOptimized, &used_optimized);
  } catch (const Error& e) {
    ADD_FAILURE() << spec_.op_type << " failed: [" << error_code_name(e.code()) << "] " << e.what();
    return;
  }
  if (expect_optimized && !used_optimized) {
    ADD_FAILURE() << "no optimized kernel accepted this " << spec_.op_type << " node";
    return;
  }
  for (size_t i = 0; i < reference.size(); ++i) {
    if (!reference[i].defined()) continue;
    EXPECT_TRUE(tensors_close(optimized[i], reference[i], atol_, rtol_))
        << "output " << i << " of " << spec_.op_type << ": optimized vs reference kernel";
  }
}

std::string OpTester::run_expect_error(ErrorCode code) {
  try {
    run_outputs(tier_);
  } catch (const Error& e) {
    EXPECT_EQ(error_code_name(e.code()), std::string(error_code_name(code))) << e.what();
    return e.what();
  }
  ADD_FAILURE() << spec_.op_type << " succeeded but an error was expected";
  return "";
}

Tensor random_uniform(const Shape& shape, uint32_t seed, float lo, float hi) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

OpTester one_output_node(const std::string& op_type, int opset, const std::string& domain) {
  OpTester t(op_type, opset, domain);
  t.output_shape_only(DType::kUndefined, {});
  return t;
}

::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " != expected "
                                         << dtype_name(expected.dtype());
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(actual.shape()) << " != expected "
                                         << shape_to_string(expected.shape());
  if (actual.dtype() == DType::kString) {
    for (int64_t i = 0; i < actual.numel(); ++i)
      if (actual.data<std::string>()[i] != expected.data<std::string>()[i])
        return ::testing::AssertionFailure() << "string element " << i << " differs";
    return ::testing::AssertionSuccess();
  }
  if (is_low_precision(actual.dtype())) {
    // float8/float4/int4/int2 results are exact conversions: compare the bit patterns, so that
    // the right NaN and signed-zero encodings are checked too.
    const auto* a = static_cast<const uint8_t*>(actual.raw_data());
    const auto* e = static_cast<const uint8_t*>(expected.raw_data());
    for (int64_t i = 0; i < actual.numel(); ++i)
      if (a[i] != e[i])
        return ::testing::AssertionFailure() << "element " << i << ": got bits 0x" << std::hex << int{a[i]}
                                             << ", expected 0x" << int{e[i]} << std::dec;
    return ::testing::AssertionSuccess();
  }
  const bool floating = is_floating(actual.dtype());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.value_as_double(i);
    const double e = expected.value_as_double(i);
    bool ok;
    if (!floating) {
      ok = a == e;
      // value_as_double loses precision for big 64-bit integers: compare bytes then.
      if (ok && (actual.dtype() == DType::kInt64 || actual.dtype() == DType::kUInt64))
        ok = static_cast<const uint64_t*>(actual.raw_data())[i] == static_cast<const uint64_t*>(expected.raw_data())[i];
    } else if (std::isnan(e)) {
      ok = std::isnan(a);
    } else if (std::isinf(e)) {
      ok = a == e;
    } else {
      ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    }
    if (!ok)
      return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", expected " << e;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace parity::testing
