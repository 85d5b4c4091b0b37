#include "tools/validate/validate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/logger.h"
#include "core/progress.h"
#include "runners/registry.h"

namespace parity::tools {
namespace {

using namespace validation;

// Indices of the k largest values of row `row` (ties: the lower index first), largest first.
std::vector<int64_t> top_indices(const Tensor& scores, int64_t row, int64_t k) {
  const int64_t width = scores.dim(scores.rank() - 1);
  std::vector<double> values(static_cast<size_t>(width));
  for (int64_t j = 0; j < width; ++j) values[static_cast<size_t>(j)] = scores.value_as_double(row * width + j);
  std::vector<int64_t> order(static_cast<size_t>(width));
  std::iota(order.begin(), order.end(), 0);
  const int64_t kept = std::min(k, width);
  std::partial_sort(order.begin(), order.begin() + kept, order.end(), [&](int64_t a, int64_t b) {
    const double va = values[static_cast<size_t>(a)], vb = values[static_cast<size_t>(b)];
    return va != vb ? va > vb : a < b;
  });
  order.resize(static_cast<size_t>(kept));
  return order;
}

bool has_rows(const Tensor& t) {
  return t.rank() >= 1 && t.numel() > 0 && is_floating(t.dtype());
}

constexpr const char* kStoredReference = "stored";

// The runners of one rank, active for its whole share; the reference first (no runner when the
// reference outputs are stored).
class RunnerSet {
 public:
  RunnerSet(const ValidateConfig& config, const std::string& reference) {
    if (config.reference_outputs) add(kStoredReference, nullptr);
    else add(reference, create(config, reference, config.model_path));
    for (const auto& name : config.runners)
      if (name != reference || config.reference_outputs) add(name, create(config, name, config.model_path));
    // A plan runs on parity's own runtime, which loads plan files as it loads models.
    if (config.plan_path) add(config.plan_name, create(config, "ref", *config.plan_path));
  }
  const std::vector<std::string>& names() const { return names_; }
  /// Null for stored reference outputs.
  runners::Runner* at(size_t i) { return runners_[i].get(); }

 private:
  static std::unique_ptr<runners::Runner> create(const ValidateConfig& config, const std::string& name,
                                                 const std::string& model) {
    const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
    PARITY_CHECK(info, kInvalidArgument, "no runner named '", name, "'");
    info->require_available(config.runner_options);
    return info->create(runners::RunnerConfig{model, config.runner_options});
  }
  void add(std::string name, std::unique_ptr<runners::Runner> runner) {
    names_.push_back(std::move(name));
    if (runner) active_.push_back(std::make_unique<runners::ActiveRunner>(*runner));
    runners_.push_back(std::move(runner));
  }
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<runners::Runner>> runners_;
  std::vector<std::unique_ptr<runners::ActiveRunner>> active_;
};

class ShareValidator {
 public:
  ShareValidator(const ValidateConfig& config, const DatasetReader& dataset, RunnerSet& runners, ValidationState& state)
      : config_(config), dataset_(dataset), runners_(runners), state_(state) {}

  void sample(int64_t index) {
    const size_t at = static_cast<size_t>(index);
    TensorMap feed;
    try {
      feed = dataset_.read(at);
    } catch (const Error& e) {
      throw about_sample(e, dataset_.path(at));
    }
    std::vector<TensorMap> outputs;
    for (size_t r = 0; r < runners_.names().size(); ++r) {
      try {
        outputs.push_back(runners_.at(r) ? runners_.at(r)->infer(feed) : stored_reference(at));
      } catch (const Error& e) {
        throw about_sample(e, dataset_.path(at));
      }
    }
    bool failed = false;
    const TensorMap& reference = outputs.front();
    for (size_t c = 1; c < outputs.size(); ++c) {
      PairState& pair = state_.pair(runners_.names().front(), runners_.names()[c]);
      for (const auto& [name, ref] : reference) {
        const Tensor* candidate = outputs[c].find(name);
        PARITY_CHECK(candidate, kInvalidArgument, "runner '", runners_.names()[c], "' has no output '", name,
                     "' that runner '", runners_.names().front(), "' has");
        failed |= !compare_output(index, name, *candidate, ref, pair.output(name));
      }
    }
    if (failed) ++state_.samples_failed;
    if (config_.labels) score_labels(index, outputs);
  }

 private:
  // The error, naming the sample once: a reader that named it (Error::file() is the sample, or a
  // file inside a sample folder) said so already; any other message gets "sample 'PATH': ".
  static Error about_sample(const Error& e, const std::string& path) {
    const std::optional<std::string>& file = e.file();
    if (file && (*file == path || file->rfind(path + "/", 0) == 0)) return e;
    return e.prefixed(str_cat("sample '", path, "'")).with_missing({.file = path});
  }

  TensorMap stored_reference(size_t index) const {
    if (*config_.reference_outputs == "dataset") {
      auto stored = dataset_.stored_outputs(index);
      PARITY_CHECK(stored, kInvalidArgument, "--reference-outputs dataset: a ", dataset_.kind(),
                   " stores no outputs (ONNX test data does)");
      return std::move(*stored);
    }
    return read_reference_outputs(*config_.reference_outputs, dataset_.name(index), config_.model_outputs);
  }

  // Adds one output of one sample; returns whether it passed the tolerances.
  bool compare_output(int64_t index, const std::string& name, const Tensor& candidate, const Tensor& reference,
                      OutputState& out) {
    const auto& opts = config_.compare;
    const double atol = opts.atol.get(name), rtol = opts.rtol.get(name);
    const compare::ErrorStatistics stats =
        compare::compute_error_statistics(candidate, reference, atol, rtol, opts.infinities_compare_equal);
    std::optional<double> quantile_abs, quantile_rel;
    const bool passed = !compare::simple_check_failed(stats, opts.check_error_stat.get(name), atol, rtol,
                                                      opts.error_quantile.get(name), &quantile_abs, &quantile_rel);
    ++out.samples;
    if (passed) ++out.samples_passed;
    const Tensor absdiff = stats.absdiff.cast(DType::kFloat64), reldiff = stats.reldiff.cast(DType::kFloat64);
    for (double v : absdiff.values<double>()) out.abs.add(v);
    for (double v : reldiff.values<double>()) out.rel.add(v);
    out.per_sample["max_absdiff"].add(stats.max_absdiff);
    out.per_sample["mean_absdiff"].add(stats.mean_absdiff);
    out.per_sample["max_reldiff"].add(stats.max_reldiff);
    out.per_sample["l0_fraction"].add(stats.l0_fraction);
    out.per_sample["l1_rel"].add(stats.l1_rel);
    out.per_sample["l2_rel"].add(stats.l2_rel);
    out.per_sample["linf_rel"].add(stats.linf_rel);
    out.per_sample["cosine_distance"].add(stats.cosine_distance);
    if (config_.top_k > 0 && has_rows(reference) && has_rows(candidate) && reference.shape() == candidate.shape()) {
      const int64_t rows = reference.numel() / reference.dim(reference.rank() - 1);
      for (int64_t row = 0; row < rows; ++row) {
        const auto want = top_indices(reference, row, config_.top_k), got = top_indices(candidate, row, config_.top_k);
        ++out.topk_rows;
        if (want.front() == got.front()) ++out.top1_agree;
        for (int64_t i : got) out.topk_overlap += std::count(want.begin(), want.end(), i);
      }
    }
    out.add_worst({index, dataset_.name(static_cast<size_t>(index)), stats.max_absdiff, stats.max_reldiff,
                   stats.mean_absdiff, passed, dataset_.rerun_inputs(static_cast<size_t>(index)).value_or("")},
                  state_.worst_limit);
    return passed;
  }

  void score_labels(int64_t index, const std::vector<TensorMap>& outputs) {
    const int64_t label = config_.labels->at(static_cast<size_t>(index));
    ++state_.labeled;
    auto& cls = state_.classes[label];
    ++cls.first;
    for (size_t r = 0; r < outputs.size(); ++r) {
      const std::string& runner = runners_.names()[r];
      const std::string output = config_.label_output.value_or(outputs.front().begin()->first);
      const Tensor* scores = outputs[r].find(output);
      PARITY_CHECK(scores, kInvalidArgument, "--label-output: runner '", runner, "' has no output '", output, "'");
      PARITY_CHECK(has_rows(*scores), kInvalidArgument, "--labels: output '", output,
                   "' holds no floating-point class scores");
      const auto top = top_indices(*scores, 0, std::max<int64_t>(1, config_.top_k));
      LabelHits& hits = state_.accuracy[runner];
      const bool top1 = top.front() == label;
      hits.top1 += top1;
      hits.topk += std::find(top.begin(), top.end(), label) != top.end();
      cls.second[runner] += top1;
    }
  }

  const ValidateConfig& config_;
  const DatasetReader& dataset_;
  RunnerSet& runners_;
  ValidationState& state_;
};

std::string share_description(const DatasetReader& dataset, std::pair<int64_t, int64_t> range) {
  if (range.first >= range.second) return "no samples";
  return str_cat("samples ", range.first, "-", range.second - 1, " (", dataset.name(static_cast<size_t>(range.first)),
                 " .. ", dataset.name(static_cast<size_t>(range.second - 1)), ", ", range.second - range.first, " samples)");
}

}  // namespace

std::pair<int64_t, int64_t> shard_range(int64_t samples, Shard shard) {
  return {samples * shard.index / shard.count, samples * (shard.index + 1) / shard.count};
}

ValidateResult validate(const ValidateConfig& config, const DatasetReader& dataset, Collective* collective) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_CHECK(!config.runners.empty(), kInvalidArgument, "no runners to validate with");
  PARITY_CHECK(config.shard.count >= 1 && config.shard.index >= 0 && config.shard.index < config.shard.count,
               kInvalidArgument, "shard ", config.shard.index, "/", config.shard.count, " does not exist");
  const int64_t samples = static_cast<int64_t>(dataset.size());
  if (config.labels)
    PARITY_CHECK(static_cast<int64_t>(config.labels->size()) >= samples, kInvalidArgument, "label file '",
                 config.labels_path, "' has ", config.labels->size(), " labels for ", samples, " samples");
  const std::string reference = config.reference_outputs ? kStoredReference : config.reference.value_or(config.runners.front());

  Shard shard = config.shard;
  std::vector<std::string> shares;
  if (collective && collective->size() > 1) {
    PARITY_CHECK(shard.count == 1, kInvalidArgument, "--shard splits a dataset without MPI: under ", collective->size(),
                 " MPI ranks each rank takes its share already");
    shard = {collective->rank(), collective->size()};
    for (int r = 0; r < collective->size(); ++r) shares.push_back(share_description(dataset, shard_range(samples, {r, collective->size()})));
    collective->describe_shares(shares);
  }
  const auto [begin, end] = shard_range(samples, shard);

  ValidationState state = config.resume.value_or(ValidationState{});
  state.worst_limit = config.worst_count;
  RunnerSet runners(config, reference);
  for (size_t c = 1; c < runners.names().size(); ++c) state.pair(reference, runners.names()[c]);

  ShareValidator validator(config, dataset, runners, state);
  int64_t todo = 0;
  for (int64_t i = begin; i < end; ++i) todo += !state.done.contains(i);
  if (todo < end - begin) logger().info("Resuming: ", end - begin - todo, " of ", end - begin, " samples done already");
  Progress progress("validate", todo);
  int64_t since_checkpoint = 0;
  for (int64_t i = begin; i < end; ++i) {
    if (state.done.contains(i)) continue;
    try {
      validator.sample(i);
    } catch (const Error& e) {
      if (!config.skip_bad_samples || e.is_internal()) throw;
      logger().warning("Skipping sample ", dataset.name(static_cast<size_t>(i)), ": ", e.what());
      state.skipped.push_back({i, dataset.name(static_cast<size_t>(i)), e.what()});
    }
    state.done.add(i, i + 1);
    progress.advance();
    if (config.fail_fast && state.samples_failed > 0) {
      logger().warning("--fail-fast: stopping at sample ", dataset.name(static_cast<size_t>(i)), ", the first to fail");
      break;
    }
    if (config.checkpoint && config.checkpoint_every > 0 && ++since_checkpoint >= config.checkpoint_every) {
      config.checkpoint(state);
      since_checkpoint = 0;
    }
  }

  ValidateResult result;
  if (collective && collective->size() > 1) {
    result.ranks = collective->size();
    const auto payloads = collective->gather(state.to_json().dump());
    result.root = collective->rank() == 0;
    if (result.root) {
      ValidationState merged = ValidationState::from_json(nlohmann::json::parse(payloads.front()));
      for (size_t r = 1; r < payloads.size(); ++r) merged.merge(ValidationState::from_json(nlohmann::json::parse(payloads[r])));
      state = std::move(merged);
    }
  }
  result.state = std::move(state);
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parity::tools
