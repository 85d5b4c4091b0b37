// bf16 storage between native bf16 layers of a reduced-precision plan (runtime/reduced_precision.h).
//
// A bf16 layer normally hands out an fp32 buffer holding bf16-rounded values, so a native bf16
// reader (oneDNN's convolution on AVX512-BF16) converts it back to bf16 before computing, and the
// writer pays a rounding pass: two passes over every activation between two bf16 convolutions.
// When every reader of a value reads it natively in bf16, the writer stores it as a bf16 tensor
// instead (the same numbers: the writer rounds to nearest even once) and the readers take it as
// is. Values that a graph output, a non-native layer or an observer (hooks, intermediate
// outputs: they run the unfused plan) sees stay fp32.
#pragma once

#include <cstddef>
#include <string>

#include "core/dtype.h"

namespace parity::runtime {

class Kernel;
class Subgraph;

/// Implemented by kernels with a native reduced-precision path (and forwarded by the
/// reduced-precision wrapper).
class ReducedStorageKernel {
 public:
  virtual ~ReducedStorageKernel() = default;
  /// Whether input `input` may arrive as a bf16 tensor (the kernel computes on it directly).
  virtual bool reads_reduced_input(size_t input) const = 0;
  /// Whether output 0 can be written as a bf16 tensor.
  virtual bool can_write_reduced() const = 0;
  /// From now on, output 0 is written as a bf16 tensor.
  virtual void write_reduced() = 0;
};

/// int8 storage between native int8 layers, the same idea: a native int8 layer whose output only
/// native int8 layers read (as an operand quantized with that value's calibrated scale) writes
/// the int8 values itself, requantizing in its epilogue (output scale, fused tails, then
/// round(v / scale) clamped to [-127, 127]), and the readers compute on them without a quantize
/// pass; a layer whose fused tails end in a Relu or a Clip from >= 0 writes them as u8 (values
/// 0..127, the same numbers). Values with any other reader stay fp32 (dequantized).
class Int8StorageKernel {
 public:
  virtual ~Int8StorageKernel() = default;
  /// Whether input `input` may arrive as an int8 or uint8 tensor of the input's calibrated scale.
  virtual bool reads_int8_input(size_t input) const = 0;
  /// Whether output 0 can be written as int8 values.
  virtual bool can_write_int8() const = 0;
  /// From now on, output 0 holds the int8 (or, when non-negative, uint8) values of the output
  /// quantized with `scale`.
  virtual void write_int8(float scale) = 0;
  /// kInt8 or kUInt8 after write_int8, kUndefined while output 0 is fp32.
  virtual DType int8_output_dtype() const = 0;
  /// Whether every value of output 0 is >= 0 (its fused tails end in a Relu or a Clip from >= 0),
  /// whatever its type.
  virtual bool output_non_negative() const = 0;
  /// Input 0 is known to be >= 0 (its producer's output_non_negative), quantized with `scale`:
  /// the layer may quantize it to u8 (values 0..127). On a CPU without VNNI this is what makes
  /// the int8 kernels exact (u8 x s8 pairs of at most 2 x 127 x 127 never saturate the int16 sums
  /// of vpmaddubsw), so a layer that computed in fp32 there starts running int8. Returns whether
  /// the layer now runs int8 natively.
  virtual bool take_non_negative_source(float scale) = 0;
  /// The source type of the int8 kernel (kUInt8 or kInt8), kUndefined when it does not run int8.
  virtual DType int8_source_dtype() const = 0;
};

/// A quantized fp32 hand-off into layers that compute in fp32 on quantized values (no VNNI, a
/// signed source): where every reader of a layer's output quantizes it with the same scale, the
/// writer rounds its output to that grid in its epilogue, while each tile is in cache, and the
/// readers skip their quantization pass over the whole map. Quantizing twice gives the same
/// values (q * s * (1 / s) rounds back to q), so the numbers are those of the plain hand-off.
class QuantizedOutputKernel {
 public:
  virtual ~QuantizedOutputKernel() = default;
  /// Whether output 0 can be written rounded to an int8 grid.
  virtual bool can_write_quantized() const = 0;
  /// From now on, output 0 holds clamp(round(v / scale), -127, 127) * scale (fp32).
  virtual void write_quantized(float scale) = 0;
  /// The scale of write_quantized, 0 while output 0 is written as computed.
  virtual float quantized_output_scale() const = 0;
};

/// Implemented by native int8 kernels other than oneDNN's (which plans name with oneDNN's ISA).
class Int8EngineKernel {
 public:
  virtual ~Int8EngineKernel() = default;
  /// The int8 kernel that runs, for plans and inspect ("parity s8s8 avx2"); "" when oneDNN's.
  virtual std::string int8_engine() const = 0;
};

/// How a native int8 layer of a reduced-precision plan computes, "u8 x s8 -> s32 -> u8": its
/// source type, int32 sums, and the type it writes (fp32 dequantized, or int8 storage); ""
/// for other kernels.
std::string int8_dataflow(const Kernel& kernel);
/// The int8 kernel a native int8 layer runs when it is not oneDNN's ("parity s8s8 avx2"), else "".
std::string int8_engine(const Kernel& kernel);

/// Lets every bf16 layer whose output only native bf16 readers see store it in bf16 (main graph of a
/// fused plan, after finalize_reduced_precision), and every native int8 layer whose output only
/// native int8 readers see store it in int8 (Int8StorageKernel). Returns how many values are
/// stored so.
int store_reduced_between_native_layers(Subgraph& g);

}  // namespace parity::runtime
