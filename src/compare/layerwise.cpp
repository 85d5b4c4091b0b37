#include "compare/layerwise.h"

#include <onnx/onnx_pb.h>
#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "compare/loaders.h"
#include "compare/report.h"
#include "core/progress.h"
#include "core/text.h"
#include "core/logger.h"
#include "core/low_precision.h"
#include "runners/registry.h"
// The streaming comparison drives parity's own executor through its per-tensor hook.
#include "runners/ref/ref_runner.h"
#include "runtime/buffer_pool.h"

namespace parity::compare {

namespace fs = std::filesystem;

int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

namespace {

int64_t current_rss_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<int64_t>(resident) * 4096;
}

std::string mib(int64_t bytes) {
  const ScaledBytes scaled = scale_bytes(static_cast<double>(bytes), /*smallest=*/1, /*largest=*/3);
  if (scaled.power == 3) return fmt::format("{:.2f} {}", scaled.value, scaled.unit);
  return fmt::format("{:.1f} {}", scaled.value, scaled.unit);
}

// `s` in a column of `width`: padded, or cut with "..." when longer.
std::string fit(const std::string& s, size_t width) {
  if (s.size() <= width) return fmt::format("{:<{}}", s, width);
  return s.substr(0, width - 3) + "...";
}

void log_table(const LayerwiseReport& report, const LayerwiseOptions& options, bool with_peer) {
  size_t name_w = 6, op_w = 2, shape_w = 5;
  for (const auto& l : report.layers) {
    name_w = std::max(name_w, std::min<size_t>(l.name.size(), 48));
    op_w = std::max(op_w, l.op_type.size());
    shape_w = std::max(shape_w, shape_to_string(l.shape).size());
  }
  std::string table = str_cat(fit("#", 5), " ", fit("Tensor", name_w), " ", fit("Op", op_w), " ", fit("dtype", 8), " ",
                              fit("Shape", shape_w), " ");
  table += with_peer ? "Max Abs Err  Max Rel Err  Mean Abs Err  Status" : "Mean        Max |x|";
  for (size_t i = 0; i < report.layers.size(); ++i) {
    const LayerResult& l = report.layers[i];
    table += "\n" + str_cat(fit(std::to_string(i), 5), " ", fit(l.name, name_w), " ", fit(l.op_type, op_w), " ",
                            fit(std::string(dtype_name(l.dtype)), 8), " ", fit(shape_to_string(l.shape), shape_w), " ");
    if (!with_peer) {
      table += fit(format_g(l.mean_absdiff), 11) + " " + format_g(l.max_absdiff);
    } else if (!l.compared) {
      table += "-            -            -             skipped (" + l.note + ")";
    } else {
      table += fit(format_g(l.max_absdiff), 12) + " " + fit(format_g(l.max_reldiff), 12) + " " +
               fit(format_g(l.mean_absdiff), 13) + " " + (l.passed ? "PASSED" : "FAILED") +
               (l.note.empty() ? "" : " (" + l.note + ")");
    }
  }
  (void)options;
  logger().info(table);
}


// Builds, per window, the peer's model: only the nodes the window's tensors depend on, with those
// tensors as the outputs (types from one shape inference over the whole model).
class WindowModels {
 public:
  explicit WindowModels(const onnx::ModelProto& model) : base_(model) {
    base_.mutable_graph()->clear_output();
    infos_ = loaders::inferred_value_infos(model);
    const auto& nodes = model.graph().node();
    node_inputs_.resize(static_cast<size_t>(nodes.size()));
    for (int i = 0; i < nodes.size(); ++i) {
      for (const auto& out : nodes[i].output())
        if (!out.empty()) producer_.emplace(out, i);
      auto& inputs = node_inputs_[static_cast<size_t>(i)];
      inputs.assign(nodes[i].input().begin(), nodes[i].input().end());
      // Subgraphs may read outer-scope values: count every name they mention as an input.
      for (const auto& attr : nodes[i].attribute()) {
        if (attr.has_g()) collect_names(attr.g(), inputs);
        for (const auto& g : attr.graphs()) collect_names(g, inputs);
      }
    }
  }

  loaders::Model build(const std::vector<std::string>& outputs) const {
    const auto& nodes = base_.graph().node();
    std::vector<bool> needed(static_cast<size_t>(nodes.size()), false);
    std::vector<std::string> pending(outputs.begin(), outputs.end());
    std::set<std::string> seen(outputs.begin(), outputs.end());
    while (!pending.empty()) {
      const std::string name = std::move(pending.back());
      pending.pop_back();
      auto it = producer_.find(name);
      if (it == producer_.end() || needed[static_cast<size_t>(it->second)]) continue;
      needed[static_cast<size_t>(it->second)] = true;
      for (const auto& in : node_inputs_[static_cast<size_t>(it->second)])
        if (!in.empty() && seen.insert(in).second) pending.push_back(in);
    }
    auto model = std::make_shared<onnx::ModelProto>();
    model->CopyFrom(base_);
    onnx::GraphProto* graph = model->mutable_graph();
    graph->clear_node();
    graph->clear_initializer();
    for (int i = 0; i < nodes.size(); ++i)
      if (needed[static_cast<size_t>(i)]) *graph->add_node() = nodes[i];
    for (const auto& init : base_.graph().initializer())
      if (seen.count(init.name())) *graph->add_initializer() = init;
    for (const auto& name : outputs) {
      onnx::ValueInfoProto* vi = graph->add_output();
      if (auto it = infos_.find(name); it != infos_.end()) *vi = it->second;
      else vi->set_name(name);
    }
    return model;
  }

 private:
  static void collect_names(const onnx::GraphProto& g, std::vector<std::string>& names) {
    for (const auto& node : g.node()) {
      names.insert(names.end(), node.input().begin(), node.input().end());
      for (const auto& attr : node.attribute()) {
        if (attr.has_g()) collect_names(attr.g(), names);
        for (const auto& sub : attr.graphs()) collect_names(sub, names);
      }
    }
  }

  onnx::ModelProto base_;
  std::map<std::string, onnx::ValueInfoProto> infos_;
  std::unordered_map<std::string, int> producer_;
  std::vector<std::vector<std::string>> node_inputs_;
};

// Elements compared per slice: simple()'s statistics need several full-size float64 temporaries
// per tensor, which for a large activation would outweigh the runtimes' own working memory.
constexpr int64_t kSliceElements = int64_t{1} << 16;

// Compares the reference's tensor with the peer's and fills the layer's statistics and verdict.
// The default element-wise check is decided per element, so it runs slice by slice with exactly
// simple()'s semantics (maxima combine exactly; means combine in float64, for the table only). The
// other error statistics need the whole tensor at once.
void compare_layer(const Tensor& mine, const Tensor& stored, const LayerwiseOptions& options, LayerResult& layer) {
  // A stored tensor of an ml_dtypes 1-byte type reads back as numpy's '<V1': ours names its type.
  const Tensor theirs = resolve_numpy_void(stored, mine.dtype());
  const double atol = options.compare.atol.get(layer.name), rtol = options.compare.rtol.get(layer.name);
  const ErrorStat stat = options.compare.check_error_stat.get(layer.name);
  layer.compared = true;
  if (mine.numel() != theirs.numel() || (options.compare.check_shapes && mine.shape() != theirs.shape())) {
    layer.passed = false;
    layer.note = "shapes " + shape_to_string(mine.shape()) + " vs " + shape_to_string(theirs.shape());
    return;
  }
  const Tensor& out0 = options.reference_first ? mine : theirs;
  const Tensor& out1 = options.reference_first ? theirs : mine;
  const int64_t n = out0.numel();
  const bool sliced = stat == ErrorStat::kElemwise && n > kSliceElements && out0.dtype() != DType::kString &&
                      out1.dtype() != DType::kString;
  try {
    if (!sliced) {
      const ErrorStatistics s =
          compute_error_statistics(out0, out1.reshaped(out0.shape()), atol, rtol, options.compare.infinities_compare_equal);
      layer.passed = !simple_check_failed(s, stat, atol, rtol, options.compare.error_quantile.get(layer.name), nullptr,
                                          nullptr);
      layer.max_absdiff = s.max_absdiff;
      layer.max_reldiff = s.max_reldiff;
      layer.mean_absdiff = s.mean_absdiff;
      layer.mean_reldiff = s.mean_reldiff;
      return;
    }
    auto nan_max = [](double& acc, double v) {
      if (std::isnan(acc)) return;
      if (std::isnan(v) || v > acc) acc = v;
    };
    const size_t size0 = dtype_size(out0.dtype()), size1 = dtype_size(out1.dtype());
    double max_abs = -std::numeric_limits<double>::infinity(), max_rel = max_abs, sum_abs = 0, sum_rel = 0;
    bool mismatch = false;
    for (int64_t begin = 0; begin < n; begin += kSliceElements) {
      const int64_t count = std::min(kSliceElements, n - begin);
      const Tensor a = Tensor::from_bytes(out0.dtype(), {count},
                                          static_cast<const std::byte*>(out0.raw_data()) + begin * size0, count * size0);
      const Tensor b = Tensor::from_bytes(out1.dtype(), {count},
                                          static_cast<const std::byte*>(out1.raw_data()) + begin * size1, count * size1);
      const ErrorStatistics s = compute_error_statistics(a, b, atol, rtol, options.compare.infinities_compare_equal);
      mismatch = mismatch || s.elementwise_mismatch;
      nan_max(max_abs, s.max_absdiff);
      nan_max(max_rel, s.max_reldiff);
      sum_abs += s.mean_absdiff * static_cast<double>(count);
      sum_rel += s.mean_reldiff * static_cast<double>(count);
    }
    layer.passed = !mismatch;
    layer.max_absdiff = max_abs;
    layer.max_reldiff = max_rel;
    layer.mean_absdiff = sum_abs / static_cast<double>(n);
    layer.mean_reldiff = sum_rel / static_cast<double>(n);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnsupported) throw;
    layer.compared = false;
    layer.note = e.what();
  }
}

// Hands memory freed by one runtime back to the system before the other one runs.
void release_free_memory() { malloc_trim(0); }

// One layer-by-layer comparison: the reference runner, the peer's window models and the report
// they fill, pass by pass.
// NaN/Inf counts and float16 range of a float32/float64 tensor's values.
template <typename T>
void scan_typed(const T* data, int64_t n, LayerResult& layer) {
  constexpr double kFp16Max = 65504.0;
  constexpr double kFp16MinSubnormal = 5.9604644775390625e-08;  // 2^-24
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(data[i]);
    if (std::isnan(v)) {
      ++layer.nan_count;
    } else if (std::isinf(v)) {
      ++layer.inf_count;
    } else {
      const double m = std::fabs(v);
      layer.max_magnitude = std::max(layer.max_magnitude, m);
      layer.fp16_overflow += m > kFp16Max;
      layer.fp16_underflow += m > 0 && m < kFp16MinSubnormal;
    }
  }
}

void scan_values(const Tensor& t, LayerResult& layer) {
  if (t.dtype() == DType::kFloat32) scan_typed(t.data<float>(), t.numel(), layer);
  if (t.dtype() == DType::kFloat64) scan_typed(t.data<double>(), t.numel(), layer);
}

class LayerwiseRun {
 public:
  LayerwiseRun(const std::string& model_path, const std::string& peer, const runners::RunnerOptions& runner_options, const TensorMap& feed,
               const LayerwiseOptions& options, const GoldenRun* golden = nullptr)
      : model_path_(model_path), peer_(peer), runner_options_(runner_options), feed_(feed), options_(options),
        model_(loaders::onnx_from_path(model_path)), golden_(golden) {
    const runners::RunnerInfo* ref_info = runners::RunnerRegistry::instance().find("ref");
    PARITY_CHECK(ref_info, kUnavailable, "layer-by-layer comparison needs the ref runner, which this build lacks");
    ref_runner_ = ref_info->create(runners::RunnerConfig{model_path, runner_options});
    ref_ = dynamic_cast<runners::RefRunner*>(ref_runner_.get());
    PARITY_ASSERT(ref_, "the registered ref runner is not a RefRunner");
    for (const auto& node : model_->graph().node())
      for (const auto& out : node.output())
        if (!out.empty()) {
          producers_.emplace(out, std::make_pair(node.name(), node.op_type()));
          auto& inputs = node_inputs_[out];
          for (const auto& in : node.input())
            if (!in.empty()) inputs.push_back(in);
        }
  }

  LayerwiseReport run() {
    runners::ActiveRunner active_ref(*ref_);
    report_.reference_name = ref_->name();
    select_tensors();
    if (golden_) compare_golden();
    else if (peer_.empty()) collect_statistics();
    else {
      const auto windows = plan_windows();
      Progress progress("mark all windows", static_cast<int64_t>(windows.size()));
      for (const auto& [start, end] : windows) {
        compare_window(start, end);
        progress.advance();
      }
    }
    report_.peak_rss_bytes = peak_rss_bytes();
    if (report_.peer_name.empty()) report_.peer_name = peer_;
    return std::move(report_);
  }

 private:
  // The intermediate tensors to compare, in execution order (--onnx-exclude-outputs left out).
  void select_tensors() {
    const auto all = ref_->session().intermediate_names();
    for (const auto& name : options_.exclude)
      PARITY_CHECK(std::find(all.begin(), all.end(), name) != all.end(), kInvalidArgument, "cannot exclude '", name,
                   "': the model produces no tensor of that name");
    for (const auto& name : all)
      if (!options_.exclude.count(name)) names_.push_back(name);
    for (size_t i = 0; i < names_.size(); ++i) position_.emplace(names_[i], i);
  }

  // One layer's record, from the reference value (and the peer's tensor when there is one).
  LayerResult make_layer(const std::string& name, const runtime::Value& value) {
    LayerResult layer;
    layer.name = name;
    if (auto it = producers_.find(name); it != producers_.end()) {
      layer.node = it->second.first;
      layer.op_type = it->second.second;
      layer.inputs = node_inputs_[name];
    }
    if (!value.is_tensor()) {
      layer.note = "not a tensor";
      return layer;
    }
    layer.dtype = value.tensor().dtype();
    layer.shape = value.tensor().shape();
    if (options_.validate || options_.check_fp16_range) {
      scan_values(value.tensor(), layer);
      if (options_.validate && (layer.nan_count || layer.inf_count) && !report_.first_invalid)
        report_.first_invalid = report_.layers.size();
      report_.fp16_overflow_layers += options_.check_fp16_range && layer.fp16_overflow > 0;
    }
    if (options_.on_reference_tensor) options_.on_reference_tensor(name, value.tensor());
    const auto bytes = static_cast<int64_t>(value.tensor().size_bytes());
    report_.largest_tensor_bytes = std::max(report_.largest_tensor_bytes, bytes);
    report_.total_tensor_bytes += bytes;
    return layer;
  }

  // A stored run as the peer: every tensor the reference produces is compared with the stored one of
  // the same name, read from the file when it is needed and dropped after.
  void compare_golden() {
    const auto& run = golden_->file->runs().at(golden_->run);
    const RunResultsIndex::Iteration& stored = run.iterations.at(golden_->iteration);
    check_golden_names(stored);
    report_.peer_name = run.runner;
    report_.golden_file_bytes = golden_->file->file_bytes();
    runtime::RunOptions compare_run;
    compare_run.hook = [&](const std::string& name, const runtime::Value& value) {
      if (!position_.count(name)) return;
      LayerResult layer = make_layer(name, value);
      if (value.is_tensor() && !stored.spans.count(name)) {
        layer.note = "not in " + fs::path(golden_->file->path()).filename().string();
      } else if (value.is_tensor()) {
        const Tensor theirs = golden_->file->read(golden_->run, golden_->iteration, name);
        const auto bytes = static_cast<int64_t>(theirs.size_bytes());
        report_.peak_peer_bytes_held = std::max(report_.peak_peer_bytes_held, bytes);
        report_.total_tensor_bytes += bytes;
        compare_layer(value.tensor(), theirs, options_, layer);
        if (layer.compared && !layer.passed && !report_.first_failure) report_.first_failure = report_.layers.size();
      }
      report_.layers.push_back(std::move(layer));
    };
    run_reference(compare_run);
  }

  // A stored run whose tensors this model does not produce was made with another model.
  void check_golden_names(const RunResultsIndex::Iteration& stored) const {
    std::vector<std::string> foreign;
    for (const auto& name : stored.names)
      if (!producers_.count(name)) foreign.push_back(name);
    if (foreign.empty()) return;
    const size_t shown = std::min<size_t>(foreign.size(), 3);
    std::string list = join_names(std::vector<std::string>(foreign.begin(), foreign.begin() + static_cast<std::ptrdiff_t>(shown)));
    if (foreign.size() > shown) list += str_cat(" and ", foreign.size() - shown, " more");
    fail(ErrorCode::kInvalidArgument, golden_->file->path(), " was not saved from ", model_path_, ": ", foreign.size(),
         " of its ", stored.names.size(), " tensor(s) are produced by no node of the model (", list,
         "); give the golden run of this model");
  }

  // Runs the reference once with `options`, then clears them.
  void run_reference(const runtime::RunOptions& options) {
    ref_->set_run_options(options);
    ref_->infer(feed_);
    ref_->set_run_options({});
  }

  // No peer: each tensor's mean and largest magnitude.
  void collect_statistics() {
    runtime::RunOptions stats;
    stats.hook = [&](const std::string& name, const runtime::Value& value) {
      if (options_.exclude.count(name)) return;
      LayerResult layer = make_layer(name, value);
      const Tensor* mine = value.is_tensor() ? &value.tensor() : nullptr;
      if (mine && mine->dtype() != DType::kString && !is_complex(mine->dtype()) && mine->numel() > 0) {
        layer.mean_absdiff = numpy_stats::mean_f32(*mine);
        double m = 0;
        for (int64_t i = 0; i < mine->numel(); ++i) m = std::max(m, std::fabs(mine->value_as_double(i)));
        layer.max_absdiff = m;
      }
      report_.layers.push_back(std::move(layer));
    };
    run_reference(stats);
  }

  // Windows of consecutive tensors (in execution order) up to the byte budget each, from the
  // tensor sizes of a first, statistics-free reference run.
  std::vector<std::pair<size_t, size_t>> plan_windows() {
    std::unordered_map<std::string, int64_t> sizes;
    runtime::RunOptions sizing;
    sizing.hook = [&](const std::string& name, const runtime::Value& value) {
      if (options_.exclude.count(name)) return;
      sizes[name] = value.is_tensor() ? static_cast<int64_t>(value.tensor().size_bytes()) : 0;
    };
    run_reference(sizing);
    std::vector<std::pair<size_t, size_t>> windows;
    for (size_t start = 0; start < names_.size();) {
      size_t end = start;
      int64_t bytes = 0;
      while (end < names_.size()) {
        const int64_t b = sizes.count(names_[end]) ? sizes.at(names_[end]) : 0;
        if (end > start && bytes + b > options_.window_bytes) break;
        bytes += b;
        ++end;
      }
      windows.emplace_back(start, end);
      start = end;
    }
    return windows;
  }

  // The peer's copies of the window's tensors: the peer runs a model cut down to them and is
  // released before this returns.
  std::unordered_map<std::string, Tensor> run_peer(const std::vector<std::string>& chunk) {
    if (!window_models_) window_models_.emplace(*model_);
    std::unordered_map<std::string, Tensor> window;
    ++peers_alive_;
    {
      const WindowModels& models = *window_models_;
      std::unique_ptr<runners::Runner> peer_runner = loaders::RunnerFromOnnx(
          peer_, [&models, chunk] { return models.build(chunk); }, fs::path(model_path_).parent_path().string(), runner_options_);
      if (report_.peer_name.empty()) report_.peer_name = peer_runner->name();
      logger().verbose("Running ", peer_, " with ", chunk.size(), " marked tensor(s): ", chunk.front(), " ... ",
                       chunk.back());
      runners::ActiveRunner active_peer(*peer_runner);
      TensorMap outputs = peer_runner->infer(feed_, false);
      int64_t bytes = 0;
      for (const auto& name : chunk)
        if (options_.on_peer_tensor && outputs.contains(name)) options_.on_peer_tensor(name, outputs.at(name));
      for (auto& [name, tensor] : outputs) {
        bytes += static_cast<int64_t>(tensor.size_bytes());
        window.emplace(name, tensor.clone());  // own the bytes: the peer's buffers go with its session
      }
      report_.peak_peer_bytes_held = std::max(report_.peak_peer_bytes_held, bytes);
      ++report_.peer_runs;
    }
    --peers_alive_;
    return window;
  }

  // The two runtimes take turns and never hold their working memory at the same time: the peer
  // produces the window's tensors, then the reference runs up to the window's last tensor,
  // comparing each with the peer's copy as it is produced. Peak memory is one runtime's working
  // set plus one window of peer outputs.
  void compare_window(size_t start, size_t end) {
    const std::vector<std::string> chunk(names_.begin() + static_cast<std::ptrdiff_t>(start),
                                         names_.begin() + static_cast<std::ptrdiff_t>(end));
    // The reference's cached kernel buffers go back to the system before the peer runs.
    runtime::BufferPool::instance().release_cached();
    release_free_memory();
    std::unordered_map<std::string, Tensor> window = run_peer(chunk);
    release_free_memory();  // the peer session's arenas

    runtime::RunOptions compare_run;
    compare_run.stop_after = chunk.back();  // the rest of the graph belongs to later windows
    compare_run.hook = [&](const std::string& name, const runtime::Value& value) {
      auto pos = position_.find(name);
      if (pos == position_.end() || pos->second < start || pos->second >= end) return;
      if (peers_alive_) ++report_.reference_steps_with_peer_alive;
      LayerResult layer = make_layer(name, value);
      auto it = window.find(name);
      if (value.is_tensor() && it == window.end()) {
        layer.note = "not produced by " + peer_;
      } else if (value.is_tensor()) {
        const Tensor theirs = std::move(it->second);
        window.erase(it);
        report_.total_tensor_bytes += static_cast<int64_t>(theirs.size_bytes());
        compare_layer(value.tensor(), theirs, options_, layer);
        if (layer.compared && !layer.passed && !report_.first_failure) report_.first_failure = report_.layers.size();
      }
      report_.layers.push_back(std::move(layer));
    };
    run_reference(compare_run);
    window.clear();
    release_free_memory();
    logger().verbose("Window ", report_.peer_runs, ": ", chunk.size(), " tensor(s); resident now ",
                     current_rss_bytes() >> 20, " MiB, peak ", peak_rss_bytes() >> 20, " MiB");
  }

  const std::string& model_path_;
  const std::string& peer_;
  runners::RunnerOptions runner_options_;
  const TensorMap& feed_;
  const LayerwiseOptions& options_;
  const loaders::Model model_;
  const GoldenRun* golden_ = nullptr;
  std::unique_ptr<runners::Runner> ref_runner_;
  runners::RefRunner* ref_ = nullptr;
  std::unordered_map<std::string, std::pair<std::string, std::string>> producers_;  // tensor -> (node, op)
  std::unordered_map<std::string, std::vector<std::string>> node_inputs_;  // tensor -> its producer's inputs
  std::vector<std::string> names_;                                                  // compared, in order
  std::unordered_map<std::string, size_t> position_;                                // index in names_
  std::optional<WindowModels> window_models_;
  int peers_alive_ = 0;
  LayerwiseReport report_;
};

// `mark all` with one runner that is not parity's ref (Polygraphy's `run --onnxrt --onnx-outputs
// mark all`): the runner produces every tensor window by window (a model cut down to the window's
// tensors, run and released before the next), and each tensor is streamed to on_peer_tensor and
// summarized, or compared with the stored run of the same name. Windows start at
// kFirstWindowTensors tensors and halve or double to stay near the byte budget, since without
// parity's executor the sizes are known only once produced.
class RunnerLayerwiseRun {
 public:
  static constexpr size_t kFirstWindowTensors = 16;

  RunnerLayerwiseRun(const std::string& model_path, const std::string& runner, const runners::RunnerOptions& runner_options,
                     const TensorMap& feed, const LayerwiseOptions& options, const GoldenRun* golden)
      : model_path_(model_path), runner_(runner), runner_options_(runner_options), feed_(feed), options_(options),
        model_(loaders::onnx_from_path(model_path)), golden_(golden), window_models_(*model_) {
    for (const auto& node : model_->graph().node())
      for (const auto& out : node.output())
        if (!out.empty()) producers_.emplace(out, std::make_pair(node.name(), node.op_type()));
  }

  LayerwiseReport run() {
    const std::vector<std::string> all = loaders::produced_value_names(*model_);
    for (const auto& name : options_.exclude)
      PARITY_CHECK(producers_.count(name), kInvalidArgument, "cannot exclude '", name,
                   "': the model produces no tensor of that name");
    std::vector<std::string> names;
    for (const auto& name : all)
      if (!options_.exclude.count(name)) names.push_back(name);
    if (golden_) {
      const auto& run = golden_->file->runs().at(golden_->run);
      stored_ = &run.iterations.at(golden_->iteration);
      std::vector<std::string> foreign;
      for (const auto& name : stored_->names)
        if (!producers_.count(name)) foreign.push_back(name);
      PARITY_CHECK(foreign.empty(), kInvalidArgument, golden_->file->path(), " was not saved from ", model_path_, ": ",
                   foreign.size(), " of its ", stored_->names.size(), " tensor(s) are produced by no node of the model ('",
                   foreign.front(), "', ...); give the golden run of this model");
      report_.peer_name = run.runner;
      report_.golden_file_bytes = golden_->file->file_bytes();
    }
    size_t count = kFirstWindowTensors;
    for (size_t start = 0; start < names.size();) {
      const size_t end = std::min(names.size(), start + count);
      const int64_t bytes = run_window(std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(start),
                                                                names.begin() + static_cast<std::ptrdiff_t>(end)));
      if (bytes > options_.window_bytes && count > 1) count /= 2;
      else if (bytes * 4 < options_.window_bytes) count *= 2;
      start = end;
    }
    report_.peak_rss_bytes = peak_rss_bytes();
    return std::move(report_);
  }

 private:
  // Runs the runner on a model whose outputs are the window's tensors and records each of them.
  int64_t run_window(const std::vector<std::string>& chunk) {
    const WindowModels& models = window_models_;
    std::unique_ptr<runners::Runner> runner = loaders::RunnerFromOnnx(
        runner_, [&models, chunk] { return models.build(chunk); }, fs::path(model_path_).parent_path().string(), runner_options_);
    if (report_.reference_name.empty()) report_.reference_name = runner->name();
    runners::ActiveRunner active(*runner);
    const TensorMap outputs = runner->infer(feed_, false);
    int64_t bytes = 0;
    for (const auto& name : chunk) {
      LayerResult layer;
      layer.name = name;
      if (auto it = producers_.find(name); it != producers_.end()) std::tie(layer.node, layer.op_type) = it->second;
      const Tensor* tensor = outputs.find(name);
      if (!tensor) {
        layer.note = "not produced by " + runner_;
        report_.layers.push_back(std::move(layer));
        continue;
      }
      layer.dtype = tensor->dtype();
      layer.shape = tensor->shape();
      bytes += static_cast<int64_t>(tensor->size_bytes());
      report_.total_tensor_bytes += static_cast<int64_t>(tensor->size_bytes());
      report_.largest_tensor_bytes = std::max(report_.largest_tensor_bytes, static_cast<int64_t>(tensor->size_bytes()));
      if (options_.on_peer_tensor) options_.on_peer_tensor(name, *tensor);
      if (stored_) compare_stored(*tensor, layer);
      else summarize(*tensor, layer);
      report_.layers.push_back(std::move(layer));
    }
    if (!stored_) report_.peak_peer_bytes_held = std::max(report_.peak_peer_bytes_held, bytes);
    ++report_.peer_runs;
    return bytes;
  }

  void compare_stored(const Tensor& tensor, LayerResult& layer) {
    if (!stored_->spans.count(layer.name)) {
      layer.note = "not in " + fs::path(golden_->file->path()).filename().string();
      return;
    }
    const Tensor theirs = golden_->file->read(golden_->run, golden_->iteration, layer.name);
    report_.peak_peer_bytes_held = std::max(report_.peak_peer_bytes_held, static_cast<int64_t>(theirs.size_bytes()));
    compare_layer(tensor, theirs, options_, layer);
    if (layer.compared && !layer.passed && !report_.first_failure) report_.first_failure = report_.layers.size();
  }

  // The mean and largest magnitude, as the statistics-only table shows them.
  static void summarize(const Tensor& tensor, LayerResult& layer) {
    const DType dtype = tensor.dtype();
    if (dtype == DType::kString || is_complex(dtype) || dtype == kNumpyVoid1 || tensor.numel() == 0) return;
    double sum = 0, largest = 0;
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      const double v = tensor.value_as_double(i);
      sum += v;
      largest = std::max(largest, std::fabs(v));
    }
    layer.mean_absdiff = sum / static_cast<double>(tensor.numel());
    layer.max_absdiff = largest;
  }

  const std::string& model_path_;
  const std::string& runner_;
  runners::RunnerOptions runner_options_;
  const TensorMap& feed_;
  const LayerwiseOptions& options_;
  const loaders::Model model_;
  const GoldenRun* golden_ = nullptr;
  const RunResultsIndex::Iteration* stored_ = nullptr;
  WindowModels window_models_;
  std::unordered_map<std::string, std::pair<std::string, std::string>> producers_;  // tensor -> (node, op)
  LayerwiseReport report_;
};

// The memory line's last part: how much of the peer's data was held at once.
std::string memory_detail(const LayerwiseReport& report, const std::string& peer) {
  if (report.golden_file_bytes)
    return str_cat(" | stored tensors held at once: ", mib(report.peak_peer_bytes_held), " of the file's ",
                   mib(report.golden_file_bytes));
  return peer.empty() ? "" : str_cat(" | ", peer, " runs (windows): ", report.peer_runs);
}

// --validate and --check-fp16-range: the first NaN/Inf and the tensors float16 cannot hold.
void log_value_checks(const LayerwiseReport& report, const LayerwiseOptions& options) {
  if (options.validate) {
    if (report.first_invalid) {
      const LayerResult& l = report.layers[*report.first_invalid];
      report_cat(Severity::kError, "Validation | first NaN/Inf at layer ", *report.first_invalid, ": tensor '", l.name,
                 "' (node '", l.node, "', ", l.op_type, ") | NaN: ", l.nan_count, ", Inf: ", l.inf_count, " of ",
                 shape_numel(l.shape), " values");
    } else {
      report_cat(Severity::kFinish, "Validation | no NaN or Inf in any of ", report.layers.size(), " tensor(s)");
    }
  }
  if (!options.check_fp16_range) return;
  constexpr size_t kShown = 10;
  std::string overflow, underflow;
  size_t overflow_n = 0, underflow_n = 0;
  for (const auto& l : report.layers) {
    if (l.fp16_overflow > 0 && overflow_n++ < kShown)
      overflow += str_cat("\n    ", l.name, " (node '", l.node, "', ", l.op_type, ") | ", l.fp16_overflow, " of ",
                          shape_numel(l.shape), " values above 65504 | max |x| ", format_g(l.max_magnitude));
    if (l.fp16_underflow > 0 && underflow_n++ < kShown)
      underflow += str_cat("\n    ", l.name, " (node '", l.node, "', ", l.op_type, ") | ", l.fp16_underflow, " of ",
                           shape_numel(l.shape), " nonzero values below 2^-24");
  }
  if (overflow_n)
    report_cat(Severity::kError, "fp16 range | ", overflow_n, " tensor(s) overflow float16 (|x| > 65504), first ",
               std::min(overflow_n, kShown), " in execution order:", overflow);
  else
    report_cat(Severity::kFinish, "fp16 range | no tensor exceeds float16's range (|x| <= 65504)");
  if (underflow_n)
    report_cat(Severity::kWarning, "fp16 range | ", underflow_n,
               " tensor(s) hold nonzero values float16 flushes to zero or a subnormal (|x| < 2^-24), first ",
               std::min(underflow_n, kShown), ":", underflow);
}

// Where the divergence starts: the node whose inputs agree and whose output does not, each with its
// errors, and the command that cuts that node out for `debug reduce` or a bug report.
void explain_divergence(const LayerwiseReport& report, const std::string& model_path, const std::string& peer_flag) {
  if (!report.divergence_start) {
    report_cat(Severity::kWarning, "No failing layer has all of its inputs within tolerance (inputs not compared); "
                                   "the divergence may start before the first failing layer");
    return;
  }
  std::unordered_map<std::string, const LayerResult*> by_name;
  for (const auto& l : report.layers) by_name.emplace(l.name, &l);
  const LayerResult& out = report.layers[*report.divergence_start];
  auto errors = [](const LayerResult& l) {
    return str_cat("max abs err ", format_g(l.max_absdiff), ", max rel err ", format_g(l.max_reldiff));
  };
  std::string lines = str_cat("Divergence starts at node '", out.node, "' (", out.op_type,
                              "): its inputs are within tolerance, its output is not");
  std::vector<std::string> cut_inputs;
  for (const auto& name : out.inputs) {
    auto it = by_name.find(name);
    if (it == by_name.end() || it->second->op_type == "Constant") {
      lines += str_cat("\n    input  ", name, " | model input or weight (the same on both sides)");
      continue;
    }
    cut_inputs.push_back(name + ":auto:auto");
    lines += str_cat("\n    input  ", name, " | ", errors(*it->second), " | within tolerance");
  }
  lines += str_cat("\n    output ", out.name, " | ", errors(out), " | exceeds tolerance");
  if (!cut_inputs.empty()) {
    std::string inputs;
    for (const auto& c : cut_inputs) inputs += " " + c;
    lines += str_cat("\n    Isolate it: parity surgeon extract ", model_path, " --inputs", inputs, " --outputs ", out.name,
                     ":auto -o node.onnx");
  }
  if (!peer_flag.empty())
    lines += str_cat("\n    Or reduce the model to the smallest failing subgraph: parity debug reduce ", model_path,
                     " -o reduced.onnx --ref ", peer_flag);
  report_cat(Severity::kError, lines);
}

// The header line, the per-layer table, the verdict and the memory line.
void log_report(const LayerwiseReport& report, const LayerwiseOptions& options, const std::string& peer,
                const std::string& model_path, const std::string& peer_flag) {
  const bool with_peer = !peer.empty();
  const std::string stat = error_stat_name(options.compare.check_error_stat.default_value());
  if (with_peer) {
    const std::string& first = options.reference_first ? report.reference_name : report.peer_name;
    const std::string& second = options.reference_first ? report.peer_name : report.reference_name;
    report_cat(Severity::kStart, "Layer-wise Comparison | ", first, " vs. ", second, " | ", report.layers.size(),
               " tensor(s) | Tolerance: [abs=", format_g(options.compare.atol.default_value()), ", rel=",
               format_g(options.compare.rtol.default_value()), "] | Checking ", stat, " error");
  } else {
    report_cat(Severity::kStart, "Layer-wise Statistics | ", report.reference_name, " | ", report.layers.size(), " tensor(s)");
  }
  log_table(report, options, with_peer);
  if (with_peer) {
    size_t compared = 0, failed = 0;
    for (const auto& l : report.layers) {
      compared += l.compared;
      failed += l.compared && !l.passed;
    }
    if (report.first_failure) {
      const LayerResult& l = report.layers[*report.first_failure];
      report_cat(Severity::kError, "First divergence beyond tolerance at layer ", *report.first_failure, ": tensor '", l.name,
                 "' (node '", l.node, "', ", l.op_type, ") | max abs err ", format_g(l.max_absdiff), ", max rel err ",
                 format_g(l.max_reldiff), (l.note.empty() ? "" : " | " + l.note));
      explain_divergence(report, model_path, peer_flag);
      report_cat(Severity::kError, "FAILED | ", failed, " of ", compared, " compared tensor(s) exceed tolerance");
    } else {
      report_cat(Severity::kFinish, "PASSED | All ", compared, " compared tensor(s) are within tolerance");
    }
  }
  log_value_checks(report, options);
  report_cat(Severity::kInfo, "Memory | peak resident: ", mib(report.peak_rss_bytes),
             " | all intermediate tensors together: ", mib(report.total_tensor_bytes), " | largest tensor: ",
             mib(report.largest_tensor_bytes), memory_detail(report, peer));
}

}  // namespace

std::optional<size_t> find_divergence_start(const LayerwiseReport& report) {
  std::unordered_map<std::string, const LayerResult*> by_name;
  for (const auto& l : report.layers) by_name.emplace(l.name, &l);
  for (size_t i = 0; i < report.layers.size(); ++i) {
    const LayerResult& l = report.layers[i];
    if (!l.compared || l.passed) continue;
    const bool inputs_agree = std::all_of(l.inputs.begin(), l.inputs.end(), [&](const std::string& name) {
      auto it = by_name.find(name);
      return it == by_name.end() || (it->second->compared && it->second->passed);
    });
    if (inputs_agree) return i;
  }
  return std::nullopt;
}

LayerwiseReport compare_layerwise_golden(const std::string& model_path, const runners::RunnerOptions& runner_options, const TensorMap& feed,
                                         const GoldenRun& golden, const LayerwiseOptions& options) {
  PARITY_ASSERT(golden.file, "compare_layerwise_golden without a file");
  LayerwiseReport report = LayerwiseRun(model_path, "", runner_options, feed, options, &golden).run();
  report.divergence_start = find_divergence_start(report);
  log_report(report, options, golden.file->path(), model_path, "");
  return report;
}

LayerwiseReport runner_layerwise(const std::string& model_path, const std::string& runner, const runners::RunnerOptions& runner_options,
                                 const TensorMap& feed, const LayerwiseOptions& options, const GoldenRun* golden) {
  PARITY_CHECK(!golden || golden->file, kInvalidArgument, "runner_layerwise: a golden run without a file");
  LayerwiseReport report = RunnerLayerwiseRun(model_path, runner, runner_options, feed, options, golden).run();
  log_report(report, options, golden ? golden->file->path() : std::string(), model_path, "");
  return report;
}

LayerwiseReport compare_layerwise(const std::string& model_path, const std::string& peer, const runners::RunnerOptions& runner_options,
                                  const TensorMap& feed, const LayerwiseOptions& options) {
  LayerwiseReport report = LayerwiseRun(model_path, peer, runner_options, feed, options).run();
  report.divergence_start = find_divergence_start(report);
  const runners::RunnerInfo* info = peer.empty() ? nullptr : runners::RunnerRegistry::instance().find(peer);
  log_report(report, options, peer, model_path, info ? info->flag : "");
  return report;
}

}  // namespace parity::compare
