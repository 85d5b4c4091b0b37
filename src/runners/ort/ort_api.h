// parity's own declaration of the part of ONNX Runtime's C ABI that the ORT runner uses.
//
// ONNX Runtime exports one symbol, OrtGetApiBase(); everything else is reached through OrtApi, a
// struct of function pointers whose order is fixed and only ever appended to across releases (the
// public onnxruntime_c_api.h documents it). parity ships no ORT header: it declares the entries it
// calls at their published positions and fills the entries in between with placeholders, so the
// library can be dlopened at run time without any build-time dependency. The static_asserts at the
// bottom pin every entry to its slot number.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parity::runners::ort {

/// The lowest OrtApi version that has every entry declared below (the generic
/// SessionOptionsAppendExecutionProvider, slot 216, arrived in ONNX Runtime 1.12).
inline constexpr uint32_t kRequiredApiVersion = 12;

extern "C" {

struct OrtStatus;
struct OrtEnv;
struct OrtMemoryInfo;
struct OrtSession;
struct OrtValue;
struct OrtRunOptions;
struct OrtTypeInfo;
struct OrtTensorTypeAndShapeInfo;
struct OrtSessionOptions;
struct OrtAllocator;
struct OrtCustomOpDomain;
struct OrtCustomOp;
struct OrtKernelContext;

/// Element types use ONNX's TensorProto numbering (0 undefined ... 16 bfloat16), as parity::DType does.
using OrtElementType = int;

enum OrtOnnxType : int {
  kOrtTypeUnknown = 0,
  kOrtTypeTensor = 1,
  kOrtTypeSequence = 2,
  kOrtTypeMap = 3,
  kOrtTypeOpaque = 4,
  kOrtTypeSparseTensor = 5,
  kOrtTypeOptional = 6,
};

enum OrtErrorCode : int {
  kOrtOk = 0,
  kOrtFail = 1,
  kOrtInvalidArgument = 2,
  kOrtNoSuchFile = 3,
  kOrtNoModel = 4,
  kOrtEngineError = 5,
  kOrtRuntimeException = 6,
  kOrtInvalidProtobuf = 7,
  kOrtModelLoaded = 8,
  kOrtNotImplemented = 9,
  kOrtInvalidGraph = 10,
  kOrtEpFail = 11,
};

enum OrtLoggingLevel : int {
  kOrtLogVerbose = 0,
  kOrtLogInfo = 1,
  kOrtLogWarning = 2,
  kOrtLogError = 3,
  kOrtLogFatal = 4,
};

enum OrtGraphOptimizationLevel : int {
  kOrtDisableAll = 0,
  kOrtEnableBasic = 1,
  kOrtEnableExtended = 2,
  kOrtEnableAll = 99,
};

enum OrtAllocatorType : int { kOrtDeviceAllocator = 0, kOrtArenaAllocator = 1 };
enum OrtMemType : int { kOrtMemTypeDefault = 0 };

struct OrtApi;

struct OrtApiBase {
  const OrtApi* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)();
};

using OrtGetApiBaseFn = const OrtApiBase* (*)();

/// OrtApi up to slot 216. Named members are the entries parity calls; `slots_A_B` placeholders
/// stand for entries A..B (inclusive) that parity does not use.
struct OrtApi {
  OrtStatus* (*CreateStatus)(OrtErrorCode code, const char* message);  // 0
  int (*GetErrorCode)(const OrtStatus* status);                // 1
  const char* (*GetErrorMessage)(const OrtStatus* status);     // 2
  OrtStatus* (*CreateEnv)(OrtLoggingLevel level, const char* log_id, OrtEnv** out);  // 3
  void* slots_4_6[3];  // CreateEnvWithCustomLogger, EnableTelemetryEvents, DisableTelemetryEvents
  OrtStatus* (*CreateSession)(const OrtEnv* env, const char* model_path, const OrtSessionOptions* options,
                              OrtSession** out);  // 7
  void* slot_8;  // CreateSessionFromArray
  OrtStatus* (*Run)(OrtSession* session, const OrtRunOptions* run_options, const char* const* input_names,
                    const OrtValue* const* inputs, size_t input_count, const char* const* output_names,
                    size_t output_count, OrtValue** outputs);  // 9
  OrtStatus* (*CreateSessionOptions)(OrtSessionOptions** out);  // 10
  // SetOptimizedModelFilePath, CloneSessionOptions, SetSessionExecutionMode, EnableProfiling,
  // DisableProfiling, EnableMemPattern, DisableMemPattern, EnableCpuMemArena, DisableCpuMemArena,
  // SetSessionLogId, SetSessionLogVerbosityLevel
  void* slots_11_21[11];
  OrtStatus* (*SetSessionLogSeverityLevel)(OrtSessionOptions* options, int level);  // 22
  OrtStatus* (*SetSessionGraphOptimizationLevel)(OrtSessionOptions* options,
                                                 OrtGraphOptimizationLevel level);  // 23
  OrtStatus* (*SetIntraOpNumThreads)(OrtSessionOptions* options, int threads);  // 24
  OrtStatus* (*SetInterOpNumThreads)(OrtSessionOptions* options, int threads);  // 25
  OrtStatus* (*CreateCustomOpDomain)(const char* domain, OrtCustomOpDomain** out);  // 26
  OrtStatus* (*CustomOpDomain_Add)(OrtCustomOpDomain* domain, const OrtCustomOp* op);  // 27
  OrtStatus* (*AddCustomOpDomain)(OrtSessionOptions* options, OrtCustomOpDomain* domain);  // 28
  /// dlopens a custom-op library and calls its RegisterCustomOps; the caller owns *library_handle.
  OrtStatus* (*RegisterCustomOpsLibrary)(OrtSessionOptions* options, const char* library_path,
                                         void** library_handle);  // 29
  OrtStatus* (*SessionGetInputCount)(const OrtSession* session, size_t* out);   // 30
  OrtStatus* (*SessionGetOutputCount)(const OrtSession* session, size_t* out);  // 31
  void* slot_32;  // SessionGetOverridableInitializerCount
  OrtStatus* (*SessionGetInputTypeInfo)(const OrtSession* session, size_t index, OrtTypeInfo** out);   // 33
  OrtStatus* (*SessionGetOutputTypeInfo)(const OrtSession* session, size_t index, OrtTypeInfo** out);  // 34
  void* slot_35;  // SessionGetOverridableInitializerTypeInfo
  OrtStatus* (*SessionGetInputName)(const OrtSession* session, size_t index, OrtAllocator* allocator,
                                    char** out);  // 36
  OrtStatus* (*SessionGetOutputName)(const OrtSession* session, size_t index, OrtAllocator* allocator,
                                     char** out);  // 37
  // SessionGetOverridableInitializerName, CreateRunOptions, RunOptionsSetRunLogVerbosityLevel,
  // RunOptionsSetRunLogSeverityLevel, RunOptionsSetRunTag, RunOptionsGetRunLogVerbosityLevel,
  // RunOptionsGetRunLogSeverityLevel, RunOptionsGetRunTag, RunOptionsSetTerminate, RunOptionsUnsetTerminate
  void* slots_38_47[10];
  OrtStatus* (*CreateTensorAsOrtValue)(OrtAllocator* allocator, const int64_t* shape, size_t rank,
                                       OrtElementType type, OrtValue** out);  // 48
  OrtStatus* (*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo* info, void* data, size_t data_bytes,
                                               const int64_t* shape, size_t rank, OrtElementType type,
                                               OrtValue** out);  // 49
  OrtStatus* (*IsTensor)(const OrtValue* value, int* out);            // 50
  OrtStatus* (*GetTensorMutableData)(OrtValue* value, void** out);    // 51
  OrtStatus* (*FillStringTensor)(OrtValue* value, const char* const* strings, size_t count);  // 52
  OrtStatus* (*GetStringTensorDataLength)(const OrtValue* value, size_t* out);  // 53
  OrtStatus* (*GetStringTensorContent)(const OrtValue* value, void* bytes, size_t bytes_len, size_t* offsets,
                                       size_t offsets_len);  // 54
  OrtStatus* (*CastTypeInfoToTensorInfo)(const OrtTypeInfo* type_info,
                                         const OrtTensorTypeAndShapeInfo** out);  // 55
  OrtStatus* (*GetOnnxTypeFromTypeInfo)(const OrtTypeInfo* type_info, OrtOnnxType* out);  // 56
  void* slots_57_59[3];  // CreateTensorTypeAndShapeInfo, SetTensorElementType, SetDimensions
  OrtStatus* (*GetTensorElementType)(const OrtTensorTypeAndShapeInfo* info, OrtElementType* out);  // 60
  OrtStatus* (*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);  // 61
  OrtStatus* (*GetDimensions)(const OrtTensorTypeAndShapeInfo* info, int64_t* dims, size_t count);  // 62
  OrtStatus* (*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo* info, const char** names,
                                      size_t count);  // 63
  void* slot_64;  // GetTensorShapeElementCount
  OrtStatus* (*GetTensorTypeAndShape)(const OrtValue* value, OrtTensorTypeAndShapeInfo** out);  // 65
  void* slot_66;  // GetTypeInfo
  OrtStatus* (*GetValueType)(const OrtValue* value, OrtOnnxType* out);  // 67
  void* slot_68;  // CreateMemoryInfo
  OrtStatus* (*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo** out);  // 69
  // CompareMemoryInfo, MemoryInfoGetName, MemoryInfoGetId, MemoryInfoGetMemType, MemoryInfoGetType,
  // AllocatorAlloc
  void* slots_70_75[6];
  OrtStatus* (*AllocatorFree)(OrtAllocator* allocator, void* p);  // 76
  void* slot_77;  // AllocatorGetInfo
  OrtStatus* (*GetAllocatorWithDefaultOptions)(OrtAllocator** out);  // 78
  // AddFreeDimensionOverride, GetValue, GetValueCount, CreateValue, CreateOpaqueValue, GetOpaqueValue,
  // KernelInfoGetAttribute_{float,int64,string}
  void* slots_79_87[9];
  OrtStatus* (*KernelContext_GetInputCount)(const OrtKernelContext* context, size_t* out);   // 88
  OrtStatus* (*KernelContext_GetOutputCount)(const OrtKernelContext* context, size_t* out);  // 89
  OrtStatus* (*KernelContext_GetInput)(const OrtKernelContext* context, size_t index, const OrtValue** out);  // 90
  OrtStatus* (*KernelContext_GetOutput)(OrtKernelContext* context, size_t index, const int64_t* dims,
                                        size_t dim_count, OrtValue** out);  // 91
  void (*ReleaseEnv)(OrtEnv*);                  // 92
  void (*ReleaseStatus)(OrtStatus*);            // 93
  void (*ReleaseMemoryInfo)(OrtMemoryInfo*);    // 94
  void (*ReleaseSession)(OrtSession*);          // 95
  void (*ReleaseValue)(OrtValue*);              // 96
  void* slot_97;                                // ReleaseRunOptions
  void (*ReleaseTypeInfo)(OrtTypeInfo*);        // 98
  void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo*);  // 99
  void (*ReleaseSessionOptions)(OrtSessionOptions*);                  // 100
  // ReleaseCustomOpDomain .. AddFreeDimensionOverrideByName (type info casts, model metadata,
  // global thread pools)
  void* slots_101_124[24];
  OrtStatus* (*GetAvailableProviders)(char*** out, int* count);      // 125
  OrtStatus* (*ReleaseAvailableProviders)(char** providers, int count);  // 126
  void* slots_127_129[3];  // GetStringTensorElementLength, GetStringTensorElement, FillStringTensorElement
  OrtStatus* (*AddSessionConfigEntry)(OrtSessionOptions* options, const char* key, const char* value);  // 130
  // CreateAllocator .. ReleaseOp (IO binding, sparse tensors, provider-specific options, custom
  // thread hooks, custom ops)
  void* slots_131_215[85];
  OrtStatus* (*SessionOptionsAppendExecutionProvider)(OrtSessionOptions* options, const char* provider_name,
                                                      const char* const* keys, const char* const* values,
                                                      size_t count);  // 216
};

}  // extern "C"

#define PARITY_ORT_SLOT(member, slot) \
  static_assert(offsetof(OrtApi, member) == (slot) * sizeof(void*), #member " must be OrtApi slot " #slot)
PARITY_ORT_SLOT(CreateStatus, 0);
PARITY_ORT_SLOT(GetErrorCode, 1);
PARITY_ORT_SLOT(GetErrorMessage, 2);
PARITY_ORT_SLOT(CreateEnv, 3);
PARITY_ORT_SLOT(CreateSession, 7);
PARITY_ORT_SLOT(Run, 9);
PARITY_ORT_SLOT(CreateSessionOptions, 10);
PARITY_ORT_SLOT(SetSessionLogSeverityLevel, 22);
PARITY_ORT_SLOT(SetSessionGraphOptimizationLevel, 23);
PARITY_ORT_SLOT(SetIntraOpNumThreads, 24);
PARITY_ORT_SLOT(SetInterOpNumThreads, 25);
PARITY_ORT_SLOT(CreateCustomOpDomain, 26);
PARITY_ORT_SLOT(CustomOpDomain_Add, 27);
PARITY_ORT_SLOT(AddCustomOpDomain, 28);
PARITY_ORT_SLOT(RegisterCustomOpsLibrary, 29);
PARITY_ORT_SLOT(SessionGetInputCount, 30);
PARITY_ORT_SLOT(SessionGetOutputCount, 31);
PARITY_ORT_SLOT(SessionGetInputTypeInfo, 33);
PARITY_ORT_SLOT(SessionGetOutputTypeInfo, 34);
PARITY_ORT_SLOT(SessionGetInputName, 36);
PARITY_ORT_SLOT(SessionGetOutputName, 37);
PARITY_ORT_SLOT(CreateTensorAsOrtValue, 48);
PARITY_ORT_SLOT(CreateTensorWithDataAsOrtValue, 49);
PARITY_ORT_SLOT(IsTensor, 50);
PARITY_ORT_SLOT(GetTensorMutableData, 51);
PARITY_ORT_SLOT(FillStringTensor, 52);
PARITY_ORT_SLOT(GetStringTensorDataLength, 53);
PARITY_ORT_SLOT(GetStringTensorContent, 54);
PARITY_ORT_SLOT(CastTypeInfoToTensorInfo, 55);
PARITY_ORT_SLOT(GetOnnxTypeFromTypeInfo, 56);
PARITY_ORT_SLOT(GetTensorElementType, 60);
PARITY_ORT_SLOT(GetDimensionsCount, 61);
PARITY_ORT_SLOT(GetDimensions, 62);
PARITY_ORT_SLOT(GetSymbolicDimensions, 63);
PARITY_ORT_SLOT(GetTensorTypeAndShape, 65);
PARITY_ORT_SLOT(GetValueType, 67);
PARITY_ORT_SLOT(CreateCpuMemoryInfo, 69);
PARITY_ORT_SLOT(AllocatorFree, 76);
PARITY_ORT_SLOT(GetAllocatorWithDefaultOptions, 78);
PARITY_ORT_SLOT(KernelContext_GetInputCount, 88);
PARITY_ORT_SLOT(KernelContext_GetOutputCount, 89);
PARITY_ORT_SLOT(KernelContext_GetInput, 90);
PARITY_ORT_SLOT(KernelContext_GetOutput, 91);
PARITY_ORT_SLOT(ReleaseEnv, 92);
PARITY_ORT_SLOT(ReleaseStatus, 93);
PARITY_ORT_SLOT(ReleaseMemoryInfo, 94);
PARITY_ORT_SLOT(ReleaseSession, 95);
PARITY_ORT_SLOT(ReleaseValue, 96);
PARITY_ORT_SLOT(ReleaseTypeInfo, 98);
PARITY_ORT_SLOT(ReleaseTensorTypeAndShapeInfo, 99);
PARITY_ORT_SLOT(ReleaseSessionOptions, 100);
PARITY_ORT_SLOT(GetAvailableProviders, 125);
PARITY_ORT_SLOT(ReleaseAvailableProviders, 126);
PARITY_ORT_SLOT(AddSessionConfigEntry, 130);
PARITY_ORT_SLOT(SessionOptionsAppendExecutionProvider, 216);
#undef PARITY_ORT_SLOT

}  // namespace parity::runners::ort
