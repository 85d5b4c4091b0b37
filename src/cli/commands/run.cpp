// `parity run MODEL --ref --ort ...`: runs a model on several runners with identical inputs and
// compares their outputs, with Polygraphy's `run` options and output. `--onnx-outputs mark all`
// compares every intermediate tensor layer by layer with bounded memory (compare/layerwise.h).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "compare/comparator.h"
#include "compare/feed_files.h"
#include "compare/layerwise.h"
#include "compare/loaders.h"
#include "compare/report.h"
#include "core/formats/polygraphy_json.h"
#include "core/logger.h"
#include "runners/registry.h"

namespace parity::cli {
namespace {

using namespace parity::compare;

// ---- option parsing helpers -------------------------------------------------------------------

// "[a,b,...]" or "a,b" -> items.
std::vector<std::string> bracket_items(std::string text, const std::string& what) {
  if (!text.empty() && (text.front() == '[' || text.front() == '(')) {
    PARITY_CHECK(text.size() >= 2 && (text.back() == ']' || text.back() == ')'), kInvalidArgument, what,
                 ": unbalanced brackets in '", text, "'");
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return items;
}

// Per-name double settings: "[name:]value" items, "" = default.
template <typename T, typename Parse>
PerOutput<T> per_name(const Args& args, const std::string& dest, T fallback, Parse parse) {
  PerOutput<T> out(fallback);
  for (const auto& item : args.list(dest)) {
    auto [name, value] = split_name_value(item);
    out.set(name, parse(value));
  }
  return out;
}

PerOutput<double> per_name_double(const Args& args, const std::string& dest, const std::string& flag, double fallback) {
  return per_name<double>(args, dest, fallback, [&](const std::string& v) { return parse_double(v, flag); });
}

// Names that settings mention explicitly and that exist nowhere: an error listing what exists.
void check_names_exist(const std::vector<std::string>& given, const std::vector<std::string>& existing,
                       const std::string& flag, const std::string& kind) {
  for (const auto& name : given)
    PARITY_CHECK(std::find(existing.begin(), existing.end(), name) != existing.end(), kInvalidArgument, flag, ": no ",
                 kind, " named '", name, "'; ", kind, "s: ", existing.empty() ? "(none)" : join_names(existing));
}

// ---- the command ------------------------------------------------------------------------------

class RunCommand : public Command {
 public:
  std::string name() const override { return "run"; }
  std::string summary() const override {
    return "Run a model on several runners with identical inputs and compare the outputs";
  }

  void add_options(ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "ONNX model to run (optional with --load-outputs only)",
                .metavar = "MODEL", .arity = Arity::kOne});
    parser.group("Runners (run in the order given; each is compared with the next)");
    for (const auto& info : RunnerRegistry::instance().all())
      parser.add({.flags = {info.flag}, .dest = "runner:" + info.name, .help = "Run with " + info.description,
                  .arity = Arity::kCount});
    parser.add({.flags = {"--compare-to"}, .help = "Compare each runner with the next (default) or all with the first",
                .metavar = "WHICH", .choices = {"next", "first"}, .default_value = "next"});

    parser.group("Model");
    parser.add({.flags = {"--onnx-outputs"},
                .help = "Tensors to use as outputs, or `mark all` to compare every intermediate tensor layer by "
                        "layer (streamed: only statistics are kept)",
                .metavar = "NAME", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--onnx-exclude-outputs"}, .help = "Outputs to leave out (with --onnx-outputs)",
                .metavar = "NAME", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--mark-all-window-mb"},
                .help = "With `mark all`: MiB of peer outputs held at once (default 64)", .metavar = "MB"});

    parser.group("Data Loader");
    parser.add({.flags = {"--seed"}, .help = "Seed for random inputs (default 1, as Polygraphy)", .metavar = "SEED"});
    parser.add({.flags = {"--iterations", "--iters"}, .dest = "iterations",
                .help = "Number of inference iterations for the default data loader (default 1)", .metavar = "N"});
    parser.add({.flags = {"--val-range"},
                .help = "Range of generated values, [name:][min,max], e.g. --val-range [0,1] ids:[0,10]",
                .metavar = "RANGE", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--input-shapes", "--inputs"}, .dest = "input_shapes",
                .help = "Shapes of inputs with dynamic dimensions, name:[d0,d1,...]", .metavar = "SHAPE",
                .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--load-inputs", "--load-input-data"}, .dest = "load_inputs",
                .help = "Inputs to use instead of random data: Polygraphy inputs JSON, .npz files or folders of "
                        ".npz files (one iteration each)",
                .metavar = "PATH", .arity = Arity::kOneOrMore});

    parser.group("Comparator");
    parser.add({.flags = {"--warm-up"}, .help = "Untimed warm-up runs per runner", .metavar = "N"});
    parser.add({.flags = {"--save-inputs", "--save-input-data"}, .dest = "save_inputs",
                .help = "Save the inputs used (Polygraphy JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--save-outputs", "--save-results"}, .dest = "save_outputs",
                .help = "Save the runners' outputs (Polygraphy RunResults JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--load-outputs", "--load-results"}, .dest = "load_outputs",
                .help = "RunResults JSON files (e.g. from Polygraphy on another machine) to compare as well",
                .metavar = "PATH", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--validate"}, .help = "Check outputs for NaNs and Infs", .arity = Arity::kFlag});
    parser.add({.flags = {"--fail-fast"}, .help = "Stop comparing after the first failure", .arity = Arity::kFlag});
    parser.add({.flags = {"--compare", "--compare-func"}, .dest = "compare",
                .help = "Comparison function (default simple)", .metavar = "FUNC",
                .choices = {"simple", "indices", "distance_metrics", "quality_metrics"}, .default_value = "simple"});
    parser.add({.flags = {"--postprocess", "--postprocess-func"}, .dest = "postprocess",
                .help = "Post-process outputs before comparing: [name:]top-K[,axis=A]", .metavar = "FUNC",
                .arity = Arity::kOneOrMore});

    parser.group("Comparison Function: simple");
    parser.add({.flags = {"--no-shape-check"}, .help = "Compare outputs of different shapes with equal sizes",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--rtol", "--rel-tol"}, .dest = "rtol",
                .help = "Relative tolerance, [name:]value (default 1e-5)", .metavar = "TOL", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--atol", "--abs-tol"}, .dest = "atol",
                .help = "Absolute tolerance, [name:]value (default 1e-5)", .metavar = "TOL", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--check-error-stat"},
                .help = "Error statistic to check, [name:]stat: elemwise (default), max, mean, median, quantile",
                .metavar = "STAT", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--error-quantile"}, .help = "Quantile for the quantile stat, [name:]q (default 0.99)",
                .metavar = "Q", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--infinities-compare-equal"}, .help = "Matching +-inf values have zero difference",
                .arity = Arity::kFlag});

    parser.group("Comparison Function: indices");
    parser.add({.flags = {"--index-tolerance"}, .help = "Index tolerance, [name:]N (default 0)", .metavar = "N",
                .arity = Arity::kOneOrMore});

    parser.group("Comparison Function: distance_metrics / quality_metrics");
    parser.add({.flags = {"--l2-tolerance"}, .help = "Maximum L2 norm of the difference, [name:]value (default 1e-5)",
                .metavar = "TOL", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--cosine-similarity-threshold"},
                .help = "Minimum cosine similarity, [name:]value (default 0.997)", .metavar = "MIN",
                .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--psnr-tolerance"}, .help = "Minimum PSNR in dB, [name:]value (default 30)",
                .metavar = "DB", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--snr-tolerance"}, .help = "Minimum SNR in dB, [name:]value (default 20)",
                .metavar = "DB", .arity = Arity::kOneOrMore});

    // Each runtime's own options (e.g. --ort-threads).
    for (const auto& info : RunnerRegistry::instance().all())
      if (info.add_options) info.add_options(parser);

    parser.set_epilog(
        "Examples:\n"
        "  parity run model.onnx --ref --ort                      compare parity's executor with ONNX Runtime\n"
        "  parity run model.onnx --ref --load-outputs trt.json    compare with outputs saved by Polygraphy\n"
        "  parity run model.onnx --ref --ort --onnx-outputs mark all   find the first diverging layer");
  }

  int run(const Args& args) override {
    const std::optional<std::string> model = args.get("model");
    const std::vector<std::string> runner_names = selected_runners(args);
    const std::vector<std::string> load_outputs = args.list("load_outputs");
    PARITY_CHECK(!runner_names.empty() || !load_outputs.empty(), kInvalidArgument,
                 "nothing to run: select runners (e.g. --ref --ort) or give --load-outputs");
    PARITY_CHECK(runner_names.empty() || model, kInvalidArgument, "runners were selected but no MODEL was given");
    if (model) PARITY_CHECK(std::filesystem::exists(*model), kNotFound, "model file '", *model, "' does not exist");
    for (const auto& name : runner_names) check_available(name, args);

    (void)make_compare_func(args);  // reject bad comparison options before running anything
    const std::vector<std::string> onnx_outputs = args.list("onnx_outputs");
    const bool mark_all = onnx_outputs.size() == 2 && onnx_outputs[0] == "mark" && onnx_outputs[1] == "all";
    if (mark_all) return run_layerwise(*model, runner_names, args);

    // Runners, in the order their flags were given.
    std::vector<std::unique_ptr<Runner>> runners;
    for (const auto& name : runner_names) {
      if (!onnx_outputs.empty() || args.has("onnx_exclude_outputs")) {
        runners.push_back(loaders::RunnerFromOnnx(
            name, loaders::ModifyOutputs(loaders::OnnxFromPath(*model), onnx_outputs.empty() ? current_outputs(*model) : onnx_outputs,
                                         args.list("onnx_exclude_outputs")),
            std::filesystem::path(*model).parent_path().string(), &args));
      } else {
        runners.push_back(RunnerRegistry::instance().find(name)->create(RunnerConfig{*model, &args}));
      }
    }

    RunResults results;
    if (!runners.empty()) {
      std::unique_ptr<FeedSource> feeds = make_feed_source(args);
      std::vector<Runner*> raw;
      for (auto& r : runners) raw.push_back(r.get());
      RunOptions run_options;
      if (auto w = args.get("warm_up")) run_options.warm_up = static_cast<int>(parse_int(*w, "--warm-up"));
      std::vector<TensorMap> used_feeds;
      run_options.used_feeds = &used_feeds;
      results = Comparator::run(raw, *feeds, run_options);
      if (auto path = args.get("save_inputs")) save_feeds(*path, used_feeds);
    }
    for (const auto& path : load_outputs) {
      logger().info("Loading inference results from ", path);
      RunResults loaded = read_run_results(path);
      for (auto& run : loaded.runs) results.runs.push_back(std::move(run));
    }
    if (auto path = args.get("save_outputs")) {
      logger().info("Saving inference results to ", *path);
      write_run_results(*path, results);
    }

    check_setting_names(args, results);
    apply_postprocessing(args, results);

    bool success = true;
    if (args.flag("validate")) success &= Comparator::validate(results, true, true, args.flag("fail_fast"));
    if (results.size() >= 2) {
      std::vector<std::pair<size_t, size_t>> comparisons;
      if (args.get_or("compare_to", "next") == "first")
        for (size_t i = 1; i < results.size(); ++i) comparisons.emplace_back(0, i);
      else
        comparisons = Comparator::default_comparisons(results);
      check_output_sets(results, comparisons);
      AccuracyResult accuracy =
          Comparator::compare_accuracy(results, make_compare_func(args), comparisons, args.flag("fail_fast"));
      success &= static_cast<bool>(accuracy);
    }
    return success ? kExitPassed : kExitFailed;
  }

 private:
  static std::vector<std::string> selected_runners(const Args& args) {
    // Exactly the command line's order, repeats included (Polygraphy allows a runner twice; each
    // occurrence is its own runner instance): --ref --ort --ref runs ref, ort, ref.
    std::vector<std::string> names;
    for (const auto& dest : args.occurrences())
      if (dest.rfind("runner:", 0) == 0) names.push_back(dest.substr(7));
    return names;
  }

  static void check_available(const std::string& name, const Args& args) {
    const RunnerInfo* info = RunnerRegistry::instance().find(name);
    PARITY_ASSERT(info, "runner flag without a registered runner");
    if (!info->availability) return;
    const Status st = info->availability(&args);
    PARITY_CHECK(st.is_ok(), kUnavailable, "runner '", name, "' (", info->flag, ") is unavailable: ", st.message());
  }

  // The model's own outputs (the starting point of --onnx-exclude-outputs without --onnx-outputs).
  static std::vector<std::string> current_outputs(const std::string& model) {
    std::vector<std::string> names;
    for (const auto& vi : loaders::onnx_from_path(model)->graph().output()) names.push_back(vi.name());
    return names;
  }

  static std::unique_ptr<FeedSource> make_feed_source(const Args& args) {
    if (args.has("load_inputs")) {
      PARITY_CHECK(!args.has("val_range") && !args.has("seed"), kInvalidArgument,
                   "--load-inputs cannot be combined with --seed or --val-range (those shape random inputs)");
      auto feeds = load_feeds(args.list("load_inputs"));
      return std::make_unique<FeedList>(std::move(feeds));
    }
    auto loader = std::make_unique<DataLoader>();
    if (auto s = args.get("seed")) loader->seed(parse_int(*s, "--seed"));
    if (auto n = args.get("iterations")) loader->iterations(parse_int(*n, "--iterations"));
    for (const auto& item : args.list("val_range")) {
      auto [name, value] = split_name_value(item);
      auto bounds = bracket_items(value, "--val-range");
      PARITY_CHECK(bounds.size() == 2, kInvalidArgument, "--val-range '", item,
                   "' must be [name:][min,max] with two numbers");
      loader->val_range(name, {parse_double(bounds[0], "--val-range"), parse_double(bounds[1], "--val-range")});
    }
    for (const auto& item : args.list("input_shapes")) {
      auto [name, value] = split_name_value(item);
      PARITY_CHECK(!name.empty(), kInvalidArgument, "--input-shapes '", item, "' must be name:[d0,d1,...]");
      Shape shape;
      for (const auto& d : bracket_items(value, "--input-shapes")) shape.push_back(parse_int(d, "--input-shapes"));
      loader->input_shape(name, shape);
    }
    return loader;
  }

  // Per-output settings that name no output of any run are errors naming what exists.
  static void check_setting_names(const Args& args, const RunResults& results) {
    std::vector<std::string> outputs;
    for (const auto& run : results.runs)
      for (const auto& it : run.second)
        for (const auto& name : it.outputs.names())
          if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) outputs.push_back(name);
    if (outputs.empty()) return;
    for (const char* dest : {"atol", "rtol", "check_error_stat", "error_quantile", "index_tolerance", "l2_tolerance",
                             "cosine_similarity_threshold", "psnr_tolerance", "snr_tolerance", "postprocess"}) {
      std::vector<std::string> named;
      for (const auto& item : args.list(dest)) {
        auto [name, value] = split_name_value(item);
        if (!name.empty()) named.push_back(name);
      }
      std::string flag = std::string("--") + dest;
      std::replace(flag.begin(), flag.end(), '_', '-');
      check_names_exist(named, outputs, flag, "output");
    }
  }

  // Each compared pair must have the same outputs. Names that differ only trivially ("y" and
  // "y:0", as TensorFlow-exported and ONNX runs name them) pair up like Polygraphy's comparator
  // pairs them, with a warning naming the pairing; otherwise the sets differ and that is an error.
  static void check_output_sets(const RunResults& results, const std::vector<std::pair<size_t, size_t>>& comparisons) {
    for (const auto& [a, b] : comparisons) {
      const auto& ra = results.runs[a];
      const auto& rb = results.runs[b];
      if (ra.second.empty() || rb.second.empty()) continue;
      const auto na = ra.second[0].outputs.names(), nb = rb.second[0].outputs.names();
      std::vector<std::pair<std::string, std::string>> renamed;
      std::vector<std::string> paired_b;
      bool complete = true;
      for (const auto& n : na) {
        const auto match = match_output_name(n, na, nb);
        if (!match || std::find(paired_b.begin(), paired_b.end(), *match) != paired_b.end()) {
          complete = false;
          break;
        }
        paired_b.push_back(*match);
        if (*match != n) renamed.emplace_back(n, *match);
      }
      complete = complete && paired_b.size() == nb.size();
      PARITY_CHECK(complete, kInvalidArgument, "the outputs of ", ra.first, " and ", rb.first, " differ: ", ra.first,
                   " has ", join_names(na), "; ", rb.first, " has ", join_names(nb),
                   " (select common outputs with --onnx-outputs)");
      for (const auto& [from, to] : renamed)
        logger().warning("Output names differ: comparing ", ra.first, " output '", from, "' with ", rb.first,
                         " output '", to, "'");
    }
  }

  static void apply_postprocessing(const Args& args, RunResults& results) {
    if (!args.has("postprocess")) return;
    PerOutput<std::optional<TopK>> settings(std::nullopt);
    for (const auto& item : args.list("postprocess")) {
      auto [name, value] = split_name_value(item);
      PARITY_CHECK(value.rfind("top-", 0) == 0, kInvalidArgument, "invalid post-processing function '", value,
                   "'; valid: top-<K>[,axis=<axis>]");
      TopK topk;
      const std::string rest = value.substr(4);
      const size_t comma = rest.find(',');
      topk.k = parse_int(rest.substr(0, comma), "--postprocess top-K");
      if (comma != std::string::npos) {
        const std::string axis = rest.substr(comma + 1);
        PARITY_CHECK(axis.rfind("axis=", 0) == 0, kInvalidArgument, "--postprocess '", item,
                     "': expected ,axis=<axis> after top-K");
        topk.axis = parse_int(axis.substr(5), "--postprocess axis");
      }
      settings.set(name, topk);
    }
    Comparator::postprocess(results, top_k(settings));
  }

  static CompareFunc make_compare_func(const Args& args) {
    const std::string which = args.get_or("compare", "simple");
    const bool fail_fast = args.flag("fail_fast");
    if (which == "indices") {
      IndicesCompareOptions o;
      o.index_tolerance = per_name<int64_t>(args, "index_tolerance", 0, [](const std::string& v) {
        return parse_int(v, "--index-tolerance");
      });
      o.fail_fast = fail_fast;
      return compare_funcs::indices(o);
    }
    if (which == "distance_metrics") {
      DistanceCompareOptions o;
      o.check_shapes = !args.flag("no_shape_check");
      o.l2_tolerance = per_name_double(args, "l2_tolerance", "--l2-tolerance", 1e-5);
      o.cosine_similarity_threshold =
          per_name_double(args, "cosine_similarity_threshold", "--cosine-similarity-threshold", 0.997);
      o.fail_fast = fail_fast;
      return compare_funcs::distance_metrics(o);
    }
    if (which == "quality_metrics") {
      QualityCompareOptions o;
      o.check_shapes = !args.flag("no_shape_check");
      o.psnr_tolerance = per_name_double(args, "psnr_tolerance", "--psnr-tolerance", 30.0);
      o.snr_tolerance = per_name_double(args, "snr_tolerance", "--snr-tolerance", 20.0);
      o.fail_fast = fail_fast;
      return compare_funcs::quality_metrics(o);
    }
    return compare_funcs::simple(simple_options(args));
  }

  static SimpleCompareOptions simple_options(const Args& args) {
    SimpleCompareOptions o;
    o.check_shapes = !args.flag("no_shape_check");
    o.atol = per_name_double(args, "atol", "--atol", 1e-5);
    o.rtol = per_name_double(args, "rtol", "--rtol", 1e-5);
    o.error_quantile = per_name_double(args, "error_quantile", "--error-quantile", 0.99);
    o.check_error_stat = per_name<ErrorStat>(args, "check_error_stat", ErrorStat::kElemwise, [](const std::string& v) {
      auto s = error_stat_from_name(v);
      PARITY_CHECK(s, kInvalidArgument, "invalid --check-error-stat '", v,
                   "'; valid: elemwise, max, mean, median, quantile");
      return *s;
    });
    o.infinities_compare_equal = args.flag("infinities_compare_equal");
    o.fail_fast = args.flag("fail_fast");
    return o;
  }

  // --onnx-outputs mark all: stream the reference runner's intermediates against one peer.
  int run_layerwise(const std::string& model, const std::vector<std::string>& runner_names, const Args& args) {
    const auto ref_it = std::find(runner_names.begin(), runner_names.end(), "ref");
    PARITY_CHECK(ref_it != runner_names.end() && runner_names.size() <= 2, kInvalidArgument,
                 "--onnx-outputs mark all compares layer by layer with --ref and at most one other runner; got: ",
                 join_names(runner_names));
    for (const char* dest : {"load_outputs", "save_outputs", "postprocess"})
      PARITY_CHECK(!args.has(dest), kInvalidArgument, "--onnx-outputs mark all cannot be combined with --",
                   std::string(dest) == "load_outputs" ? "load-outputs" : std::string(dest) == "save_outputs" ? "save-outputs" : "postprocess",
                   " (it keeps statistics, not tensors)");
    std::string peer;
    for (const auto& n : runner_names)
      if (n != "ref") peer = n;
    // Per-tensor tolerances must name tensors of the model.
    const std::vector<std::string> tensors = loaders::produced_value_names(*loaders::onnx_from_path(model));
    for (const char* dest : {"atol", "rtol", "check_error_stat", "error_quantile"}) {
      std::vector<std::string> named;
      for (const auto& item : args.list(dest)) {
        auto [name, value] = split_name_value(item);
        if (!name.empty()) named.push_back(name);
      }
      std::string flag = std::string("--") + dest;
      std::replace(flag.begin(), flag.end(), '_', '-');
      check_names_exist(named, tensors, flag, "tensor");
    }

    // Feeds: the same data loader as a normal run, with the reference's input metadata.
    std::unique_ptr<FeedSource> feeds = make_feed_source(args);
    {
      auto probe = RunnerRegistry::instance().find("ref")->create(RunnerConfig{model, &args});
      ActiveRunner active(*probe);
      feeds->set_input_metadata(probe->input_metadata());
    }
    LayerwiseOptions options;
    options.compare = simple_options(args);
    options.reference_first = runner_names.front() == "ref";
    for (const auto& name : args.list("onnx_exclude_outputs")) options.exclude.insert(name);
    if (auto mb = args.get("mark_all_window_mb")) {
      const int64_t v = parse_int(*mb, "--mark-all-window-mb");
      PARITY_CHECK(v > 0, kInvalidArgument, "--mark-all-window-mb must be positive, got ", v);
      options.window_bytes = v << 20;
    }
    std::vector<TensorMap> used;
    bool passed = true;
    for (size_t i = 0;; ++i) {
      auto feed = feeds->feed(i);
      if (!feed) break;
      if (i > 0) report_cat(Severity::kInfo, "Iteration: ", i);
      LayerwiseReport report = compare_layerwise(model, peer, &args, *feed, options);
      passed &= report.passed();
      used.push_back(std::move(*feed));
      if (!passed && args.flag("fail_fast")) break;
    }
    if (auto path = args.get("save_inputs")) save_feeds(*path, used);
    return passed ? kExitPassed : kExitFailed;
  }
};

PARITY_REGISTER_COMMAND(RunCommand);

}  // namespace
}  // namespace parity::cli
