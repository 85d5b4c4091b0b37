#include "compare/layerwise.h"

#include <onnx/onnx_pb.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "compare/loaders.h"
#include "compare/report.h"
#include "core/logger.h"
#include "runners/registry.h"
// The streaming comparison drives parity's own executor through its per-tensor hook.
#include "runners/ref/ref_runner.h"

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

LayerwiseReport compare_layerwise(const std::string& model_path, const std::string& peer, const cli::Args* args,
                                  const TensorMap& feed, const LayerwiseOptions& options) {
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

  // Plan the peer's windows from the tensor sizes of a first, statistics-free reference run:
  // consecutive tensors (in execution order) up to the byte budget each.
  std::vector<size_t> window_end(names.size(), names.size());
  if (!peer.empty()) {
    std::unordered_map<std::string, int64_t> sizes;
    runtime::RunOptions sizing;
    sizing.hook = [&](const std::string& name, const runtime::Value& value) {
      if (options.exclude.count(name)) return;
      sizes[name] = value.is_tensor() ? static_cast<int64_t>(value.tensor().size_bytes()) : 0;
    };
    ref->set_run_options(sizing);
    ref->infer(feed);
    ref->set_run_options({});
    size_t start = 0;
    while (start < names.size()) {
      size_t end = start;
      int64_t bytes = 0;
      while (end < names.size()) {
        const int64_t b = sizes.count(names[end]) ? sizes.at(names[end]) : 0;
        if (end > start && bytes + b > options.window_bytes) break;
        bytes += b;
        ++end;
      }
      for (size_t i = start; i < end; ++i) window_end[i] = end;
      start = end;
    }
  }

  // The peer's current window of marked outputs. Its runner stays active while the window is in
  // use: the outputs may live in the runtime's own buffers, so no copy is needed.
  std::unordered_map<std::string, Tensor> window;
  std::unique_ptr<Runner> window_runner;
  auto load_window = [&](size_t start) {
    window.clear();
    window_runner.reset();
    // Hand the freed window (and the old session's arenas) back to the OS, or the peak would
    // grow with every window instead of staying near one window's size.
    malloc_trim(0);
    const size_t end = window_end[start];
    std::vector<std::string> chunk(names.begin() + static_cast<std::ptrdiff_t>(start),
                                   names.begin() + static_cast<std::ptrdiff_t>(end));
    window_runner = loaders::RunnerFromOnnx(
        peer,
        [model, chunk] {
          auto copy = std::make_shared<onnx::ModelProto>(*model);
          loaders::modify_outputs(*copy, chunk);
          return copy;
        },
        base_dir, args);
    if (report.peer_name.empty()) report.peer_name = window_runner->name();
    logger().verbose("Running ", peer, " with ", chunk.size(), " marked tensor(s): ", chunk.front(), " ... ", chunk.back());
    window_runner->activate();
    TensorMap outputs = window_runner->infer(feed, false);
    int64_t bytes = 0;
    for (auto& [name, tensor] : outputs) {
      bytes += static_cast<int64_t>(tensor.size_bytes());
      window.emplace(name, std::move(tensor));
    }
    ++report.peer_runs;
    logger().verbose("Window ", report.peer_runs, ": ", chunk.size(), " tensor(s), ", bytes >> 20, " MiB; resident now ",
                     current_rss_bytes() >> 20, " MiB, peak ", peak_rss_bytes() >> 20, " MiB");
  };

  const bool with_peer = !peer.empty();
  auto hook = [&](const std::string& name, const runtime::Value& value) {
    if (options.exclude.count(name)) return;
    LayerResult layer;
    layer.name = name;
    if (auto it = producers.find(name); it != producers.end()) {
      layer.node = it->second.first;
      layer.op_type = it->second.second;
    }
    if (!value.is_tensor()) {
      layer.note = "not a tensor";
      report.layers.push_back(std::move(layer));
      return;
    }
    const Tensor& mine = value.tensor();
    layer.dtype = mine.dtype();
    layer.shape = mine.shape();
    report.largest_tensor_bytes = std::max<int64_t>(report.largest_tensor_bytes, static_cast<int64_t>(mine.size_bytes()));
    report.total_tensor_bytes += static_cast<int64_t>(mine.size_bytes());
    if (!with_peer) {
      if (mine.dtype() != DType::kString && !is_complex(mine.dtype()) && mine.numel() > 0) {
        layer.mean_absdiff = numpy_stats::mean_f32(mine);
        const Tensor magnitude = cast_up(mine).cast(DType::kFloat64);
        double m = 0;
        for (double v : magnitude.values<double>()) m = std::max(m, std::fabs(v));
        layer.max_absdiff = m;
      }
      report.layers.push_back(std::move(layer));
      return;
    }
    auto it = window.find(name);
    if (it == window.end() && position.count(name)) {
      load_window(position.at(name));
      it = window.find(name);
    }
    if (it == window.end()) {
      layer.note = "not produced by " + peer;
      report.layers.push_back(std::move(layer));
      return;
    }
    const Tensor theirs = std::move(it->second);
    window.erase(it);
    report.total_tensor_bytes += static_cast<int64_t>(theirs.size_bytes());
    const double atol = options.compare.atol.get(name), rtol = options.compare.rtol.get(name);
    layer.compared = true;
    if (mine.numel() != theirs.numel() || (options.compare.check_shapes && mine.shape() != theirs.shape())) {
      layer.passed = false;
      layer.note = "shapes " + shape_to_string(mine.shape()) + " vs " + shape_to_string(theirs.shape());
    } else {
      const Tensor& out0 = options.reference_first ? mine : theirs;
      const Tensor out1 = (options.reference_first ? theirs : mine).reshaped(out0.shape());
      try {
        const ErrorStatistics s = compute_error_statistics(out0, out1, atol, rtol, options.compare.infinities_compare_equal);
        layer.passed = !simple_check_failed(s, options.compare.check_error_stat.get(name), atol, rtol,
                                            options.compare.error_quantile.get(name), nullptr, nullptr);
        layer.max_absdiff = s.max_absdiff;
        layer.max_reldiff = s.max_reldiff;
        layer.mean_absdiff = s.mean_absdiff;
        layer.mean_reldiff = s.mean_reldiff;
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnsupported) throw;
        layer.compared = false;
        layer.note = e.what();
      }
    }
    if (layer.compared && !layer.passed && !report.first_failure) report.first_failure = report.layers.size();
    report.layers.push_back(std::move(layer));
  };

  runtime::RunOptions run_options;
  run_options.hook = hook;
  ref->set_run_options(run_options);
  ref->infer(feed);
  ref->set_run_options({});
  window.clear();
  window_runner.reset();
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
