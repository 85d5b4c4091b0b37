#pragma once
// The activation both direct convolution loops (conv_pointwise_fast.cpp, conv_depthwise_fast.cpp)
// apply to their outputs: one value at a time in their portable loops, 16 at a time in registers
// in their AVX-512 loops.

#include <algorithm>

#include "runtime/ops/nn/conv_pointwise_fast.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace parity::runtime::nn {

inline float activate(float v, const PointwiseEpilogue& e) {
  using Activation = PointwiseEpilogue::Activation;
  switch (e.activation) {
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kClip: return std::min(std::max(v, e.lo), e.hi);
    case Activation::kHardSwish: return v * std::max(0.f, std::min(1.f, v / 6.f + 0.5f));
    default: return v;
  }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"), always_inline)) inline __m512 activate_vector(__m512 v, const PointwiseEpilogue& e) {
  using Activation = PointwiseEpilogue::Activation;
  switch (e.activation) {
    case Activation::kRelu: return _mm512_max_ps(v, _mm512_setzero_ps());
    case Activation::kClip: return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(e.lo)), _mm512_set1_ps(e.hi));
    case Activation::kHardSwish: {
      // v * clamp(v / 6 + 0.5, 0, 1); times 1/6 rather than a division (as oneDNN's post-op):
      // within an ulp of the reference's gate, and a division per vector would cost more than the
      // rest of the epilogue.
      const __m512 gate = _mm512_fmadd_ps(v, _mm512_set1_ps(1.f / 6.f), _mm512_set1_ps(0.5f));
      return _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(gate, _mm512_setzero_ps()), _mm512_set1_ps(1.f)));
    }
    default: return v;
  }
}
#endif

}  // namespace parity::runtime::nn
