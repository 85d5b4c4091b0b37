// Reduced-precision layers of a plan (parity convert --fp16/--bf16/--int8): which layers run in
// which precision, and the kernel wrapper that makes them do so.
//
// What a reduced-precision layer computes, and where fp32 remains:
// - fp16 / bf16: every float input (activations and weights) is rounded to the type (round to
//   nearest even, overflow to inf, as a GPU engine stores tensors between layers), the layer
//   computes with fp32 accumulation (the products of two fp16 or bf16 values are exact in fp32,
//   so this is what tensor cores with an fp32 accumulator give), and its outputs are rounded to
//   the type again. Fused tails (activations, residual adds) run inside the layer before the
//   output rounding, as in a fused GPU epilogue. On a CPU with AVX512-BF16 the oneDNN convolution
//   runs bf16 natively (vdpbf16ps); fp16 has no arithmetic on such CPUs, so fp16 layers round
//   their operands and compute in fp32 (same numbers, no speed-up).
// - int8: Conv/ConvTranspose/MatMul/Gemm only. Activation inputs are quantized symmetrically
//   per tensor with the calibrated range (scale = amax / 127, clamped to [-127, 127]); constant
//   weights per output channel from their own range. The output is fp32 (dequantized: the int32
//   sum times activation scale times weight scale), the bias is added in fp32. Kernels with a
//   native int8 path (NativeInt8Kernel: oneDNN's s8 convolution and matmul, VNNI on AVX512)
//   take the int8 values and accumulate in int32; the others (the reference kernels, the oracle)
//   compute in fp32 on the fake-quantized operands, which equals int32 accumulation while the sum
//   stays below 2^24 in magnitude.
// A value produced by a layer of the same type is already rounded, so its readers do not round
// it again; constant inputs are rounded once, at build time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime {

class Subgraph;
struct PlannedNode;

/// How strictly per-layer precisions are honoured (TensorRT's precision constraints).
enum class PrecisionConstraints {
  kNone,    ///< --layer-precisions are ignored; the builder picks from the enabled types
  kPrefer,  ///< a layer runs in its requested precision when it can, else in the builder's choice (warned)
  kObey,    ///< a layer that cannot run in its requested precision fails the build
};

/// Reduced-precision settings of a build.
struct ReducedPrecisionConfig {
  bool fp16 = false;  ///< Let layers run in float16.
  bool bf16 = false;  ///< Let layers run in bfloat16.
  bool int8 = false;  ///< Let Conv/ConvTranspose/MatMul/Gemm run in int8 (needs int8_scales for their activations).
  /// Node name -> kFloat32, kFloat16, kBFloat16 or kInt8.
  std::map<std::string, DType> layer_precisions;
  PrecisionConstraints constraints = PrecisionConstraints::kPrefer;  ///< How strictly layer_precisions are honoured.
  /// Calibrated int8 scale (|max| / 127) per tensor name: the activation ranges.
  std::map<std::string, float> int8_scales;

  bool enabled() const { return fp16 || bf16 || int8 || !layer_precisions.empty(); }  ///< True when any layer may run in reduced precision.
};

/// "fp32", "fp16", "bf16", "int8" (kFloat32 for layers that are not reduced).
std::string precision_name(DType precision);
/// Parses "fp32|float32|fp16|float16|bf16|bfloat16|int8"; nullopt otherwise.
std::optional<DType> parse_precision(const std::string& text);

/// Rounds `n` floats in place to the nearest float16 (kFloat16) or bfloat16 (kBFloat16) value,
/// ties to even, values beyond float16's range to +-inf (AVX2/F16C when the CPU has them).
void round_floats_to(DType type, float* data, int64_t n);
/// Quantizes `n` floats in place to scale * clamp(round_even(x * (1 / scale)), -127, 127).
void fake_quantize_int8(float* data, int64_t n, float scale);
/// The int8 values of fake_quantize_int8: dst[i] = clamp(round_even(src[i] * (1 / scale)), -127, 127)
/// (0 for a scale that is not a positive finite number).
void quantize_int8(const float* src, int8_t* dst, int64_t n, float scale);
/// Per-channel int8 weights: `weights` as int8 values along `axis` (per tensor when axis < 0)
/// and each channel's scale, amax / 127 as reduce_constant quantizes them. A tensor that is
/// already fake-quantized (make_reduced_precision_init's constants) gives back its exact
/// integers and scales.
struct QuantizedWeights {
  Tensor values;              ///< kInt8, the shape of `weights`
  std::vector<float> scales;  ///< one per channel along the axis (one when per tensor)
};
/// Quantizes `weights` per channel along `axis` (per tensor when axis < 0); see QuantizedWeights.
QuantizedWeights quantize_weights_int8(const Tensor& weights, int64_t axis);

/// Whether a node is a floating-point compute layer that may run in reduced precision (not a
/// shape, index or data-movement op, and its first input is float32).
bool is_reducible_layer(const NodeSpec& spec, DType input0_dtype);
/// Whether a node has an int8 path (Conv, ConvTranspose, MatMul, Gemm).
bool has_int8_path(const NodeSpec& spec);
/// The inputs of an int8 layer that are quantized (its data operands, not the bias).
std::vector<size_t> int8_operand_inputs(const NodeSpec& spec);
/// For an int8 layer's constant operand `input`: the axis its per-channel scales run along.
int64_t int8_weight_axis(const NodeSpec& spec, size_t input, int64_t rank);

/// The precision a layer is built in; throws kInvalidArgument (with --precision-constraints obey)
/// for a requested precision the layer cannot take. `warn` receives the prefer-mode fallbacks.
DType choose_layer_precision(const NodeSpec& spec, DType input0_dtype, const ReducedPrecisionConfig& config,
                             std::vector<std::string>* warnings);

/// Implemented by the KernelInit of a reduced-precision layer (make_reduced_precision_init): the
/// precision the layer is built in. The wrapper already rounds the operands; a kernel with a
/// native path for the type (oneDNN's bf16 convolution) finds it through dynamic_cast and may
/// take it, others compute in fp32 on the rounded operands.
class ReducedPrecisionSource {
 public:
  virtual ~ReducedPrecisionSource() = default;
  virtual DType compute_precision() const = 0;  ///< The precision the layer is built in (kFloat16, kBFloat16 or kInt8).
};

/// An optimized kernel that computes an int8 layer natively: int8 operands, int32 accumulation,
/// dequantized fp32 output. The wrapper then hands it the fp32 activations as they are, with
/// their scales, instead of fake-quantized copies; the kernel quantizes them itself (and
/// fake-quantizes them for any run-time fallback to the reference kernels).
class NativeInt8Kernel {
 public:
  virtual ~NativeInt8Kernel() = default;
  /// `scales`: input index -> activation scale. Returns true when the kernel takes every one of
  /// them natively; false leaves the kernel computing in fp32 on fake-quantized inputs.
  virtual bool take_int8_scales(const std::map<size_t, float>& scales) = 0;
  /// Whether the kernel runs int8 natively (after take_int8_scales accepted).
  virtual bool runs_int8() const = 0;
};

/// kFloat32, or the precision `init` of a reduced-precision layer asks for.
inline DType compute_precision_of(const KernelInit& init) {
  const auto* source = dynamic_cast<const ReducedPrecisionSource*>(&init);
  return source ? source->compute_precision() : DType::kFloat32;
}

/// A plan-time KernelInit for a reduced-precision layer: the same node, whose constant inputs
/// read as rounded (fp16/bf16) or fake-quantized (int8) and whose compute_precision() is the
/// layer's. Forwards everything else (and PackedStateSource) to `base`.
std::unique_ptr<KernelInit> make_reduced_precision_init(const KernelInit& base, DType precision);

/// Wraps a layer's kernel so that it computes in `precision` (see the file comment). The wrapper
/// forwards fusion, channels-last hand-off and packed state to `inner`. `int8_scales`: input
/// index -> activation scale (int8 layers).
std::unique_ptr<Kernel> wrap_reduced_precision(std::unique_ptr<Kernel> inner, const NodeSpec& spec, DType precision,
                                               std::map<size_t, float> int8_scales);

/// The wrapped kernel's per-input activation scales (empty for other kernels).
const std::map<size_t, float>* int8_scales_of(const Kernel& kernel);
/// Whether `kernel` (a wrapped int8 layer) computes with int8 kernels rather than in fp32 on
/// fake-quantized operands.
bool runs_native_int8(const Kernel& kernel);
/// Whether this CPU has int8 kernels that sum exactly (oneDNN with VNNI; see
/// dnnl_support::int8_sums_exactly): elsewhere int8 layers compute in fp32 on fake-quantized
/// operands, the same numbers while a sum stays below 2^24, without the speed-up.
bool native_int8_available();

/// After planning or loading: tells each wrapped layer which inputs are already in its precision
/// (produced by a layer of the same type) and pre-rounds its constant inputs.
void finalize_reduced_precision(Subgraph& g);

}  // namespace parity::runtime
