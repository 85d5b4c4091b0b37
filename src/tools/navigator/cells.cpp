#include "tools/navigator/cells.h"

#include <chrono>
#include <cmath>
#include <optional>

#include "compare/isolated_run.h"
#include "core/formats/file_io.h"
#include "core/formats/npz.h"
#include "core/stats.h"
#include "core/status.h"
#include "runners/registry.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/profiler.h"
#include "tools/navigator/samples.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

StepResult failed(std::string reason) {
  StepResult step;
  step.state = StepState::kFail;
  step.reason = std::move(reason);
  return step;
}

// The NaN/inf check of the inputs of one sample: "" or why the sample cannot judge correctness.
std::string non_finite_inputs(const TensorMap& sample, const std::string& what) {
  for (const auto& [name, tensor] : sample)
    if (int64_t bad = count_non_finite(tensor))
      return what + ": input '" + name + "' has " + std::to_string(bad) + " NaN or infinite values";
  return "";
}

// TorchScript keeps forward()'s argument names and no output names, so a TorchScript model is fed
// and read by position in the workspace's input and output order (for a TorchScript copy of an
// ONNX source, the ONNX model's names, which the export may have given other names than forward()'s).
struct PositionalNames {
  std::vector<std::string> workspace_inputs, runner_inputs;
  std::vector<std::string> workspace_outputs;

  TensorMap feed(TensorMap feed) const {
    if (workspace_inputs.size() != runner_inputs.size() || workspace_inputs.size() != feed.size()) return feed;
    TensorMap renamed;
    for (size_t i = 0; i < workspace_inputs.size(); ++i) {
      const Tensor* tensor = feed.find(workspace_inputs[i]);
      if (!tensor) return feed;
      renamed.set(runner_inputs[i], *tensor);
    }
    return renamed;
  }
  TensorMap outputs(const TensorMap& outputs) const {
    if (workspace_outputs.size() != outputs.size()) return outputs;
    TensorMap renamed;
    size_t i = 0;
    for (const auto& [name, tensor] : outputs) renamed.set(workspace_outputs[i++], tensor);
    return renamed;
  }
};

PositionalNames positional_names(runners::Runner& runner, const WorkspaceStatus& status) {
  PositionalNames names;
  for (const auto& spec : status.inputs) names.workspace_inputs.push_back(spec.name);
  for (const auto& meta : runner.input_metadata()) names.runner_inputs.push_back(meta.name);
  for (const auto& spec : status.outputs) names.workspace_outputs.push_back(spec.name);
  return names;
}

// Outputs of every sample of one kind at batch size 1 (cloned: runners reuse their buffers).
std::vector<TensorMap> run_samples(runners::Runner& runner, const std::vector<TensorMap>& samples,
                                   std::optional<int64_t> batch_dim, const PositionalNames* names = nullptr) {
  std::vector<TensorMap> outputs;
  for (const auto& sample : samples) {
    TensorMap feed = feed_from_sample(sample, batch_dim, 1);
    if (names) feed = names->feed(std::move(feed));
    TensorMap result = runner.infer(feed, false).clone();
    outputs.push_back(names ? names->outputs(result) : std::move(result));
  }
  return outputs;
}

std::vector<TensorMap> read_outputs(const fs::path& dir, size_t count) {
  std::vector<TensorMap> outputs;
  for (size_t i = 0; i < count; ++i) {
    const fs::path file = dir / (std::to_string(i) + ".npz");
    PARITY_CHECK(fs::is_regular_file(file), kNotFound, "the source's output ", file.string(), " is missing");
    outputs.push_back(read_npz(file.string()));
  }
  return outputs;
}

StepResult conversion_step(runners::Runner& runner, const SampleSets& samples, const WorkspaceStatus& status,
                           const PositionalNames* names) {
  const auto start = std::chrono::steady_clock::now();
  StepResult step;
  const auto outputs = run_samples(runner, samples.of("conversion"), status.config.batch_dim, names);
  for (size_t i = 0; i < outputs.size(); ++i)
    for (const auto& spec : status.outputs)
      if (!outputs[i].contains(spec.name))
        return failed("conversion sample " + std::to_string(i) + ": the format does not produce output '" + spec.name +
                      "'; it produces " + join_names(outputs[i].names()));
  step.state = StepState::kOk;
  step.seconds = seconds_since(start);
  return step;
}

StepResult correctness_step(runners::Runner& runner, const fs::path& workspace, const SampleSets& samples,
                            const WorkspaceStatus& status, const PositionalNames* names) {
  const auto start = std::chrono::steady_clock::now();
  if (!status.source_outputs_failure.empty())
    return failed("no reference outputs: the source model did not run (" + status.source_outputs_failure + ")");
  const auto& inputs = samples.of("correctness");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string why = non_finite_inputs(inputs[i], "correctness sample " + std::to_string(i));
    if (!why.empty()) return failed(why);
  }
  const auto expected = read_outputs(workspace / "model_output" / "correctness", inputs.size());
  const auto actual = run_samples(runner, inputs, status.config.batch_dim, names);
  StepResult step = compare_outputs(expected, actual, status.config.atol, status.config.rtol);
  step.seconds = seconds_since(start);
  return step;
}

StepResult performance_step(runners::Runner& runner, const SampleSets& samples, const WorkspaceStatus& status,
                            const PositionalNames* names) {
  const auto& profiling = samples.of("profiling");
  PARITY_CHECK(!profiling.empty(), kNotFound, "there is no profiling sample (model_input/profiling/0.npz)");
  const ProfilerConfig config = ProfilerConfig::from(status.config);
  std::map<int64_t, TensorMap> feeds;
  for (int64_t b : config.batch_sizes) {
    feeds[b] = feed_from_sample(profiling.front(), status.config.batch_dim, b);
    if (names) feeds[b] = names->feed(std::move(feeds[b]));
  }
  return profile(
      [&](int64_t batch_size) {
        runner.infer(feeds.at(batch_size), false);
        return runner.last_inference_time();
      },
      config);
}

// The child: one runner, the asked steps in order, each result written as <step>.yaml at once.
void run_steps(const CellRequest& request, const fs::path& folder) {
  const WorkspaceStatus& status = *request.status;
  const FormatStatus* format = status.find_format(request.format);
  PARITY_CHECK(format, kInternal, "format ", request.format, " is not in the status");
  const SampleSets samples = load_sample_sets(request.workspace / "model_input");
  auto runner = make_runner(request.runtime, request.workspace / format->model_path, request.runner_options);
  runners::ActiveRunner active(*runner);
  std::optional<PositionalNames> positional;
  if (format_info(format->format).kind == FormatKind::kTorchScript) positional = positional_names(*runner, status);
  const PositionalNames* names = positional ? &*positional : nullptr;
  for (const auto& step : request.steps) {
    StepResult result;
    if (step == "conversion") result = conversion_step(*runner, samples, status, names);
    else if (step == "correctness") result = correctness_step(*runner, request.workspace, samples, status, names);
    else if (step == "performance") result = performance_step(*runner, samples, status, names);
    else fail(ErrorCode::kInternal, "unknown cell step ", step);
    formats::write_binary_file((folder / (step + ".yaml")).string(), step_to_yaml(result));
    if (!result.ok()) return;
  }
}

}  // namespace

std::string runtime_unavailable(const std::string& runtime) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runtime);
  if (!info) {
    std::vector<std::string> names;
    for (const auto& r : runners::RunnerRegistry::instance().all()) names.push_back(r.name);
    return "no runner named '" + runtime + "' (runners: " + join_names(names) + ")";
  }
  if (const Status available = info->available(); !available.ok()) return available.error().what();
  return "";
}

std::unique_ptr<runners::Runner> make_runner(const std::string& runtime, const fs::path& model, const runners::RunnerOptions& runner_options) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runtime);
  PARITY_CHECK(info && info->create, kNotFound, "no runner named '", runtime, "'");
  return info->create(runners::RunnerConfig{model.string(), runner_options});
}

StepResult compare_outputs(const std::vector<TensorMap>& expected, const std::vector<TensorMap>& actual,
                           std::optional<double> atol, std::optional<double> rtol) {
  PARITY_CHECK(expected.size() == actual.size(), kInternal, "compare_outputs: ", expected.size(), " vs ", actual.size(), " samples");
  StepResult step;
  std::map<std::string, OutputTolerance> tolerances;
  std::vector<std::string> order;
  for (size_t s = 0; s < expected.size(); ++s) {
    const std::string sample = "correctness sample " + std::to_string(s);
    for (const auto& [name, reference] : expected[s]) {
      const Tensor* found = actual[s].find(name);
      if (!found) return failed(sample + ": the format does not produce output '" + name + "'");
      if (found->shape() != reference.shape())
        return failed(sample + ": output '" + name + "' has shape " + shape_to_string(found->shape()) + ", the source's " +
                      shape_to_string(reference.shape()));
      if (int64_t bad = count_non_finite(*found))
        return failed(sample + ": output '" + name + "' has " + std::to_string(bad) + " NaN or infinite values");
      if (int64_t bad = count_non_finite(reference))
        return failed(sample + ": the source's output '" + name + "' has " + std::to_string(bad) + " NaN or infinite values");
      if (!tolerances.count(name)) {
        tolerances[name].output = name;
        order.push_back(name);
      }
      OutputTolerance& tol = tolerances[name];
      const Tensor a = found->cast(DType::kFloat64);
      const Tensor e = reference.cast(DType::kFloat64);
      const double* av = a.data<double>();
      const double* ev = e.data<double>();
      int64_t first_beyond = -1;
      for (int64_t i = 0; i < a.numel(); ++i) {
        const double diff = std::abs(ev[i] - av[i]);
        const double magnitude = std::abs(av[i]);
        tol.atol = std::max(tol.atol, diff);
        if (magnitude > 0) tol.rtol = std::max(tol.rtol, diff / magnitude);
        if (first_beyond < 0 && (atol || rtol) && diff > atol.value_or(0) + rtol.value_or(0) * magnitude)
          first_beyond = i;
      }
      // The measured maxima go into the reason, so a user sees how far off the format is.
      if (first_beyond >= 0)
        return failed(sample + ": output '" + name + "' differs by " +
                      format_g(std::abs(ev[first_beyond] - av[first_beyond]), 4) + " at element " +
                      std::to_string(first_beyond) + " (limit atol " + format_g(atol.value_or(0), 4) + " + rtol " +
                      format_g(rtol.value_or(0), 4) + " x |value|); measured atol " + format_g(tol.atol, 4) +
                      " rtol " + format_g(tol.rtol, 4));
    }
  }
  for (const auto& name : order) step.tolerances.push_back(tolerances[name]);
  step.state = StepState::kOk;
  return step;
}

std::map<std::string, StepResult> run_cell(const CellRequest& request) {
  std::map<std::string, StepResult> results;
  const auto start = std::chrono::steady_clock::now();
  const std::string failure = compare::run_in_child_folder(
      request.format + " on " + request.runtime, request.isolation,
      [&](const fs::path& folder) { run_steps(request, folder); },
      [&](const fs::path& folder) {
        for (const auto& step : request.steps)
          if (fs::exists(folder / (step + ".yaml")))
            results[step] = step_from_yaml(read_workspace_file(folder / (step + ".yaml")));
      });
  // The isolation's messages name `run`'s flags; here the limits are --cell-timeout/--cell-memory-limit.
  std::string reason = failure;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"--runner-timeout", "--cell-timeout"},
                                 {"--runner-memory-limit", "--cell-memory-limit"}})
    if (auto at = reason.find(from); at != std::string::npos) reason.replace(at, from.size(), to);
  // The first step without a result is the one the failure interrupted; later ones never ran.
  bool earlier_failed = false;
  for (const auto& step : request.steps) {
    auto it = results.find(step);
    if (it != results.end()) {
      earlier_failed = earlier_failed || !it->second.ok();
      continue;
    }
    StepResult& result = results[step];
    if (earlier_failed) {
      result.state = StepState::kSkipped;
      result.reason = "an earlier step failed";
    } else {
      result = failed(reason.empty() ? "the step produced no result" : reason);
      result.seconds = seconds_since(start);
      earlier_failed = true;
    }
  }
  return results;
}

std::string make_source_outputs(const fs::path& workspace, const fs::path& source, const std::string& runtime,
                                const WorkspaceStatus& status, const compare::Isolation& isolation,
                                const runners::RunnerOptions& runner_options) {
  if (std::string why = runtime_unavailable(runtime); !why.empty()) return runtime + " is unavailable: " + why;
  return compare::run_in_child_folder(
      "the source on " + runtime, isolation,
      [&](const fs::path&) {
        const SampleSets samples = load_sample_sets(workspace / "model_input");
        auto runner = make_runner(runtime, source, runner_options);
        runners::ActiveRunner active(*runner);
        for (const auto& kind : sample_kinds()) {
          const auto outputs = run_samples(*runner, samples.of(kind), status.config.batch_dim);
          fs::create_directories(workspace / "model_output" / kind);
          for (size_t i = 0; i < outputs.size(); ++i)
            write_npz((workspace / "model_output" / kind / (std::to_string(i) + ".npz")).string(), outputs[i]);
        }
      },
      nullptr);
}

}  // namespace parity::tools::navigator
