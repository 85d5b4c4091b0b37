// `parity bench MODEL... --runners ref,ort,opencv --threads 1,2`: times several runners on the same
// models and inputs in one process and reports median latency per runner and the ratio ref/ort.
//
// Fairness rules: every runner of a row gets the same generated feed and the same thread count;
// timed iterations alternate between runners (round k starts with runner k mod n), so load from
// other processes and thermal drift hit all runners alike instead of whichever ran last.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sys/resource.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <thread>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "compare/data_loader.h"
#include "compare/loaders.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/version.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"

namespace parity::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// User + system CPU time of the whole process, every thread included.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// "1,2" / "[1,2]" / separate values -> items.
std::vector<std::string> comma_items(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (std::string value : values) {
    if (!value.empty() && value.front() == '[' && value.back() == ']') value = value.substr(1, value.size() - 2);
    size_t pos = 0;
    while (pos <= value.size()) {
      const size_t comma = std::min(value.find(',', pos), value.size());
      std::string item = value.substr(pos, comma - pos);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (!item.empty()) items.push_back(item);
      pos = comma + 1;
    }
  }
  return items;
}

// numpy.percentile's default (linear interpolation between closest ranks) on sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  PARITY_ASSERT(!sorted.empty());
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

// --input-shapes [MODEL=]name:[d0,d1,...]: MODEL (a path as given, a file name or a file stem)
// limits the override to one model, so two models with an input of the same name can differ.
struct ShapeOverride {
  std::string model;  // "" = every model with that input
  std::string input;
  Shape shape;
  bool used = false;
};

ShapeOverride parse_shape_override(const std::string& text) {
  ShapeOverride o;
  std::string rest = text;
  const size_t eq = rest.find('=');
  if (eq != std::string::npos) {
    o.model = rest.substr(0, eq);
    rest = rest.substr(eq + 1);
  }
  auto [name, value] = split_name_value(rest);
  PARITY_CHECK(!name.empty() && !value.empty(), kInvalidArgument, "--input-shapes '", text,
               "' must be [MODEL=]name:[d0,d1,...]");
  o.input = name;
  for (const auto& d : comma_items({value})) {
    o.shape.push_back(parse_int(d, "--input-shapes"));
    PARITY_CHECK(o.shape.back() >= 0, kInvalidArgument, "--input-shapes '", text, "': negative dimension");
  }
  return o;
}

bool override_matches_model(const ShapeOverride& o, const std::string& model) {
  if (o.model.empty()) return true;
  const std::filesystem::path p(model);
  return o.model == model || o.model == p.filename().string() || o.model == p.stem().string();
}

// Where a ref run spends its time, by operator type (from RunOptions::hook timestamps).
struct OpTime {
  std::string op_type;
  int nodes = 0;
  double seconds = 0.0;  // per run
};

// One node's time in a --profile run, with what tells its kernel apart.
struct NodeTime {
  std::string op_type;
  std::string name;
  std::string detail;        // "k3x3 s2 g32" for convolutions and pooling
  std::string output_shape;  // "1x32x112x112"
  double seconds = 0.0;      // per run
};

// Slowest nodes kept per row (the JSON lists them all; the text shows --profile-top of them).
constexpr size_t kProfileNodesKept = 20;

struct RunnerCell {
  std::string runner;
  std::string unavailable;      // non-empty: why this runner has no figure
  std::vector<double> samples;  // seconds, sorted once timing is done
  double cpu_seconds = 0.0;     // process CPU time (all threads) during the timed runs
  double median() const { return percentile(samples, 50); }
};

struct Row {
  std::string model;  // as given
  std::string label;  // file stem
  int threads = 1;
  std::string inputs;  // "x 1x3x224x224"
  std::vector<RunnerCell> cells;
  int rounds = 0;
  std::vector<OpTime> ref_profile;  // with --profile, slowest first
  std::vector<NodeTime> ref_nodes;  // with --profile, slowest first
  double ref_profile_total = 0.0;   // seconds per profiled run
  const RunnerCell* cell(const std::string& runner) const {
    for (const auto& c : cells)
      if (c.runner == runner && c.unavailable.empty() && !c.samples.empty()) return &c;
    return nullptr;
  }
};

std::optional<double> ref_over_ort(const Row& row) {
  const RunnerCell* ref = row.cell("ref");
  const RunnerCell* ort = row.cell("ort");
  if (!ref || !ort) return std::nullopt;
  return ref->median() / ort->median();
}

// 3 significant digits, never scientific: 0.0123, 1.23, 12.3, 1234.
std::string fixed3(double v) {
  const int digits = v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : v >= 0.1 ? 3 : 4;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string shape_dims(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

std::string first_line(std::string text, size_t max_chars) {
  text = text.substr(0, text.find('\n'));
  if (text.size() > max_chars) text = text.substr(0, max_chars - 3) + "...";
  return text;
}

std::string read_first_match(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return first_line(line.substr(line.find_first_not_of(" \t", colon + 1)), 200);
    }
  return {};
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", one, five, fifteen);
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

struct Settings {
  std::vector<std::string> models;
  std::vector<std::string> runners;
  std::vector<int> threads;
  int64_t iterations = 10;
  int64_t warm_up = 2;
  double min_time = 1.0;
  int64_t seed = 1;
  std::vector<ShapeOverride> shapes;
  bool profile = false;
  int64_t profile_top = 8;
};

class BenchCommand : public Command {
 public:
  std::string name() const override { return "bench"; }
  std::string summary() const override {
    return "Time runners (ref, ort, opencv) on the same models and inputs, alternating, per thread count";
  }

  void add_options(ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "models", .help = "ONNX models to time", .metavar = "MODEL",
                .arity = Arity::kOneOrMore, .required = true});
    parser.group("Benchmark");
    parser.add({.flags = {"--runners"}, .help = "Runners to time, comma-separated (default ref,ort,opencv)",
                .metavar = "NAMES", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--threads"},
                .help = "Thread counts, comma-separated (default 1,2); each runner gets the count: ref's kernel "
                        "threads, ORT's intra-op threads (inter-op 1, sequential), OpenCV's cv::setNumThreads",
                .metavar = "N", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--iterations", "--iters"}, .dest = "iterations",
                .help = "Minimum timed iterations per runner (default 10)", .metavar = "N"});
    parser.add({.flags = {"--min-time"},
                .help = "Keep timing (after --iterations) until this many seconds passed per row (default 1)",
                .metavar = "S"});
    parser.add({.flags = {"--warm-up"}, .help = "Untimed runs per runner before timing (default 2; at least one runs, checking the feed)", .metavar = "N"});
    parser.add({.flags = {"--seed"}, .help = "Seed of the random inputs (default 1)", .metavar = "SEED"});
    parser.add({.flags = {"--input-shapes", "--inputs"}, .dest = "input_shapes",
                .help = "Shapes of inputs with dynamic dimensions, [MODEL=]name:[d0,d1,...]; MODEL (path, file name "
                        "or stem) limits it to one model",
                .metavar = "SHAPE", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--profile"},
                .help = "Also time ref per node (the session's per-node profile) and print the operator types and nodes that "
                        "take longest",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--profile-top"}, .help = "Operator types listed by --profile (default 8)", .metavar = "N"});
    parser.group("Reports");
    parser.add({.flags = {"--markdown"}, .help = "Write the table as Markdown (README-ready)", .metavar = "FILE"});
    parser.add({.flags = {"--json"}, .help = "Write every figure and sample as JSON", .metavar = "FILE"});

    // Each runtime's own options (--ort-library, --kernels, --opencv-no-fusion, ...), except those
    // bench defines itself: bench's --threads replaces ref's.
    for (const auto& info : RunnerRegistry::instance().all()) {
      if (!info.add_options) continue;
      ArgParser group("group", "");
      info.add_options(group);
      for (const OptionSpec& spec : group.options())
        if (std::none_of(spec.flags.begin(), spec.flags.end(), [&](const std::string& f) { return parser.defines(f); }))
          parser.add(spec);
    }
    parser.set_epilog(
        "Examples:\n"
        "  parity bench models/demo.onnx                          ref, ort and opencv at 1 and 2 threads\n"
        "  parity bench det.onnx rec.onnx --input-shapes det=x:[1,3,640,640] rec=x:[1,3,48,320]\n"
        "  parity bench model.onnx --runners ref,ort --threads 1 --profile   where ref spends its time\n"
        "--threads sets every runner's thread count: it replaces --ort-threads, --ort-inter-threads (1) and\n"
        "--opencv-threads. ONNX Runtime runs with --ort-config session.force_spinning_stop=1 unless given\n"
        "otherwise, so its idle workers do not spin through the next runner's turn. The JSON report has\n"
        "every sample and each runner's CPU time per wall time.");
  }

  int run(const Args& args) override {
    Settings settings = read_settings(args);
    const std::string machine_load = load_average();
    std::vector<Row> rows;
    for (const auto& model : settings.models)
      for (int threads : settings.threads) rows.push_back(bench_row(model, threads, settings, args));
    for (const auto& o : settings.shapes)
      if (!o.used) logger().warning("--input-shapes ", o.model.empty() ? "" : o.model + "=", o.input, " matched no model");

    Json report = json_report(rows, settings, args, machine_load);
    std::fputs(text_table(rows, settings).c_str(), stdout);
    if (settings.profile) std::fputs(profile_text(rows, settings).c_str(), stdout);
    std::fflush(stdout);
    if (auto path = args.get("markdown")) formats::write_binary_file(*path, markdown(rows, settings, report));
    if (auto path = args.get("json")) formats::write_binary_file(*path, report.dump(2) + "\n");

    bool every_row_measured = true;
    for (const auto& row : rows)
      if (std::none_of(row.cells.begin(), row.cells.end(), [](const RunnerCell& c) { return c.unavailable.empty(); })) {
        logger().error(row.label, " at ", row.threads, " thread(s): no runner could be timed");
        every_row_measured = false;
      }
    return every_row_measured ? kExitPassed : kExitFailed;
  }

 private:
  static Settings read_settings(const Args& args) {
    Settings s;
    s.models = args.list("models");
    for (const auto& m : s.models) formats::check_readable_file(m);

    s.runners = comma_items(args.has("runners") ? args.list("runners") : std::vector<std::string>{"ref,ort,opencv"});
    PARITY_CHECK(!s.runners.empty(), kInvalidArgument, "--runners: no runner named");
    std::vector<std::string> known;
    for (const auto& info : RunnerRegistry::instance().all()) known.push_back(info.name);
    for (const auto& r : s.runners) {
      PARITY_CHECK(RunnerRegistry::instance().find(r), kInvalidArgument, "--runners: unknown runner '", r,
                   "'; runners: ", join_names(known));
      PARITY_CHECK(std::count(s.runners.begin(), s.runners.end(), r) == 1, kInvalidArgument, "--runners: '", r,
                   "' is named twice");
    }

    for (const auto& t : comma_items(args.has("threads") ? args.list("threads") : std::vector<std::string>{"1,2"})) {
      const int64_t n = parse_int(t, "--threads");
      PARITY_CHECK(n >= 1 && n <= 1024, kInvalidArgument, "--threads must be between 1 and 1024, got ", t);
      s.threads.push_back(static_cast<int>(n));
    }
    PARITY_CHECK(!s.threads.empty(), kInvalidArgument, "--threads: no thread count given");

    auto positive = [&](const char* dest, const char* flag, int64_t fallback, int64_t min) {
      const int64_t v = args.has(dest) ? parse_int(*args.get(dest), flag) : fallback;
      PARITY_CHECK(v >= min, kInvalidArgument, flag, " must be at least ", min, ", got ", v);
      return v;
    };
    s.iterations = positive("iterations", "--iterations", 10, 1);
    s.warm_up = positive("warm_up", "--warm-up", 2, 0);
    s.profile_top = positive("profile_top", "--profile-top", 8, 1);
    if (auto t = args.get("min_time")) {
      s.min_time = parse_double(*t, "--min-time");
      PARITY_CHECK(s.min_time >= 0 && std::isfinite(s.min_time), kInvalidArgument,
                   "--min-time must be 0 or more seconds, got ", *t);
    }
    if (auto seed = args.get("seed")) s.seed = parse_int(*seed, "--seed");
    for (const auto& item : args.list("input_shapes")) {
      s.shapes.push_back(parse_shape_override(item));
      const std::string& m = s.shapes.back().model;
      PARITY_CHECK(m.empty() || std::any_of(s.models.begin(), s.models.end(),
                                            [&](const std::string& model) { return override_matches_model(s.shapes.back(), model); }),
                   kInvalidArgument, "--input-shapes '", item, "': no model given is called '", m, "'");
    }
    s.profile = args.flag("profile");
    for (const char* dest : {"markdown", "json"})
      if (auto path = args.get(dest)) formats::check_writable_location(*path);
    return s;
  }

  // The same options with this row's thread count for every runner.
  static Args args_for_threads(const Args& args, int threads) {
    Args derived = args;
    const std::string n = std::to_string(threads);
    derived.add_value("threads", n);  // ref (bench's --threads list is replaced by its last value)
    derived.add_value("ort_threads", n);
    derived.add_value("ort_inter_threads", "1");
    derived.add_value("opencv_threads", n);
    derived.add_value("torch_threads", n);
    // ORT's idle workers spin after a run by default, taking cores from the runner timed next;
    // stopping them when a run returns keeps ORT's in-run behaviour and the alternation fair.
    const auto entries = args.list("ort_config");
    if (std::none_of(entries.begin(), entries.end(),
                     [](const std::string& e) { return e.rfind("session.force_spinning_stop=", 0) == 0; }))
      derived.add_value("ort_config", "session.force_spinning_stop=1");
    return derived;
  }

  static Row bench_row(const std::string& model, int threads, Settings& settings, const Args& args) {
    Row row;
    row.model = model;
    row.label = std::filesystem::path(model).stem().string();
    row.threads = threads;
    logger().start("Benchmarking ", model, " at ", threads, " thread(s)");
    const Args derived = args_for_threads(args, threads);

    // Runners that cannot be built or loaded get "n/a: reason" and are left out of the timing.
    std::vector<std::unique_ptr<Runner>> runners(settings.runners.size());
    row.cells.resize(settings.runners.size());
    for (size_t i = 0; i < settings.runners.size(); ++i) {
      RunnerCell& cell = row.cells[i];
      cell.runner = settings.runners[i];
      const RunnerInfo* info = RunnerRegistry::instance().find(cell.runner);
      const Status available = info->availability ? info->availability(&derived) : Status::ok();
      if (!available.is_ok()) {
        cell.unavailable = "unavailable: " + available.message();
        continue;
      }
      // Creating a runner only reads its options: an error there is the user's (a bad option value).
      runners[i] = info->create(RunnerConfig{model, &derived});
      try {
        runners[i]->activate();
      } catch (const Error& e) {
        if (e.is_internal()) throw;
        cell.unavailable = std::string("cannot load: ") + e.what();
        runners[i].reset();
      }
    }
    for (size_t i = 0; i < runners.size(); ++i)
      if (!row.cells[i].unavailable.empty()) logger().warning(row.cells[i].runner, ": n/a: ", row.cells[i].unavailable);

    // One feed for all, generated from the first runner that loaded (ref's view when ref is there).
    const auto first = std::find_if(runners.begin(), runners.end(), [](const auto& r) { return r != nullptr; });
    if (first == runners.end()) return row;
    const TensorMap feed = make_feed(model, (*first)->input_metadata(), settings);
    for (const auto& [name, tensor] : feed)
      row.inputs += (row.inputs.empty() ? "" : ", ") + name + " " + shape_dims(tensor.shape());

    // A runner that fails on the feed (a wrong shape, an op it cannot run) drops out as n/a.
    auto run_once = [&](size_t i, bool check_inputs) -> std::optional<double> {
      try {
        const double cpu_before = process_cpu_seconds();  // outside the timed span
        const Clock::time_point start = Clock::now();
        runners[i]->infer(feed, check_inputs);
        const double wall = seconds_since(start);
        row.cells[i].cpu_seconds += process_cpu_seconds() - cpu_before;
        return wall;
      } catch (const Error& e) {
        if (e.is_internal()) throw;
        row.cells[i].unavailable = std::string("failed: ") + e.what();
        logger().warning(row.cells[i].runner, ": n/a: ", row.cells[i].unavailable);
        runners[i].reset();
        return std::nullopt;
      }
    };
    for (size_t i = 0; i < runners.size(); ++i)
      for (int64_t w = 0; runners[i] && w < std::max<int64_t>(settings.warm_up, 1); ++w) run_once(i, w == 0);
    for (auto& cell : row.cells) cell.cpu_seconds = 0.0;  // count the timed runs only

    const Clock::time_point start = Clock::now();
    const size_t n = runners.size();
    while (row.rounds < settings.iterations || seconds_since(start) < settings.min_time) {
      bool any = false;
      for (size_t k = 0; k < n; ++k) {
        const size_t i = (k + static_cast<size_t>(row.rounds)) % n;
        if (!runners[i]) continue;
        if (auto t = run_once(i, false)) row.cells[i].samples.push_back(*t), any = true;
      }
      if (!any) break;
      ++row.rounds;
    }
    for (size_t i = 0; i < n; ++i) {
      auto& samples = row.cells[i].samples;
      std::sort(samples.begin(), samples.end());
      if (row.cells[i].unavailable.empty() && samples.empty()) row.cells[i].unavailable = "not timed";
    }

    if (settings.profile)
      for (size_t i = 0; i < n; ++i)
        if (auto* ref = dynamic_cast<RefRunner*>(runners[i].get())) profile_ref(*ref, feed, model, settings, row);
    return row;
  }

  static TensorMap make_feed(const std::string& model, const TensorMetadata& metadata, Settings& settings) {
    compare::DataLoader loader;
    loader.seed(settings.seed);
    for (auto& o : settings.shapes)
      if (override_matches_model(o, model) && metadata.contains(o.input)) {
        loader.input_shape(o.input, o.shape);
        o.used = true;
      }
    loader.set_input_metadata(metadata);
    for (const auto& meta : metadata) {
      const bool overridden = std::any_of(settings.shapes.begin(), settings.shapes.end(), [&](const ShapeOverride& o) {
        return o.input == meta.name && override_matches_model(o, model);
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

  // Conv-like attributes that tell kernels apart: "k3x3 s2 g32" (kernel, strides, group).
  static std::string node_detail(const onnx::NodeProto& node) {
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
  static ParsedLabel parse_label(const std::string& label) {
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

  // Times ref node by node with the session's per-node profile (RunOptions::profile), on the plan
  // the timed runs used: fused activations count toward the node they are fused into.
  static void profile_ref(RefRunner& ref, const TensorMap& feed, const std::string& model, const Settings& settings,
                          Row& row) {
    const auto proto = loaders::onnx_from_path(model);
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
    ref.infer(feed, false);

    std::vector<runtime::NodeTiming> timings;
    runtime::RunOptions options;
    options.profile = &timings;
    ref.set_run_options(options);
    const int runs = static_cast<int>(std::min<int64_t>(settings.iterations, 3));
    std::vector<NodeTime> nodes;
    double total = 0.0;
    for (int r = 0; r < runs; ++r) {
      timings.clear();
      const Clock::time_point start = Clock::now();
      ref.infer(feed, false);
      total += seconds_since(start);
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
      for (size_t i = 0; i < timings.size(); ++i) nodes[i].seconds += timings[i].seconds / runs;
    }
    ref.set_run_options({});
    row.ref_profile_total = total / runs;

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

  // ---- reports --------------------------------------------------------------------------------

  // A runner without figures shows "n/a (k)"; note k under the table says why (equal reasons share
  // one note, e.g. the same import failure at every thread count).
  static std::string cell_text(const RunnerCell& c, const Row& row, std::vector<std::string>& notes) {
    if (!c.unavailable.empty()) {
      // The row names the model: its path inside the reason is only noise.
      std::string reason = first_line(c.unavailable, 400);
      const std::string file = std::filesystem::path(row.model).filename().string();
      for (size_t at = reason.find(row.model); at != std::string::npos; at = reason.find(row.model, at + file.size()))
        reason.replace(at, row.model.size(), file);
      const std::string note = str_cat(c.runner, " on ", row.label, ": ", reason);
      auto it = std::find(notes.begin(), notes.end(), note);
      if (it == notes.end()) it = notes.insert(notes.end(), note);
      return str_cat("n/a (", it - notes.begin() + 1, ")");
    }
    return fixed3(c.median() * 1e3) + " (" + fixed3(percentile(c.samples, 10) * 1e3) + "-" +
           fixed3(percentile(c.samples, 90) * 1e3) + ")";
  }

  static bool has_ratio(const Settings& s) {
    return std::count(s.runners.begin(), s.runners.end(), "ref") && std::count(s.runners.begin(), s.runners.end(), "ort");
  }

  static std::vector<std::vector<std::string>> table(const std::vector<Row>& rows, const Settings& s,
                                                     std::vector<std::string>& notes) {
    std::vector<std::vector<std::string>> t;
    std::vector<std::string> header = {"model", "input", "threads"};
    for (const auto& r : s.runners) header.push_back(r + " ms median (p10-p90)");
    if (has_ratio(s)) header.push_back("ref/ort");
    t.push_back(header);
    for (const auto& row : rows) {
      std::vector<std::string> line = {row.label, row.inputs.empty() ? "-" : row.inputs, std::to_string(row.threads)};
      for (const auto& c : row.cells) line.push_back(cell_text(c, row, notes));
      if (has_ratio(s)) {
        const auto ratio = ref_over_ort(row);
        line.push_back(ratio ? fixed3(*ratio) + "x" : "-");
      }
      t.push_back(line);
    }
    return t;
  }

  // Median over the models of each runner's CPU time per wall time, per thread count: how many
  // cores a runner kept busy. Below 1 at one thread means the machine did not give it a whole core.
  static std::string cpu_summary(const std::vector<Row>& rows, const Settings& s) {
    std::string out;
    for (int threads : s.threads) {
      std::string line;
      for (const auto& runner : s.runners) {
        std::vector<double> shares;
        for (const auto& row : rows)
          if (const RunnerCell* c = row.threads == threads ? row.cell(runner) : nullptr)
            shares.push_back(c->cpu_seconds / std::accumulate(c->samples.begin(), c->samples.end(), 0.0));
        if (shares.empty()) continue;
        std::sort(shares.begin(), shares.end());
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", percentile(shares, 50));
        line += str_cat(line.empty() ? "" : ", ", runner, " ", buf);
      }
      if (!line.empty()) out += str_cat(out.empty() ? "" : "; ", threads, " thread", threads == 1 ? "" : "s", ": ", line);
    }
    return out.empty() ? out : "CPU time per wall time (median over models): " + out;
  }

  // Geometric mean of ref/ort over the models, per thread count.
  static std::string ratio_summary(const std::vector<Row>& rows, const Settings& s) {
    if (!has_ratio(s)) return {};
    std::string out;
    for (int threads : s.threads) {
      double log_sum = 0.0;
      int count = 0;
      for (const auto& row : rows)
        if (row.threads == threads)
          if (auto r = ref_over_ort(row)) log_sum += std::log(*r), ++count;
      if (count)
        out += str_cat(out.empty() ? "" : ", ", threads, " thread", threads == 1 ? "" : "s", ": ",
                       fixed3(std::exp(log_sum / count)), "x over ", count, " model", count == 1 ? "" : "s");
    }
    return out.empty() ? out : "ref/ort geometric mean: " + out;
  }

  static std::string text_table(const std::vector<Row>& rows, const Settings& s) {
    std::vector<std::string> notes;
    const auto t = table(rows, s, notes);
    std::vector<size_t> width(t[0].size(), 0);
    for (const auto& line : t)
      for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
    std::string out = "\nLatency (ms, median and p10-p90 over alternating timed runs):\n";
    for (size_t l = 0; l < t.size(); ++l) {
      out += " ";
      for (size_t c = 0; c < t[l].size(); ++c) out += " " + t[l][c] + std::string(width[c] - t[l][c].size() + 1, ' ');
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
    for (size_t i = 0; i < notes.size(); ++i) out += str_cat("  (", i + 1, ") ", notes[i], "\n");
    const std::string summary = ratio_summary(rows, s), cpu = cpu_summary(rows, s);
    return out + (summary.empty() ? "" : "  " + summary + "\n") + (cpu.empty() ? "" : "  " + cpu + "\n");
  }

  static std::string profile_text(const std::vector<Row>& rows, const Settings& s) {
    std::string out;
    for (const auto& row : rows) {
      if (row.ref_profile.empty()) continue;
      out += str_cat("\nref per operator type: ", row.label, " at ", row.threads, " thread(s), ",
                     fixed3(row.ref_profile_total * 1e3), " ms per run\n");
      for (size_t i = 0; i < row.ref_profile.size() && i < static_cast<size_t>(s.profile_top); ++i) {
        const OpTime& t = row.ref_profile[i];
        char buf[160];
        std::snprintf(buf, sizeof buf, "  %-24s %4d node%s %10s ms %5.1f%%\n", t.op_type.c_str(), t.nodes,
                      t.nodes == 1 ? " " : "s", fixed3(t.seconds * 1e3).c_str(),
                      row.ref_profile_total > 0 ? 100.0 * t.seconds / row.ref_profile_total : 0.0);
        out += buf;
      }
      out += "  slowest nodes:\n";
      for (size_t i = 0; i < row.ref_nodes.size() && i < static_cast<size_t>(s.profile_top); ++i) {
        const NodeTime& t = row.ref_nodes[i];
        out += str_cat("    ", fixed3(t.seconds * 1e3), " ms  ", t.op_type, t.detail.empty() ? "" : " " + t.detail,
                       " -> ", t.output_shape.empty() ? "?" : t.output_shape, "  (", t.name, ")\n");
      }
    }
    return out;
  }

  static std::string markdown_escape(std::string text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  }

  static std::string markdown(const std::vector<Row>& rows, const Settings& s, const Json& report) {
    const Json& machine = report["machine"];
    std::string out = str_cat("Measured ", machine["date"].get<std::string>(), " on ", machine["cpu"].get<std::string>(),
                              " (", machine["logical_cpus"].get<int>(), " logical CPUs, load average ",
                              machine["load_average_before"].get<std::string>(), " before, ",
                              machine["load_average_after"].get<std::string>(), " after); ");
    std::vector<std::string> versions;
    for (const auto& [name, version] : report["runners"].items())
      versions.push_back(name + " " + version.get<std::string>());
    out += str_cat("runners: ", join_names(versions), ". Median latency in ms (p10-p90) over at least ", s.iterations,
                   " alternating timed runs and ", s.min_time, " s per row, after ", s.warm_up, " warm-up run", s.warm_up == 1 ? "" : "s", ".\n\n");
    std::vector<std::string> notes;
    const auto t = table(rows, s, notes);
    for (size_t l = 0; l < t.size(); ++l) {
      out += "|";
      for (const auto& cell : t[l]) out += " " + markdown_escape(cell) + " |";
      out += "\n";
      if (l == 0) {
        out += "|";
        for (size_t c = 0; c < t[l].size(); ++c) out += c < 3 ? "---|" : "--:|";
        out += "\n";
      }
    }
    if (!notes.empty()) out += "\n";
    for (size_t i = 0; i < notes.size(); ++i) out += str_cat("(", i + 1, ") ", markdown_escape(notes[i]), "  \n");
    const std::string summary = ratio_summary(rows, s);
    if (!summary.empty()) out += "\n" + summary + ".\n";
    const std::string cpu = cpu_summary(rows, s);
    if (!cpu.empty()) out += "\n" + cpu + ".\n";
    for (const auto& row : rows) {
      if (row.ref_profile.empty()) continue;
      out += str_cat("\nref per operator type, ", row.label, " at ", row.threads, " thread(s) (",
                     fixed3(row.ref_profile_total * 1e3), " ms per run):\n\n| op | nodes | ms | share |\n|---|--:|--:|--:|\n");
      for (size_t i = 0; i < row.ref_profile.size() && i < static_cast<size_t>(s.profile_top); ++i) {
        const OpTime& op = row.ref_profile[i];
        char share[32];
        std::snprintf(share, sizeof share, "%.1f%%", row.ref_profile_total > 0 ? 100.0 * op.seconds / row.ref_profile_total : 0.0);
        out += str_cat("| ", op.op_type, " | ", op.nodes, " | ", fixed3(op.seconds * 1e3), " | ", share, " |\n");
      }
    }
    return out;
  }

  static Json json_report(const std::vector<Row>& rows, const Settings& s, const Args& args, const std::string& load_before) {
    Json report;
    report["machine"] = {{"date", utc_now()},
                         {"cpu", read_first_match("/proc/cpuinfo", "model name")},
                         {"logical_cpus", static_cast<int>(std::thread::hardware_concurrency())},
                         {"load_average_before", load_before},
                         {"load_average_after", load_average()},
                         {"parity_version", kParityVersion}};
    report["settings"] = {{"threads", s.threads},
                          {"iterations", s.iterations},
                          {"min_time_s", s.min_time},
                          {"warm_up", s.warm_up},
                          {"seed", s.seed}};
    Json runners = Json::object();
    for (const auto& name : s.runners) {
      const RunnerInfo* info = RunnerRegistry::instance().find(name);
      const bool available = !info->availability || info->availability(&args).is_ok();
      runners[name] = available && info->version ? info->version(&args) : std::string(available ? "" : "unavailable");
    }
    report["runners"] = runners;
    Json results = Json::array();
    for (const auto& row : rows) {
      Json r = {{"model", row.model}, {"label", row.label}, {"threads", row.threads}, {"inputs", row.inputs},
                {"rounds", row.rounds}};
      Json cells = Json::object();
      for (const auto& c : row.cells) {
        if (!c.unavailable.empty()) {
          cells[c.runner] = {{"unavailable", c.unavailable}};
          continue;
        }
        Json samples = Json::array();
        for (double v : c.samples) samples.push_back(v * 1e3);
        cells[c.runner] = {{"median_ms", c.median() * 1e3},
                           {"p10_ms", percentile(c.samples, 10) * 1e3},
                           {"p90_ms", percentile(c.samples, 90) * 1e3},
                           {"min_ms", c.samples.front() * 1e3},
                           // CPU time over wall time of the timed runs: about the threads it kept busy.
                           {"cpu_per_wall", c.cpu_seconds / std::accumulate(c.samples.begin(), c.samples.end(), 0.0)},
                           {"iterations", c.samples.size()},
                           {"samples_ms", samples}};
      }
      r["runners"] = cells;
      const auto ratio = ref_over_ort(row);
      r["ref_over_ort"] = ratio ? Json(*ratio) : Json(nullptr);
      if (!row.ref_profile.empty()) {
        Json ops = Json::array();
        for (const auto& op : row.ref_profile)
          ops.push_back({{"op_type", op.op_type}, {"nodes", op.nodes}, {"ms", op.seconds * 1e3}});
        Json nodes = Json::array();
        for (const auto& t : row.ref_nodes)
          nodes.push_back({{"name", t.name}, {"op_type", t.op_type}, {"detail", t.detail},
                           {"output_shape", t.output_shape}, {"ms", t.seconds * 1e3}});
        r["ref_profile"] = {{"ms_per_run", row.ref_profile_total * 1e3}, {"ops", ops}, {"slowest_nodes", nodes}};
      }
      results.push_back(r);
    }
    report["results"] = results;
    return report;
  }
};

PARITY_REGISTER_COMMAND(BenchCommand);

}  // namespace
}  // namespace parity::cli
