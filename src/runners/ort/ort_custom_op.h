// ONNX Runtime's custom-operator ABI, declared by parity from ORT's public C header
// (onnxruntime_c_api.h), for writing ORT custom-op libraries without ORT's headers, e.g. to give an
// extension's custom-domain op to the ort runner as well (`--ort-custom-op-library`).
//
// ORT opens such a library with dlopen and calls its exported
//   extern "C" OrtStatus* RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* api_base);
// which creates a domain (OrtApi::CreateCustomOpDomain), adds OrtCustomOp descriptions to it
// (CustomOpDomain_Add) and attaches it to the options (AddCustomOpDomain). The domain and the
// OrtCustomOp structs must outlive every session that uses them.
//
// OrtCustomOp only grows across ORT releases; its `version` field tells ORT how much of it the
// library filled. kOrtCustomOpVersion (13) ends at GetInputMemoryType: all that is declared here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runners/ort/ort_api.h"

namespace parity::runners::ort {

extern "C" {

struct OrtKernelInfo;

/// The OrtCustomOp version whose layout is declared below.
inline constexpr uint32_t kOrtCustomOpVersion = 13;

/// Characteristic of a custom op's input or output.
enum OrtCustomOpInputOutputCharacteristic : int { kOrtInputOutputRequired = 0, kOrtInputOutputOptional = 1 };

struct OrtCustomOp {
  uint32_t version;  // kOrtCustomOpVersion
  /// Creates the kernel object passed to KernelCompute/KernelDestroy.
  void* (*CreateKernel)(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info);
  const char* (*GetName)(const OrtCustomOp* op);
  /// nullptr: the CPU execution provider.
  const char* (*GetExecutionProviderType)(const OrtCustomOp* op);
  OrtElementType (*GetInputType)(const OrtCustomOp* op, size_t index);
  size_t (*GetInputTypeCount)(const OrtCustomOp* op);
  OrtElementType (*GetOutputType)(const OrtCustomOp* op, size_t index);
  size_t (*GetOutputTypeCount)(const OrtCustomOp* op);
  void (*KernelCompute)(void* op_kernel, OrtKernelContext* context);
  void (*KernelDestroy)(void* op_kernel);
  OrtCustomOpInputOutputCharacteristic (*GetInputCharacteristic)(const OrtCustomOp* op, size_t index);
  OrtCustomOpInputOutputCharacteristic (*GetOutputCharacteristic)(const OrtCustomOp* op, size_t index);
  OrtMemType (*GetInputMemoryType)(const OrtCustomOp* op, size_t index);
};

/// The entry point ORT calls in a custom-op library.
using OrtRegisterCustomOpsFn = OrtStatus* (*)(OrtSessionOptions* options, const OrtApiBase* api_base);

}  // extern "C"

static_assert(offsetof(OrtCustomOp, GetInputMemoryType) == 12 * sizeof(void*),
              "OrtCustomOp version 13 has 12 function pointers after the version field");

}  // namespace parity::runners::ort
