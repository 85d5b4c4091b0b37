#include "runtime/ops/nn/swish_fast.h"

#include <algorithm>
#include <cmath>

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_SWISH_X86 1
#endif

namespace parity::runtime::nn {
namespace {

void swish_scalar(float* data, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) data[i] = data[i] / (1.0f + std::exp(-alpha * data[i]));
}

#if PARITY_SWISH_X86
/// exp(t) for t in [-87.3, 87.3] (callers clamp): 2^k * p(r) with t = k*ln2 + r, |r| <= ln2/2,
/// p a degree-6 Taylor polynomial (error < 2e-7 relative on that interval).
__attribute__((target("avx512f"))) inline __m512 exp_avx512(__m512 t) {
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = t - k*ln2 with ln2 split in two parts so the subtraction stays exact.
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), t);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}

__attribute__((target("avx512f"))) inline __m512 swish_vector(__m512 x, __m512 alpha) {
  // e = exp(-alpha*x), clamped so it stays finite; sigmoid = 1 / (1 + e) by a reciprocal estimate
  // and one Newton step (a division costs more than the whole polynomial on AVX-512).
  // Where alpha*x < -87 the sigmoid underflows: the result is x * 0 (NaN stays NaN).
  const __m512 ax = _mm512_mul_ps(x, alpha);
  const __mmask16 underflow = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(-87.0f), _CMP_LT_OQ);
  const __m512 t = _mm512_min_ps(_mm512_max_ps(ax, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(87.0f));
  const __m512 d = _mm512_add_ps(exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), t)), _mm512_set1_ps(1.0f));
  __m512 inv = _mm512_rcp14_ps(d);
  inv = _mm512_mul_ps(inv, _mm512_fnmadd_ps(d, inv, _mm512_set1_ps(2.0f)));
  inv = _mm512_mask_mov_ps(inv, underflow, _mm512_setzero_ps());
  return _mm512_mul_ps(x, inv);
}

__attribute__((target("avx512f"))) void swish_avx512(float* data, int64_t n, float alpha) {
  const __m512 a = _mm512_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two independent vectors per step hide the FMA latency
    const __m512 x0 = _mm512_loadu_ps(data + i), x1 = _mm512_loadu_ps(data + i + 16);
    _mm512_storeu_ps(data + i, swish_vector(x0, a));
    _mm512_storeu_ps(data + i + 16, swish_vector(x1, a));
  }
  for (; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 mask = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(mask, data + i);
    _mm512_mask_storeu_ps(data + i, mask, swish_vector(x, a));
  }
}

/// exp_avx512's polynomial on 8 lanes; 2^k is built in the exponent bits (k stays in [-126, 126]
/// for the clamped t, so the result is a normal float).
__attribute__((target("avx2,fma"))) inline __m256 exp_avx2(__m256 t) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), t);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i two_k = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(two_k));
}

/// swish_vector on 8 lanes. The reciprocal estimate has 12 bits here (14 on AVX-512); one Newton
/// step still brings it to float precision.
__attribute__((target("avx2,fma"))) inline __m256 swish_vector_avx2(__m256 x, __m256 alpha) {
  const __m256 ax = _mm256_mul_ps(x, alpha);
  const __m256 underflow = _mm256_cmp_ps(ax, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  const __m256 t = _mm256_min_ps(_mm256_max_ps(ax, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(87.0f));
  const __m256 d = _mm256_add_ps(exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), t)), _mm256_set1_ps(1.0f));
  __m256 inv = _mm256_rcp_ps(d);
  inv = _mm256_mul_ps(inv, _mm256_fnmadd_ps(d, inv, _mm256_set1_ps(2.0f)));
  inv = _mm256_andnot_ps(underflow, inv);
  return _mm256_mul_ps(x, inv);
}

__attribute__((target("avx2,fma"))) void swish_avx2(float* data, int64_t n, float alpha) {
  const __m256 a = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(data + i), x1 = _mm256_loadu_ps(data + i + 8);
    _mm256_storeu_ps(data + i, swish_vector_avx2(x0, a));
    _mm256_storeu_ps(data + i + 8, swish_vector_avx2(x1, a));
  }
  if (i < n) {  // the tail through a zero-padded copy: AVX2 has no masked float stores worth the setup
    float tail[16] = {};
    const int64_t left = n - i;
    std::copy(data + i, data + n, tail);
    _mm256_storeu_ps(tail, swish_vector_avx2(_mm256_loadu_ps(tail), a));
    _mm256_storeu_ps(tail + 8, swish_vector_avx2(_mm256_loadu_ps(tail + 8), a));
    std::copy(tail, tail + left, data + i);
  }
}
#endif

}  // namespace

bool fast_swish_available(KernelIsa isa) {
#if PARITY_SWISH_X86
  return isa >= KernelIsa::kAvx2;
#else
  (void)isa;
  return false;
#endif
}

void swish_in_place(float* data, int64_t n, float alpha, KernelIsa isa) {
#if PARITY_SWISH_X86
  if (isa >= KernelIsa::kAvx512) {
    swish_avx512(data, n, alpha);
    return;
  }
  if (isa >= KernelIsa::kAvx2) {
    swish_avx2(data, n, alpha);
    return;
  }
#endif
  swish_scalar(data, n, alpha);
}

}  // namespace parity::runtime::nn
