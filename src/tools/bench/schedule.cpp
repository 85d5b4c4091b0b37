#include "tools/bench/schedule.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include <onnx/onnx_pb.h>

#include "compare/data_loader.h"
#include "compare/loaders.h"
#include "core/logger.h"
#include "model/cost.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"
#include "runtime/plan/plan_file.h"

namespace parity::tools::bench {

// numpy.percentile's default (linear interpolation between closest ranks) on sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  PARITY_ASSERT(!sorted.empty());
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

const RunnerCell* Row::cell(const std::string& runner) const {
  for (const auto& c : cells)
    if (c.runner == runner && c.unavailable.empty() && !c.samples.empty()) return &c;
  return nullptr;
}

std::optional<double> achieved_gflops(const Row& row, const std::string& runner) {
  const RunnerCell* cell = row.cell(runner);
  if (!cell || row.flops <= 0) return std::nullopt;
  return row.flops / cell->median() / 1e9;
}

std::optional<double> ref_over_ort(const Row& row) {
  const RunnerCell* ref = row.cell("ref");
  const RunnerCell* ort = row.cell("ort");
  if (!ref || !ort) return std::nullopt;
  return ref->median() / ort->median();
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// User + system CPU time of the whole process, every thread included.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}


std::string shape_dims(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}
// Slowest nodes kept per row (the JSON lists them all; the text shows --profile-top of them).
constexpr size_t kProfileNodesKept = 20;

}  // namespace

runners::RunnerOptions options_for_threads(runners::RunnerOptions options, int threads) {
  for (const auto& info : runners::RunnerRegistry::instance().all())
    if (info.set_threads) info.set_threads(options, threads);
  return options;
}


TensorMap bench_feed(const std::string& model, const TensorMetadata& metadata, Settings& settings) {
  compare::DataLoader loader;
  loader.seed(settings.seed());
  const auto& shapes = settings.data.input_shapes;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i].applies_to(model) && metadata.contains(shapes[i].input)) {
      loader.input_shape(shapes[i].input, shapes[i].shape);
      settings.shape_used[i] = true;
    }
  for (const auto& r : settings.data.val_ranges)
    if (r.input.empty() || metadata.contains(r.input)) loader.val_range(r.input, {r.min, r.max});
  loader.set_input_metadata(metadata);
  for (const auto& meta : metadata) {
    const bool overridden = std::any_of(shapes.begin(), shapes.end(), [&](const options::InputShape& s) {
      return s.input == meta.name && s.applies_to(model);
    });
    if (!meta.shape.is_static() && !overridden)
      logger().warning(model, ": input '", meta.name, "' has dynamic shape ", meta.shape.to_string(), "; using ",
                       shape_to_string(compare::default_static_shape(meta.shape)),
                       " (set it with --input-shapes NAME:[...])");
  }
  try {
    return loader.generate(0);
  } catch (const Error& e) {
    if (e.is_internal()) throw;
    fail(e.code(), model, ": ", e.what());
  }
}

namespace {

// Conv-like attributes that tell kernels apart: "k3x3 s2 g32" (kernel, strides, group).
std::string node_detail(const onnx::NodeProto& node) {
  std::string out;
  for (const auto& a : node.attribute()) {
    if (a.name() == "kernel_shape" || a.name() == "strides") {
      std::string dims;
      for (int64_t v : a.ints()) dims += (dims.empty() ? "" : "x") + std::to_string(v);
      if (a.name() == "strides" && dims.find_first_not_of("1x") == std::string::npos) continue;
      out += (out.empty() ? "" : " ") + std::string(a.name() == "kernel_shape" ? "k" : "s") + dims;
    } else if (a.name() == "group" && a.i() != 1) {
      out += (out.empty() ? "" : " ") + std::string("g") + std::to_string(a.i());
    }
  }
  return out;
}

// "Conv node 'conv1' (fused with Relu node 'relu1')" -> the head node's name, or its output
// ("Conv node (output 'y')"), and the op types fused into it ("Relu").
struct ParsedLabel {
  std::string name;
  std::string output;
  std::vector<std::string> fused;
};
ParsedLabel parse_label(const std::string& label) {
  ParsedLabel p;
  const std::string head = label.substr(0, label.find(" (fused with "));
  auto quoted = [&](const std::string& text, const std::string& after) -> std::optional<std::string> {
    const size_t at = text.find(after);
    if (at == std::string::npos) return std::nullopt;
    const size_t begin = at + after.size(), end = text.find('\'', begin);
    if (end == std::string::npos) return std::nullopt;
    return text.substr(begin, end - begin);
  };
  if (auto name = quoted(head, " node '")) p.name = *name;
  else if (auto output = quoted(head, "(output '")) p.output = *output;
  for (size_t at = label.find(" (fused with "); at != std::string::npos; at = label.find(" (fused with ", at + 1)) {
    const size_t begin = at + 13;
    p.fused.push_back(label.substr(begin, label.find(' ', begin) - begin));
  }
  return p;
}

// Profiled runs per row: each node's time is its median over them, so one run disturbed by the
// machine (a page fault, another process) moves no node's figure.
constexpr int64_t kProfileRuns = 9;

double median_of(std::vector<double> samples) {
  PARITY_ASSERT(!samples.empty(), "median of no samples");
  const size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  return (upper + *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
}

// Times ref node by node with the session's per-node profile (RunOptions::profile), on the plan
// the timed runs used: fused activations count toward the node they are fused into.
void profile_ref(runners::RefRunner& ref, const TensorMap& feed, const std::string& model, const Settings& settings,
                        Row& row) {
  // A plan file has no ONNX graph to describe nodes with and runs fused only (no hook): its nodes
  // are listed by their labels, without details or output shapes.
  const bool plan = runtime::plan::is_plan_file(model);
  const auto proto = plan ? std::make_shared<onnx::ModelProto>() : compare::loaders::onnx_from_path(model);
  const auto& graph = proto->graph();
  std::map<std::string, int> by_name, by_output;
  for (int n = 0; n < graph.node_size(); ++n) {
    if (!graph.node(n).name().empty()) by_name.emplace(graph.node(n).name(), n);
    for (const auto& out : graph.node(n).output())
      if (!out.empty()) by_output.emplace(out, n);
  }

  // Output shapes come from one run with a hook (which runs the unfused plan, so every node's
  // own output is seen); the timings from runs without one.
  std::map<std::string, std::string> shape_of;
  runtime::RunOptions shapes;
  shapes.hook = [&](const std::string& name, const runtime::Value& value) {
    if (value.is_tensor()) shape_of[name] = shape_dims(value.tensor().shape());
  };
  ref.set_run_options(shapes);
  if (!plan) ref.infer(feed, false);

  std::vector<runtime::NodeTiming> timings;
  runtime::RunOptions options;
  options.profile = &timings;
  ref.set_run_options(options);
  const int runs = static_cast<int>(std::clamp<int64_t>(settings.iterations, 1, kProfileRuns));
  std::vector<NodeTime> nodes;
  std::vector<std::vector<double>> node_seconds;
  std::vector<double> totals;
  for (int r = 0; r < runs; ++r) {
    timings.clear();
    const Clock::time_point start = Clock::now();
    ref.infer(feed, false);
    totals.push_back(seconds_since(start));
    if (nodes.empty()) {
      for (const auto& t : timings) {
        const ParsedLabel label = parse_label(t.label);
        NodeTime node;
        node.op_type = t.op_type;
        node.name = label.name.empty() ? label.output : label.name;
        int n = -1;
        if (auto it = by_name.find(label.name); !label.name.empty() && it != by_name.end()) n = it->second;
        if (auto it = by_output.find(label.output); !label.output.empty() && it != by_output.end()) n = it->second;
        if (n >= 0) {
          node.detail = node_detail(graph.node(n));
          if (graph.node(n).output_size() > 0) node.output_shape = shape_of[graph.node(n).output(0)];
        }
        for (const auto& f : label.fused) node.detail += (node.detail.empty() ? "+" : " +") + f;
        nodes.push_back(node);
      }
    }
    PARITY_ASSERT(timings.size() == nodes.size(), "the plan changed between profiled runs");
    node_seconds.resize(nodes.size());
    for (size_t i = 0; i < timings.size(); ++i) node_seconds[i].push_back(timings[i].seconds);
  }
  ref.set_run_options({});
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].seconds = median_of(node_seconds[i]);
  row.ref_profile_total = median_of(totals);

  std::map<std::string, OpTime> by_op;
  for (const auto& node : nodes) {
    OpTime& op = by_op[node.op_type];
    op.op_type = node.op_type;
    op.nodes += 1;
    op.seconds += node.seconds;
  }
  for (const auto& [name, op] : by_op) row.ref_profile.push_back(op);
  std::sort(row.ref_profile.begin(), row.ref_profile.end(),
            [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  row.ref_nodes = nodes;
  std::sort(row.ref_nodes.begin(), row.ref_nodes.end(),
            [](const NodeTime& a, const NodeTime& b) { return a.seconds > b.seconds; });
  if (row.ref_nodes.size() > kProfileNodesKept) row.ref_nodes.resize(kProfileNodesKept);
}
// FLOPs of one run at the feed's shapes (0 when the model cannot be counted: a parse error is
// the runners' to report).
double graph_flops(const std::string& model, const TensorMap& feed) {
  try {
    std::map<std::string, Shape> shapes;
    for (const auto& [name, tensor] : feed) shapes[name] = tensor.shape();
    return model::count_cost(*compare::loaders::onnx_from_path(model), shapes).flops();
  } catch (const Error& e) {
    if (e.is_internal()) throw;
    return 0.0;
  }
}

using RunnerList = std::vector<std::unique_ptr<runners::Runner>>;

// One runner per cell, created and activated; runners that cannot be built or loaded stay null,
// their cell saying why ("n/a: reason"), and are left out of the timing.
RunnerList load_runners(const std::string& model, const Settings& settings, const runners::RunnerOptions& options,
                        Row& row) {
  RunnerList runners(settings.runners.size());
  row.cells.resize(settings.runners.size());
  for (size_t i = 0; i < settings.runners.size(); ++i) {
    RunnerCell& cell = row.cells[i];
    cell.runner = settings.runners[i];
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(cell.runner);
    const Status available = info->available(options);
    if (!available.is_ok()) {
      cell.unavailable = "unavailable: " + available.message();
      continue;
    }
    // Creating a runner only reads its options: an error there is the user's (a bad option value).
    runners[i] = info->create(runners::RunnerConfig{model, options});
    try {
      runners[i]->activate();
    } catch (const Error& e) {
      if (e.is_internal()) throw;
      cell.unavailable = std::string("cannot load: ") + e.what();
      runners[i].reset();
    }
  }
  for (const auto& cell : row.cells)
    if (!cell.unavailable.empty()) logger().warning(cell.runner, ": n/a: ", cell.unavailable);
  return runners;
}

// One run's wall time, its CPU time added to the cell. A runner that fails on the feed (a wrong
// shape, an op it cannot run) drops out as n/a: it is released and nullopt comes back.
std::optional<double> run_once(std::unique_ptr<runners::Runner>& runner, RunnerCell& cell, const TensorMap& feed,
                               bool check_inputs) {
  try {
    const double cpu_before = process_cpu_seconds();  // outside the timed span
    const Clock::time_point start = Clock::now();
    runner->infer(feed, check_inputs);
    const double wall = seconds_since(start);
    cell.cpu_seconds += process_cpu_seconds() - cpu_before;
    return wall;
  } catch (const Error& e) {
    if (e.is_internal()) throw;
    cell.unavailable = std::string("failed: ") + e.what();
    logger().warning(cell.runner, ": n/a: ", cell.unavailable);
    runner.reset();
    return std::nullopt;
  }
}

// Warm-up runs (the first checks the feed), then rounds in which every runner runs once, round k
// starting with runner k mod n, until --iterations rounds and --min-time seconds have passed.
void time_alternating(RunnerList& runners, const TensorMap& feed, const Settings& settings, Row& row) {
  for (size_t i = 0; i < runners.size(); ++i)
    for (int64_t w = 0; runners[i] && w < std::max<int64_t>(settings.warm_up, 1); ++w)
      run_once(runners[i], row.cells[i], feed, w == 0);
  for (auto& cell : row.cells) cell.cpu_seconds = 0.0;  // count the timed runs only

  const Clock::time_point start = Clock::now();
  const size_t n = runners.size();
  while (row.rounds < settings.iterations || seconds_since(start) < settings.min_time) {
    bool any = false;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (k + static_cast<size_t>(row.rounds)) % n;
      if (!runners[i]) continue;
      if (auto t = run_once(runners[i], row.cells[i], feed, false)) row.cells[i].samples.push_back(*t), any = true;
    }
    if (!any) break;
    ++row.rounds;
  }
  for (auto& cell : row.cells) {
    std::sort(cell.samples.begin(), cell.samples.end());
    if (cell.unavailable.empty() && cell.samples.empty()) cell.unavailable = "not timed";
  }
}

}  // namespace

Row bench_row(const std::string& model, int threads, Settings& settings, const runners::RunnerOptions& runner_options) {
  Row row;
  row.model = model;
  row.label = std::filesystem::path(model).stem().string();
  row.threads = threads;
  logger().start("Benchmarking ", model, " at ", threads, " thread(s)");
  RunnerList runners = load_runners(model, settings, options_for_threads(runner_options, threads), row);

  // One feed for all, generated from the first runner that loaded (ref's view when ref is there).
  const auto first = std::find_if(runners.begin(), runners.end(), [](const auto& r) { return r != nullptr; });
  if (first == runners.end()) return row;
  const TensorMap feed = bench_feed(model, (*first)->input_metadata(), settings);
  // The first inputs name the row; a decoder's dozens of cache inputs would only widen the table.
  constexpr size_t kInputsShown = 2;
  size_t shown = 0;
  for (const auto& [name, tensor] : feed)
    if (shown++ < kInputsShown) row.inputs += (row.inputs.empty() ? "" : ", ") + name + " " + shape_dims(tensor.shape());
  if (shown > kInputsShown) row.inputs += ", +" + std::to_string(shown - kInputsShown) + " more";

  row.flops = graph_flops(model, feed);
  time_alternating(runners, feed, settings, row);
  if (settings.profile)
    for (const auto& runner : runners)
      if (auto* ref = dynamic_cast<runners::RefRunner*>(runner.get())) profile_ref(*ref, feed, model, settings, row);
  return row;
}

}  // namespace parity::tools::bench
