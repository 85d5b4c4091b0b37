#include "runtime/tactics.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "model/proto_convert.h"
#include "runtime/reduced_precision.h"

namespace parity::runtime {

using Json = nlohmann::json;

// --- timing cache ---

TimingCache::TimingCache(const TimingCache& other) {
  std::lock_guard<std::mutex> lock(other.mutex_);
  seconds_ = other.seconds_;
}

TimingCache& TimingCache::operator=(const TimingCache& other) {
  if (this == &other) return *this;
  std::map<std::string, double> copy;
  {
    std::lock_guard<std::mutex> lock(other.mutex_);
    copy = other.seconds_;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  seconds_ = std::move(copy);
  return *this;
}

std::optional<double> TimingCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = seconds_.find(key);
  if (it == seconds_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void TimingCache::put(const std::string& key, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  seconds_[key] = seconds;
}

size_t TimingCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seconds_.size();
}
size_t TimingCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}
size_t TimingCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

std::string TimingCache::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Json j = {{"format", "parity-timing-cache"}, {"version", 1}, {"seconds", Json::object()}};
  for (const auto& [key, s] : seconds_) j["seconds"][key] = s;
  return j.dump(1) + "\n";
}

TimingCache TimingCache::from_json(const std::string& text, const std::string& what) {
  Json j = Json::parse(text, nullptr, false);
  PARITY_CHECK(!j.is_discarded() && j.is_object() && j.value("format", "") == "parity-timing-cache" &&
                   j.value("version", 0) == 1 && j.contains("seconds") && j["seconds"].is_object(),
               kInvalidArgument, what, " is not a parity timing cache (version 1)");
  TimingCache cache;
  for (const auto& [key, s] : j["seconds"].items()) {
    PARITY_CHECK(s.is_number() && s.get<double>() >= 0, kInvalidArgument, what, ": the time of '", key,
                 "' is not a non-negative number");
    cache.seconds_[key] = s.get<double>();
  }
  return cache;
}

// --- keys ---

std::string tactic_node_key(const NodeSpec& spec) {
  if (!spec.name.empty()) return spec.name;
  for (const auto& o : spec.outputs)
    if (!o.empty()) return "output:" + o;
  return spec.op_type;
}

std::string timing_key(const KernelInit& init, const std::string& tactic, const InputShapes& shapes) {
  const NodeSpec& spec = init.spec();
  std::string attrs;
  for (const auto& [name, attr] : spec.attributes) {
    onnx::AttributeProto proto;
    model::attribute_to_proto(attr, &proto);
    attrs += proto.SerializeAsString();
  }
  std::string key = (spec.domain.empty() ? "" : spec.domain + "::") + spec.op_type + "-" + std::to_string(spec.opset);
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(attrs));
  key += " attrs:";
  key += hash;
  key += " in:";
  for (size_t i = 0; i < init.num_inputs(); ++i) {
    if (i) key += ",";
    if (!init.has_input(i)) continue;
    key += dtype_name(init.input_dtype(i));
    const std::optional<Shape> shape = shapes ? shapes(i) : init.input_static_shape(i);
    key += shape ? shape_to_string(*shape) : "?";
    if (init.constant_input(i)) key += "c";
  }
  key += " " + precision_name(compute_precision_of(init)) + " " + tactic;
  return key;
}

// --- timing ---

namespace {

/// A node's run-time view over inputs made up for timing.
class TimingContext : public KernelContext {
 public:
  TimingContext(const std::vector<Value>& inputs, size_t outputs, std::string label)
      : inputs_(inputs), outputs_(outputs), label_(std::move(label)) {}
  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t i) const override { return i < inputs_.size() && !inputs_[i].is_empty(); }
  const Value& input_value(size_t i) const override {
    if (!has_input(i)) fail("input ", i, " is missing");
    return inputs_[i];
  }
  bool has_output(size_t i) const override { return i < outputs_.size(); }
  void set_output(size_t i, Value v) override { outputs_.at(i) = std::move(v); }
  Value& output_value(size_t i) override { return outputs_.at(i); }
  std::vector<Value> run_subgraph(const Subgraph&, std::vector<Value>) override { fail("no subgraphs while timing"); }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override {
    if (n > 0) fn(0, n);
  }
  int num_threads() const override { return 1; }
  Precision precision() const override { return Precision::kFloat32; }
  uint64_t next_random_seed() override { return 0; }
  std::string node_label() const override { return label_; }

 private:
  const std::vector<Value>& inputs_;
  std::vector<Value> outputs_;
  std::string label_;
};

}  // namespace

std::optional<double> time_kernel(const Kernel& kernel, const KernelInit& init, const InputShapes& shapes) {
  std::vector<Value> inputs(init.num_inputs());
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!init.has_input(i)) continue;
    if (std::optional<Tensor> c = init.constant_input(i)) {
      inputs[i] = Value(*c);
      continue;
    }
    const std::optional<Shape> shape = shapes ? shapes(i) : init.input_static_shape(i);
    // Only float data can be made up: indices, shapes and masks need real values.
    if (!shape || init.input_dtype(i) != DType::kFloat32) return std::nullopt;
    Tensor t(DType::kFloat32, *shape);
    for (float& v : t.values<float>()) v = dist(gen);
    inputs[i] = Value(std::move(t));
  }
  using Clock = std::chrono::steady_clock;
  try {
    TimingContext warm_up(inputs, init.num_outputs(), init.node_label());
    kernel.compute(warm_up);
    double best = 1e30;
    const auto deadline = Clock::now() + std::chrono::milliseconds(20);
    for (int run = 0; run < 5 && (run < 2 || Clock::now() < deadline); ++run) {
      TimingContext ctx(inputs, init.num_outputs(), init.node_label());
      const auto start = Clock::now();
      kernel.compute(ctx);
      best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// --- tactics files ---

std::string tactics_to_json(const std::map<std::string, std::string>& tactics) {
  Json j = {{"format", "parity-tactics"}, {"version", 1}, {"tactics", Json::object()}};
  for (const auto& [node, tactic] : tactics) j["tactics"][node] = tactic;
  return j.dump(1) + "\n";
}

std::map<std::string, std::string> tactics_from_json(const std::string& text, const std::string& what) {
  Json j = Json::parse(text, nullptr, false);
  PARITY_CHECK(!j.is_discarded() && j.is_object() && j.value("format", "") == "parity-tactics" &&
                   j.contains("tactics") && j["tactics"].is_object(),
               kInvalidArgument, what, " is not a parity tactics file (format parity-tactics)");
  std::map<std::string, std::string> tactics;
  for (const auto& [node, tactic] : j["tactics"].items()) {
    PARITY_CHECK(tactic.is_string(), kInvalidArgument, what, ": the tactic of node '", node, "' is not a string");
    tactics[node] = tactic.get<std::string>();
  }
  return tactics;
}

}  // namespace parity::runtime
