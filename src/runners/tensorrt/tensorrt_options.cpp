// TensorRT's Polygraphy options, which a Polygraphy user types out of habit. parity has no
// TensorRT: its engine is the plan of its own runtime (`--plan`, `convert -o X.plan`), so each of
// these is refused with the parity option that does the closest job. TensorRT's build options
// that parity's plans share (--fp16, --int8, --layer-precisions, --trt-min-shapes, ...) are
// parity's own options and are not listed here.
#include "runners/registry.h"

namespace parity::runners {
namespace {

constexpr const char* kCpuOnly = "none (parity runs on the CPU)";
constexpr const char* kRebuild = "none (a plan is tied to the parity version and CPU that built it: rebuild it with "
                                 "`parity convert M.onnx -o X.plan`)";
constexpr const char* kScripts = "`parity template onnx-graph` (a C++ program that edits the model before the build)";

const AbsentRuntimeRegistrar kTensorRt({
    .runtime = "TensorRT",
    .runner_flags = {{{"--trt", "--trt-legacy"},
                      "--plan (builds parity's engine, a plan of its runtime, with convert's build options, and runs "
                      "it) or --ref"}},
    .options = {
        {{"--trt-outputs"}, "--onnx-outputs (also `--onnx-outputs mark all`)"},
        {{"--trt-exclude-outputs"}, "--onnx-exclude-outputs"},
        {{"--workspace", "--memory-pool-limit", "--pool-limit"},
         "none (a plan plans its own memory; `parity inspect model X.plan` shows it)"},
        {{"--tf32"}, "none (float32 layers compute in float32); --bf16 or --fp16 lower the precision"},
        {{"--fp8"}, "--int8 (calibrated int8 layers)"},
        {{"--quantization-flags"}, "--int8 with --calibration-algo"},
        {{"--calib-base-cls", "--calibration-base-class", "--quantile", "--regression-cutoff"},
         "--calibration-algo minmax|entropy"},
        {{"--sparse-weights"}, "`parity inspect sparsity` (finds 2:4-sparse weights)"},
        {{"--use-dla", "--allow-gpu-fallback", "--compute-capabilities", "--engine-capability",
          "--trt-safety-restricted", "--weight-streaming", "--weight-streaming-budget", "--allocation-strategy",
          "--disable-compilation-cache", "--preview-features", "--load-runtime"},
         kCpuOnly},
        {{"--plugins"}, "--extension (parity's extension modules) or --ort-custom-op-library"},
        {{"--plugin-instancenorm", "--onnx-flags"}, "none (parity reads ONNX models with its own importer)"},
        {{"--strongly-typed"}, "none (without --fp16/--bf16/--int8 a plan computes in the model's own types)"},
        {{"--direct-io", "--tensor-formats", "--tensor-dtypes", "--tensor-datatypes"},
         "none (a plan keeps the model's input and output types and layouts)"},
        {{"--refittable", "--version-compatible", "--exclude-lean-runtime", "--hardware-compatibility-level",
          "--runtime-platform"},
         kRebuild},
        {{"--strip-plan"}, "`parity surgeon weight-strip` (on the ONNX model)"},
        {{"--builder-optimization-level", "--tiling-optimization-level"}, "--time-tactics"},
        {{"--error-on-timing-cache-miss"}, "--load-timing-cache"},
        {{"--max-aux-streams"}, "--threads"},
        {{"--profiling-verbosity"}, "`parity inspect model X.plan` (every layer, its kernel and precision)"},
        {{"--mark-debug", "--mark-unfused-tensors-as-debug-tensors"}, "--onnx-outputs mark all"},
        {{"--trt-config-script", "--trt-config-func-name", "--trt-config-postprocess-script", "--trt-cpps",
          "--trt-network-func-name", "--trt-network-postprocess-script", "--trt-npps"},
         kScripts},
    },
});

}  // namespace
}  // namespace parity::runners
