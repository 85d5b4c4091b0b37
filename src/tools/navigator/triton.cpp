#include "tools/navigator/triton.h"

#include <sstream>

#include "core/formats/file_io.h"
#include "core/status.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/samples.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

bool deployable(const std::string& format) {
  const FormatKind kind = format_info(format).kind;
  return kind == FormatKind::kOnnx || kind == FormatKind::kTorchScript;
}

std::string triton_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Dims without the batch axis (Triton adds it back when max_batch_size > 0).
std::string dims_of(const TensorSpec& spec, std::optional<int64_t> batch_dim) {
  std::string text = "[ ";
  bool first = true;
  for (size_t i = 0; i < spec.shape.size(); ++i) {
    if (batch_dim && static_cast<int64_t>(i) == *batch_dim) continue;
    text += (first ? "" : ", ") + std::to_string(spec.shape[i]);
    first = false;
  }
  return text + " ]";
}

void tensors_block(std::ostringstream& out, const char* field, const std::vector<TensorSpec>& specs,
                   std::optional<int64_t> batch_dim) {
  out << field << " [\n";
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    PARITY_CHECK(!spec.unknown_rank, kUnsupported, "the rank of '", spec.name, "' is unknown; Triton needs its dims");
    out << "  {\n    name: " << triton_quoted(spec.name) << "\n    data_type: " << triton_data_type(spec.dtype)
        << "\n    dims: " << dims_of(spec, batch_dim) << "\n  }" << (i + 1 < specs.size() ? "," : "") << "\n";
  }
  out << "]\n";
}

}  // namespace

std::string triton_data_type(const std::string& dtype) {
  static const std::map<std::string, std::string> types{
      {"bool", "TYPE_BOOL"},     {"uint8", "TYPE_UINT8"},   {"uint16", "TYPE_UINT16"}, {"uint32", "TYPE_UINT32"},
      {"uint64", "TYPE_UINT64"}, {"int8", "TYPE_INT8"},     {"int16", "TYPE_INT16"},   {"int32", "TYPE_INT32"},
      {"int64", "TYPE_INT64"},   {"float16", "TYPE_FP16"},  {"float32", "TYPE_FP32"},  {"float64", "TYPE_FP64"},
      {"string", "TYPE_STRING"}, {"bfloat16", "TYPE_BF16"},
  };
  auto it = types.find(dtype);
  PARITY_CHECK(it != types.end(), kUnsupported, "Triton has no data type for ", dtype);
  return it->second;
}

std::string triton_config(const WorkspaceStatus& status, const std::string& format, const std::string& name,
                          const TritonOptions& options) {
  const FormatInfo& info = format_info(format);
  const std::optional<int64_t> batch_dim = status.config.batch_dim;
  PARITY_CHECK(!batch_dim || *batch_dim == 0, kUnsupported, "Triton batches along axis 0; the package's batch axis is ",
               *batch_dim);
  std::ostringstream out;
  out << "name: " << triton_quoted(name) << "\n";
  if (info.kind == FormatKind::kTorchScript)
    out << "backend: \"pytorch\"\nplatform: \"pytorch_libtorch\"\ndefault_model_filename: \"model.pt\"\n";
  else
    out << "backend: \"onnxruntime\"\nplatform: \"onnxruntime_onnx\"\ndefault_model_filename: \"model.onnx\"\n";
  const int64_t max_batch = batch_dim ? status.config.max_batch_size : 0;
  out << "max_batch_size: " << max_batch << "\n";
  tensors_block(out, "input", status.inputs, batch_dim);
  tensors_block(out, "output", status.outputs, batch_dim);
  out << "instance_group [\n  {\n    count: " << options.instance_count << "\n    kind: KIND_CPU\n  }\n]\n";
  if (max_batch > 0) {
    out << "dynamic_batching {\n  preferred_batch_size: [ ";
    bool first = true;
    for (int64_t b = 1; b <= max_batch; b *= 2) {
      if (b == 1 && max_batch > 1) continue;  // a batch of one needs no preference
      out << (first ? "" : ", ") << b;
      first = false;
    }
    out << " ]\n  max_queue_delay_microseconds: " << options.max_queue_delay_us << "\n}\n";
  }
  if (status.sample_counts.count("profiling") && status.sample_counts.at("profiling") > 0) {
    out << "model_warmup [\n  {\n    name: \"profiling_sample\"\n    batch_size: 1\n    count: 1\n";
    for (const auto& spec : status.inputs)
      out << "    inputs {\n      key: " << triton_quoted(spec.name) << "\n      value {\n        data_type: "
          << triton_data_type(spec.dtype) << "\n        dims: " << "@DIMS:" << spec.name << "@"
          << "\n        input_data_file: " << triton_quoted(spec.name) << "\n      }\n    }\n";
    out << "  }\n]\n";
  }
  return out.str();
}

TritonDeployment deploy_to_triton(const PackageDescriptor& package, const fs::path& repository,
                                  const TritonOptions& options) {
  PARITY_CHECK(!options.name.empty() && options.name.find('/') == std::string::npos && options.name != ".." &&
                   options.name != ".",
               kInvalidArgument, "--name '", options.name, "' is not a valid model name");
  const WorkspaceStatus& status = package.status();
  auto choice = choose_runtime(status, options.strategy, options.latency_budget_ms, /*verified_only=*/true, deployable);
  if (!choice) {
    // Without performance figures, any verified deployable cell will do.
    for (const auto& f : status.formats)
      for (const auto& r : f.runtimes)
        if (!choice && f.export_step.ok() && deployable(f.format) && r.passed() && r.verified())
          choice = RuntimeChoice{f.format, r.runtime};
  }
  PARITY_CHECK(choice, kNotFound, "the package has no verified format Triton can serve (onnx formats, torchscript); "
                                  "verify one with `parity package verify`");
  const fs::path model_dir = repository / options.name;
  PARITY_CHECK(options.override || !fs::exists(model_dir), kInvalidArgument, model_dir.string(),
               " exists; pass --override to replace it");
  std::string config = triton_config(status, choice->format, options.name, options);

  // Warm-up data: the profiling sample's raw bytes, one file per input, and its dims.
  const SampleSets samples = load_sample_sets(package.workspace() / "model_input");
  const auto& profiling = samples.of("profiling");
  if (fs::exists(model_dir)) fs::remove_all(model_dir);
  fs::create_directories(model_dir / "1");
  for (const auto& spec : status.inputs) {
    const std::string marker = "@DIMS:" + spec.name + "@";
    const auto at = config.find(marker);
    if (at == std::string::npos) continue;
    PARITY_CHECK(!profiling.empty(), kNotFound, "the package has no profiling sample for the warm-up (saved with --no-data)");
    const Tensor& tensor = profiling.front().at(spec.name);
    std::string dims = "[ ";
    for (int64_t i = 0; i < tensor.rank(); ++i) dims += (i ? ", " : "") + std::to_string(tensor.dim(i));
    config.replace(at, marker.size(), dims + " ]");
    fs::create_directories(model_dir / "warmup");
    formats::write_binary_file((model_dir / "warmup" / spec.name).string(),
                               std::string_view(static_cast<const char*>(tensor.raw_data()), tensor.size_bytes()));
  }
  const fs::path model = package.get_model(choice->format);
  formats::copy_file(model.string(), (model_dir / "1" / model.filename()).string());
  formats::write_binary_file((model_dir / "config.pbtxt").string(), config);
  return {model_dir, *choice, config};
}

}  // namespace parity::tools::navigator
