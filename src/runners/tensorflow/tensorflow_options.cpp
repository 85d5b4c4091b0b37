// TensorFlow's Polygraphy options. parity runs ONNX models only, so each is refused with the
// parity option that does the closest job on the model exported to ONNX (tf2onnx).
#include "runners/registry.h"

namespace parity::runners {
namespace {

constexpr const char* kExport = "none: export the model to ONNX (tf2onnx) and give parity the .onnx file";

const AbsentRuntimeRegistrar kTensorFlow({
    .runtime = "TensorFlow",
    .runner_flags = {{{"--tf"}, "--ort or --ref on the model exported to ONNX (tf2onnx)"}},
    .options = {
        {{"--tf-outputs"}, "--onnx-outputs"},
        {{"--ckpt", "--freeze-graph"}, kExport},
        {{"--tftrt", "--use-tftrt", "--minimum-segment-size", "--dynamic-op"}, "--plan on the model exported to ONNX"},
        {{"--save-pb", "--save-tensorboard"}, "--save-onnx"},
        {{"--allow-growth", "--gpu-memory-fraction", "--xla"}, "none (parity runs on the CPU)"},
        {{"--save-timeline"}, "`parity bench` (timings per runner)"},
    },
});

}  // namespace
}  // namespace parity::runners
