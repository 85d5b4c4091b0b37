#include "runners/ort/ort_runner.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "core/logger.h"
#include "core/low_precision.h"
#include "runners/ort/ort_library.h"
#include "runners/registry.h"

namespace parity::runners::ort {

namespace {

constexpr int kMaxOnnxDType = static_cast<int>(kInt2);

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// ORT's element type numbers are TensorProto's up to FLOAT4E2M1 (23). After it, ORT 1.30's C enum
// (what GetTensorElementType reports) goes UINT2 = 24, INT2 = 25, FLOAT8E8M0 = 26, while
// TensorProto has FLOAT8E8M0 = 24, UINT2 = 25, INT2 = 26 -- and tensor creation takes
// TensorProto's numbers (measured: creating type 25 gives a UInt2x4 tensor). So types read from
// ORT are mapped, types handed to ORT are not. ORT packs the sub-byte types; parity unpacks them.
constexpr int kOrtUInt2 = 24, kOrtInt2 = 25, kOrtFloat8E8M0 = 26;

DType dtype_from_ort(OrtElementType type, const std::string& tensor) {
  if (type == kOrtUInt2) return kUInt2;
  if (type == kOrtInt2) return kInt2;
  if (type == kOrtFloat8E8M0) return kFloat8E8M0;
  if (type > 0 && type <= kMaxOnnxDType) return static_cast<DType>(type);
  fail(ErrorCode::kUnsupported, "tensor '", tensor, "' has element type ", type, ", which parity cannot hold");
}

OrtGraphOptimizationLevel optimization_level(const std::string& name) {
  if (name == "disable") return kOrtDisableAll;
  if (name == "basic") return kOrtEnableBasic;
  if (name == "extended") return kOrtEnableExtended;
  if (name == "all") return kOrtEnableAll;
  fail(ErrorCode::kInvalidArgument, "unknown --ort-opt-level '", name, "'; use disable, basic, extended or all");
}

// The generic SessionOptionsAppendExecutionProvider takes ORT's short provider names.
std::string short_provider_name(const std::string& full) {
  static const std::map<std::string, std::string> kShort = {
      {"XnnpackExecutionProvider", "XNNPACK"}, {"QNNExecutionProvider", "QNN"},
      {"SNPEExecutionProvider", "SNPE"},       {"OpenVINOExecutionProvider", "OpenVINO"},
      {"CoreMLExecutionProvider", "CoreML"},   {"WebGpuExecutionProvider", "WebGPU"},
      {"DmlExecutionProvider", "DML"},         {"AzureExecutionProvider", "AZURE"},
      {"VitisAIExecutionProvider", "VitisAI"}, {"CUDAExecutionProvider", "CUDA"},
  };
  if (auto it = kShort.find(full); it != kShort.end()) return it->second;
  const std::string suffix = "ExecutionProvider";
  if (full.size() > suffix.size() && full.compare(full.size() - suffix.size(), suffix.size(), suffix) == 0)
    return full.substr(0, full.size() - suffix.size());
  return full;
}

// Owns an output OrtValue so parity tensors can alias ORT's buffer without a copy.
class OrtValueStorage : public Storage {
 public:
  OrtValueStorage(const OrtApi& api, OrtValue* value, std::byte* data, size_t bytes)
      : api_(api), value_(value), data_(data), bytes_(bytes) {}
  ~OrtValueStorage() override { api_.ReleaseValue(value_); }
  std::byte* data() override { return data_; }
  size_t size_bytes() const override { return bytes_; }

 private:
  const OrtApi& api_;
  OrtValue* value_;
  std::byte* data_;
  size_t bytes_;
};

// Releases ORT objects on scope exit.
template <typename T>
struct OrtPtr {
  void (*release)(T*);
  T* ptr = nullptr;
  ~OrtPtr() {
    if (ptr) release(ptr);
  }
};

class OrtRunner final : public Runner {
 public:
  OrtRunner(std::string model_path, OrtRunnerOptions options)
      : Runner(make_runner_name("ort")), model_path_(std::move(model_path)), options_(std::move(options)) {}
  ~OrtRunner() override { release(); }

 protected:
  void activate_impl() override;
  void deactivate_impl() override { release(); }
  TensorMetadata input_metadata_impl() override { return inputs_; }
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  void release();
  void read_io_names();
  OrtValue* make_input(const std::string& name, const Tensor& tensor, OrtMemoryInfo* cpu);
  Tensor read_output(const std::string& name, OrtValue* value);

  std::string model_path_;
  OrtRunnerOptions options_;
  const OrtLibrary* lib_ = nullptr;
  OrtSession* session_ = nullptr;
  TensorMetadata inputs_;
  std::vector<std::string> output_names_;
};

void OrtRunner::release() {
  if (session_) lib_->api().ReleaseSession(session_);
  session_ = nullptr;
}

void OrtRunner::activate_impl() {
  auto loaded = OrtLibrary::load(options_.library);
  loaded.status().throw_if_error();
  lib_ = loaded.value();
  const OrtApi& api = lib_->api();
  const OrtGraphOptimizationLevel level = optimization_level(options_.optimization_level);
  const std::vector<std::string> providers = resolve_providers(options_.providers, lib_->available_providers());

  OrtPtr<OrtSessionOptions> session_options{api.ReleaseSessionOptions};
  lib_->check(api.CreateSessionOptions(&session_options.ptr), "ONNX Runtime CreateSessionOptions");
  lib_->check(api.SetSessionGraphOptimizationLevel(session_options.ptr, level), "ONNX Runtime optimization level",
              ErrorCode::kInvalidArgument);
  if (options_.intra_op_threads > 0)
    lib_->check(api.SetIntraOpNumThreads(session_options.ptr, options_.intra_op_threads), "--ort-threads",
                ErrorCode::kInvalidArgument);
  if (options_.inter_op_threads > 0)
    lib_->check(api.SetInterOpNumThreads(session_options.ptr, options_.inter_op_threads), "--ort-inter-threads",
                ErrorCode::kInvalidArgument);
  for (const auto& [key, value] : options_.config_entries)
    lib_->check(api.AddSessionConfigEntry(session_options.ptr, key.c_str(), value.c_str()),
                str_cat("--ort-config ", key, "=", value), ErrorCode::kInvalidArgument);
  // ORT keeps each library loaded (it never dlcloses what RegisterCustomOpsLibrary opened unless
  // asked), so the custom-op domains stay valid for every session of the process.
  for (const auto& library : options_.custom_op_libraries) {
    void* handle = nullptr;
    lib_->check(api.RegisterCustomOpsLibrary(session_options.ptr, library.c_str(), &handle),
                str_cat("--ort-custom-op-library ", library), ErrorCode::kInvalidArgument);
  }
  const Logger& log = logger();
  const OrtLoggingLevel ort_log = log.enabled(Severity::kExtraVerbose) ? kOrtLogInfo
                                  : log.enabled(Severity::kVerbose)    ? kOrtLogWarning
                                                                       : kOrtLogFatal;
  lib_->check(api.SetSessionLogSeverityLevel(session_options.ptr, ort_log), "ONNX Runtime log level");
  for (const auto& provider : providers) {
    if (provider == "CPUExecutionProvider") continue;  // always there, always the fallback
    const std::string short_name = short_provider_name(provider);
    lib_->check(api.SessionOptionsAppendExecutionProvider(session_options.ptr, short_name.c_str(), nullptr, nullptr, 0),
                str_cat("ONNX Runtime cannot use execution provider ", provider), ErrorCode::kUnavailable);
  }
  logger().verbose("ONNX Runtime ", lib_->version(), " (", lib_->path(), "): creating a session for ", model_path_,
                   " [providers: ", join_names(providers), ", optimization level: ", options_.optimization_level, "]");
  lib_->check(api.CreateSession(lib_->env(), model_path_.c_str(), session_options.ptr, &session_),
              str_cat("ONNX Runtime cannot load ", model_path_), ErrorCode::kInvalidModel);
  try {
    read_io_names();
  } catch (...) {
    release();
    throw;
  }
}

void OrtRunner::read_io_names() {
  const OrtApi& api = lib_->api();
  OrtAllocator* allocator = nullptr;
  lib_->check(api.GetAllocatorWithDefaultOptions(&allocator), "ONNX Runtime GetAllocatorWithDefaultOptions");
  auto take_name = [&](char* raw) {
    std::string name(raw);
    lib_->check(api.AllocatorFree(allocator, raw), "ONNX Runtime AllocatorFree");
    return name;
  };

  size_t input_count = 0, output_count = 0;
  lib_->check(api.SessionGetInputCount(session_, &input_count), "ONNX Runtime SessionGetInputCount");
  lib_->check(api.SessionGetOutputCount(session_, &output_count), "ONNX Runtime SessionGetOutputCount");
  inputs_ = TensorMetadata();
  for (size_t i = 0; i < input_count; ++i) {
    char* raw = nullptr;
    lib_->check(api.SessionGetInputName(session_, i, allocator, &raw), "ONNX Runtime SessionGetInputName");
    const std::string name = take_name(raw);
    OrtPtr<OrtTypeInfo> type_info{api.ReleaseTypeInfo};
    lib_->check(api.SessionGetInputTypeInfo(session_, i, &type_info.ptr), "ONNX Runtime SessionGetInputTypeInfo");
    OrtOnnxType kind = kOrtTypeUnknown;
    lib_->check(api.GetOnnxTypeFromTypeInfo(type_info.ptr, &kind), "ONNX Runtime GetOnnxTypeFromTypeInfo");
    if (kind != kOrtTypeTensor) {
      // Sequences, maps and optionals: parity feeds tensors only, so leave dtype and rank open.
      DimShape unknown;
      unknown.unknown_rank = true;
      inputs_.add(name, DType::kUndefined, unknown);
      continue;
    }
    const OrtTensorTypeAndShapeInfo* info = nullptr;
    lib_->check(api.CastTypeInfoToTensorInfo(type_info.ptr, &info), "ONNX Runtime CastTypeInfoToTensorInfo");
    OrtElementType element = 0;
    lib_->check(api.GetTensorElementType(info, &element), "ONNX Runtime GetTensorElementType");
    size_t rank = 0;
    lib_->check(api.GetDimensionsCount(info, &rank), "ONNX Runtime GetDimensionsCount");
    std::vector<int64_t> dims(rank);
    std::vector<const char*> symbols(rank, nullptr);
    if (rank) {
      lib_->check(api.GetDimensions(info, dims.data(), rank), "ONNX Runtime GetDimensions");
      lib_->check(api.GetSymbolicDimensions(info, symbols.data(), rank), "ONNX Runtime GetSymbolicDimensions");
    }
    DimShape shape;
    for (size_t d = 0; d < rank; ++d)
      shape.dims.push_back(dims[d] >= 0 ? Dim(dims[d]) : Dim::dynamic(symbols[d] ? symbols[d] : ""));
    inputs_.add(name, dtype_from_ort(element, name), shape);
  }
  output_names_.clear();
  for (size_t i = 0; i < output_count; ++i) {
    char* raw = nullptr;
    lib_->check(api.SessionGetOutputName(session_, i, allocator, &raw), "ONNX Runtime SessionGetOutputName");
    output_names_.push_back(take_name(raw));
  }
}

OrtValue* OrtRunner::make_input(const std::string& name, const Tensor& tensor, OrtMemoryInfo* cpu) {
  const OrtApi& api = lib_->api();
  const Shape& shape = tensor.shape();
  OrtValue* value = nullptr;
  PARITY_CHECK(!is_complex(tensor.dtype()), kUnsupported, "ONNX Runtime has no complex tensors (input '", name, "')");
  if (tensor.dtype() == DType::kString) {
    OrtAllocator* allocator = nullptr;
    lib_->check(api.GetAllocatorWithDefaultOptions(&allocator), "ONNX Runtime GetAllocatorWithDefaultOptions");
    lib_->check(api.CreateTensorAsOrtValue(allocator, shape.data(), shape.size(), static_cast<int>(DType::kString),
                                           &value),
                str_cat("ONNX Runtime cannot create string input '", name, "'"));
    std::vector<const char*> strings;
    for (const auto& s : tensor.values<std::string>()) strings.push_back(s.c_str());
    if (!strings.empty()) {
      OrtStatus* status = api.FillStringTensor(value, strings.data(), strings.size());
      if (status) api.ReleaseValue(value);
      lib_->check(status, str_cat("ONNX Runtime cannot fill string input '", name, "'"));
    }
    return value;
  }
  if (is_sub_byte(tensor.dtype())) {
    // ORT wants int4/uint4/float4e2m1/int2/uint2 packed: give it its own buffer, filled packed.
    OrtAllocator* allocator = nullptr;
    lib_->check(api.GetAllocatorWithDefaultOptions(&allocator), "ONNX Runtime GetAllocatorWithDefaultOptions");
    lib_->check(api.CreateTensorAsOrtValue(allocator, shape.data(), shape.size(), static_cast<int>(tensor.dtype()),
                                           &value),
                str_cat("ONNX Runtime cannot create ", dtype_name(tensor.dtype()), " input '", name, "'"));
    const auto packed =
        pack_sub_byte(tensor.dtype(), static_cast<const uint8_t*>(tensor.raw_data()), tensor.numel());
    void* dst = nullptr;
    OrtStatus* status = api.GetTensorMutableData(value, &dst);
    if (status) api.ReleaseValue(value);
    lib_->check(status, str_cat("ONNX Runtime cannot fill input '", name, "'"));
    if (!packed.empty()) std::memcpy(dst, packed.data(), packed.size());
    return value;
  }
  // ORT only reads inputs; it wants a non-null pointer even for an empty tensor.
  static std::byte empty_buffer[16];
  void* data = tensor.numel() ? const_cast<void*>(tensor.raw_data()) : empty_buffer;
  lib_->check(api.CreateTensorWithDataAsOrtValue(cpu, data, tensor.size_bytes(), shape.data(), shape.size(),
                                                 static_cast<int>(tensor.dtype()), &value),
              str_cat("ONNX Runtime cannot use input '", name, "'"), ErrorCode::kInvalidArgument);
  return value;
}

Tensor OrtRunner::read_output(const std::string& name, OrtValue* value) {
  const OrtApi& api = lib_->api();
  OrtOnnxType kind = kOrtTypeUnknown;
  lib_->check(api.GetValueType(value, &kind), "ONNX Runtime GetValueType");
  if (kind != kOrtTypeTensor) {
    api.ReleaseValue(value);
    static const char* const kKinds[] = {"an unknown value", "a tensor", "a sequence", "a map",
                                         "an opaque value", "a sparse tensor", "an optional"};
    fail(ErrorCode::kUnsupported, "output '", name, "' is ", kind >= 0 && kind <= 6 ? kKinds[kind] : "not a tensor",
         "; parity compares tensor outputs only");
  }
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OrtStatus* status = api.GetTensorTypeAndShape(value, &info);
  if (status) api.ReleaseValue(value);
  lib_->check(status, "ONNX Runtime GetTensorTypeAndShape");
  OrtElementType element = 0;
  size_t rank = 0;
  Shape shape;
  std::string problem;
  if (OrtStatus* s = api.GetTensorElementType(info, &element)) {
    problem = api.GetErrorMessage(s);
    api.ReleaseStatus(s);
  } else if (OrtStatus* s2 = api.GetDimensionsCount(info, &rank)) {
    problem = api.GetErrorMessage(s2);
    api.ReleaseStatus(s2);
  } else {
    shape.resize(rank);
    if (rank) {
      if (OrtStatus* s3 = api.GetDimensions(info, shape.data(), rank)) {
        problem = api.GetErrorMessage(s3);
        api.ReleaseStatus(s3);
      }
    }
  }
  api.ReleaseTensorTypeAndShapeInfo(info);
  if (!problem.empty()) {
    api.ReleaseValue(value);
    fail(ErrorCode::kRuntime, "ONNX Runtime cannot describe output '", name, "': ", problem);
  }
  DType dtype = DType::kUndefined;
  try {
    dtype = dtype_from_ort(element, name);
  } catch (...) {
    api.ReleaseValue(value);
    throw;
  }

  if (dtype == DType::kString) {
    Tensor out(DType::kString, shape);
    const size_t count = static_cast<size_t>(out.numel());
    size_t total = 0;
    std::string problem_text;
    std::string bytes;
    std::vector<size_t> offsets(count);
    if (count) {
      if (OrtStatus* s = api.GetStringTensorDataLength(value, &total)) {
        problem_text = api.GetErrorMessage(s);
        api.ReleaseStatus(s);
      } else {
        bytes.resize(total);
        if (OrtStatus* s2 = api.GetStringTensorContent(value, bytes.data(), total, offsets.data(), count)) {
          problem_text = api.GetErrorMessage(s2);
          api.ReleaseStatus(s2);
        }
      }
    }
    api.ReleaseValue(value);
    PARITY_CHECK(problem_text.empty(), kRuntime, "ONNX Runtime cannot read string output '", name, "': ", problem_text);
    auto strings = out.values<std::string>();
    for (size_t i = 0; i < count; ++i) {
      const size_t end = i + 1 < count ? offsets[i + 1] : total;
      strings[i] = bytes.substr(offsets[i], end - offsets[i]);
    }
    return out;
  }

  void* data = nullptr;
  status = api.GetTensorMutableData(value, &data);
  if (status) api.ReleaseValue(value);
  lib_->check(status, str_cat("ONNX Runtime cannot read output '", name, "'"));
  if (is_sub_byte(dtype)) {
    Tensor out(dtype, shape);
    unpack_sub_byte(dtype, static_cast<const uint8_t*>(data), out.numel(), static_cast<uint8_t*>(out.raw_data()));
    api.ReleaseValue(value);
    return out;
  }
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  auto storage = std::make_shared<OrtValueStorage>(api, value, static_cast<std::byte*>(data), bytes);
  return Tensor(dtype, shape, std::move(storage));
}

TensorMap OrtRunner::infer_impl(const TensorMap& feed) {
  const OrtApi& api = lib_->api();
  OrtPtr<OrtMemoryInfo> cpu{api.ReleaseMemoryInfo};
  lib_->check(api.CreateCpuMemoryInfo(kOrtArenaAllocator, kOrtMemTypeDefault, &cpu.ptr), "ONNX Runtime CreateCpuMemoryInfo");

  std::vector<const char*> input_names;
  std::vector<OrtValue*> inputs;
  auto release_inputs = [&] {
    for (OrtValue* v : inputs) api.ReleaseValue(v);
    inputs.clear();
  };
  try {
    // Feed order follows the model's inputs; ORT matches by name anyway.
    for (const auto& meta : inputs_) {
      const Tensor* t = feed.find(meta.name);
      if (!t) continue;  // optional inputs may be left out when check_inputs is off
      inputs.push_back(make_input(meta.name, *t, cpu.ptr));
      input_names.push_back(meta.name.c_str());
    }
  } catch (...) {
    release_inputs();
    throw;
  }

  std::vector<const char*> output_names;
  for (const auto& n : output_names_) output_names.push_back(n.c_str());
  std::vector<OrtValue*> outputs(output_names.size(), nullptr);
  OrtStatus* status = api.Run(session_, nullptr, input_names.data(), inputs.data(), inputs.size(),
                              output_names.data(), output_names.size(), outputs.data());
  release_inputs();
  lib_->check(status, "ONNX Runtime failed to run the model", ErrorCode::kRuntime);

  TensorMap out;
  size_t i = 0;
  try {
    for (; i < outputs.size(); ++i) out.set(output_names_[i], read_output(output_names_[i], outputs[i]));
  } catch (...) {
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (outputs[j]) api.ReleaseValue(outputs[j]);
    throw;
  }
  return out;
}

}  // namespace

std::vector<std::string> resolve_providers(const std::vector<std::string>& requested,
                                           const std::vector<std::string>& available) {
  if (requested.empty()) return {"CPUExecutionProvider"};
  std::vector<std::string> out;
  for (const auto& want : requested) {
    const std::string w = lower(want);
    auto it = std::find_if(available.begin(), available.end(), [&](const std::string& have) {
      const std::string h = lower(have);
      return h == w || h == w + "executionprovider";
    });
    if (it == available.end() && (w == "cpu" || w == "cpuexecutionprovider")) {
      out.push_back("CPUExecutionProvider");
      continue;
    }
    PARITY_CHECK(it != available.end(), kUnavailable, "ONNX Runtime execution provider '", want,
                 "' is not in this build; available: ", join_names(available));
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  return out;
}

namespace {

int parse_ort_threads(const std::string& text, const std::string& flag) { return parse_thread_count(text, flag, 0); }

std::pair<std::string, std::string> parse_config_entry(const std::string& entry, const std::string& flag) {
  const size_t eq = entry.find('=');
  PARITY_CHECK(eq != std::string::npos && eq > 0, kInvalidArgument, flag, " '", entry,
               "' must be KEY=VALUE, e.g. session.intra_op.allow_spinning=0");
  return {entry.substr(0, eq), entry.substr(eq + 1)};
}

}  // namespace

options::Group<OrtRunnerOptions> ort_option_group() {
  using O = OrtRunnerOptions;
  options::Group<O> group;
  group.section("ONNX Runtime runner (--ort)")
      .add({.flags = {"--ort-library"},
            .help = "libonnxruntime.so to load (a file or a folder); default: $PARITY_ORT_LIBRARY, then the copy "
                    "scripts/setup.sh installs, then the system library path",
            .metavar = "PATH"},
           options::field(&O::library))
      .add({.flags = {"--ort-threads"}, .help = "Intra-op threads (0: ONNX Runtime's default)", .metavar = "N"},
           options::convert(&O::intra_op_threads, parse_ort_threads))
      .add({.flags = {"--ort-inter-threads"}, .help = "Inter-op threads (0: ONNX Runtime's default)", .metavar = "N"},
           options::convert(&O::inter_op_threads, parse_ort_threads))
      .add({.flags = {"--ort-opt-level"},
            .help = "Graph optimization level",
            .metavar = "LEVEL",
            .choices = {"disable", "basic", "extended", "all"},
            .default_value = "all"},
           options::field(&O::optimization_level))
      .add({.flags = {"--ort-config"},
            .help = "Session configuration entries KEY=VALUE (ONNX Runtime's session option config keys), e.g. "
                    "session.intra_op.allow_spinning=0",
            .metavar = "KEY=VALUE",
            .arity = options::Arity::kOneOrMore},
           options::convert(&O::config_entries, parse_config_entry))
      .add({.flags = {"--ort-providers", "--providers", "--execution-providers"}, .dest = "ort_providers",
            .help = "Execution providers in priority order (e.g. cpu, xnnpack); `parity runners` lists the ones this "
                    "ONNX Runtime has. Default: cpu",
            .metavar = "NAME",
            .arity = options::Arity::kOneOrMore},
           options::field(&O::providers))
      .add({.flags = {"--ort-custom-op-library"},
            .help = "ONNX Runtime custom-op libraries to load (shared libraries exporting RegisterCustomOps), for "
                    "models with custom-domain ops; repeatable",
            .metavar = "PATH",
            .arity = options::Arity::kOneOrMore},
           options::field(&O::custom_op_libraries));
  return group;
}

std::unique_ptr<Runner> make_ort_runner(std::string model_path, OrtRunnerOptions options) {
  return std::make_unique<OrtRunner>(std::move(model_path), std::move(options));
}

namespace {

std::string library_option(const RunnerOptions& options) {
  const OrtRunnerOptions* own = options.find<OrtRunnerOptions>();
  return own ? own->library : std::string();
}

// bench's thread count: intra-op threads, sequential execution; and unless the user configured
// it, idle workers stop spinning when a run returns (ORT's default spin would take cores from the
// runner timed next, while its in-run behaviour stays as it is).
void set_ort_threads(RunnerOptions& options, int threads) {
  OrtRunnerOptions own = options.get_or(OrtRunnerOptions{});
  own.intra_op_threads = threads;
  own.inter_op_threads = 1;
  constexpr const char* kSpinStop = "session.force_spinning_stop";
  if (std::none_of(own.config_entries.begin(), own.config_entries.end(),
                   [&](const auto& entry) { return entry.first == kSpinStop; }))
    own.config_entries.emplace_back(kSpinStop, "1");
  options.set(own);
}

const RunnerRegistrar kOrtRunner({
    .name = "ort",
    .flag = "--ort",
    .aliases = {"--onnxrt"},
    .description = "ONNX Runtime (libonnxruntime loaded at run time)",
    .options = ort_option_group(),
    .availability = [](const RunnerOptions& options) { return OrtLibrary::load(library_option(options)).status(); },
    .version =
        [](const RunnerOptions& options) {
          auto lib = OrtLibrary::load(library_option(options));
          return lib ? lib.value()->version() : std::string();
        },
    .create =
        [](const RunnerConfig& config) {
          return make_ort_runner(config.model_path, config.options.get_or(OrtRunnerOptions{}));
        },
    .details =
        [](const RunnerOptions& options) {
          auto lib = OrtLibrary::load(library_option(options));
          if (!lib) return std::string();
          std::string providers;
          try {
            providers = join_names(lib.value()->available_providers());
          } catch (const Error& e) {
            providers = e.what();
          }
          return str_cat("providers: ", providers, "; library: ", lib.value()->path());
        },
    .set_threads = set_ort_threads,
    .listing_order = 3,
});

}  // namespace

}  // namespace parity::runners::ort
