#include "compare/mark_all.h"

#include <malloc.h>

#include <algorithm>
#include <filesystem>

#include "compare/loaders.h"
#include "compare/report.h"
#include "core/formats/run_results_stream.h"
#include "core/logger.h"
#include "core/text.h"
#include "runners/registry.h"

namespace parity::compare {
namespace {

// With map_large_tensors, allocations of at least this size get their own mapping; the
// comparison's slices stay below it.
constexpr int kMmapThresholdBytes = 1 << 20;

void check_tensors_exist(const std::vector<std::string>& given, const std::vector<std::string>& tensors,
                         const std::string& flag) {
  for (const auto& name : given)
    PARITY_CHECK(std::find(tensors.begin(), tensors.end(), name) != tensors.end(), kInvalidArgument, flag,
                 ": no tensor named '", name, "'; tensors: ", tensors.empty() ? "(none)" : join_names(tensors));
}

void check_iteration_stored(const RunResultsIndex& golden, size_t run, size_t iteration) {
  const size_t stored = golden.runs()[run].iterations.size();
  PARITY_CHECK(iteration < stored, kInvalidArgument, golden.path(), ": runner '", golden.runs()[run].runner, "' has ",
               stored, " iteration(s) but this run feeds more (match --iterations or --load-inputs to the stored run)");
}

std::unique_ptr<runners::Runner> create_runner(const std::string& name, const std::string& model,
                                               const runners::RunnerOptions& runner_options) {
  return runners::RunnerRegistry::instance().find(name)->create(runners::RunnerConfig{model, runner_options});
}

// Every layer's tensors streamed into a Polygraphy RunResults file (the reference's, then the
// peer's), as Polygraphy's `--onnx-outputs mark all --save-outputs` stores a golden run. Installs
// its hooks into `options`.
class LayerSaver {
 public:
  // `first` is the reference runner, or with `runner_only` the one runner (whose tensors come
  // through the peer hook).
  LayerSaver(const std::string& path, const std::string& model, const std::string& first, const std::string& peer,
             const runners::RunnerOptions& runner_options, LayerwiseOptions& options, bool runner_only)
      : writer_(path) {
    // The runners' own names (e.g. "onnxrt-runner-N0-..."), as a normal run's saved results carry them.
    ref_ = writer_.add_runner(create_runner(first, model, runner_options)->name());
    if (!peer.empty()) peer_ = writer_.add_runner(create_runner(peer, model, runner_options)->name());
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
  RunResultsStreamWriter writer_;
  size_t ref_ = 0;
  std::optional<size_t> peer_;
};

// The comparisons of one feed.
class FeedComparer {
 public:
  FeedComparer(const std::string& model, const MarkAllOptions& options, const std::vector<RunResultsIndex>& goldens)
      : model_(model), options_(options), goldens_(goldens) {}

  // One runner that is not parity's own: its tensors summarized, or compared with each stored run
  // (the first comparison also saves them).
  bool runner_alone(const std::string& runner, const TensorMap& feed, size_t iteration, LayerwiseOptions& layerwise,
                    std::vector<LayerwiseComparison>& out) const {
    if (goldens_.empty()) {
      out.push_back({runner_layerwise(model_, runner, options_.runner_options, feed, layerwise), iteration, ""});
      return true;
    }
    bool passed = true;
    for (const auto& golden : goldens_) {
      PARITY_CHECK(!golden.runs().empty(), kInvalidArgument, golden.path(), " holds no runs to compare with");
      for (size_t r = 0; r < golden.runs().size(); ++r) {
        check_iteration_stored(golden, r, iteration);
        const GoldenRun run{&golden, r, iteration};
        out.push_back({runner_layerwise(model_, runner, options_.runner_options, feed, layerwise, &run), iteration,
                       golden.path()});
        passed &= out.back().report.passed();
        layerwise.on_peer_tensor = nullptr;
      }
    }
    return passed;
  }

  // parity's ref runner against iteration `iteration` of every run stored in `golden`.
  bool with_golden(const RunResultsIndex& golden, const TensorMap& feed, size_t iteration,
                   LayerwiseOptions& layerwise, std::vector<LayerwiseComparison>& out) const {
    PARITY_CHECK(!golden.runs().empty(), kInvalidArgument, golden.path(), " holds no runs to compare with");
    bool passed = true;
    for (size_t r = 0; r < golden.runs().size(); ++r) {
      check_iteration_stored(golden, r, iteration);
      out.push_back({compare_layerwise_golden(model_, options_.runner_options, feed, GoldenRun{&golden, r, iteration},
                                              layerwise),
                     iteration, golden.path()});
      passed &= out.back().report.passed();
      layerwise.on_reference_tensor = nullptr;
    }
    return passed;
  }

 private:
  const std::string& model_;
  const MarkAllOptions& options_;
  const std::vector<RunResultsIndex>& goldens_;
};

}  // namespace

bool streams_every_layer(const std::vector<std::string>& runners) {
  const auto refs = std::count(runners.begin(), runners.end(), "ref");
  return runners.size() == 1 || (refs == 1 && runners.size() == 2);
}

MarkAllResult compare_every_layer(const std::string& model_path, FeedSource& feeds, const MarkAllOptions& options) {
  const std::vector<std::string>& runner_names = options.runners;
  const auto ref_it = std::find(runner_names.begin(), runner_names.end(), "ref");
  // One runner that is not parity's own (e.g. --ort alone): its every tensor, window by window.
  const bool runner_only = ref_it == runner_names.end() && runner_names.size() == 1;
  PARITY_CHECK(runner_only || (ref_it != runner_names.end() && runner_names.size() <= 2), kInvalidArgument,
               "--onnx-outputs mark all runs one runner alone, or compares layer by layer with --ref and at most "
               "one other runner; got: ", runner_names.empty() ? std::string("no runner") : join_names(runner_names));
  std::string peer;
  for (const auto& n : runner_names)
    if (n != "ref") peer = n;
  const std::vector<std::string> tensors = loaders::produced_value_names(*loaders::onnx_from_path(model_path));
  for (const auto& [flag, named] : options.named_tensors) check_tensors_exist(named, tensors, flag);

  // Feeds: the reference's (or the one runner's) input metadata.
  const std::string first = runner_only ? runner_names.front() : std::string("ref");
  {
    auto probe = create_runner(first, model_path, options.runner_options);
    runners::ActiveRunner active(*probe);
    feeds.set_input_metadata(probe->input_metadata());
  }
  LayerwiseOptions layerwise = options.layerwise;
  layerwise.reference_first = runner_names.front() == "ref";
  // glibc raises its mmap threshold each time a large block is freed, after which activations come
  // from the heap, where small allocations made between them pin freed space: measured on PP-OCRv4
  // det at 640x640, the heap kept ~200 MiB more than the live tensors. A fixed threshold keeps
  // every tensor of 1 MiB or more in its own mapping, returned to the system when freed.
  if (options.map_large_tensors) mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  // Golden runs are indexed, not read: their tensors are read one at a time.
  std::vector<RunResultsIndex> goldens;
  for (const auto& path : options.golden_files) {
    std::error_code ec;
    PARITY_CHECK(!std::filesystem::is_directory(path, ec), kInvalidArgument, "--load-outputs '", path,
                 "': with --onnx-outputs mark all, stored outputs must be a RunResults JSON, not a folder");
    logger().info("Indexing stored layer outputs in ", path);
    goldens.emplace_back(path);
  }
  std::optional<LayerSaver> saver;
  if (options.save_outputs)
    saver.emplace(*options.save_outputs, model_path, first, runner_only ? "" : peer, options.runner_options, layerwise,
                  runner_only);
  const FeedComparer comparer(model_path, options, goldens);
  MarkAllResult result;
  for (size_t i = 0;; ++i) {
    auto feed = feeds.feed(i);
    if (!feed) break;
    if (i > 0) report_cat(Severity::kInfo, "Iteration: ", i);
    if (saver) saver->begin_iteration();
    // The first comparison of a feed saves the reference's tensors; the others only compare.
    LayerwiseOptions current = layerwise;
    if (runner_only) {
      result.passed &= comparer.runner_alone(runner_names.front(), *feed, i, current, result.comparisons);
    } else if (!peer.empty() || goldens.empty()) {
      result.comparisons.push_back(
          {compare_layerwise(model_path, peer, options.runner_options, *feed, current), i, ""});
      result.passed &= result.comparisons.back().report.passed();
      current.on_reference_tensor = nullptr;
    }
    if (!runner_only)
      for (const auto& golden : goldens) result.passed &= comparer.with_golden(golden, *feed, i, current, result.comparisons);
    result.feeds.push_back(std::move(*feed));
    if (!result.passed && options.fail_fast) break;
  }
  if (saver) {
    saver->finish();
    logger().info("Saved every layer's outputs to ", *options.save_outputs);
  }
  return result;
}

}  // namespace parity::compare
