#include "tools/navigator/formats.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <onnx/onnx_pb.h>

#include "core/formats/file_io.h"
#include "core/status.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/transforms/extract.h"
#include "model/transforms/fp16.h"
#include "tools/fold.h"
#include "tools/navigator/samples.h"
#include "tools/plan_build.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string python_command() {
  if (const char* env = std::getenv("PARITY_PYTHON"); env && *env) return env;
  // Debian's python3-torch lives in the system interpreter; a pyenv/virtualenv python3 first on
  // PATH would not see it.
  return fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

// Exports a TorchScript module to ONNX with the first conversion sample as the example input. The
// samples are squeezed, so the batch axis is put back; outputs are named output_<i> as parity's
// torch runner names them.
constexpr const char* kTorchExportScript = R"PY(
import sys
import numpy as np
import torch
source, sample_path, out_path, batch_dim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
dynamic = {}
for item in sys.argv[5:]:
    name, axes = item.split(":")
    dynamic[name] = [int(a) for a in axes.split(",") if a]
module = torch.jit.load(source, map_location="cpu").eval()
names = [a.name for a in module.forward.schema.arguments][1:]
sample = np.load(sample_path)
args = []
for name in names:
    value = sample[name]
    if batch_dim >= 0:
        value = np.expand_dims(value, batch_dim)
    args.append(torch.from_numpy(np.ascontiguousarray(value)))
with torch.no_grad():
    result = module(*args)
count = len(result) if isinstance(result, (tuple, list)) else 1
outputs = ["output_%d" % i for i in range(count)]
axes = {name: {a: "%s_%d" % (name, a) for a in dynamic.get(name, [])} for name in names}
if batch_dim >= 0:
    for name in names:
        axes[name][batch_dim] = "batch"
    for name in outputs:
        axes[name] = {batch_dim: "batch"}
torch.onnx.export(module, tuple(args), out_path, opset_version=13, input_names=names, output_names=outputs,
                  dynamic_axes=axes)
)PY";

void export_torchscript_to_onnx(const fs::path& source, const fs::path& workspace, const fs::path& out,
                                const WorkspaceStatus& status) {
  const std::string why = torch_exporter_unavailable();
  PARITY_CHECK(why.empty(), kUnsupported, why);
  const fs::path script = workspace / "onnx" / "export_torchscript.py";
  formats::write_binary_file(script.string(), kTorchExportScript);
  std::string command = python_command() + " " + quoted(script.string()) + " " + quoted(source.string()) + " " +
                        quoted((workspace / "model_input" / "conversion" / "0.npz").string()) + " " +
                        quoted(out.string()) + " " + std::to_string(status.config.batch_dim.value_or(-1));
  for (const auto& p : status.profiles)
    if (!status.config.batch_dim || p.axis != *status.config.batch_dim)
      command.append(" ").append(quoted(p.input + ":" + std::to_string(p.axis)));
  const fs::path log = workspace / "onnx" / "export.log";
  command.append(" > ").append(quoted(log.string())).append(" 2>&1");
  const int rc = std::system(command.c_str());
  if (rc != 0 || !fs::is_regular_file(out)) {
    std::string output = fs::exists(log) ? read_workspace_file(log) : "";
    // The last non-empty line is the exception's message.
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
    const auto line_start = output.rfind('\n');
    const std::string last = line_start == std::string::npos ? output : output.substr(line_start + 1);
    fail(ErrorCode::kUnsupported, "the TorchScript -> ONNX export failed: ", last.empty() ? "no output" : last);
  }
}

void save_onnx(const model::Model& model, const fs::path& out) {
  const Status saved = model::save_model(model, out);
  PARITY_CHECK(saved.ok(), kIo, saved.error().what());
}

fs::path onnx_format_model(const fs::path& workspace) {
  const fs::path path = workspace / "onnx" / "model.onnx";
  PARITY_CHECK(fs::is_regular_file(path), kNotFound, "needs the onnx format, which was not produced");
  return path;
}

runtime::ReducedPrecisionConfig plan_precision_config(const std::string& precision) {
  runtime::ReducedPrecisionConfig config;
  config.fp16 = precision == "fp16";
  config.bf16 = precision == "bf16";
  config.int8 = precision == "int8";
  return config;
}

// The workspace's axis ranges as one optimization profile (runtime/profiles.h) over the inputs whose
// every dimension is known: fixed in the model or ranged by the samples (Model Navigator's TensorRT
// profiles). Empty when no input has a ranged axis.
std::vector<runtime::OptimizationProfile> plan_profiles(const onnx::ModelProto& model,
                                                        const std::vector<AxisProfile>& axes) {
  runtime::OptimizationProfile profile;
  for (const auto& input : model.graph().input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    runtime::ShapeRange range;
    bool complete = true, ranged = false;
    const auto& dims = input.type().tensor_type().shape().dim();
    for (int d = 0; d < dims.size() && complete; ++d) {
      if (dims[d].has_dim_value()) {
        for (Shape* s : {&range.min, &range.opt, &range.max}) s->push_back(dims[d].dim_value());
        continue;
      }
      auto axis = std::find_if(axes.begin(), axes.end(),
                               [&](const AxisProfile& a) { return a.input == input.name() && a.axis == d; });
      complete = axis != axes.end();
      if (!complete) break;
      range.min.push_back(axis->min);
      range.opt.push_back(std::clamp(axis->opt, axis->min, axis->max));
      range.max.push_back(axis->max);
      ranged = true;
    }
    if (complete && ranged) profile.inputs.emplace_back(input.name(), std::move(range));
  }
  if (profile.inputs.empty()) return {};
  return {std::move(profile)};
}

// The plan through the same build as `parity convert -o X.plan --<precision>`; int8 is calibrated
// on the conversion samples (batch axis put back, one item per feed) and the cache kept in the
// format's folder, so reproduce_export.sh rebuilds the same plan from it.
void export_plan(const FormatInfo& format, const fs::path& workspace, const fs::path& onnx, const WorkspaceStatus& status) {
  const fs::path folder = workspace / format.name;
  PlanBuildOptions options;
  options.precision = plan_precision_config(format.precision);
  if (options.precision.int8) {
    options.calibration_cache = folder / kCalibrationCacheFile;
    fs::remove(options.calibration_cache);  // a new export calibrates again on the workspace's samples
    options.calibration_feeds = [&]() -> std::unique_ptr<compare::FeedSource> {
      const SampleSets samples = load_sample_sets(workspace / "model_input");
      std::vector<TensorMap> feeds;
      for (const auto& sample : samples.of("conversion"))
        feeds.push_back(feed_from_sample(sample, status.config.batch_dim, 1));
      PARITY_CHECK(!feeds.empty(), kNotFound, "int8 calibration needs the conversion samples (model_input/conversion/*.npz)");
      return std::make_unique<compare::FeedList>(std::move(feeds));
    };
  }
  model::Model model = model::load_model(onnx).value();
  options.profiles = plan_profiles(model.proto(), status.profiles);
  build_and_save_plan(model, onnx.parent_path(), std::move(options), folder / format.file, onnx.string());
}

}  // namespace

const std::vector<FormatInfo>& all_formats() {
  static const std::vector<FormatInfo> formats{
      {"torchscript", FormatKind::kTorchScript, "model.pt", ""},
      {"onnx", FormatKind::kOnnx, "model.onnx", ""},
      {"onnx-sanitized", FormatKind::kOnnx, "model.onnx", ""},
      {"onnx-fp16", FormatKind::kOnnx, "model.onnx", ""},
      {"plan-fp32", FormatKind::kPlan, "model.plan", "fp32"},
      {"plan-fp16", FormatKind::kPlan, "model.plan", "fp16"},
      {"plan-bf16", FormatKind::kPlan, "model.plan", "bf16"},
      {"plan-int8", FormatKind::kPlan, "model.plan", "int8"},
  };
  return formats;
}

const FormatInfo& format_info(const std::string& name) {
  for (const auto& f : all_formats())
    if (f.name == name) return f;
  std::vector<std::string> names;
  for (const auto& f : all_formats()) names.push_back(f.name);
  fail(ErrorCode::kInvalidArgument, "unknown format '", name, "'; formats: ", join_names(names));
}

std::string plan_precision_unsupported(const std::string& precision) {
  if (precision == "fp32" || precision == "fp16" || precision == "bf16" || precision == "int8") return "";
  return precision + " plans are not supported by this build";
}

bool has_torchscript(const NavigatorConfig& config) {
  return config.source_kind == "torchscript" || !config.torchscript_copy.empty();
}

fs::path torchscript_file(const NavigatorConfig& config, const fs::path& source) {
  return config.torchscript_copy.empty() ? source : fs::path(config.torchscript_copy);
}

std::vector<std::string> default_formats(const NavigatorConfig& config) {
  std::vector<std::string> names;
  for (const auto& f : all_formats())
    if (f.kind != FormatKind::kTorchScript || has_torchscript(config)) names.push_back(f.name);
  return names;
}

bool runtime_runs_format(const std::string& runtime, const FormatInfo& format) {
  switch (format.kind) {
    case FormatKind::kTorchScript: return runtime == "torch";
    case FormatKind::kPlan: return runtime == "ref";
    case FormatKind::kOnnx: return runtime != "torch";
  }
  return false;
}

std::string source_kind_of(const fs::path& source) {
  const std::string ext = source.extension().string();
  return ext == ".pt" || ext == ".pth" || ext == ".ts" ? "torchscript" : "onnx";
}

std::string torch_exporter_unavailable() {
  static const std::string reason = [] {
    const std::string command = python_command() + " -c 'import torch, onnx' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return std::string();
    return "the TorchScript -> ONNX export needs python3 with torch and onnx (Debian python3-torch, python3-onnx), "
           "which " + python_command() + " cannot import";
  }();
  return reason;
}

void export_format(const FormatInfo& format, const fs::path& workspace, const fs::path& source,
                   const WorkspaceStatus& status) {
  const fs::path folder = workspace / format.name;
  fs::create_directories(folder);
  const fs::path out = folder / format.file;
  if (format.kind == FormatKind::kPlan) {
    const std::string why = plan_precision_unsupported(format.precision);
    PARITY_CHECK(why.empty(), kUnsupported, why);
  }
  if (format.name == "torchscript") {
    PARITY_CHECK(has_torchscript(status.config), kUnsupported, "the source is not a TorchScript model");
    formats::copy_file(torchscript_file(status.config, source).string(), out.string());
    return;
  }
  if (format.name == "onnx") {
    if (status.config.source_kind == "torchscript") return export_torchscript_to_onnx(source, workspace, out, status);
    save_onnx(model::load_model(source).value(), out);
    return;
  }
  const fs::path onnx = onnx_format_model(workspace);
  if (format.name == "onnx-sanitized") {
    const model::Model model = model::load_model(onnx).value();
    FoldOptions options;
    auto graph = fold_constants(model, options, nullptr);
    graph->cleanup(/*remove_unused_inputs=*/false, /*recurse=*/true);
    graph->toposort();
    save_onnx(graph->to_model(), out);
  } else if (format.name == "onnx-fp16") {
    auto graph = model::transforms::graph_with_inferred_types(model::load_model(onnx).value());
    model::transforms::convert_to_fp16(*graph);
    save_onnx(graph->to_model(), out);
  } else if (format.kind == FormatKind::kPlan) {
    export_plan(format, workspace, onnx, status);
  } else {
    fail(ErrorCode::kInternal, "no export for format ", format.name);
  }
}

std::string export_command(const FormatInfo& format, const fs::path& source) {
  const std::string src = quoted(fs::absolute(source).string());
  if (format.name == "torchscript") return "cp " + src + " torchscript/model.pt";
  if (format.name == "onnx")
    return source_kind_of(source) == "torchscript"
               ? python_command() + " onnx/export_torchscript.py " + src +
                     " model_input/conversion/0.npz onnx/model.onnx <batch-dim> [input:axis ...]"
               : "parity surgeon sanitize " + src + " -o onnx/model.onnx";
  if (format.name == "onnx-sanitized")
    return "parity surgeon sanitize onnx/model.onnx --fold-constants --cleanup --toposort -o onnx-sanitized/model.onnx";
  if (format.name == "onnx-fp16") return "parity convert onnx/model.onnx --fp-to-fp16 -o onnx-fp16/model.onnx";
  std::string flags = format.precision == "fp32" ? "" : " --" + format.precision;
  if (format.precision == "int8") flags += " --calibration-cache " + format.name + "/" + kCalibrationCacheFile;
  return "parity convert onnx/model.onnx" + flags + " -o " + format.name + "/model.plan";
}

}  // namespace parity::tools::navigator
