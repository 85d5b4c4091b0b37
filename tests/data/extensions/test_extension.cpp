// The test extension: one custom operator, test.parity::AddOne (y = x + 1, float), given both to
// parity's ref runner (a reference kernel registered through the extension ABI) and to ONNX Runtime
// (this library is also an ORT custom-op library: it exports RegisterCustomOps), plus a runner,
// `--plugin-ref`, that runs models on parity's own runtime from inside the extension. With
// `--plugin-ref-wrong NAME`, that runner computes the nodes named NAME (or of op type NAME) wrong,
// as a mis-registered kernel would: their first output is off by one (for `debug reduce` tests).
//
// Built several times (tests/data/extensions/CMakeLists.txt) to exercise each way loading can fail:
//   TEST_EXTENSION_THROW_AT_INIT  init throws
//   TEST_EXTENSION_WRONG_ABI      the descriptor announces another ABI number
//   TEST_EXTENSION_WRONG_SIGNATURE  the same ABI number, another C++ fingerprint
//   TEST_EXTENSION_ORT_ONLY       no parity entry point: only an ORT custom-op library
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

#include "core/text.h"
#include "runners/extension.h"
#include "runners/ort/ort_custom_op.h"
#include "model/graph.h"
#include "model/model.h"
#include "runtime/session.h"

namespace {

using namespace parity;
namespace ort = parity::runners::ort;

// ---- the reference kernel -------------------------------------------------------------------

class AddOneKernel final : public runtime::Kernel {
 public:
  explicit AddOneKernel(const runtime::KernelInit& init) {
    if (init.num_inputs() != 1 || init.num_outputs() != 1) init.fail("AddOne takes one input and one output");
  }
  void compute(runtime::KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32) ctx.fail("AddOne supports float32 only, got ", dtype_name(x.dtype()));
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const float* in = x.data<float>();
    float* out = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + 1.0f;
  }
};

// ---- the runner ------------------------------------------------------------------------------

// Adds 1 to the first output of every node named `wrong` or of op type `wrong`.
model::Model with_wrong_nodes(const model::Model& model, const std::vector<std::string>& wrong) {
  auto graph = model::Graph::from_model(model);
  std::vector<model::NodePtr> nodes;
  const auto one = model::Value::constant("plugin_ref_wrong_one", Tensor::scalar<float>(1.0f));
  for (const auto& node : graph->nodes) {
    nodes.push_back(node);
    const bool hit = std::find(wrong.begin(), wrong.end(), node->name) != wrong.end() ||
                     std::find(wrong.begin(), wrong.end(), node->op_type) != wrong.end();
    if (!hit || node->outputs.empty() || !node->outputs[0]) continue;
    const model::ValuePtr right = model::Value::variable(node->outputs[0]->name + "_plugin_ref_right");
    auto add = std::make_shared<model::Node>("Add", std::vector<model::ValuePtr>{right, one},
                                             std::vector<model::ValuePtr>{node->outputs[0]}, node->name + "_plugin_ref_wrong");
    node->outputs[0] = right;
    nodes.push_back(add);
  }
  graph->nodes = std::move(nodes);
  return graph->to_model();
}

// What --plugin-ref-wrong and --plugin-ref-wrong-from say.
struct WrongNodes {
  std::vector<std::string> names;  // node names or op types
  int64_t from_inference = 1;      // wrong from this inference (1-based) of an activation on
};

class PluginRefRunner final : public runners::Runner {
 public:
  PluginRefRunner(std::string model_path, int threads, WrongNodes wrong)
      : Runner(runners::make_runner_name("plugin-ref")), model_path_(std::move(model_path)), threads_(threads),
        wrong_(std::move(wrong)) {}

 protected:
  void activate_impl() override {
    runtime::SessionOptions options;
    options.threads = threads_;
    inferences_ = 0;
    session_.emplace(runtime::Session::create(model_path_, options).value());
    if (wrong_.names.empty()) return;
    const model::Model model = with_wrong_nodes(model::load_model(model_path_).value(), wrong_.names);
    wrong_session_.emplace(runtime::Session::create(model.proto(), options, model.base_dir()).value());
  }
  void deactivate_impl() override {
    session_.reset();
    wrong_session_.reset();
  }
  TensorMetadata input_metadata_impl() override { return session_->input_metadata(); }
  TensorMap infer_impl(const TensorMap& feed) override {
    const bool wrong = wrong_session_ && ++inferences_ >= wrong_.from_inference;
    return wrong ? wrong_session_->run(feed) : session_->run(feed);
  }

 private:
  std::string model_path_;
  int threads_;
  WrongNodes wrong_;
  int64_t inferences_ = 0;
  std::optional<runtime::Session> session_;
  std::optional<runtime::Session> wrong_session_;
};

struct PluginRefOptions {
  int threads = 1;
  WrongNodes wrong;
};

[[maybe_unused]] options::Group<PluginRefOptions> plugin_ref_options() {
  options::Group<PluginRefOptions> group;
  group.section("Plugin reference runner (--plugin-ref, test extension)")
      .add({.flags = {"--plugin-ref-threads"}, .help = "Threads for the plugin-ref runner (default 1)", .metavar = "N"},
           options::convert(&PluginRefOptions::threads,
                            [](const std::string& text, const std::string& flag) {
                              return runners::parse_thread_count(text, flag);
                            }))
      .add({.flags = {"--plugin-ref-wrong"},
            .help = "Compute nodes with these names or op types wrong (first output + 1), like a broken kernel",
            .metavar = "NAME",
            .arity = options::Arity::kOneOrMore},
           [](PluginRefOptions& o, const options::Given& given) {
             if (given.given()) o.wrong.names = given.values;
           })
      .add({.flags = {"--plugin-ref-wrong-from"},
            .help = "With --plugin-ref-wrong: compute right until this inference (1-based) of a run",
            .metavar = "N"},
           [](PluginRefOptions& o, const options::Given& given) {
             if (auto from = given.value()) o.wrong.from_inference = parse_int(*from, given.flag);
           });
  return group;
}

[[maybe_unused]] std::unique_ptr<runners::Runner> create_plugin_ref(const runners::RunnerConfig& config) {
  PluginRefOptions options = config.options.get_or(PluginRefOptions{});
  return std::make_unique<PluginRefRunner>(config.model_path, options.threads, std::move(options.wrong));
}

[[maybe_unused]] int init(runners::ExtensionHost* host) {
#ifdef TEST_EXTENSION_THROW_AT_INIT
  (void)host;
  throw std::runtime_error("the test extension was built to fail at init");
#else
  host->add_kernel("test.parity", "AddOne", 1, [](const runtime::KernelInit& init) -> std::unique_ptr<runtime::Kernel> {
    return std::make_unique<AddOneKernel>(init);
  });
  host->add_runner({.name = "plugin-ref",
                    .flag = "--plugin-ref",
                    .description = "",
                    .options = plugin_ref_options(),
                    .availability = [](const runners::RunnerOptions&) { return Status::ok(); },
                    .version = [](const runners::RunnerOptions&) { return std::string("0.1.0"); },
                    .create = create_plugin_ref});
  return 0;
#endif
}

const ParityExtensionRunnerDecl kRunners[] = {
    {"plugin-ref", "--plugin-ref", "the test extension's runner: parity's runtime with the extension's kernels"},
};

// ---- the same op for ONNX Runtime --------------------------------------------------------------

struct OrtAddOne {
  const ort::OrtApi* api;
};

// Returns false (after releasing the status) when an ORT call failed: KernelCompute cannot report.
bool ok(const ort::OrtApi& api, ort::OrtStatus* status) {
  if (!status) return true;
  api.ReleaseStatus(status);
  return false;
}

void ort_add_one_compute(void* kernel, ort::OrtKernelContext* context) {
  const ort::OrtApi& api = *static_cast<OrtAddOne*>(kernel)->api;
  const ort::OrtValue* input = nullptr;
  ort::OrtTensorTypeAndShapeInfo* info = nullptr;
  if (!ok(api, api.KernelContext_GetInput(context, 0, &input)) || !ok(api, api.GetTensorTypeAndShape(input, &info)))
    return;
  size_t rank = 0;
  std::vector<int64_t> dims;
  bool have_dims = ok(api, api.GetDimensionsCount(info, &rank));
  dims.resize(rank);
  have_dims = have_dims && (rank == 0 || ok(api, api.GetDimensions(info, dims.data(), rank)));
  api.ReleaseTensorTypeAndShapeInfo(info);
  ort::OrtValue* output = nullptr;
  void* in = nullptr;
  void* out = nullptr;
  if (!have_dims || !ok(api, api.KernelContext_GetOutput(context, 0, dims.data(), rank, &output)) ||
      !ok(api, api.GetTensorMutableData(const_cast<ort::OrtValue*>(input), &in)) ||
      !ok(api, api.GetTensorMutableData(output, &out)))
    return;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(out)[i] = static_cast<const float*>(in)[i] + 1.0f;
}

const ort::OrtCustomOp kOrtAddOne = {
    .version = ort::kOrtCustomOpVersion,
    .CreateKernel = [](const ort::OrtCustomOp*, const ort::OrtApi* api, const ort::OrtKernelInfo*) -> void* {
      return new OrtAddOne{api};
    },
    .GetName = [](const ort::OrtCustomOp*) { return "AddOne"; },
    .GetExecutionProviderType = [](const ort::OrtCustomOp*) -> const char* { return nullptr; },
    .GetInputType = [](const ort::OrtCustomOp*, size_t) { return static_cast<ort::OrtElementType>(DType::kFloat32); },
    .GetInputTypeCount = [](const ort::OrtCustomOp*) -> size_t { return 1; },
    .GetOutputType = [](const ort::OrtCustomOp*, size_t) { return static_cast<ort::OrtElementType>(DType::kFloat32); },
    .GetOutputTypeCount = [](const ort::OrtCustomOp*) -> size_t { return 1; },
    .KernelCompute = ort_add_one_compute,
    .KernelDestroy = [](void* kernel) { delete static_cast<OrtAddOne*>(kernel); },
    .GetInputCharacteristic = [](const ort::OrtCustomOp*, size_t) { return ort::kOrtInputOutputRequired; },
    .GetOutputCharacteristic = [](const ort::OrtCustomOp*, size_t) { return ort::kOrtInputOutputRequired; },
    .GetInputMemoryType = [](const ort::OrtCustomOp*, size_t) { return ort::kOrtMemTypeDefault; },
};

}  // namespace

extern "C" __attribute__((visibility("default"))) ort::OrtStatus* RegisterCustomOps(ort::OrtSessionOptions* options,
                                                                                   const ort::OrtApiBase* api_base) {
  const ort::OrtApi* api = api_base->GetApi(ort::kRequiredApiVersion);
  if (!api) return nullptr;  // an ORT too old for parity's binding; the session then reports the op missing
  // One domain for the process: it must outlive every session that uses it.
  static ort::OrtCustomOpDomain* domain = nullptr;
  if (!domain) {
    if (auto* st = api->CreateCustomOpDomain("test.parity", &domain)) return st;
    if (auto* st = api->CustomOpDomain_Add(domain, &kOrtAddOne)) return st;
  }
  return api->AddCustomOpDomain(options, domain);
}

#ifndef TEST_EXTENSION_ORT_ONLY
#if defined(TEST_EXTENSION_WRONG_ABI) || defined(TEST_EXTENSION_WRONG_SIGNATURE)
// What an extension built against another parity looks like: same prefix, another ABI number; or
// the same ABI number with C++ types laid out differently (another standard library).
#ifdef TEST_EXTENSION_WRONG_ABI
constexpr uint32_t kAbi = PARITY_EXTENSION_ABI_VERSION + 1000;
constexpr uint64_t kSignature = parity_extension_cxx_signature();
#else
constexpr uint32_t kAbi = PARITY_EXTENSION_ABI_VERSION;
constexpr uint64_t kSignature = parity_extension_cxx_signature() ^ 1;
#endif
extern "C" __attribute__((visibility("default"))) const ParityExtensionDescriptor* parity_extension() {
  static const ParityExtensionDescriptor descriptor{kAbi, "test_extension", "0.1.0", kRunners, 1, init, kSignature};
  return &descriptor;
}
#else
PARITY_EXTENSION("test_extension", "0.1.0", kRunners, init)
#endif
#endif
