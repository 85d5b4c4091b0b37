#pragma once
// A vectorized in-place Swish (x * sigmoid(alpha * x)) for the convolution kernels' outputs.
//
// oneDNN 2.6 applies a Swish post-op with a division per vector inside its convolution stores;
// on EfficientNet-B0 that was about a quarter of the model's time. The convolution kernel runs
// the primitive without it and calls this on the output rows it wrote (conv_dnnl.cpp).

#include <cstdint>

#include "runtime/cpu_isa.h"

namespace parity::runtime::nn {

/// Whether swish_in_place runs a vectorized (AVX-512 or AVX2) loop at `isa`; below it is a scalar loop,
/// slower than oneDNN's post-op, and callers keep the post-op instead.
bool fast_swish_available(KernelIsa isa);

/// data[i] = data[i] * sigmoid(alpha * data[i]) for i in [0, n). Relative error about 1e-6
/// (float32 rounding of the polynomial exp and one Newton step of the reciprocal).
/// The AVX-512 or AVX2 loop where `isa` has it (fast_swish_available), the scalar one otherwise.
void swish_in_place(float* data, int64_t n, float alpha, KernelIsa isa);

}  // namespace parity::runtime::nn
