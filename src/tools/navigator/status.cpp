#include "tools/navigator/status.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "core/formats/file_io.h"
#include "core/status.h"

namespace parity::tools::navigator {

namespace {

YAML::Node step_node(const StepResult& step) {
  YAML::Node node;
  node["status"] = step_state_name(step.state);
  if (!step.reason.empty()) node["reason"] = step.reason;
  node["seconds"] = step.seconds;
  for (const auto& t : step.tolerances) {
    YAML::Node tol;
    tol["output"] = t.output;
    tol["atol"] = t.atol;
    tol["rtol"] = t.rtol;
    node["tolerances"].push_back(tol);
  }
  for (const auto& p : step.performance) {
    YAML::Node row;
    row["batch_size"] = p.batch_size;
    row["p50_ms"] = p.p50_ms;
    row["p90_ms"] = p.p90_ms;
    row["p95_ms"] = p.p95_ms;
    row["p99_ms"] = p.p99_ms;
    row["avg_ms"] = p.avg_ms;
    row["throughput"] = p.throughput;
    row["inferences"] = p.inferences;
    row["trials"] = p.trials;
    row["stable"] = p.stable;
    node["performance"].push_back(row);
  }
  if (step.saturated_at) node["saturated_at_batch_size"] = *step.saturated_at;
  return node;
}

template <typename T>
T get_or(const YAML::Node& node, const char* key, T fallback) {
  const YAML::Node value = node[key];
  return value ? value.as<T>() : fallback;
}

StepResult step_from_node(const YAML::Node& node) {
  StepResult step;
  if (!node) return step;
  step.state = step_state_from_name(get_or<std::string>(node, "status", "NOT_RUN"));
  step.reason = get_or<std::string>(node, "reason", "");
  step.seconds = get_or<double>(node, "seconds", 0);
  for (const auto& tol : node["tolerances"])
    step.tolerances.push_back({tol["output"].as<std::string>(), tol["atol"].as<double>(), tol["rtol"].as<double>()});
  for (const auto& row : node["performance"]) {
    BatchPerformance p;
    p.batch_size = row["batch_size"].as<int64_t>();
    p.p50_ms = row["p50_ms"].as<double>();
    p.p90_ms = row["p90_ms"].as<double>();
    p.p95_ms = row["p95_ms"].as<double>();
    p.p99_ms = row["p99_ms"].as<double>();
    p.avg_ms = get_or<double>(row, "avg_ms", 0);
    p.throughput = row["throughput"].as<double>();
    p.inferences = get_or<int64_t>(row, "inferences", 0);
    p.trials = get_or<int>(row, "trials", 0);
    p.stable = get_or<bool>(row, "stable", false);
    step.performance.push_back(p);
  }
  if (node["saturated_at_batch_size"]) step.saturated_at = node["saturated_at_batch_size"].as<int64_t>();
  return step;
}

YAML::Node tensor_node(const TensorSpec& spec) {
  YAML::Node node;
  node["name"] = spec.name;
  node["dtype"] = spec.dtype;
  if (spec.unknown_rank) {
    node["shape"] = "unknown";
  } else {
    node["shape"] = YAML::Node(YAML::NodeType::Sequence);
    for (int64_t d : spec.shape) node["shape"].push_back(d);
    node["shape"].SetStyle(YAML::EmitterStyle::Flow);
  }
  return node;
}

TensorSpec tensor_from_node(const YAML::Node& node) {
  TensorSpec spec;
  spec.name = node["name"].as<std::string>();
  spec.dtype = node["dtype"].as<std::string>();
  if (node["shape"].IsSequence())
    spec.shape = node["shape"].as<std::vector<int64_t>>();
  else
    spec.unknown_rank = true;
  return spec;
}

YAML::Node config_node(const NavigatorConfig& c) {
  YAML::Node node;
  node["source"] = c.source;
  node["source_kind"] = c.source_kind;
  if (!c.torchscript_copy.empty()) node["torchscript_copy"] = c.torchscript_copy;
  node["target_formats"] = c.target_formats;
  node["target_formats"].SetStyle(YAML::EmitterStyle::Flow);
  node["runtimes"] = c.runtimes;
  node["runtimes"].SetStyle(YAML::EmitterStyle::Flow);
  node["batch_dim"] = c.batch_dim ? YAML::Node(*c.batch_dim) : YAML::Node(YAML::NodeType::Null);
  node["max_batch_size"] = c.max_batch_size;
  node["sample_count"] = c.sample_count;
  node["seed"] = c.seed;
  node["atol"] = c.atol ? YAML::Node(*c.atol) : YAML::Node(YAML::NodeType::Null);
  node["rtol"] = c.rtol ? YAML::Node(*c.rtol) : YAML::Node(YAML::NodeType::Null);
  for (const auto& [input, axes] : c.dynamic_axes) {
    node["dynamic_axes"][input] = axes;
    node["dynamic_axes"][input].SetStyle(YAML::EmitterStyle::Flow);
  }
  YAML::Node profiler;
  profiler["measurement_mode"] = c.measurement_mode;
  profiler["window_ms"] = c.window_ms;
  profiler["window_count"] = c.window_count;
  profiler["stability_percentage"] = c.stability_percentage;
  profiler["max_trials"] = c.max_trials;
  profiler["throughput_cutoff"] = c.throughput_cutoff;
  profiler["run_profiling"] = c.run_profiling;
  node["profiler"] = profiler;
  node["cell_timeout_s"] = c.cell_timeout_s;
  return node;
}

template <typename T>
std::optional<T> optional_of(const YAML::Node& node) {
  if (!node || node.IsNull()) return std::nullopt;
  return node.as<T>();
}

NavigatorConfig config_from_node(const YAML::Node& node) {
  NavigatorConfig c;
  c.source = get_or<std::string>(node, "source", "");
  c.source_kind = get_or<std::string>(node, "source_kind", "onnx");
  c.torchscript_copy = get_or<std::string>(node, "torchscript_copy", "");
  if (node["target_formats"]) c.target_formats = node["target_formats"].as<std::vector<std::string>>();
  if (node["runtimes"]) c.runtimes = node["runtimes"].as<std::vector<std::string>>();
  c.batch_dim = optional_of<int64_t>(node["batch_dim"]);
  c.max_batch_size = get_or<int64_t>(node, "max_batch_size", 1);
  c.sample_count = get_or<int64_t>(node, "sample_count", 10);
  c.seed = get_or<int64_t>(node, "seed", 1);
  c.atol = optional_of<double>(node["atol"]);
  c.rtol = optional_of<double>(node["rtol"]);
  for (const auto& entry : node["dynamic_axes"])
    c.dynamic_axes[entry.first.as<std::string>()] = entry.second.as<std::vector<int64_t>>();
  const YAML::Node profiler = node["profiler"];
  if (profiler) {
    c.measurement_mode = get_or<std::string>(profiler, "measurement_mode", c.measurement_mode);
    c.window_ms = get_or<int64_t>(profiler, "window_ms", c.window_ms);
    c.window_count = get_or<int64_t>(profiler, "window_count", c.window_count);
    c.stability_percentage = get_or<double>(profiler, "stability_percentage", c.stability_percentage);
    c.max_trials = get_or<int>(profiler, "max_trials", c.max_trials);
    c.throughput_cutoff = get_or<double>(profiler, "throughput_cutoff", c.throughput_cutoff);
    c.run_profiling = get_or<bool>(profiler, "run_profiling", c.run_profiling);
  }
  c.cell_timeout_s = get_or<double>(node, "cell_timeout_s", 0);
  return c;
}

std::string emit(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << node;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

const char* step_state_name(StepState state) {
  switch (state) {
    case StepState::kOk: return "OK";
    case StepState::kFail: return "FAIL";
    case StepState::kSkipped: return "SKIPPED";
    case StepState::kNotRun: break;
  }
  return "NOT_RUN";
}

StepState step_state_from_name(const std::string& name) {
  if (name == "OK") return StepState::kOk;
  if (name == "FAIL") return StepState::kFail;
  if (name == "SKIPPED") return StepState::kSkipped;
  PARITY_CHECK(name == "NOT_RUN", kInvalidModel, "unknown step status '", name, "' (OK, FAIL, SKIPPED, NOT_RUN)");
  return StepState::kNotRun;
}

const StepResult* RuntimeStatus::find_step(const std::string& name) const {
  auto it = steps.find(name);
  return it == steps.end() ? nullptr : &it->second;
}

bool RuntimeStatus::passed() const {
  const StepResult* conversion = find_step("conversion");
  const StepResult* correctness = find_step("correctness");
  return conversion && conversion->ok() && correctness && correctness->ok();
}

bool RuntimeStatus::verified() const {
  const StepResult* verification = find_step("verification");
  return verification && verification->ok();
}

RuntimeStatus* FormatStatus::find_runtime(const std::string& runtime) {
  for (auto& r : runtimes)
    if (r.runtime == runtime) return &r;
  return nullptr;
}

const RuntimeStatus* FormatStatus::find_runtime(const std::string& runtime) const {
  return const_cast<FormatStatus*>(this)->find_runtime(runtime);
}

FormatStatus* WorkspaceStatus::find_format(const std::string& format) {
  for (auto& f : formats)
    if (f.format == format) return &f;
  return nullptr;
}

const FormatStatus* WorkspaceStatus::find_format(const std::string& format) const {
  return const_cast<WorkspaceStatus*>(this)->find_format(format);
}

std::string status_to_yaml(const WorkspaceStatus& status) {
  YAML::Node root;
  root["format_version"] = status.format_version;
  root["parity_version"] = status.parity_version;
  for (const auto& [key, value] : status.environment) root["environment"][key] = value;
  root["config"] = config_node(status.config);
  for (const auto& t : status.inputs) root["inputs"].push_back(tensor_node(t));
  for (const auto& t : status.outputs) root["outputs"].push_back(tensor_node(t));
  for (const auto& p : status.profiles) {
    YAML::Node node;
    node["input"] = p.input;
    node["axis"] = p.axis;
    node["min"] = p.min;
    node["opt"] = p.opt;
    node["max"] = p.max;
    root["profiles"].push_back(node);
  }
  for (const auto& [kind, count] : status.sample_counts) root["samples"][kind] = count;
  if (!status.source_outputs_failure.empty()) root["source_outputs_failure"] = status.source_outputs_failure;
  for (const auto& f : status.formats) {
    YAML::Node node;
    node["model_path"] = f.model_path;
    node["export"] = step_node(f.export_step);
    for (const auto& r : f.runtimes) {
      YAML::Node runtime;
      for (const auto& step : cell_steps())
        if (const StepResult* s = r.find_step(step)) runtime[step] = step_node(*s);
      node["runtimes"][r.runtime] = runtime;
    }
    root["formats"][f.format] = node;
  }
  return emit(root);
}

WorkspaceStatus status_from_yaml(const std::string& text, const std::string& what) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(ErrorCode::kInvalidModel, what, " is not valid YAML: ", e.what());
  }
  PARITY_CHECK(root.IsMap(), kInvalidModel, what, " is not a navigator status (no mapping at the top)");
  WorkspaceStatus status;
  try {
    status.format_version = get_or<int>(root, "format_version", 0);
    PARITY_CHECK(status.format_version >= 1 && status.format_version <= kStatusFormatVersion, kInvalidModel, what,
                 " has status format version ", status.format_version, "; this parity reads 1 to ",
                 kStatusFormatVersion);
    status.parity_version = get_or<std::string>(root, "parity_version", "");
    for (const auto& entry : root["environment"])
      status.environment[entry.first.as<std::string>()] = entry.second.as<std::string>();
    status.config = config_from_node(root["config"]);
    for (const auto& t : root["inputs"]) status.inputs.push_back(tensor_from_node(t));
    for (const auto& t : root["outputs"]) status.outputs.push_back(tensor_from_node(t));
    for (const auto& p : root["profiles"])
      status.profiles.push_back({p["input"].as<std::string>(), p["axis"].as<int64_t>(), p["min"].as<int64_t>(),
                                 p["opt"].as<int64_t>(), p["max"].as<int64_t>()});
    for (const auto& entry : root["samples"])
      status.sample_counts[entry.first.as<std::string>()] = entry.second.as<int64_t>();
    status.source_outputs_failure = get_or<std::string>(root, "source_outputs_failure", "");
    // YAML lets a mapping name a key twice; a status naming a format (or a format a runtime)
    // twice is ambiguous, and written back it would keep only one of them.
    std::set<std::string> format_names;
    for (const auto& entry : root["formats"]) {
      FormatStatus f;
      f.format = entry.first.as<std::string>();
      PARITY_CHECK(format_names.insert(f.format).second, kInvalidModel, what, ": format ", f.format,
                   " is listed twice");
      f.model_path = get_or<std::string>(entry.second, "model_path", "");
      // A package comes from elsewhere: its model paths must stay inside the workspace.
      const std::filesystem::path model_path(f.model_path);
      bool escapes = model_path.is_absolute();
      for (const auto& part : model_path) escapes = escapes || part == "..";
      PARITY_CHECK(!escapes, kInvalidModel, what, ": format ", f.format, " has model_path '", f.model_path,
                   "', which leads outside the workspace");
      f.export_step = step_from_node(entry.second["export"]);
      std::set<std::string> runtime_names;
      for (const auto& r : entry.second["runtimes"]) {
        RuntimeStatus runtime;
        runtime.runtime = r.first.as<std::string>();
        PARITY_CHECK(runtime_names.insert(runtime.runtime).second, kInvalidModel, what, ": format ", f.format,
                     " lists runtime ", runtime.runtime, " twice");
        for (const auto& step : cell_steps())
          if (r.second[step]) runtime.steps[step] = step_from_node(r.second[step]);
        f.runtimes.push_back(std::move(runtime));
      }
      status.formats.push_back(std::move(f));
    }
  } catch (const YAML::Exception& e) {
    fail(ErrorCode::kInvalidModel, what, " is not a valid navigator status: ", e.what());
  }
  return status;
}

void write_status(const std::filesystem::path& workspace, const WorkspaceStatus& status) {
  formats::write_binary_file((workspace / "status.yaml").string(), status_to_yaml(status));
}

WorkspaceStatus read_status(const std::filesystem::path& workspace) {
  const auto path = workspace / "status.yaml";
  PARITY_CHECK(std::filesystem::is_regular_file(path), kNotFound, path.string(),
               " does not exist: not a navigator workspace or package");
  return status_from_yaml(read_workspace_file(path), path.string());
}

std::string read_workspace_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kNotFound, "cannot read ", path.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string step_to_yaml(const StepResult& step) { return emit(step_node(step)); }

StepResult step_from_yaml(const std::string& text) {
  try {
    return step_from_node(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    fail(ErrorCode::kInternal, "a step result from a subprocess is not valid YAML: ", e.what());
  }
}

}  // namespace parity::tools::navigator
