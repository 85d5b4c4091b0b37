#include "tools/navigator/pipeline.h"

#include <sys/utsname.h>

#include <chrono>
#include <thread>
#include <iostream>
#include <yaml-cpp/yaml.h>

#include "compare/isolated_run.h"
#include "core/formats/file_io.h"
#include "core/formats/npz.h"
#include "core/logger.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/version.h"
#include "runners/registry.h"
#include "tools/navigator/cells.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/samples.h"
#include "tools/navigator/workspace_lock.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

double pipeline_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  utsname name{};
  if (::uname(&name) == 0) {
    env["os"] = std::string(name.sysname) + " " + name.release;
    env["machine"] = name.machine;
  }
  env["cpu_count"] = std::to_string(std::thread::hardware_concurrency());
  for (const auto& runner : runners::RunnerRegistry::instance().all()) {
    if (!runner.version) continue;
    try {
      const std::string version = runner.version({});
      if (!version.empty()) env["runner_" + runner.name] = version;
    } catch (const std::exception&) {
    }
  }
  return env;
}

// The batch axis survives only when every input has it and it is dynamic or 1 there.
std::optional<int64_t> usable_batch_dim(std::optional<int64_t> batch_dim, const TensorMetadata& inputs, NavigatorLog& log) {
  if (!batch_dim) return std::nullopt;
  for (const auto& meta : inputs) {
    if (meta.shape.unknown_rank) continue;
    const auto& dims = meta.shape.dims;
    if (*batch_dim >= static_cast<int64_t>(dims.size()) || (dims[*batch_dim].is_static() && dims[*batch_dim].value != 1)) {
      log.line("input '" + meta.name + "' has no batch axis " + std::to_string(*batch_dim) + " (shape " +
               meta.shape.to_string() + "): the model is treated as unbatched");
      return std::nullopt;
    }
  }
  return batch_dim;
}

bool batch_axis_dynamic(int64_t batch_dim, const TensorMetadata& inputs) {
  for (const auto& meta : inputs)
    if (!meta.shape.unknown_rank && meta.shape.dims[batch_dim].is_static()) return false;
  return true;
}

TensorMetadata metadata_of_samples(const std::vector<TensorMap>& samples, std::optional<int64_t> batch_dim) {
  TensorMetadata meta;
  for (const auto& [name, tensor] : samples.front()) {
    DimShape shape(tensor.shape());
    if (batch_dim) shape.dims.insert(shape.dims.begin() + *batch_dim, Dim::dynamic("batch"));
    meta.add(name, tensor.dtype(), shape);
  }
  return meta;
}

std::vector<TensorSpec> specs_of(const TensorMetadata& meta) {
  std::vector<TensorSpec> specs;
  for (const auto& m : meta) specs.push_back(spec_of(m));
  return specs;
}

std::string reproduce_script(const std::string& command) {
  return "#!/bin/sh\n# Written by parity optimize; run from anywhere.\nset -e\ncd \"$(dirname \"$0\")/..\"\n" + command + "\n";
}

void write_script(const fs::path& path, const std::string& text) {
  formats::write_binary_file(path.string(), text);
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
}

void write_format_files(const fs::path& workspace, const WorkspaceStatus& status, const FormatInfo& format,
                        const fs::path& source) {
  const fs::path folder = workspace / format.name;
  fs::create_directories(folder);
  formats::write_binary_file((folder / "config.yaml").string(), format_config_yaml(status, format.name));
  write_script(folder / "reproduce_export.sh", reproduce_script(export_command(
      format, format.kind == FormatKind::kTorchScript ? torchscript_file(status.config, source) : source)));
  for (const auto& step : {"conversion", "correctness", "performance"})
    write_script(folder / (std::string("reproduce_") + step + ".sh"),
                 reproduce_script(std::string("parity package retest . --formats ") + format.name + " --steps " + step));
}

bool selected(const std::set<std::string>& set, const std::string& name) { return set.empty() || set.count(name); }

StepResult skipped(std::string reason) {
  StepResult step;
  step.state = StepState::kSkipped;
  step.reason = std::move(reason);
  return step;
}

// Runtimes of a format: the asked ones that can run it, else every registered one that can.
std::vector<std::string> runtimes_for(const FormatInfo& format, const NavigatorConfig& config) {
  std::vector<std::string> names;
  if (!config.runtimes.empty()) {
    for (const auto& r : config.runtimes)
      if (runtime_runs_format(r, format)) names.push_back(r);
    return names;
  }
  for (const auto& r : runners::RunnerRegistry::instance().all())
    if ((r.name == "ref" || r.name == "ort" || r.name == "opencv" || r.name == "torch") && runtime_runs_format(r.name, format))
      names.push_back(r.name);
  return names;
}

std::string describe(const std::string& step, const StepResult& result) {
  std::string text = step + " " + step_state_name(result.state);
  if (step == "correctness" && result.ok())
    for (const auto& t : result.tolerances)
      text += " [" + t.output + ": atol " + format_g(t.atol, 3) + " rtol " + format_g(t.rtol, 3) + "]";
  if (step == "performance" && result.ok())
    for (const auto& p : result.performance)
      text += " [batch " + std::to_string(p.batch_size) + ": p50 " + fixed(p.p50_ms, 3) + " ms, " +
              fixed(p.throughput, 1) + "/s" + (p.stable ? "" : ", unstable") + "]";
  if (!result.reason.empty()) text += ": " + result.reason;
  return text + " (" + fixed(result.seconds, 2) + " s)";
}

void export_one(const fs::path& workspace, WorkspaceStatus& status, FormatStatus& format, const fs::path& source,
                const compare::Isolation& isolation, NavigatorLog& log) {
  const FormatInfo& info = format_info(format.format);
  const auto start = std::chrono::steady_clock::now();
  format.export_step = StepResult{};
  if (info.kind == FormatKind::kPlan) {
    if (std::string why = plan_precision_unsupported(info.precision); !why.empty()) {
      format.export_step = skipped(why);
      log.line(format.format + ": export SKIPPED: " + why);
      return;
    }
  }
  if (format.format == "onnx" && status.config.source_kind == "torchscript") {
    if (std::string why = torch_exporter_unavailable(); !why.empty()) {
      format.export_step = skipped(why);
      log.line(format.format + ": export SKIPPED: " + why);
      return;
    }
  }
  if (info.kind != FormatKind::kTorchScript && format.format != "onnx") {
    const FormatStatus* onnx = status.find_format("onnx");
    if (!onnx || !onnx->export_step.ok()) {
      format.export_step.state = StepState::kFail;
      format.export_step.reason = "needs the onnx format, which was not produced";
      log.line(format.format + ": export FAIL: " + format.export_step.reason);
      return;
    }
  }
  const std::string failure = compare::run_in_child_folder(
      "the export of " + format.format, isolation,
      [&](const fs::path&) { export_format(info, workspace, source, status); }, nullptr);
  format.export_step.state = failure.empty() ? StepState::kOk : StepState::kFail;
  format.export_step.reason = failure;
  format.export_step.seconds = pipeline_seconds_since(start);
  log.line(format.format + ": " + describe("export", format.export_step));
}

void run_format_cells(const fs::path& workspace, WorkspaceStatus& status, FormatStatus& format,
                      const CellSelection& selection, const compare::Isolation& isolation, NavigatorLog& log,
                      const runners::RunnerOptions& runner_options) {
  std::vector<std::string> steps;
  for (const auto& step : {"conversion", "correctness", "performance"})
    if (selected(selection.steps, step) && (std::string(step) != "performance" || status.config.run_profiling))
      steps.push_back(step);
  if (steps.empty()) return;
  for (auto& runtime : format.runtimes) {
    if (!selected(selection.runtimes, runtime.runtime)) continue;
    if (!format.export_step.ok()) {
      for (const auto& step : steps) runtime.steps[step] = skipped("the format was not produced (export " +
                                                                   std::string(step_state_name(format.export_step.state)) + ")");
      continue;
    }
    if (std::string why = runtime_unavailable(runtime.runtime); !why.empty()) {
      for (const auto& step : steps) runtime.steps[step] = skipped(runtime.runtime + " is unavailable: " + why);
      log.line(format.format + " on " + runtime.runtime + ": SKIPPED: " + why);
      continue;
    }
    CellRequest request{workspace, &status, format.format, runtime.runtime, steps, isolation, runner_options};
    for (auto& [step, result] : run_cell(request)) {
      runtime.steps[step] = result;
      log.line(format.format + " on " + runtime.runtime + ": " + describe(step, result));
    }
    write_status(workspace, status);
  }
}

void prepare_workspace(const fs::path& workspace, bool override_workspace) {
  if (fs::exists(workspace)) {
    PARITY_CHECK(override_workspace, kInvalidArgument, "the workspace ", workspace.string(),
                 " exists; pass --override-workspace to replace it");
    PARITY_CHECK(fs::is_directory(workspace), kInvalidArgument, "the workspace ", workspace.string(), " is not a folder");
    PARITY_CHECK(!fs::exists(workspace / ".git") && (fs::is_empty(workspace) || fs::exists(workspace / "status.yaml")),
                 kInvalidArgument, "refusing to replace ", workspace.string(),
                 ": it is not empty and not a navigator workspace (no status.yaml)");
    fs::remove_all(workspace);
  }
  fs::create_directories(workspace);
}

std::vector<TensorMap> take_feeds(OptimizeRequest& request, const TensorMetadata& inputs) {
  PARITY_CHECK(request.data, kInvalidArgument, "no data loader");
  if (!inputs.empty()) request.data->set_input_metadata(inputs);
  std::vector<TensorMap> feeds;
  for (int64_t i = 0; i < request.feed_count; ++i) {
    auto feed = request.data->feed(static_cast<size_t>(i));
    if (!feed) break;
    feeds.push_back(std::move(*feed));
  }
  PARITY_CHECK(!feeds.empty(), kInvalidArgument, "the data loader gave no samples");
  return feeds;
}

}  // namespace

NavigatorLog::NavigatorLog(const fs::path& path, bool quiet) : file_(path, std::ios::app), quiet_(quiet) {
  PARITY_CHECK(file_.good(), kIo, "cannot write ", path.string());
}

void NavigatorLog::line(const std::string& text) {
  file_ << text << "\n";
  file_.flush();
  if (!quiet_) std::cerr << "[navigator] " << text << std::endl;
}

std::string format_config_yaml(const WorkspaceStatus& status, const std::string& format) {
  const FormatStatus* f = status.find_format(format);
  PARITY_CHECK(f, kNotFound, "no format ", format, " in the workspace");
  YAML::Node node;
  node["format"] = format;
  if (const std::string& precision = format_info(format).precision; !precision.empty()) node["precision"] = precision;
  node["model_path"] = fs::path(f->model_path).filename().string();
  node["source"] = status.config.source;
  node["batch_dim"] = status.config.batch_dim ? YAML::Node(*status.config.batch_dim) : YAML::Node(YAML::NodeType::Null);
  node["max_batch_size"] = status.config.max_batch_size;
  for (const auto& r : f->runtimes) node["runtimes"].push_back(r.runtime);
  for (const auto& p : status.profiles) {
    YAML::Node axis;
    axis["input"] = p.input;
    axis["axis"] = p.axis;
    axis["min"] = p.min;
    axis["opt"] = p.opt;
    axis["max"] = p.max;
    node["dynamic_axes"].push_back(axis);
  }
  for (const auto& t : status.inputs) node["inputs"].push_back(t.name);
  for (const auto& t : status.outputs) node["outputs"].push_back(t.name);
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

WorkspaceStatus optimize(OptimizeRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_CHECK(fs::is_regular_file(request.source), kNotFound, "the source model ", request.source.string(), " does not exist");
  const fs::path workspace = request.workspace;
  WorkspaceStatus status;
  status.parity_version = kParityVersion;
  status.config = request.config;
  status.config.source = fs::absolute(request.source).string();
  status.config.source_kind = source_kind_of(request.source);
  if (std::string& copy = status.config.torchscript_copy; !copy.empty()) {
    PARITY_CHECK(status.config.source_kind == "onnx", kInvalidArgument, "--torchscript gives a TorchScript copy of an ONNX ",
                 "source; ", request.source.string(), " is TorchScript already");
    PARITY_CHECK(fs::is_regular_file(copy), kNotFound, "the TorchScript copy ", copy, " does not exist");
    PARITY_CHECK(source_kind_of(copy) == "torchscript", kInvalidArgument, "the TorchScript copy ", copy,
                 " is not a .pt, .pth or .ts file");
    copy = fs::absolute(copy).string();
  }
  if (status.config.target_formats.empty()) status.config.target_formats = default_formats(status.config);
  for (const auto& f : status.config.target_formats) {
    const FormatInfo& info = format_info(f);
    PARITY_CHECK(info.kind != FormatKind::kTorchScript || has_torchscript(status.config), kInvalidArgument,
                 "format torchscript needs a TorchScript source (.pt) or --torchscript with a TorchScript copy; ",
                 request.source.string(), " is ONNX");
  }
  for (const auto& r : status.config.runtimes)
    PARITY_CHECK(runners::RunnerRegistry::instance().find(r), kInvalidArgument, "--runners names '", r, "', ",
                 runtime_unavailable(r));

  // Preprocessing: inputs and outputs, the data loader's samples, dynamic axes.
  ModelIo io;
  if (status.config.source_kind == "onnx") io = read_onnx_io(request.source);
  else io.inputs = request.torchscript_inputs;
  const WorkspaceLock lock(workspace, WorkspaceLock::Mode::kExclusive);
  prepare_workspace(workspace, request.override_workspace);
  NavigatorLog log(workspace / "navigator.log", request.quiet);
  log.line("parity " + std::string(kParityVersion) + " optimize " + request.source.string() + " -> " + workspace.string());
  status.environment = environment();
  const std::vector<TensorMap> feeds = take_feeds(request, io.inputs);
  if (status.config.source_kind == "onnx") status.config.batch_dim = usable_batch_dim(status.config.batch_dim, io.inputs, log);
  std::vector<TensorMap> samples;
  for (const auto& feed : feeds) samples.push_back(sample_from_feed(feed, status.config.batch_dim));
  if (io.inputs.empty()) io.inputs = metadata_of_samples(samples, status.config.batch_dim);
  if (!status.config.batch_dim) status.config.max_batch_size = 1;
  else if (status.config.source_kind == "onnx" && !batch_axis_dynamic(*status.config.batch_dim, io.inputs))
    status.config.max_batch_size = 1;
  const auto dynamic_axes =
      sample_dynamic_axes(samples, io.inputs, status.config.dynamic_axes, status.config.batch_dim);
  const SampleSets sets = select_samples(samples, dynamic_axes, status.config.sample_count, status.config.seed);
  save_sample_sets(workspace / "model_input", sets);
  status.inputs = specs_of(io.inputs);
  status.outputs = specs_of(io.outputs);
  status.profiles = axis_profiles(sets, dynamic_axes, status.config.batch_dim, status.config.max_batch_size);
  for (const auto& kind : sample_kinds()) status.sample_counts[kind] = static_cast<int64_t>(sets.of(kind).size());
  log.line("preprocessing: " + std::to_string(feeds.size()) + " feeds -> " +
           std::to_string(sets.of("conversion").size()) + " conversion, " + std::to_string(sets.of("correctness").size()) +
           " correctness, " + std::to_string(sets.of("profiling").size()) + " profiling samples; batch axis " +
           (status.config.batch_dim ? std::to_string(*status.config.batch_dim) : std::string("none")) +
           ", max batch size " + std::to_string(status.config.max_batch_size));

  // The source's outputs are the reference of every correctness test.
  const std::string source_runtime = status.config.source_kind == "torchscript" ? "torch" : "ref";
  status.source_outputs_failure =
      make_source_outputs(workspace, request.source, source_runtime, status, request.isolation, request.runner_options);
  if (!status.source_outputs_failure.empty())
    log.line("source outputs (" + source_runtime + ") FAIL: " + status.source_outputs_failure);
  else
    log.line("source outputs (" + source_runtime + ") OK");
  if (status.outputs.empty() && status.source_outputs_failure.empty()) {
    const TensorMap first = read_npz((workspace / "model_output" / "conversion" / "0.npz").string());
    for (const auto& [name, tensor] : first) {
      TensorMeta meta{name, tensor.dtype(), DimShape(tensor.shape())};
      if (status.config.batch_dim && *status.config.batch_dim < static_cast<int64_t>(meta.shape.dims.size()))
        meta.shape.dims[*status.config.batch_dim] = Dim::dynamic("batch");
      status.outputs.push_back(spec_of(meta));
    }
  }

  for (const auto& name : status.config.target_formats) {
    const FormatInfo& info = format_info(name);
    FormatStatus format;
    format.format = name;
    format.model_path = name + "/" + info.file;
    // Verification is the user's step (set_verified): recorded as not run until then.
    for (const auto& r : runtimes_for(info, status.config)) format.runtimes.push_back({r, {{"verification", {}}}});
    status.formats.push_back(std::move(format));
  }
  write_status(workspace, status);
  run_cells(workspace, status, {}, request.source, request.isolation, log, request.runner_options);
  for (const auto& format : status.formats)
    if (format.export_step.state != StepState::kSkipped)
      write_format_files(workspace, status, format_info(format.format), request.source);
  write_status(workspace, status);
  log.line("done in " + fixed(pipeline_seconds_since(start), 1) + " s: " + (workspace / "status.yaml").string());
  return status;
}

void run_cells(const fs::path& workspace, WorkspaceStatus& status, const CellSelection& selection, const fs::path& source,
               const compare::Isolation& isolation, NavigatorLog& log, const runners::RunnerOptions& runner_options) {
  for (auto& format : status.formats) {
    if (!selected(selection.formats, format.format)) continue;
    if (selected(selection.steps, "export")) {
      const bool from_source = format.format == "onnx" || format.format == "torchscript";
      if (!source.empty() || !from_source) export_one(workspace, status, format, source, isolation, log);
      write_status(workspace, status);
    }
    run_format_cells(workspace, status, format, selection, isolation, log, runner_options);
  }
  write_status(workspace, status);
}

void set_verified(WorkspaceStatus& status, const std::string& format, const std::string& runtime, bool verified) {
  FormatStatus* f = status.find_format(format);
  PARITY_CHECK(f, kNotFound, "the package has no format '", format, "'");
  RuntimeStatus* r = f->find_runtime(runtime);
  PARITY_CHECK(r, kNotFound, "format ", format, " has no runtime '", runtime, "'");
  PARITY_CHECK(!verified || r->passed(), kInvalidArgument, format, " on ", runtime,
               " cannot be verified: its conversion or correctness test did not pass");
  StepResult& step = r->step("verification");
  step = StepResult{};
  step.state = verified ? StepState::kOk : StepState::kNotRun;
}

}  // namespace parity::tools::navigator
