#include "runtime/ops/nn_harness.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "onnx/proto_convert.h"

namespace parity::testing::nn {

namespace fs = std::filesystem;
using runtime::Precision;
using runtime::Value;

namespace {

class FakeContext : public runtime::KernelContext {
 public:
  FakeContext(const runtime::NodeSpec& spec, std::vector<Value> inputs, Precision precision, int threads)
      : spec_(spec), inputs_(std::move(inputs)), outputs_(spec.outputs.size()), precision_(precision),
        threads_(threads) {}

  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t i) const override {
    return i < inputs_.size() && i < spec_.inputs.size() && !spec_.inputs[i].empty() && !inputs_[i].is_empty();
  }
  const Value& input_value(size_t i) const override { return inputs_.at(i); }
  bool has_output(size_t i) const override { return i < spec_.outputs.size() && !spec_.outputs[i].empty(); }
  void set_output(size_t i, Value value) override { outputs_.at(i) = std::move(value); }
  Value& output_value(size_t i) override { return outputs_.at(i); }
  std::vector<Value> run_subgraph(const runtime::Subgraph&, std::vector<Value>) override {
    fail("subgraphs are not supported by the test context");
  }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override {
    if (n <= 0) return;
    if (threads_ <= 1 || n == 1) {
      fn(0, n);
      return;
    }
    const int64_t chunks = std::min<int64_t>(threads_, n);
    std::vector<std::thread> pool;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
      pool.emplace_back([&fn, b, e] { fn(b, e); });
    }
    for (auto& t : pool) t.join();
  }
  int num_threads() const override { return threads_; }
  Precision precision() const override { return precision_; }
  uint64_t next_random_seed() override { return ++seed_; }
  std::string node_label() const override { return spec_.op_type + " node '" + spec_.name + "'"; }

  std::vector<Value>& outputs() { return outputs_; }

 private:
  const runtime::NodeSpec& spec_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  Precision precision_;
  int threads_;
  uint64_t seed_ = 1234;
};

std::vector<Tensor> run_spec(const runtime::NodeSpec& spec_in, const std::vector<Tensor>& inputs,
                             Precision precision, int threads) {
  runtime::NodeSpec spec = spec_in;
  const runtime::KernelDef* def = runtime::KernelRegistry::instance().resolve(spec.domain, spec.op_type, spec.opset);
  PARITY_CHECK(def != nullptr, kUnsupported, "no kernel for ", spec.op_type, " opset ", spec.opset);
  spec.since_version = def->since_version;
  std::vector<Value> values;
  for (const Tensor& t : inputs) values.push_back(t.defined() ? Value(t) : Value());
  runtime::KernelInit init(spec, precision);
  auto kernel = def->create(init);
  FakeContext ctx(spec, std::move(values), precision, threads);
  kernel->compute(ctx);
  std::vector<Tensor> out;
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    Value& v = ctx.outputs()[i];
    out.push_back(v.is_tensor() ? v.tensor() : Tensor());
  }
  return out;
}

Attribute make_attr(const std::string& name, AttrType type) {
  Attribute a;
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
  Attribute a = make_attr(n, AttrType::kInt);
  a.i = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::f(const std::string& n, float v) {
  Attribute a = make_attr(n, AttrType::kFloat);
  a.f = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::s(const std::string& n, const std::string& v) {
  Attribute a = make_attr(n, AttrType::kString);
  a.s = v;
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::ints(const std::string& n, std::vector<int64_t> v) {
  Attribute a = make_attr(n, AttrType::kInts);
  a.ints = std::move(v);
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::floats(const std::string& n, std::vector<float> v) {
  Attribute a = make_attr(n, AttrType::kFloats);
  a.floats = std::move(v);
  spec_.attributes[n] = a;
  return *this;
}
NodeBuilder& NodeBuilder::strings(const std::string& n, std::vector<std::string> v) {
  Attribute a = make_attr(n, AttrType::kStrings);
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

std::vector<Tensor> NodeBuilder::run(const std::vector<Tensor>& inputs, Precision precision, int threads) const {
  runtime::NodeSpec spec = spec_;
  spec.inputs.clear();
  for (size_t k = 0; k < inputs.size(); ++k) spec.inputs.push_back(inputs[k].defined() ? "x" + std::to_string(k) : "");
  return run_spec(spec, inputs, precision, threads);
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

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (!actual.defined()) return "output missing";
  if (actual.shape() != expected.shape())
    return str_cat("shape ", shape_to_string(actual.shape()), " != expected ", shape_to_string(expected.shape()));
  if (actual.dtype() != expected.dtype())
    return str_cat("dtype ", dtype_name(actual.dtype()), " != expected ", dtype_name(expected.dtype()));
  const bool exact = !is_floating(expected.dtype());
  for (int64_t k = 0; k < actual.numel(); ++k) {
    const double a = actual.value_as_double(k), e = expected.value_as_double(k);
    if (std::isnan(e) && std::isnan(a)) continue;
    const bool ok = exact ? a == e : std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!ok) return str_cat("element ", k, ": got ", a, ", expected ", e);
  }
  return "";
}

std::string run_backend_case(const fs::path& dir, Precision precision, double rtol, double atol) {
  onnx::ModelProto model;
  {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) return "cannot read model.onnx";
  }
  const onnx::GraphProto& graph = model.graph();
  if (graph.node_size() != 1) return "skip: not a single-node model";
  const onnx::NodeProto& node = graph.node(0);
  runtime::NodeSpec spec;
  spec.name = node.name();
  spec.op_type = node.op_type();
  spec.domain = node.domain() == "ai.onnx" ? "" : node.domain();
  for (const auto& op : model.opset_import())
    if ((op.domain().empty() || op.domain() == "ai.onnx") == spec.domain.empty() &&
        (spec.domain.empty() || op.domain() == spec.domain))
      spec.opset = static_cast<int>(op.version());
  for (const auto& in : node.input()) spec.inputs.push_back(in);
  for (const auto& out : node.output()) spec.outputs.push_back(out);
  for (const auto& a : node.attribute()) spec.attributes[a.name()] = onnx_io::attribute_from_proto(a, dir);

  std::map<std::string, Tensor> initializers;
  for (const auto& init : graph.initializer()) initializers[init.name()] = onnx_io::tensor_from_proto(init, dir);
  std::vector<std::string> graph_inputs;
  for (const auto& vi : graph.input())
    if (!initializers.count(vi.name())) graph_inputs.push_back(vi.name());

  int sets = 0;
  for (int s = 0;; ++s) {
    const fs::path set_dir = dir / ("test_data_set_" + std::to_string(s));
    if (!fs::exists(set_dir)) break;
    ++sets;
    std::map<std::string, Tensor> feeds = initializers;
    for (size_t k = 0; k < graph_inputs.size(); ++k) {
      const fs::path f = set_dir / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(f)) return str_cat("missing ", f.string());
      Tensor t = onnx_io::tensor_from_pb_file(f);
      if (precision == Precision::kFloat64 && is_floating(t.dtype())) t = t.cast(DType::kFloat64);
      feeds[graph_inputs[k]] = t;
    }
    std::vector<Tensor> inputs;
    for (const auto& name : spec.inputs) inputs.push_back(name.empty() ? Tensor() : feeds[name]);
    std::vector<Tensor> outputs;
    try {
      outputs = run_spec(spec, inputs, precision, 2);
    } catch (const Error& e) {
      return str_cat("error: ", e.what());
    }
    for (int k = 0; k < graph.output_size(); ++k) {
      const fs::path f = set_dir / ("output_" + std::to_string(k) + ".pb");
      const Tensor expected = onnx_io::tensor_from_pb_file(f);
      const std::string& name = graph.output(k).name();
      size_t idx = 0;
      while (idx < spec.outputs.size() && spec.outputs[idx] != name) ++idx;
      if (idx == spec.outputs.size()) return "graph output is not a node output";
      Tensor actual = outputs[idx];
      if (precision == Precision::kFloat64 && actual.defined() && actual.dtype() == DType::kFloat64 &&
          expected.dtype() != DType::kFloat64)
        actual = actual.cast(expected.dtype());
      const std::string msg = compare_tensors(actual, expected, rtol, atol);
      if (!msg.empty()) return str_cat("set ", s, " output ", k, " (", name, "): ", msg);
    }
  }
  if (sets == 0) return "no test data sets";
  return "";
}

}  // namespace parity::testing::nn
