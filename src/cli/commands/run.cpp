// `parity run MODEL --ref --ort ...`: runs a model on several runners with identical inputs and
// compares their outputs, with Polygraphy's `run` options and output. `--onnx-outputs mark all`
// compares every intermediate tensor layer by layer with bounded memory (compare/layerwise.h).
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "compare/compare_args.h"
#include "compare/comparator.h"
#include "compare/feed_files.h"
#include "compare/isolation_args.h"
#include "compare/layerwise.h"
#include "compare/loaders.h"
#include "compare/report.h"
#include "core/formats/file_io.h"
#include "core/formats/polygraphy_json.h"
#include "core/formats/run_results_stream.h"
#include "core/logger.h"
#include "model/model.h"
#include "model/transforms/extract.h"
#include "options/data_loader_args.h"
#include "runners/registry.h"
#include "runners/runner_args.h"
#include "tools/report/report_args.h"
#include "tools/report/run_report.h"
#include "runtime/plan/plan_file.h"
#include "tools/plan_build.h"
#include "tools/run_script.h"

namespace parity::cli {
namespace {

using namespace parity::compare;

// With `mark all`, allocations of at least this size get their own mapping (see run_layerwise);
// the comparison's slices stay below it.
constexpr int kMmapThresholdBytes = 1 << 20;

// Names that settings mention explicitly and that exist nowhere: an error listing what exists.
void check_names_exist(const std::vector<std::string>& given, const std::vector<std::string>& existing,
                       const std::string& flag, const std::string& kind) {
  for (const auto& name : given)
    PARITY_CHECK(std::find(existing.begin(), existing.end(), name) != existing.end(), kInvalidArgument, flag, ": no ",
                 kind, " named '", name, "'; ", kind, "s: ", existing.empty() ? "(none)" : join_names(existing));
}

// A --load-outputs path: an ONNX test-data folder (output_K.pb files, or test_data_set_N folders
// of them) becomes one run named "onnx-test-data"; anything else is a RunResults JSON.
RunResults read_saved_outputs(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    auto iterations = load_onnx_test_data(path, OnnxTestData::kOutputs);
    PARITY_CHECK(iterations, kInvalidArgument, "--load-outputs: folder '", path,
                 "' holds neither output_K.pb files nor test_data_set_N folders");
    std::vector<IterationResult> results;
    for (auto& outputs : *iterations) {
      IterationResult r;
      r.runner_name = "onnx-test-data";
      r.outputs = std::move(outputs);
      results.push_back(std::move(r));
    }
    RunResults loaded;
    loaded.add("onnx-test-data", std::move(results));
    return loaded;
  }
  return read_run_results(path);
}

// ---- the command ------------------------------------------------------------------------------

class RunCommand : public Command {
  // What the option groups say, read once per run.
  struct Settings {
    options::DataLoaderOptions data;
    options::IterationOptions runs;
    CompareSettings compare;
    tools::report::ReportOptions report;
  };

 public:
  std::string name() const override { return "run"; }
  std::string summary() const override {
    return "Run a model on several runners with identical inputs and compare the outputs";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "ONNX model to run (optional with --load-outputs only)",
                .metavar = "MODEL", .arity = options::Arity::kOne});
    runner_args_.add_flags_to(parser, "Runners (run in the order given; each is compared with the next)");
    parser.add({.flags = {"--compare-to"}, .help = "Compare each runner with the next (default) or all with the first",
                .metavar = "WHICH", .choices = {"next", "first"}, .default_value = "next"});

    parser.group("Model");
    model_edit::add_model_type_option(parser);
    parser.add({.flags = {"--onnx-outputs"},
                .help = "Tensors to use as outputs, or `mark all` to compare every intermediate tensor layer by "
                        "layer (streamed: only statistics are kept)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--onnx-exclude-outputs"}, .help = "Outputs to leave out (with --onnx-outputs)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--mark-all-window-mb"},
                .help = "With `mark all`: MiB of peer outputs held at once (default 64)", .metavar = "MB"});
    parser.add({.flags = {"--save-onnx"},
                .help = "Save the ONNX model the runners load (with --onnx-outputs/--onnx-exclude-outputs applied)",
                .metavar = "PATH"});
    parser.add({.flags = {"--external-data-dir", "--load-external-data", "--ext"}, .dest = "external_data_dir",
                .help = "Folder holding the model's external data (default: the model's folder)", .metavar = "DIR"});
    parser.add({.flags = {"--shape-inference", "--do-shape-inference", "--no-shape-inference",
                          "--no-onnxruntime-shape-inference"},
                .dest = "shape_inference_choice",
                .help = "Accepted as Polygraphy spells them; no effect: every parity runtime infers the shapes it "
                        "needs itself, and outputs do not depend on it",
                .arity = options::Arity::kFlag});

    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);

    parser.group("Comparator");
    iteration_args_.add_warm_up_to(parser);
    parser.add({.flags = {"--save-inputs", "--save-input-data"}, .dest = "save_inputs",
                .help = "Save the inputs used (Polygraphy JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--save-outputs", "--save-results"}, .dest = "save_outputs",
                .help = "Save the runners' outputs (Polygraphy RunResults JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--load-outputs", "--load-results"}, .dest = "load_outputs",
                .help = "RunResults JSON files (e.g. from Polygraphy on another machine) or ONNX test-data "
                        "folders (output_K.pb files, or test_data_set_N folders of them) to compare as well",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--postprocess", "--postprocess-func"}, .dest = "postprocess",
                .help = "Post-process outputs before comparing: [name:]top-K[,axis=A]", .metavar = "FUNC",
                .arity = options::Arity::kOneOrMore});
    compare_args_.add_to(parser);
    compare::IsolationArgs().add_to(parser);

    parser.group("Script");
    parser.add({.flags = {"--gen-script", "--gen"}, .dest = "gen_script",
                .help = "Run nothing: write a C++ program doing what this command line does through parity's API "
                        "(FILE.cpp) and a CMake snippet building it (FILE.cmake)",
                .metavar = "FILE.cpp"});

    report_args_.add_to(parser);

    // Each runtime's own options (e.g. --ort-threads).
    runner_args_.add_runtime_options_to(parser);

    parser.set_epilog(
        "Examples:\n"
        "  parity run model.onnx --ref --ort                      compare parity's executor with ONNX Runtime\n"
        "  parity run model.onnx --ref --load-outputs trt.json    compare with outputs saved by Polygraphy\n"
        "  parity run model.onnx --ref --ort --onnx-outputs mark all   find the first diverging layer");
  }

  int run(const options::Args& args) override {
    std::optional<std::string> model = args.get("model");
    const std::vector<std::string> runner_names = runner_args_.parse_flags(args);
    const std::vector<std::string> load_outputs = args.list("load_outputs");
    PARITY_CHECK(runner_names.empty() || model, kInvalidArgument, "runners were selected but no MODEL was given");
    if (model) PARITY_CHECK(std::filesystem::exists(*model), kNotFound, "model file '", *model, "' does not exist");
    if (model) model_edit::check_model_type(args, *model);
    if (auto path = args.get("gen_script")) return generate_script(*path, runner_names, args);
    if (runner_names.empty() && load_outputs.empty()) {
      // As Polygraphy: nothing selected is a warning, and the (empty) run passes.
      logger().warning("No runners have been selected. Inference will not be run! (select runners, e.g. --ref "
                       "--ort, or give --load-outputs)");
      return kExitPassed;
    }
    for (const auto& name : runner_names) check_available(name, args);

    // Every option group is read before anything runs, so a bad value fails fast.
    const Settings settings{data_loader_args_.parse(args), iteration_args_.parse(args), compare_args_.parse(args),
                            report_args_.parse(args)};
    compare::Isolation isolation = compare::IsolationArgs().parse(args);
    const std::vector<std::string> onnx_outputs = args.list("onnx_outputs");
    // --external-data-dir: runtimes read external data beside the model file, so for this run the
    // model's protobuf sits in that folder.
    std::optional<ModelBesideData> beside_data;
    if (auto dir = args.get("external_data_dir"); model && dir) {
      beside_data.emplace(*model, *dir);
      model = beside_data->path();
    }
    if (auto path = args.get("save_onnx")) {
      PARITY_CHECK(model, kInvalidArgument, "--save-onnx needs a MODEL");
      save_run_model(*model, *path, onnx_outputs, args.list("onnx_exclude_outputs"));
    }
    const bool mark_all = onnx_outputs.size() == 2 && onnx_outputs[0] == "mark" && onnx_outputs[1] == "all";
    PARITY_CHECK(mark_all || !settings.compare.check_fp16_range, kInvalidArgument,
                 "--check-fp16-range checks intermediate tensors: use it with --onnx-outputs mark all");
    // Layer by layer (streamed) where the runners allow it; otherwise, as Polygraphy does (e.g. the
    // same runner twice), every runner runs with every tensor marked as an output and all are held.
    if (mark_all && layerwise_runners(runner_names)) return run_layerwise(*model, runner_names, args, settings);
    PARITY_CHECK(!settings.compare.check_fp16_range, kInvalidArgument,
                 "--check-fp16-range checks the ref run's tensors layer by layer: use --ref and at most one other "
                 "runner");

    // Runners, in the order their flags were given.
    std::vector<std::unique_ptr<runners::Runner>> runners;
    for (const auto& name : runner_names) {
      if (!onnx_outputs.empty() || args.has("onnx_exclude_outputs")) {
        runners.push_back(compare::loaders::RunnerFromOnnx(
            name, compare::loaders::ModifyOutputs(compare::loaders::OnnxFromPath(*model), onnx_outputs.empty() ? current_outputs(*model) : onnx_outputs,
                                         args.list("onnx_exclude_outputs")),
            std::filesystem::path(*model).parent_path().string(), &args));
      } else {
        runners.push_back(runners::RunnerRegistry::instance().find(name)->create(
            runners::RunnerConfig{model_for_runner(name, *model), &args}));
      }
      if (const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name))
        compare::IsolationArgs().isolate_by_default(args, *runners.back(), *info, isolation);
    }

    RunResults results;
    std::vector<compare::RunnerFailure> runner_failures;  // --use-subprocess: runners that died
    if (!runners.empty()) {
      std::unique_ptr<FeedSource> feeds = make_feed_source(settings.data, settings.runs.iterations);
      std::vector<runners::Runner*> raw;
      for (auto& r : runners) raw.push_back(r.get());
      RunOptions run_options;
      run_options.warm_up = static_cast<int>(settings.runs.warm_up);
      std::vector<TensorMap> used_feeds;
      run_options.used_feeds = &used_feeds;
      run_options.isolation = isolation;
      run_options.failures = &runner_failures;
      if (settings.data.load_inputs.empty()) run_options.expected_iterations = static_cast<size_t>(settings.runs.iterations);
      results = Comparator::run(raw, *feeds, run_options);
      if (auto path = args.get("save_inputs")) save_feeds(*path, used_feeds);
    }
    for (const auto& path : load_outputs) {
      logger().info("Loading inference results from ", path);
      RunResults loaded = read_saved_outputs(path);
      for (auto& run : loaded.runs) results.runs.push_back(std::move(run));
    }
    if (auto path = args.get("save_outputs")) {
      logger().info("Saving inference results to ", *path);
      write_run_results(*path, results);
    }

    check_setting_names(settings.compare, args, results);
    apply_postprocessing(args, results);

    bool success = runner_failures.empty();
    for (const auto& f : runner_failures) logger().error("Runner ", f.runner_name, " FAILED: ", f.reason);
    if (settings.compare.validate)
      success &= Comparator::validate(results, true, true, settings.compare.fail_fast);
    std::vector<std::pair<size_t, size_t>> comparisons;
    std::optional<AccuracyResult> accuracy;
    if (results.size() >= 2) {
      if (args.get_or("compare_to", "next") == "first")
        for (size_t i = 1; i < results.size(); ++i) comparisons.emplace_back(0, i);
      else
        comparisons = Comparator::default_comparisons(results);
      check_output_sets(results, comparisons);
      accuracy = Comparator::compare_accuracy(results, settings.compare.compare_func(), comparisons, settings.compare.fail_fast);
      success &= static_cast<bool>(*accuracy);
    }
    if (settings.report.path) {
      tools::report::RunReportOptions report_options;
      report_options.tolerances = settings.compare.simple;
      report_options.per_channel = settings.report.per_channel;
      write_report(*settings.report.path, model,
                   tools::report::run_section(results, comparisons, accuracy ? &*accuracy : nullptr, success, report_options));
    }
    return success ? kExitPassed : kExitFailed;
  }

 private:
  // A copy of a model's protobuf in the folder of its external data, removed when the run ends
  // (--external-data-dir; a runtime resolves external data relative to the model file).
  class ModelBesideData {
   public:
    ModelBesideData(const std::string& model_path, const std::string& dir) {
      const model::Model model = model::load_model(model_path, dir).value();  // checks every reference
      std::random_device random;
      path_ = (std::filesystem::path(dir) / str_cat(".parity-", std::filesystem::path(model_path).stem().string(), "-",
                                                    random(), ".onnx")).string();
      formats::write_binary_file(path_, model::serialize_model(model));
    }
    ~ModelBesideData() {
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
    ModelBesideData(const ModelBesideData&) = delete;
    ModelBesideData& operator=(const ModelBesideData&) = delete;
    const std::string& path() const { return path_; }

   private:
    std::string path_;
  };

  // --save-onnx: the model as the runners load it.
  static void save_run_model(const std::string& model_path, const std::string& out,
                             const std::vector<std::string>& outputs, const std::vector<std::string>& exclude) {
    model::Model model = model::load_model(model_path).value();
    if (!outputs.empty() || !exclude.empty()) {
      auto graph = model::transforms::graph_with_inferred_types(model);
      model_edit::mark_outputs_typed(*graph, outputs, exclude);
      model = graph->to_model();
    }
    logger().info("Saving ONNX model to: ", out);
    model::save_model(model, out).throw_if_error();
  }

  // --gen-script: writes the program, runs nothing (runners need not even be available here).
  static int generate_script(const std::string& path, const std::vector<std::string>& runner_names,
                             const options::Args& args) {
    std::string target = std::filesystem::path(path).stem().string();
    for (char& c : target)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (target.empty() || std::isdigit(static_cast<unsigned char>(target[0]))) target = "run_" + target;
    std::string command_line = current_command_line();
    for (const std::string& spelling : {" --gen-script " + path, " --gen-script=" + path, " --gen " + path, " --gen=" + path})
      if (auto at = command_line.find(spelling); at != std::string::npos) command_line.erase(at, spelling.size());
    const tools::RunScript script = tools::generate_run_script(args, runner_names, command_line, target);
    const std::string snippet = tools::write_run_script(path, script);
    logger().info("Wrote ", path, " and ", snippet, " (build: include(", std::filesystem::path(snippet).filename().string(),
                  ") after find_package(parity), or use it as CMakeLists.txt)");
    return kExitPassed;
  }

  static void write_report(const std::string& path, const std::optional<std::string>& model, tools::report::Json section) {
    tools::report::Report report("parity run" + (model ? ": " + std::filesystem::path(*model).filename().string() : std::string()),
                                 current_command_line());
    report.add_section(std::move(section));
    report.write(path);
    logger().info("Wrote report ", path);
  }

  static void check_available(const std::string& name, const options::Args& args) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
    PARITY_ASSERT(info, "runner flag without a registered runner");
    info->require_available(&args);
  }

  // The file a runner loads: the model, or for a runner that reads no plans, the ONNX model a plan
  // was built from (`run X.plan --plan --ort` compares the plan with ONNX Runtime on its source).
  static std::string model_for_runner(const std::string& name, const std::string& model) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
    if (info->reads_plans || !runtime::plan::is_plan_file(model)) return model;
    const Result<std::filesystem::path> source = tools::plan_source_model(model);
    PARITY_CHECK(source.is_ok(), kInvalidArgument, info->flag, " reads ONNX models, not parity plans, so it runs the "
                 "model the plan was built from; but ", source.is_ok() ? "" : source.error().what());
    logger().info(info->flag, " runs ", source.value().string(), ", the ONNX model plan ", model, " was built from");
    return source.value().string();
  }

  // The model's own outputs (the starting point of --onnx-exclude-outputs without --onnx-outputs).
  static std::vector<std::string> current_outputs(const std::string& model) {
    std::vector<std::string> names;
    for (const auto& vi : compare::loaders::onnx_from_path(model)->graph().output()) names.push_back(vi.name());
    return names;
  }

  // Per-output settings that name no output of any run are errors naming what exists.
  static void check_setting_names(const CompareSettings& compare, const options::Args& args, const RunResults& results) {
    std::vector<std::string> outputs;
    for (const auto& run : results.runs)
      for (const auto& it : run.second)
        for (const auto& name : it.outputs.names())
          if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) outputs.push_back(name);
    if (outputs.empty()) return;
    for (const auto& [flag, named] : compare.named_outputs) check_names_exist(named, outputs, flag, "output");
    std::vector<std::string> postprocessed;
    for (const auto& item : args.list("postprocess"))
      if (auto name = split_name_value(item).first; !name.empty()) postprocessed.push_back(name);
    check_names_exist(postprocessed, outputs, "--postprocess", "output");
  }

  // Each output of a compared pair's first run must have a counterpart in the second. Names that
  // differ only trivially ("y" and "y:0", as TensorFlow-exported and ONNX runs name them) pair up
  // like Polygraphy's comparator pairs them, with a warning naming the pairing; an output without
  // a counterpart is an error.
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
      PARITY_CHECK(complete, kInvalidArgument, "the outputs of ", ra.first, " and ", rb.first, " differ: ", ra.first,
                   " has ", join_names(na), "; ", rb.first, " has ", join_names(nb),
                   " (select common outputs with --onnx-outputs)");
      // As Polygraphy compares: each output of the first run with its counterpart in the second
      // (e.g. a stored `mark all` run holds more), the second's other outputs unused.
      if (paired_b.size() < nb.size())
        logger().warning("Comparing the ", na.size(), " output(s) of ", ra.first, " only: ", rb.first, " has ",
                         nb.size() - paired_b.size(), " more, not compared");
      for (const auto& [from, to] : renamed)
        logger().warning("Output names differ: comparing ", ra.first, " output '", from, "' with ", rb.first,
                         " output '", to, "'");
    }
  }

  static void apply_postprocessing(const options::Args& args, RunResults& results) {
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

  // What run_layerwise streams: one runner alone, or --ref and at most one other runner.
  static bool layerwise_runners(const std::vector<std::string>& names) {
    const auto refs = std::count(names.begin(), names.end(), "ref");
    return names.size() == 1 || (refs == 1 && names.size() == 2);
  }

  // --onnx-outputs mark all: stream the reference runner's intermediates against one peer.
  int run_layerwise(const std::string& model, const std::vector<std::string>& runner_names, const options::Args& args,
                    const Settings& settings) {
    const auto ref_it = std::find(runner_names.begin(), runner_names.end(), "ref");
    // One runner that is not parity's own (e.g. --ort alone): its every tensor, window by window.
    const bool runner_only = ref_it == runner_names.end() && runner_names.size() == 1;
    PARITY_CHECK(runner_only || (ref_it != runner_names.end() && runner_names.size() <= 2), kInvalidArgument,
                 "--onnx-outputs mark all runs one runner alone, or compares layer by layer with --ref and at most "
                 "one other runner; got: ", runner_names.empty() ? std::string("no runner") : join_names(runner_names));
    PARITY_CHECK(!args.has("postprocess"), kInvalidArgument,
                 "--onnx-outputs mark all cannot be combined with --postprocess (it compares tensors as produced)");
    std::string peer;
    for (const auto& n : runner_names)
      if (n != "ref") peer = n;
    // Per-tensor tolerances must name tensors of the model.
    const std::vector<std::string> tensors = compare::loaders::produced_value_names(*compare::loaders::onnx_from_path(model));
    for (const auto& [flag, named] : settings.compare.named_outputs) check_names_exist(named, tensors, flag, "tensor");

    // Feeds: the same data loader as a normal run, with the reference's input metadata.
    std::unique_ptr<FeedSource> feeds = make_feed_source(settings.data, settings.runs.iterations);
    {
      const std::string probed = runner_only ? runner_names.front() : std::string("ref");
      auto probe = runners::RunnerRegistry::instance().find(probed)->create(runners::RunnerConfig{model, &args});
      runners::ActiveRunner active(*probe);
      feeds->set_input_metadata(probe->input_metadata());
    }
    LayerwiseOptions options;
    options.compare = settings.compare.simple;
    options.validate = settings.compare.validate;
    options.check_fp16_range = settings.compare.check_fp16_range;
    options.reference_first = runner_names.front() == "ref";
    for (const auto& name : args.list("onnx_exclude_outputs")) options.exclude.insert(name);
    if (auto mb = args.get("mark_all_window_mb")) {
      const int64_t v = parse_int(*mb, "--mark-all-window-mb");
      PARITY_CHECK(v > 0, kInvalidArgument, "--mark-all-window-mb must be positive, got ", v);
      options.window_bytes = v << 20;
    }
    // glibc raises its mmap threshold each time a large block is freed, after which activations come
    // from the heap, where small allocations made between them pin freed space: measured on PP-OCRv4
    // det at 640x640, the heap kept ~200 MiB more than the live tensors. A fixed threshold keeps
    // every tensor of 1 MiB or more in its own mapping, returned to the system when freed. This
    // process does nothing else afterwards, so the process-wide setting is the command's to make.
    mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
    // Golden runs (--load-outputs) are indexed, not read: their tensors are read one at a time.
    std::vector<RunResultsIndex> goldens;
    for (const auto& path : args.list("load_outputs")) {
      std::error_code ec;
      PARITY_CHECK(!std::filesystem::is_directory(path, ec), kInvalidArgument, "--load-outputs '", path,
                   "': with --onnx-outputs mark all, stored outputs must be a RunResults JSON, not a folder");
      logger().info("Indexing stored layer outputs in ", path);
      goldens.emplace_back(path);
    }
    std::optional<LayerSaver> saver;
    if (auto path = args.get("save_outputs"))
      saver.emplace(*path, model, runner_only ? runner_names.front() : std::string("ref"), runner_only ? "" : peer, args,
                    options, runner_only);
    std::vector<TensorMap> used;
    std::vector<tools::report::LayerwiseComparison> reports;
    bool passed = true;
    for (size_t i = 0;; ++i) {
      auto feed = feeds->feed(i);
      if (!feed) break;
      if (i > 0) report_cat(Severity::kInfo, "Iteration: ", i);
      if (saver) saver->begin_iteration();
      // The first comparison of a feed saves the reference's tensors; the others only compare.
      LayerwiseOptions current = options;
      if (runner_only) {
        passed &= run_runner_alone(model, runner_names.front(), args, *feed, goldens, i, current, reports);
      } else if (!peer.empty() || goldens.empty()) {
        reports.push_back({compare_layerwise(model, peer, &args, *feed, current), i, ""});
        passed &= reports.back().report.passed();
        current.on_reference_tensor = nullptr;
      }
      for (const auto& golden : runner_only ? std::vector<RunResultsIndex>{} : goldens) {
        passed &= compare_with_golden(model, args, *feed, golden, i, current, reports);
        current.on_reference_tensor = nullptr;
      }
      used.push_back(std::move(*feed));
      if (!passed && settings.compare.fail_fast) break;
    }
    if (saver) saver->finish();
    if (auto path = args.get("save_outputs")) logger().info("Saved every layer's outputs to ", *path);
    if (auto path = args.get("save_inputs")) save_feeds(*path, used);
    if (settings.report.path)
      write_report(*settings.report.path, model, tools::report::layerwise_section(reports, options.compare));
    return passed ? kExitPassed : kExitFailed;
  }

  // `mark all` with one runner alone: its tensors summarized, or compared with each stored run (the
  // first pass also saves them).
  static bool run_runner_alone(const std::string& model, const std::string& runner, const options::Args& args,
                               const TensorMap& feed, const std::vector<RunResultsIndex>& goldens, size_t iteration,
                               LayerwiseOptions& options, std::vector<tools::report::LayerwiseComparison>& reports) {
    if (goldens.empty()) {
      reports.push_back({runner_layerwise(model, runner, &args, feed, options), iteration, ""});
      return true;
    }
    bool passed = true;
    for (const auto& golden : goldens) {
      PARITY_CHECK(!golden.runs().empty(), kInvalidArgument, golden.path(), " holds no runs to compare with");
      for (size_t r = 0; r < golden.runs().size(); ++r) {
        const size_t stored = golden.runs()[r].iterations.size();
        PARITY_CHECK(iteration < stored, kInvalidArgument, golden.path(), ": runner '", golden.runs()[r].runner,
                     "' has ", stored, " iteration(s) but this run feeds more (match --iterations or --load-inputs "
                     "to the stored run)");
        const GoldenRun run{&golden, r, iteration};
        reports.push_back({runner_layerwise(model, runner, &args, feed, options, &run), iteration, golden.path()});
        passed &= reports.back().report.passed();
        options.on_peer_tensor = nullptr;
      }
    }
    return passed;
  }

  // Feed `iteration` against iteration `iteration` of every run stored in `golden`.
  static bool compare_with_golden(const std::string& model, const options::Args& args, const TensorMap& feed,
                                  const RunResultsIndex& golden, size_t iteration, const LayerwiseOptions& options,
                                  std::vector<tools::report::LayerwiseComparison>& reports) {
    PARITY_CHECK(!golden.runs().empty(), kInvalidArgument, golden.path(), " holds no runs to compare with");
    LayerwiseOptions current = options;
    bool passed = true;
    for (size_t r = 0; r < golden.runs().size(); ++r) {
      const size_t stored = golden.runs()[r].iterations.size();
      PARITY_CHECK(iteration < stored, kInvalidArgument, golden.path(), ": runner '", golden.runs()[r].runner,
                   "' has ", stored, " iteration(s) but this run feeds more (match --iterations or --load-inputs to "
                   "the stored run)");
      reports.push_back({compare_layerwise_golden(model, &args, feed, GoldenRun{&golden, r, iteration}, current), iteration,
                         golden.path()});
      passed &= reports.back().report.passed();
      current.on_reference_tensor = nullptr;
    }
    return passed;
  }

  // `--save-outputs` with `mark all`: every layer's tensors streamed into a Polygraphy RunResults
  // file (the reference's, then the peer's), as Polygraphy's `--onnx-outputs mark all
  // --save-outputs` stores a golden run. Installs its hooks into `options`.
  class LayerSaver {
   public:
    // `first` is the reference runner, or with `runner_only` the one runner (whose tensors come
    // through the peer hook).
    LayerSaver(const std::string& path, const std::string& model, const std::string& first, const std::string& peer,
               const options::Args& args, LayerwiseOptions& options, bool runner_only = false)
        : writer_(path) {
      ref_ = writer_.add_runner(runner_name(first, model, args));
      if (!peer.empty()) peer_ = writer_.add_runner(runner_name(peer, model, args));
      auto to_first = [this](const std::string& name, const Tensor& t) { writer_.add(ref_, name, t); };
      if (runner_only) options.on_peer_tensor = to_first;
      else options.on_reference_tensor = to_first;
      if (peer_) options.on_peer_tensor = [this](const std::string& name, const Tensor& t) { writer_.add(*peer_, name, t); };
    }
    void begin_iteration() {
      writer_.begin_iteration(ref_);
      if (peer_) writer_.begin_iteration(*peer_);
    }
    void finish() { writer_.finish(); }

   private:
    // The runner's own name (e.g. "onnxrt-runner-N0-..."), as a normal run's saved results carry it.
    static std::string runner_name(const std::string& runner, const std::string& model, const options::Args& args) {
      return runners::RunnerRegistry::instance().find(runner)->create(runners::RunnerConfig{model, &args})->name();
    }
    RunResultsStreamWriter writer_;
    size_t ref_ = 0;
    std::optional<size_t> peer_;
  };

  runners::RunnerArgs runner_args_;
  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1,
                                          .iterations_help = "Number of inference iterations for the default data "
                                                             "loader (default 1)",
                                          .warm_up = 0,
                                          .warm_up_help = "Untimed warm-up runs per runner",
                                          .min_iterations = 0}};
  ComparatorCompareArgs compare_args_;
  tools::report::ReportArgs report_args_{
      "per output: statistics, error histograms and heatmaps, verdicts; with mark all: error per layer, memory", true};
};

PARITY_REGISTER_COMMAND(RunCommand);

}  // namespace
}  // namespace parity::cli
