// LibTorch runner (the libparity_runner_torch module): runs a TorchScript file's forward().
//
// TorchScript keeps argument names but no shapes, dtypes or output names, so those come from the
// command line: --input-shapes / --input-dtypes (shared with the data loader) and
// --torch-output-names. Nested outputs (tuples, lists, dicts) are flattened in order.
#include <torch/script.h>
#include <torch/version.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/logger.h"
#include "core/text.h"
#include "runners/peer_module.h"
#include "runners/torch/torch_options.h"

namespace parity::runners {
namespace {

c10::ScalarType scalar_type(DType dtype, const std::string& name) {
  switch (dtype) {
    case DType::kFloat32: return c10::kFloat;
    case DType::kFloat64: return c10::kDouble;
    case DType::kFloat16: return c10::kHalf;
    case DType::kBFloat16: return c10::kBFloat16;
    case DType::kInt8: return c10::kChar;
    case DType::kInt16: return c10::kShort;
    case DType::kInt32: return c10::kInt;
    case DType::kInt64: return c10::kLong;
    case DType::kUInt8: return c10::kByte;
    case DType::kBool: return c10::kBool;
    case DType::kComplex64: return c10::kComplexFloat;
    case DType::kComplex128: return c10::kComplexDouble;
    default: fail(ErrorCode::kUnsupported, "LibTorch has no ", dtype_name(dtype), " tensors (input '", name, "')");
  }
}

DType parity_dtype(c10::ScalarType type, const std::string& name) {
  switch (type) {
    case c10::kFloat: return DType::kFloat32;
    case c10::kDouble: return DType::kFloat64;
    case c10::kHalf: return DType::kFloat16;
    case c10::kBFloat16: return DType::kBFloat16;
    case c10::kChar: return DType::kInt8;
    case c10::kShort: return DType::kInt16;
    case c10::kInt: return DType::kInt32;
    case c10::kLong: return DType::kInt64;
    case c10::kByte: return DType::kUInt8;
    case c10::kBool: return DType::kBool;
    case c10::kComplexFloat: return DType::kComplex64;
    case c10::kComplexDouble: return DType::kComplex128;
    default: fail(ErrorCode::kUnsupported, "output '", name, "' has LibTorch dtype ", c10::toString(type),
                  ", which parity cannot hold");
  }
}

// One line out of a c10::Error: TorchScript wraps the real error ("RuntimeError: mat1 and mat2 shapes
// cannot be multiplied ...") after a traceback of the script; plain errors are their first line.
std::string torch_message(std::string m) {
  const std::string marker = "RuntimeError: ";
  if (const size_t pos = m.rfind(marker); pos != std::string::npos) m = m.substr(pos + marker.size());
  if (const size_t eol = m.find('\n'); eol != std::string::npos) m = m.substr(0, eol);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
  return m;
}

class TorchRunner final : public Runner {
 public:
  TorchRunner(std::string model_path, TorchRunnerOptions options)
      : Runner(make_runner_name("torch")), model_path_(std::move(model_path)), options_(std::move(options)) {}

 protected:
  void activate_impl() override;
  void deactivate_impl() override { module_.reset(); }
  TensorMetadata input_metadata_impl() override { return inputs_; }
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  void flatten(const c10::IValue& value, const std::string& key, std::vector<std::pair<std::string, at::Tensor>>& out);

  std::string model_path_;
  TorchRunnerOptions options_;
  std::optional<torch::jit::script::Module> module_;
  TensorMetadata inputs_;
};

void TorchRunner::activate_impl() {
  if (options_.threads > 0) at::set_num_threads(options_.threads);
  try {
    module_ = torch::jit::load(model_path_, c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    fail(ErrorCode::kInvalidModel, "LibTorch cannot load ", model_path_, " as TorchScript: ", torch_message(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    fail(ErrorCode::kInvalidModel, "LibTorch cannot load ", model_path_, " as TorchScript: ", torch_message(e.what()));
  }
  module_->eval();
  PARITY_CHECK(module_->find_method("forward"), kInvalidModel, model_path_, " has no forward() method");
  const auto& arguments = module_->get_method("forward").function().getSchema().arguments();
  inputs_ = TensorMetadata();
  std::vector<std::string> names;
  for (size_t i = 1; i < arguments.size(); ++i) names.push_back(arguments[i].name());  // [0] is self
  for (const auto& name : names) {
    DimShape shape;
    shape.unknown_rank = true;
    if (auto it = options_.shapes.find(name); it != options_.shapes.end())
      shape = it->second;
    else if (auto only = options_.shapes.find(""); only != options_.shapes.end() && names.size() == 1)
      shape = only->second;
    DType dtype = DType::kUndefined;
    if (auto it = options_.dtypes.find(name); it != options_.dtypes.end())
      dtype = it->second;
    else if (auto only = options_.dtypes.find(""); only != options_.dtypes.end() && names.size() == 1)
      dtype = only->second;
    inputs_.add(name, dtype, shape);
  }
  for (const auto& [name, shape] : options_.shapes)
    PARITY_CHECK(name.empty() || inputs_.contains(name), kInvalidArgument, "--input-shapes names '", name,
                 "', which is not an argument of forward() in ", model_path_, "; arguments: ", join_names(names));
}

void TorchRunner::flatten(const c10::IValue& value, const std::string& key,
                          std::vector<std::pair<std::string, at::Tensor>>& out) {
  if (value.isTensor()) {
    out.emplace_back(key, value.toTensor());
  } else if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) flatten(element, "", out);
  } else if (value.isList()) {
    for (const auto& element : value.toListRef()) flatten(element, "", out);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict())
      flatten(entry.value(), entry.key().isString() ? entry.key().toStringRef() : "", out);
  } else if (value.isDouble()) {
    out.emplace_back(key, at::scalar_tensor(value.toDouble(), at::kDouble));
  } else if (value.isInt()) {
    out.emplace_back(key, at::scalar_tensor(value.toInt(), at::kLong));
  } else if (value.isBool()) {
    out.emplace_back(key, at::scalar_tensor(value.toBool(), at::kBool));
  } else if (!value.isNone()) {
    fail(ErrorCode::kUnsupported, model_path_, ": forward() returned a ", value.tagKind(),
         ", which parity cannot compare");
  }
}

TensorMap TorchRunner::infer_impl(const TensorMap& feed) {
  std::vector<c10::IValue> args;
  for (const auto& meta : inputs_) {
    const Tensor* t = feed.find(meta.name);
    PARITY_CHECK(t, kInvalidArgument, "forward() of ", model_path_, " needs '", meta.name, "'; the feed has ",
                 join_names(feed.names()));
    PARITY_CHECK(t->dtype() != DType::kString, kUnsupported, "LibTorch has no string tensors (input '", meta.name, "')");
    const c10::ScalarType type = scalar_type(t->dtype(), meta.name);
    // Copy: LibTorch may keep or modify what it is given; parity's inputs are shared and const.
    args.emplace_back(torch::from_blob(const_cast<void*>(t->raw_data()), t->shape(), at::TensorOptions().dtype(type))
                          .clone());
  }
  c10::IValue result;
  try {
    torch::NoGradGuard no_grad;
    result = module_->forward(args);
  } catch (const c10::Error& e) {
    fail(ErrorCode::kRuntime, "LibTorch failed to run ", model_path_, ": ", torch_message(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    fail(ErrorCode::kRuntime, "LibTorch failed to run ", model_path_, ": ", torch_message(e.what()));
  }
  std::vector<std::pair<std::string, at::Tensor>> outputs;
  flatten(result, "", outputs);
  const auto& names = options_.output_names;
  PARITY_CHECK(names.empty() || names.size() == outputs.size(), kInvalidArgument, "--torch-output-names gives ",
               names.size(), " names but forward() of ", model_path_, " returned ", outputs.size(), " tensors");
  TensorMap out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = !names.empty() ? names[i] : outputs[i].first;
    if (name.empty() || out.contains(name)) name = "output_" + std::to_string(i);
    const at::Tensor dense = outputs[i].second.detach().to(c10::kCPU).contiguous();
    const DType dtype = parity_dtype(dense.scalar_type(), name);
    Shape shape(dense.sizes().begin(), dense.sizes().end());
    out.set(name, Tensor::from_bytes(dtype, shape, dense.data_ptr(), dense.numel() * dense.element_size()));
  }
  return out;
}

std::string torch_version() { return TORCH_VERSION; }

std::unique_ptr<Runner> create_torch_runner(const RunnerConfig& config) {
  return std::make_unique<TorchRunner>(config.model_path, config.options.get_or(TorchRunnerOptions{}));
}

}  // namespace
}  // namespace parity::runners

PARITY_PEER_MODULE(parity::runners::torch_version, parity::runners::create_torch_runner)
