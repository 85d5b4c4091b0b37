// BatchNormalization that changes layout while it normalizes (ops/nn/batch_norm_fast.cpp): it
// reads an NCHW image and writes it channels-last, so the oneDNN convolution after it gets the
// order it computes in without reordering its input. DenseNet's dense layers read the NCHW
// buffers their Concats share (runtime/rewrites/concat_placement.h); the layout change is folded
// into a pass the BatchNormalization makes over memory anyway.
//
// Why not channels-last shared buffers instead: a dense block's Concats are prefixes of its
// buffer, contiguous only in NCHW. In an NHWC buffer each Concat's output would be the first k
// channels of every pixel (a strided view), which every reader would have to take as such, and the
// 3x3 convolutions that write the slices compute in oneDNN's blocked layout (Winograd) and reorder
// their output anyway. Converting in the BatchNormalization removes the reorder where it costs:
// DenseNet-121, 1 thread, ONEDNN_VERBOSE: 61 NCHW -> channels-last reorders of 1x64..1x1024 maps
// (42 MB read and 42 MB written a run) before the 1x1 convolutions, gone; the 8 x 8 tiles cost no
// more than an NCHW pass (1x256x56x56 with Relu: 1.4 ms, a plain -O2 NCHW loop 2.1 ms).
#pragma once

#include <cstdint>

#include "runtime/cpu_isa.h"

namespace parity::runtime::nn {

/// y[p * channels + c] = x[c * pixels + p] * scale[c] + shift[c] (then Relu when `relu`, NaN
/// passing through as in the reference) for every channel c and the pixels p in [p_begin, p_end)
/// of one image: the same multiply, then add, as the NCHW loop, so results agree bit for bit.
/// Runs the AVX2 tiles where `isa` has them, the portable loop otherwise.
void scale_shift_to_channels_last(const float* x, const float* scale, const float* shift, bool relu, int64_t channels,
                                  int64_t pixels, int64_t p_begin, int64_t p_end, float* y, KernelIsa isa);

/// The portable loop (what CPUs without AVX2 run); tests compare the two.
void scale_shift_to_channels_last_portable(const float* x, const float* scale, const float* shift, bool relu,
                                           int64_t channels, int64_t pixels, int64_t p_begin, int64_t p_end, float* y);

}  // namespace parity::runtime::nn
