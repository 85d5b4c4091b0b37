// Two questions about reduced-precision layers (runtime/reduced_precision.h) that the plan file's
// weight storage and convert's precision notes ask, kept out of that widely included header.
#pragma once

#include <cstddef>

#include "core/dtype.h"
#include "runtime/kernel.h"

namespace parity::runtime {

/// Whether a layer built in `precision` reduces its float input `input` (rounds it to fp16/bf16,
/// or quantizes it as an int8 data operand); false for fp32 layers.
bool reduces_layer_input(const NodeSpec& head, DType precision, size_t input);

/// Whether oneDNN computes bf16 layers natively here (AVX512_BF16 or AMX-BF16 within its ISA cap);
/// elsewhere bf16 layers compute in fp32 on rounded operands.
bool native_bf16_available();

}  // namespace parity::runtime
