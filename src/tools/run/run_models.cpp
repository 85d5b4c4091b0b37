#include "tools/run/run_models.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>

#include <onnx/onnx_pb.h>

#include "compare/feed_files.h"
#include "compare/loaders.h"
#include "compare/mark_all.h"
#include "core/formats/file_io.h"
#include "core/formats/polygraphy_json.h"
#include "core/logger.h"
#include "core/text.h"
#include "model/model.h"
#include "model/transforms/extract.h"
#include "runners/registry.h"
#include "runtime/plan/plan_file.h"
#include "tools/plan_build.h"
#include "tools/report/run_report.h"
#include "tools/runtime_types.h"

namespace parity::tools {
namespace {

namespace fs = std::filesystem;
using compare::Comparator;

// Names that settings mention explicitly and that exist nowhere: an error listing what exists.
void check_names_exist(const std::vector<std::string>& given, const std::vector<std::string>& existing,
                       const std::string& flag) {
  for (const auto& name : given)
    PARITY_CHECK(std::find(existing.begin(), existing.end(), name) != existing.end(), kInvalidArgument, flag,
                 ": no output named '", name, "'; outputs: ", existing.empty() ? "(none)" : join_names(existing));
}

// Per-output settings that name no output of any run are errors naming what exists.
void check_setting_names(const RunModelsOptions& options, const RunResults& results) {
  std::vector<std::string> outputs;
  for (const auto& run : results.runs)
    for (const auto& it : run.second)
      for (const auto& name : it.outputs.names())
        if (std::find(outputs.begin(), outputs.end(), name) == outputs.end()) outputs.push_back(name);
  if (outputs.empty()) return;
  for (const auto& [flag, named] : options.compare.named_outputs) check_names_exist(named, outputs, flag);
  check_names_exist(options.postprocess.named_outputs, outputs, "--postprocess");
}

// A saved-outputs path: an ONNX test-data folder (output_K.pb files, or test_data_set_N folders
// of them) becomes one run named "onnx-test-data"; anything else is a RunResults JSON.
RunResults read_saved_outputs(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return read_run_results(path);
  auto iterations = compare::load_onnx_test_data(path, compare::OnnxTestData::kOutputs);
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

// A copy of a model's protobuf in the folder of its external data, removed when the run ends
// (a runtime resolves external data relative to the model file).
class ModelBesideData {
 public:
  ModelBesideData(const std::string& model_path, const std::string& dir) {
    const model::Model model = model::load_model(model_path, dir).value();  // checks every reference
    std::random_device random;
    path_ = (fs::path(dir) / str_cat(".parity-", fs::path(model_path).stem().string(), "-", random(), ".onnx")).string();
    formats::write_binary_file(path_, model::serialize_model(model));
  }
  ~ModelBesideData() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  ModelBesideData(const ModelBesideData&) = delete;
  ModelBesideData& operator=(const ModelBesideData&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The model as the runners load it.
void save_run_model(const std::string& model_path, const std::string& out, const std::vector<std::string>& outputs,
                    const std::vector<std::string>& exclude) {
  model::Model model = model::load_model(model_path).value();
  if (!outputs.empty() || !exclude.empty()) {
    auto graph = model::transforms::graph_with_inferred_types(model);
    mark_outputs_typed(*graph, outputs, exclude);
    model = graph->to_model();
  }
  logger().info("Saving ONNX model to: ", out);
  model::save_model(model, out).throw_if_error();
}

void write_report(const RunModelsOptions& options, const std::optional<std::string>& model, report::Json section) {
  report::Report page("parity run" + (model ? ": " + fs::path(*model).filename().string() : std::string()),
                      options.command_line);
  page.add_section(std::move(section));
  page.write(*options.report.path);
  logger().info("Wrote report ", *options.report.path);
}

// The file a runner loads: the model, or for a runner that reads no plans, the ONNX model a plan
// was built from (`run X.plan --plan --ort` compares the plan with ONNX Runtime on its source).
std::string model_for_runner(const runners::RunnerInfo& info, const std::string& model) {
  if (info.reads_plans || !runtime::plan::is_plan_file(model)) return model;
  const Result<fs::path> source = plan_source_model(model);
  PARITY_CHECK(source.is_ok(), kInvalidArgument, info.flag, " reads ONNX models, not parity plans, so it runs the "
               "model the plan was built from; but ", source.is_ok() ? "" : source.error().what());
  logger().info(info.flag, " runs ", source.value().string(), ", the ONNX model plan ", model, " was built from");
  return source.value().string();
}

// The model's own outputs (the starting point of --onnx-exclude-outputs without --onnx-outputs).
std::vector<std::string> current_outputs(const std::string& model) {
  std::vector<std::string> names;
  for (const auto& vi : compare::loaders::onnx_from_path(model)->graph().output()) names.push_back(vi.name());
  return names;
}

// `mark all`, streamed: one runner alone, or the ref runner and at most one other.
bool run_every_layer(const std::string& model, const RunModelsOptions& options) {
  PARITY_CHECK(!options.postprocess.enabled, kInvalidArgument,
               "--onnx-outputs mark all cannot be combined with --postprocess (it compares tensors as produced)");
  compare::MarkAllOptions mark_all;
  mark_all.runners = options.runners;
  mark_all.layerwise.compare = options.compare.simple;
  mark_all.layerwise.validate = options.compare.validate;
  mark_all.layerwise.check_fp16_range = options.compare.check_fp16_range;
  mark_all.layerwise.exclude.insert(options.exclude_outputs.begin(), options.exclude_outputs.end());
  if (options.window_bytes) mark_all.layerwise.window_bytes = *options.window_bytes;
  mark_all.golden_files = options.saved_outputs;
  mark_all.save_outputs = options.save_outputs;
  mark_all.fail_fast = options.compare.fail_fast;
  mark_all.named_tensors = options.compare.named_outputs;
  // This process does nothing else afterwards, so the process-wide allocator setting is its to make.
  mark_all.map_large_tensors = true;
  mark_all.runner_options = options.runner_options;
  std::unique_ptr<compare::FeedSource> feeds = compare::make_feed_source(options.data, options.runs.iterations);
  const compare::MarkAllResult result = compare::compare_every_layer(model, *feeds, mark_all);
  if (options.save_inputs) compare::save_feeds(*options.save_inputs, result.feeds);
  if (options.report.path)
    write_report(options, model, report::layerwise_section(result.comparisons, mark_all.layerwise.compare));
  return result.passed;
}

// Every runner on the same feeds (every tensor they produce held).
RunResults run_runners(const std::string& model, const RunModelsOptions& options,
                       std::vector<compare::RunnerFailure>& failures) {
  std::vector<std::unique_ptr<runners::Runner>> runners;
  compare::Isolation isolation = options.isolation;
  for (const auto& name : options.runners) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
    if (!options.outputs.empty() || !options.exclude_outputs.empty()) {
      namespace loaders = compare::loaders;
      runners.push_back(loaders::RunnerFromOnnx(
          name,
          loaders::ModifyOutputs(loaders::OnnxFromPath(model), options.outputs.empty() ? current_outputs(model) : options.outputs,
                                 options.exclude_outputs),
          fs::path(model).parent_path().string(), options.runner_options));
    } else {
      runners.push_back(info->create(runners::RunnerConfig{model_for_runner(*info, model), options.runner_options}));
    }
    if (info && info->isolate_by_default && options.isolate_crash_prone) isolation.runners.push_back(runners.back()->name());
  }
  std::unique_ptr<compare::FeedSource> feeds = compare::make_feed_source(options.data, options.runs.iterations);
  std::vector<runners::Runner*> raw;
  for (auto& r : runners) raw.push_back(r.get());
  compare::RunOptions run_options;
  run_options.warm_up = static_cast<int>(options.runs.warm_up);
  std::vector<TensorMap> used_feeds;
  run_options.used_feeds = &used_feeds;
  run_options.isolation = isolation;
  run_options.failures = &failures;
  if (options.data.load_inputs.empty()) run_options.expected_iterations = static_cast<size_t>(options.runs.iterations);
  RunResults results = Comparator::run(raw, *feeds, run_options);
  if (options.save_inputs) compare::save_feeds(*options.save_inputs, used_feeds);
  return results;
}

}  // namespace

bool run_models(const RunModelsOptions& options) {
  std::optional<std::string> model = options.model;
  // Runtimes read external data beside the model file, so for this run the model's protobuf sits
  // in that folder.
  std::optional<ModelBesideData> beside_data;
  if (model && options.external_data_dir) {
    beside_data.emplace(*model, *options.external_data_dir);
    model = beside_data->path();
  }
  if (options.save_onnx) {
    PARITY_CHECK(model, kInvalidArgument, "--save-onnx needs a MODEL");
    save_run_model(*model, *options.save_onnx, options.outputs, options.exclude_outputs);
  }
  const bool mark_all = options.outputs == std::vector<std::string>{"mark", "all"};
  PARITY_CHECK(mark_all || !options.compare.check_fp16_range, kInvalidArgument,
               "--check-fp16-range checks intermediate tensors: use it with --onnx-outputs mark all");
  // Layer by layer (streamed) where the runners allow it; otherwise, as Polygraphy does (e.g. the
  // same runner twice), every runner runs with every tensor marked as an output and all are held.
  if (mark_all && compare::streams_every_layer(options.runners)) return run_every_layer(*model, options);
  PARITY_CHECK(!options.compare.check_fp16_range, kInvalidArgument,
               "--check-fp16-range checks the ref run's tensors layer by layer: use --ref and at most one other "
               "runner");

  RunResults results;
  std::vector<compare::RunnerFailure> runner_failures;  // isolated runners that died
  if (!options.runners.empty()) results = run_runners(*model, options, runner_failures);
  for (const auto& path : options.saved_outputs) {
    logger().info("Loading inference results from ", path);
    RunResults loaded = read_saved_outputs(path);
    for (auto& run : loaded.runs) results.runs.push_back(std::move(run));
  }
  if (options.save_outputs) {
    logger().info("Saving inference results to ", *options.save_outputs);
    write_run_results(*options.save_outputs, results);
  }
  check_setting_names(options, results);
  if (options.postprocess.enabled) Comparator::postprocess(results, compare::top_k(options.postprocess.top_k));

  bool success = runner_failures.empty();
  for (const auto& f : runner_failures) logger().error("Runner ", f.runner_name, " FAILED: ", f.reason);
  if (options.compare.validate) success &= Comparator::validate(results, true, true, options.compare.fail_fast);
  std::vector<std::pair<size_t, size_t>> comparisons;
  std::optional<compare::AccuracyResult> accuracy;
  if (results.size() >= 2) {
    if (options.compare_to_first)
      for (size_t i = 1; i < results.size(); ++i) comparisons.emplace_back(0, i);
    else
      comparisons = Comparator::default_comparisons(results);
    Comparator::check_output_sets(results, comparisons);
    accuracy = Comparator::compare_accuracy(results, options.compare.compare_func(), comparisons, options.compare.fail_fast);
    success &= static_cast<bool>(*accuracy);
  }
  if (options.report.path) {
    report::RunReportOptions report_options;
    report_options.tolerances = options.compare.simple;
    report_options.per_channel = options.report.per_channel;
    write_report(options, model, report::run_section(results, comparisons, accuracy ? &*accuracy : nullptr, success,
                                                     report_options));
  }
  return success;
}

}  // namespace parity::tools
