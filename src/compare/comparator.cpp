#include "compare/comparator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "compare/feed_files.h"
#include "compare/isolated_run.h"
#include "compare/report.h"
#include "core/logger.h"
#include "core/low_precision.h"
#include "core/progress.h"
#include "core/text.h"

namespace parity::compare {

// ---------------------------------------------------------------------------------------------
// AccuracyResult

AccuracyResult::operator bool() const {
  for (const auto& pair : pairs_)
    for (const auto& iteration : pair.iterations)
      for (const auto& [name, result] : iteration)
        if (!result.passed) return false;
  return true;
}

AccuracyResult::Stats AccuracyResult::stats(size_t pair_index) const {
  Stats s;
  if (pair_index >= pairs_.size()) return s;
  for (const auto& iteration : pairs_[pair_index].iterations) {
    const bool ok = std::all_of(iteration.begin(), iteration.end(), [](const auto& e) { return e.second.passed; });
    ++(ok ? s.passed : s.failed);
  }
  s.total = s.passed + s.failed;
  return s;
}

double AccuracyResult::percentage(size_t pair_index) const {
  if (pairs_.empty()) return 1.0;
  const Stats s = stats(pair_index);
  return s.total == 0 ? 1.0 : static_cast<double>(s.passed) / static_cast<double>(s.total);
}

// ---------------------------------------------------------------------------------------------
// Comparator::run

namespace {

std::string metadata_of(const TensorMap& tensors) {
  TensorMetadata m;
  for (const auto& [name, t] : tensors) m.add(name, t.dtype(), DimShape(t.shape()));
  return m.to_string();
}

// Fits a cached feed to one runner's inputs: picks inputs by name (in the runner's order) and
// refuses missing names, wrong dtypes and shapes the model cannot take, naming what exists.
TensorMap fit_feed(const TensorMap& cached, const TensorMetadata& inputs, const std::string& runner_name,
                   size_t iteration) {
  TensorMap feed;
  for (const TensorMeta& meta : inputs) {
    const Tensor* found = cached.find(meta.name);
    PARITY_CHECK(found, kInvalidArgument, "input '", meta.name, "' of ", runner_name, " is missing from the feed of iteration ",
                 iteration, "; the feed has: ", cached.empty() ? "(nothing)" : join_names(cached.names()));
    // numpy records ml_dtypes' 1-byte types as '<V1': the model says which one the bytes are.
    const Tensor resolved = cast_to_input_float_type(resolve_numpy_void(*found, meta.dtype), meta);
    const Tensor* t = &resolved;
    PARITY_CHECK(meta.dtype == DType::kUndefined || t->dtype() == meta.dtype, kInvalidArgument, "input '", meta.name,
                 "' of iteration ", iteration, " has dtype ", dtype_name(t->dtype()),
                 t->dtype() == kNumpyVoid1 ? " (numpy's '|V1' bytes, as ml_dtypes' 1-byte types are saved)" : "",
                 " but ", runner_name, " expects ", dtype_name(meta.dtype));
    PARITY_CHECK(meta.shape.unknown_rank || meta.shape.accepts(t->shape()), kInvalidArgument, "input '", meta.name,
                 "' of iteration ", iteration, " has shape ", shape_to_string(t->shape()), " but ", runner_name, " expects ",
                 meta.shape.to_string());
    feed.set(meta.name, *t);
  }
  for (const auto& [name, t] : cached)
    if (!inputs.contains(name))
      logger().warning("Input '", name, "' of the feed is not an input of ", runner_name, " and is ignored; inputs: ",
                       join_names(inputs.names()));
  return feed;
}

}  // namespace

namespace {

// Feeds shared by all runners: pulled from the source once, in order, then reused.
struct FeedCache {
  FeedSource& source;
  std::vector<TensorMap> feeds;
  bool exhausted = false;

  const TensorMap* at(size_t i) {
    while (feeds.size() <= i && !exhausted) {
      auto f = source.feed(feeds.size());
      if (!f) exhausted = true;
      else feeds.push_back(std::move(*f));
    }
    return i < feeds.size() ? &feeds[i] : nullptr;
  }
};

// One runner over every feed: activation, warm-up, the timed iterations.
std::vector<IterationResult> run_one(runners::Runner* runner, FeedCache& cache, const RunOptions& options,
                                     bool store_outputs) {
  logger().start(runner_column(runner->name()), " | Activating and starting inference");
  runners::ActiveRunner active(*runner);
  const TensorMetadata inputs = runner->input_metadata();
  if (cache.feeds.empty() && !cache.exhausted) cache.source.set_input_metadata(inputs);
  auto feed_at = [&](size_t i) -> std::optional<TensorMap> {
    const TensorMap* cached = cache.at(i);
    if (!cached) return std::nullopt;
    return fit_feed(*cached, inputs, runner->name(), i);
  };

  if (options.warm_up > 0) {
    logger().start(runner_column(runner->name()), " | Running ", options.warm_up, " warm-up run(s)");
    if (auto first = feed_at(0)) {
      for (int w = 0; w < options.warm_up; ++w) runner->infer(*first);
    } else {
      logger().warning(options.warm_up, " warm-up run(s) were requested, but the data loader did not supply any data. Skipping warm-up run(s)");
    }
    logger().finish(runner_column(runner->name()), " | Finished ", options.warm_up, " warm-up run(s)");
  }

  std::vector<IterationResult> iterations;
  double total_runtime = 0;
  size_t index = 0;
  // Later runners know the count: the first one pulled every feed.
  Progress progress(runner->name() + " inference",
                    static_cast<int64_t>(cache.exhausted ? cache.feeds.size() : options.expected_iterations));
  for (; auto feed = feed_at(index); ++index, progress.advance()) {
    if (index == 0) logger().info(runner_column(runner->name()), "\n---- Inference Input(s) ----\n", metadata_of(*feed));
    TensorMap outputs = runner->infer(*feed);
    const double runtime = runner->last_inference_time();
    total_runtime += runtime;
    if (index == 0) logger().info(runner_column(runner->name()), "\n---- Inference Output(s) ----\n", metadata_of(outputs));
    logger().extra_verbose(runner_column(runner->name()), " | Inference Time: ", runtime * 1000.0, " ms");
    if (options.on_outputs) options.on_outputs(runner->name(), index, outputs);
    IterationResult result;
    // Runners may reuse their output buffers on the next call: keep a deep copy.
    if (store_outputs) result.outputs = outputs.clone();
    result.runtime = runtime;
    result.runner_name = runner->name();
    iterations.push_back(std::move(result));
  }
  const double total_ms = total_runtime * 1000.0;
  const size_t count = std::max<size_t>(index, 1);
  logger().finish(runner_column(runner->name()),
                  fmt::format(" | Completed {} iteration(s) in {:.4g} ms | Average inference time: {:.4g} ms.", index,
                              total_ms, total_ms / static_cast<double>(count)));
  return iterations;
}

}  // namespace

RunResults Comparator::run(const std::vector<runners::Runner*>& runners, FeedSource& feeds, const RunOptions& options) {
  RunResults results;
  if (runners.empty())
    logger().warning("No runners were provided to Comparator::run(). Inference will not be run, and run results will be empty.");
  FeedCache cache{feeds, {}, false};
  for (runners::Runner* runner : runners) {
    PARITY_ASSERT(runner != nullptr);
    if (!options.isolation.applies_to(runner->name())) {
      results.add(runner->name(), run_one(runner, cache, options, options.store_outputs));
      continue;
    }
    PARITY_CHECK(options.failures, kInternal, "Comparator::run with isolation needs RunOptions::failures");
    // The child pulls feeds (and shapes the source) exactly as in-process; the parent adopts the
    // feeds it used, so later runners and --save-inputs see the same data.
    const size_t known_feeds = cache.feeds.size();
    IsolatedRun isolated = run_in_child(runner->name(), options.isolation, [&] {
      IsolatedRun out;
      out.iterations = run_one(runner, cache, options, /*store_outputs=*/true);
      // Only feeds the parent does not have yet travel back.
      out.feeds.assign(cache.feeds.begin() + static_cast<std::ptrdiff_t>(known_feeds), cache.feeds.end());
      return out;
    });
    if (!isolated.failure.empty()) {
      logger().error(runner_column(runner->name()), " | FAILED: ", isolated.failure);
      options.failures->push_back({runner->name(), isolated.failure});
      continue;
    }
    for (auto& feed : isolated.feeds) cache.feeds.push_back(std::move(feed));
    if (options.on_outputs)
      for (size_t i = 0; i < isolated.iterations.size(); ++i)
        options.on_outputs(runner->name(), i, isolated.iterations[i].outputs);
    if (!options.store_outputs)
      for (auto& it : isolated.iterations) it.outputs = TensorMap();
    results.add(runner->name(), std::move(isolated.iterations));
  }
  if (options.used_feeds) *options.used_feeds = cache.feeds;
  return results;
}

RunResults Comparator::run(const std::vector<runners::Runner*>& runners) {
  DataLoader loader;
  return run(runners, loader);
}

std::vector<std::pair<size_t, size_t>> Comparator::default_comparisons(const RunResults& results) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i + 1 < results.size(); ++i) out.emplace_back(i, i + 1);
  return out;
}

void Comparator::check_output_sets(const RunResults& results, const std::vector<std::pair<size_t, size_t>>& comparisons) {
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

// ---------------------------------------------------------------------------------------------
// compare_accuracy / validate / postprocess

AccuracyResult Comparator::compare_accuracy(const RunResults& results, const CompareFunc& compare_func_in,
                                            std::optional<std::vector<std::pair<size_t, size_t>>> comparisons_in,
                                            bool fail_fast) {
  const CompareFunc compare_func = compare_func_in ? compare_func_in : compare_funcs::simple();
  const auto comparisons = comparisons_in ? *comparisons_in : default_comparisons(results);
  AccuracyResult accuracy;
  for (const auto& [i0, i1] : comparisons) {
    PARITY_CHECK(i0 < results.size() && i1 < results.size(), kInvalidArgument, "comparison (", i0, ", ", i1,
                 ") refers to a runner that does not exist; there are ", results.size(), " runners");
    const auto& [name0, iters0] = results.runs[i0];
    const auto& [name1, iters1] = results.runs[i1];
    report_cat(Severity::kStart, "Accuracy Comparison | ", name0, " vs. ", name1);
    AccuracyResult::Pair pair{name0, name1, {}};
    const size_t num_iters = std::min(iters0.size(), iters1.size());
    bool stop = false;
    {
      LogIndent indent;
      if (iters0.size() != iters1.size())
        logger().warning(name0, " has ", iters0.size(), " iteration(s) but ", name1, " has ", iters1.size(),
                         "; comparing the first ", num_iters);
      for (size_t it = 0; it < num_iters && !stop; ++it) {
        if (num_iters > 1) report_cat(Severity::kInfo, "Iteration: ", it);
        std::optional<LogIndent> iter_indent;
        if (num_iters > 1) iter_indent.emplace();
        IterationMatch match = compare_func(iters0[it], iters1[it]);
        stop = fail_fast && std::any_of(match.begin(), match.end(), [](const auto& e) { return !e.second.passed; });
        pair.iterations.push_back(std::move(match));
      }
    }
    accuracy.pairs().push_back(std::move(pair));
    if (stop) return accuracy;
    if (num_iters > 1 || comparisons.size() > 1) {
      const size_t index = accuracy.pairs().size() - 1;
      const auto st = accuracy.stats(index);
      const std::string msg = str_cat("Accuracy Summary | ", name0, " vs. ", name1, " | Passed: ", st.passed, "/",
                                      st.total, " iterations | Pass Rate: ",
                                      python_float_repr(accuracy.percentage(index) * 100.0), "%");
      if (st.passed == st.total) report(Severity::kFinish, msg);
      else report(Severity::kError, msg);
    }
  }
  return accuracy;
}

bool Comparator::validate(const RunResults& results, bool check_inf, bool check_nan, bool fail_fast) {
  std::vector<std::string> names;
  for (const auto& run : results.runs) names.push_back("'" + run.first + "'");
  report_cat(Severity::kStart, "Output Validation | Runners: [", join_names(names), "]");
  bool all_valid = true;
  {
    LogIndent indent;
    for (const auto& [runner_name, iterations] : results.runs) {
      for (const auto& iteration : iterations) {
        for (const auto& [output_name, output] : iteration.outputs) {
          report_cat(Severity::kStart, runner_column(runner_name), " | Validating output: ", output_name, " (check_inf=",
                     check_inf ? "True" : "False", ", check_nan=", check_nan ? "True" : "False", ")");
          LogIndent inner;
          log_output_stats(output, false, "");
          bool valid = true;
          if (is_floating(output.dtype())) {
            bool has_nan = false, has_inf = false;
            for (int64_t i = 0; i < output.numel(); ++i) {
              const double v = output.value_as_double(i);
              has_nan |= std::isnan(v);
              has_inf |= !std::isfinite(v);
            }
            if (check_nan && has_nan) {
              report(Severity::kError, "NaN Detected | One or more NaNs were encountered in this output");
              valid = false;
            }
            if (check_inf && has_inf) {
              report(Severity::kError, "Inf Detected | One or more non-finite values were encountered in this output");
              valid = false;
            }
          }
          if (valid) report_cat(Severity::kFinish, "PASSED | Output: ", output_name, " is valid");
          else report_cat(Severity::kError, "FAILED | Errors detected in output: ", output_name);
          all_valid &= valid;
          if (fail_fast && !all_valid) return false;
        }
      }
    }
    if (all_valid) report(Severity::kFinish, "PASSED | Output Validation");
    else report(Severity::kError, "FAILED | Output Validation");
  }
  return all_valid;
}

RunResults& Comparator::postprocess(RunResults& results, const std::function<void(IterationResult&)>& fn) {
  logger().start("Applying post-processing to outputs");
  for (auto& run : results.runs)
    for (auto& iteration : run.second) fn(iteration);
  logger().finish("Finished applying post-processing");
  return results;
}

// ---------------------------------------------------------------------------------------------
// top-k

Tensor top_k_indices(const Tensor& t, int64_t k, int64_t axis) {
  PARITY_CHECK(t.rank() > 0, kInvalidArgument, "top-k needs an output with at least one dimension");
  PARITY_CHECK(k > 0, kInvalidArgument, "top-k needs k > 0, got ", k);
  const int64_t rank = t.rank();
  const int64_t ax = axis < 0 ? axis + rank : axis;
  PARITY_CHECK(ax >= 0 && ax < rank, kInvalidArgument, "top-k axis ", axis, " is out of range for an output of rank ", rank);
  const Shape& shape = t.shape();
  const int64_t len = shape[ax];
  const int64_t kk = std::min(k, len);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < ax; ++i) outer *= shape[i];
  for (int64_t i = ax + 1; i < rank; ++i) inner *= shape[i];
  Shape out_shape = shape;
  out_shape[ax] = kk;
  Tensor out(DType::kInt64, out_shape);
  int64_t* po = out.data<int64_t>();
  const Tensor values = t.cast(DType::kFloat64);
  const double* pv = values.data<double>();
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return pv[(o * len + j) * inner + in]; };
      std::iota(order.begin(), order.end(), 0);
      // argsort(-x, kind="stable"): descending, ties by index, NaN last (as -NaN sorts last).
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = at(a), vb = at(b);
        if (std::isnan(va)) return false;
        if (std::isnan(vb)) return true;
        return -va < -vb;
      });
      for (int64_t j = 0; j < kk; ++j) po[(o * kk + j) * inner + in] = order[j];
    }
  }
  return out;
}

std::function<void(IterationResult&)> top_k(PerOutput<std::optional<TopK>> settings) {
  return [settings](IterationResult& result) {
    for (auto& [name, tensor] : result.outputs) {
      const auto& setting = settings.get(name);
      if (setting) tensor = top_k_indices(tensor, setting->k, setting->axis);
    }
  };
}

}  // namespace parity::compare
