#include "tools/debug_precision.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <onnx/onnx_pb.h>

#include "runtime/subgraph.h"

namespace parity::tools {

bool outputs_pass(const TensorMap& got, const TensorMap& want, double atol, double rtol) {
  for (const auto& name : want.names()) {
    const Tensor& w = want.at(name);
    const Tensor& g = got.at(name);
    if (w.shape() != g.shape()) return false;
    if (w.dtype() != DType::kFloat32) continue;
    const float* a = g.data<float>();
    const float* b = w.data<float>();
    for (int64_t i = 0; i < w.numel(); ++i) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return false;
      if (std::isnan(b[i])) continue;
      if (std::isinf(a[i]) || std::isinf(b[i])) {
        if (a[i] != b[i]) return false;
        continue;
      }
      if (std::fabs(double(a[i]) - b[i]) > atol + rtol * std::fabs(double(b[i]))) return false;
    }
  }
  return true;
}

namespace {

/// Builds and checks plans for one search.
class PrecisionChecker {
 public:
  PrecisionChecker(const onnx::ModelProto& model, const std::string& base_dir, const std::vector<TensorMap>& feeds,
                   const PrecisionSearch& search, const std::function<void(const std::string&)>& log)
      : model_(model), base_dir_(base_dir), feeds_(feeds), search_(search), log_(log) {
    if (search.judge) return;  // the external check needs no reference outputs
    runtime::Session fp32 = runtime::Session::create(model, {}, base_dir).value();
    for (const auto& feed : feeds) want_.push_back(fp32.run(feed));
  }

  bool passes(const std::set<std::string>& fp32_layers) {
    const auto started = std::chrono::steady_clock::now();
    runtime::SessionOptions options;
    options.reduced_precision.fp16 = search_.reduced == DType::kFloat16;
    options.reduced_precision.bf16 = search_.reduced == DType::kBFloat16;
    options.reduced_precision.constraints = runtime::PrecisionConstraints::kObey;
    for (const auto& name : fp32_layers) options.reduced_precision.layer_precisions[name] = DType::kFloat32;
    runtime::Session session = runtime::Session::create(model_, options, base_dir_).value();
    bool ok = true;
    if (search_.judge) ok = search_.judge(session);
    for (size_t i = 0; i < want_.size() && ok; ++i) ok = outputs_pass(session.run(feeds_[i]), want_[i], search_.atol, search_.rtol);
    ++builds_;
    PrecisionBuild build;
    for (const auto& l : order_)
      if (fp32_layers.count(l)) build.fp32_layers.push_back(l);
    build.passed = ok;
    build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    history_.push_back(std::move(build));
    if (log_) log_("build " + std::to_string(builds_) + ": " + std::to_string(fp32_layers.size()) + " layer(s) in fp32: " +
                   (ok ? "PASSED" : "FAILED"));
    return ok;
  }
  int builds() const { return builds_; }
  std::vector<PrecisionBuild> take_history() { return std::move(history_); }
  /// Execution order of the layers (for the history's lists).
  void set_order(std::vector<std::string> order) { order_ = std::move(order); }

 private:
  const onnx::ModelProto& model_;
  const std::string& base_dir_;
  const std::vector<TensorMap>& feeds_;
  const PrecisionSearch& search_;
  const std::function<void(const std::string&)>& log_;
  std::vector<TensorMap> want_;
  int builds_ = 0;
  std::vector<std::string> order_;
  std::vector<PrecisionBuild> history_;
};

}  // namespace

std::vector<std::string> reducible_layers(const onnx::ModelProto& model, const std::string& base_dir) {
  runtime::SessionOptions options;
  options.fuse = false;  // every node a layer of its own
  runtime::Session session = runtime::Session::create(model, options, base_dir).value();
  std::vector<std::string> layers;
  const auto* types = session.value_types();
  for (const auto& node : session.plan().nodes_) {
    if (node.folded || node.spec.name.empty()) continue;
    DType input0 = DType::kUndefined;
    if (types && !node.spec.inputs.empty())
      if (auto it = types->find(node.spec.inputs[0]); it != types->end() && it->second.has_tensor_type())
        input0 = static_cast<DType>(it->second.tensor_type().elem_type());
    if (runtime::is_reducible_layer(node.spec, input0)) layers.push_back(node.spec.name);
  }
  return layers;
}

PrecisionSearchResult search_fp32_layers(const onnx::ModelProto& model, const std::string& base_dir,
                                         const std::vector<TensorMap>& feeds, const PrecisionSearch& search,
                                         const std::function<void(const std::string&)>& log) {
  PrecisionSearchResult result;
  std::vector<std::string> order = reducible_layers(model, base_dir);
  if (search.direction == PrecisionSearch::Direction::kReverse) std::reverse(order.begin(), order.end());
  PrecisionChecker checker(model, base_dir, feeds, search, log);
  result.layers = reducible_layers(model, base_dir);
  checker.set_order(result.layers);
  auto finish = [&] {
    result.builds = checker.builds();
    result.history = checker.take_history();
    return result;
  };
  std::set<std::string> pinned;
  result.passes_reduced = checker.passes(pinned);
  if (result.passes_reduced) return finish();
  result.passes_fp32 = checker.passes(std::set<std::string>(order.begin(), order.end()));
  if (!result.passes_fp32) return finish();
  while (!checker.passes(pinned)) {
    std::vector<std::string> free;
    for (const auto& l : order)
      if (!pinned.count(l)) free.push_back(l);
    auto with_prefix = [&](size_t k) {
      std::set<std::string> s = pinned;
      s.insert(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(k));
      return s;
    };
    // The shortest prefix of the free layers that passes (all of them pass: checked above).
    size_t k = free.size();
    if (search.mode == PrecisionSearch::Mode::kBisect) {
      size_t lo = 1, hi = free.size();
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (checker.passes(with_prefix(mid))) hi = mid;
        else lo = mid + 1;
      }
      k = lo;
    } else {
      for (size_t n = 1; n < free.size(); ++n)
        if (checker.passes(with_prefix(n))) {
          k = n;
          break;
        }
    }
    pinned.insert(free[k - 1]);
  }
  for (const auto& l : result.layers)
    if (pinned.count(l)) result.fp32_layers.push_back(l);
  return finish();
}

}  // namespace parity::tools
