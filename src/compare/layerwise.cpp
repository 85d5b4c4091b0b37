#include "compare/layerwise.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "compare/loaders.h"
#include "compare/report.h"
#include "core/logger.h"
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
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes < (int64_t{1} << 20)) std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  else if (bytes < (int64_t{1} << 30)) std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1024.0 * 1024.0));
  else std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::string fit(const std::string& s, size_t width) {
  if (s.size() <= width) return s + std::string(width - s.size(), ' ');
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

}  // namespace

namespace {

// Stops a reference run once the current window's last tensor has been compared.
struct WindowDone {};

// Builds, per window, the peer's model: only the nodes the window's tensors depend on, with those
// tensors as the outputs (types from one shape inference over the whole model).
class WindowModels {
 public:
  explicit WindowModels(const onnx::ModelProto& model) : base_(model) {
    base_.mutable_graph()->clear_output();
    onnx::ModelProto inferred = model;
    try {
      onnx::shape_inference::InferShapes(inferred);
    } catch (const std::exception& e) {
      logger().verbose("ONNX shape inference failed (", e.what(), "); marked outputs get no type");
    }
    for (const auto* list : {&inferred.graph().value_info(), &inferred.graph().output(), &inferred.graph().input()})
      for (const auto& vi : *list) infos_.emplace(vi.name(), vi);
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
// Allocations of at least this size get their own mapping (see compare_layerwise); slices stay below.
constexpr int kMmapThresholdBytes = 1 << 20;

// Compares the reference's tensor with the peer's and fills the layer's statistics and verdict.
// The default element-wise check is decided per element, so it runs slice by slice with exactly
// simple()'s semantics (maxima combine exactly; means combine in float64, for the table only). The
// other error statistics need the whole tensor at once.
void compare_layer(const Tensor& mine, const Tensor& theirs, const LayerwiseOptions& options, LayerResult& layer) {
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

}  // namespace

LayerwiseReport compare_layerwise(const std::string& model_path, const std::string& peer, const cli::Args* args,
                                  const TensorMap& feed, const LayerwiseOptions& options) {
  // glibc raises its mmap threshold each time a large block is freed, after which activations come
  // from the heap, where small allocations made between them pin freed space: measured on PP-OCRv4
  // det at 640x640, the heap kept ~200 MiB more than the live tensors. A fixed threshold keeps
  // every tensor of 1 MiB or more in its own mapping, returned to the system when freed.
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  const RunnerInfo* ref_info = RunnerRegistry::instance().find("ref");
  PARITY_CHECK(ref_info, kUnavailable, "layer-by-layer comparison needs the ref runner, which this build lacks");
  std::unique_ptr<Runner> ref_runner = ref_info->create(RunnerConfig{model_path, args});
  auto* ref = dynamic_cast<RefRunner*>(ref_runner.get());
  PARITY_ASSERT(ref, "the registered ref runner is not a RefRunner");

  const loaders::Model model = loaders::onnx_from_path(model_path);
  std::unordered_map<std::string, std::pair<std::string, std::string>> producers;  // tensor -> (node, op)
  for (const auto& node : model->graph().node())
    for (const auto& out : node.output())
      if (!out.empty()) producers.emplace(out, std::make_pair(node.name(), node.op_type()));
  const std::string base_dir = fs::path(model_path).parent_path().string();

  LayerwiseReport report;
  ActiveRunner active_ref(*ref);
  report.reference_name = ref->name();
  std::vector<std::string> names;
  for (const auto& name : ref->session().intermediate_names()) {
    if (!options.exclude.count(name)) names.push_back(name);
  }
  for (const auto& name : options.exclude) {
    const auto all = ref->session().intermediate_names();
    PARITY_CHECK(std::find(all.begin(), all.end(), name) != all.end(), kInvalidArgument, "cannot exclude '", name,
                 "': the model produces no tensor of that name");
  }
  std::unordered_map<std::string, size_t> position;
  for (size_t i = 0; i < names.size(); ++i) position.emplace(names[i], i);
  const bool with_peer = !peer.empty();

  // One layer's record, from the reference value (and the peer's tensor when there is one).
  auto make_layer = [&](const std::string& name, const runtime::Value& value) {
    LayerResult layer;
    layer.name = name;
    if (auto it = producers.find(name); it != producers.end()) {
      layer.node = it->second.first;
      layer.op_type = it->second.second;
    }
    if (!value.is_tensor()) {
      layer.note = "not a tensor";
      return layer;
    }
    layer.dtype = value.tensor().dtype();
    layer.shape = value.tensor().shape();
    report.largest_tensor_bytes =
        std::max<int64_t>(report.largest_tensor_bytes, static_cast<int64_t>(value.tensor().size_bytes()));
    report.total_tensor_bytes += static_cast<int64_t>(value.tensor().size_bytes());
    return layer;
  };

  if (!with_peer) {
    runtime::RunOptions stats;
    stats.hook = [&](const std::string& name, const runtime::Value& value) {
      if (options.exclude.count(name)) return;
      LayerResult layer = make_layer(name, value);
      const Tensor* mine = value.is_tensor() ? &value.tensor() : nullptr;
      if (mine && mine->dtype() != DType::kString && !is_complex(mine->dtype()) && mine->numel() > 0) {
        layer.mean_absdiff = numpy_stats::mean_f32(*mine);
        double m = 0;
        for (int64_t i = 0; i < mine->numel(); ++i) m = std::max(m, std::fabs(mine->value_as_double(i)));
        layer.max_absdiff = m;
      }
      report.layers.push_back(std::move(layer));
    };
    ref->set_run_options(stats);
    ref->infer(feed);
    ref->set_run_options({});
  } else {
    // Plan the windows from the tensor sizes of a first, statistics-free reference run:
    // consecutive tensors (in execution order) up to the byte budget each.
    std::unordered_map<std::string, int64_t> sizes;
    runtime::RunOptions sizing;
    sizing.hook = [&](const std::string& name, const runtime::Value& value) {
      if (options.exclude.count(name)) return;
      sizes[name] = value.is_tensor() ? static_cast<int64_t>(value.tensor().size_bytes()) : 0;
    };
    ref->set_run_options(sizing);
    ref->infer(feed);
    ref->set_run_options({});
    std::vector<std::pair<size_t, size_t>> windows;
    for (size_t start = 0; start < names.size();) {
      size_t end = start;
      int64_t bytes = 0;
      while (end < names.size()) {
        const int64_t b = sizes.count(names[end]) ? sizes.at(names[end]) : 0;
        if (end > start && bytes + b > options.window_bytes) break;
        bytes += b;
        ++end;
      }
      windows.emplace_back(start, end);
      start = end;
    }

    // Window by window, the two runtimes take turns and never hold their working memory at the
    // same time: the peer runs a model cut down to the window's tensors and is released, then the
    // reference runs up to the window's last tensor, comparing each with the peer's copy as it is
    // produced. Peak memory is one runtime's working set plus one window of peer outputs.
    const WindowModels window_models(*model);
    int peers_alive = 0;
    for (const auto& [start, end] : windows) {
      std::vector<std::string> chunk(names.begin() + static_cast<std::ptrdiff_t>(start),
                                     names.begin() + static_cast<std::ptrdiff_t>(end));
      // The reference's cached kernel buffers go back to the system before the peer runs.
      runtime::BufferPool::instance().release_cached();
      malloc_trim(0);
      std::unordered_map<std::string, Tensor> window;
      {
        struct Alive {
          int& count;
          explicit Alive(int& c) : count(++c) {}
          ~Alive() { --count; }
        } alive(peers_alive);
        std::unique_ptr<Runner> peer_runner = loaders::RunnerFromOnnx(
            peer, [&window_models, chunk] { return window_models.build(chunk); }, base_dir, args);
        if (report.peer_name.empty()) report.peer_name = peer_runner->name();
        logger().verbose("Running ", peer, " with ", chunk.size(), " marked tensor(s): ", chunk.front(), " ... ",
                         chunk.back());
        ActiveRunner active_peer(*peer_runner);
        TensorMap outputs = peer_runner->infer(feed, false);
        int64_t bytes = 0;
        for (auto& [name, tensor] : outputs) {
          bytes += static_cast<int64_t>(tensor.size_bytes());
          // Own the bytes: the peer's buffers go away with its session.
          window.emplace(name, tensor.clone());
        }
        report.peak_peer_bytes_held = std::max(report.peak_peer_bytes_held, bytes);
        ++report.peer_runs;
      }
      // Hand the peer session's arenas back to the OS before the reference runs.
      malloc_trim(0);

      const std::string& last = chunk.back();
      runtime::RunOptions compare_run;
      compare_run.hook = [&](const std::string& name, const runtime::Value& value) {
        auto pos = position.find(name);
        if (pos == position.end() || pos->second < start || pos->second >= end) return;
        if (peers_alive) ++report.reference_steps_with_peer_alive;
        LayerResult layer = make_layer(name, value);
        auto it = window.find(name);
        if (!value.is_tensor()) {
          // noted by make_layer
        } else if (it == window.end()) {
          layer.note = "not produced by " + peer;
        } else {
          const Tensor& mine = value.tensor();
          const Tensor theirs = std::move(it->second);
          window.erase(it);
          report.total_tensor_bytes += static_cast<int64_t>(theirs.size_bytes());
          compare_layer(mine, theirs, options, layer);
          if (layer.compared && !layer.passed && !report.first_failure) report.first_failure = report.layers.size();
        }
        report.layers.push_back(std::move(layer));
        if (name == last) throw WindowDone{};
      };
      ref->set_run_options(compare_run);
      try {
        ref->infer(feed);
      } catch (const WindowDone&) {
      }
      ref->set_run_options({});
      window.clear();
      malloc_trim(0);
      logger().verbose("Window ", report.peer_runs, ": ", chunk.size(), " tensor(s); resident now ",
                       current_rss_bytes() >> 20, " MiB, peak ", peak_rss_bytes() >> 20, " MiB");
    }
  }
  report.peak_rss_bytes = peak_rss_bytes();
  if (report.peer_name.empty()) report.peer_name = peer;

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
      report_cat(Severity::kError, "FAILED | ", failed, " of ", compared, " compared tensor(s) exceed tolerance");
    } else {
      report_cat(Severity::kFinish, "PASSED | All ", compared, " compared tensor(s) are within tolerance");
    }
  }
  report_cat(Severity::kInfo, "Memory | peak resident: ", mib(report.peak_rss_bytes),
             " | all intermediate tensors together: ", mib(report.total_tensor_bytes), " | largest tensor: ",
             mib(report.largest_tensor_bytes), with_peer ? str_cat(" | ", peer, " runs (windows): ", report.peer_runs) : "");
  return report;
}

}  // namespace parity::compare
