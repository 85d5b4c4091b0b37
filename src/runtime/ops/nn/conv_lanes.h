#pragma once
// The vector operations the direct convolution loops (depthwise, pointwise, stem) are written
// in, once per tier: 16 lanes of AVX-512 or 8 of AVX2 + FMA. Each loop's body is one template
// over these (conv_*_fast.inc), compiled once per tier under that tier's target so that neither
// instantiation can use the other's instructions. A third set, Emulated16Lanes, runs the AVX-512
// schedule (16 lanes, the same blocking) on AVX2 + FMA, so that its block shapes and tails are
// tested on CPUs without AVX-512 (DirectLoopSchedule in conv_pointwise_fast.h).

#include <cstdint>

#include "runtime/ops/nn/conv_pointwise_fast.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_CONV_LANES_X86 1

namespace parity::runtime::nn {

#define PARITY_LANES_AVX512 __attribute__((target("avx512f"), always_inline))
#define PARITY_LANES_AVX2 __attribute__((target("avx2,fma"), always_inline))

/// The AVX-512 tier's blocking, shared by Avx512Lanes and Emulated16Lanes so that the emulation
/// runs exactly the schedule AVX-512 machines run.
struct Avx512Blocking {
  static constexpr int kWidth = 16;
  /// Accumulators a register-blocked loop keeps (of 32 registers, leaving room for its operands).
  static constexpr int kAccumulators = 24;
  /// Pixels per block when a block is one vector of channels wide.
  static constexpr int kSingleVectorPixels = 16;
  /// Channel vectors per block of the broadcasting loops (pointwise, channels-last stem).
  static constexpr int kMaxVectors = 4;
  /// Output channels x pixel vectors per block of the stem's NCHW-output loop.
  static constexpr int kPlanarChannels = 8, kPlanarVectors = 3;

  /// The first n lanes as a bit mask (lane i is bit i), n in [0, kWidth].
  static constexpr uint16_t first_bits(int64_t n) { return static_cast<uint16_t>(n >= 16 ? 0xFFFF : (1u << n) - 1); }
};

struct Avx512Lanes : Avx512Blocking {
  using Vec = __m512;
  using Mask = __mmask16;

  /// The first n lanes, n in [0, kWidth].
  PARITY_LANES_AVX512 static Mask first(int64_t n) { return first_bits(n); }
  PARITY_LANES_AVX512 static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  PARITY_LANES_AVX512 static Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  PARITY_LANES_AVX512 static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  PARITY_LANES_AVX512 static void store(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  PARITY_LANES_AVX512 static Vec set1(float v) { return _mm512_set1_ps(v); }
  PARITY_LANES_AVX512 static Vec zero() { return _mm512_setzero_ps(); }
  PARITY_LANES_AVX512 static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  PARITY_LANES_AVX512 static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  PARITY_LANES_AVX512 static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  PARITY_LANES_AVX512 static Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  PARITY_LANES_AVX512 static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
};

struct Avx2Lanes {
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kWidth = 8;
  static constexpr int kAccumulators = 12;  // of 16 registers
  static constexpr int kSingleVectorPixels = 12;
  static constexpr int kMaxVectors = 2;
  static constexpr int kPlanarChannels = 6, kPlanarVectors = 2;

  PARITY_LANES_AVX2 static Mask first(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  PARITY_LANES_AVX2 static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  // Masked-off lanes are not read (no fault past the end of a buffer) and come back as zeros.
  PARITY_LANES_AVX2 static Vec load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  PARITY_LANES_AVX2 static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  PARITY_LANES_AVX2 static void store(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  PARITY_LANES_AVX2 static Vec set1(float v) { return _mm256_set1_ps(v); }
  PARITY_LANES_AVX2 static Vec zero() { return _mm256_setzero_ps(); }
  PARITY_LANES_AVX2 static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  PARITY_LANES_AVX2 static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  PARITY_LANES_AVX2 static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  PARITY_LANES_AVX2 static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  PARITY_LANES_AVX2 static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
};

/// 16 lanes as two AVX2 halves, the mask as AVX-512's (one bit per lane): what the AVX-512 tier
/// computes, lane for lane (the same fused multiply-adds in the same order), on AVX2 + FMA.
struct Emulated16Lanes : Avx512Blocking {
  struct Vec {
    __m256 lo, hi;
  };
  using Mask = uint16_t;

  PARITY_LANES_AVX2 static Mask first(int64_t n) { return first_bits(n); }
  /// The lanes of one half whose bits are set in the low 8 bits of `bits`, as maskload's mask.
  PARITY_LANES_AVX2 static __m256i half(unsigned bits) {
    const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(bits)), lane_bits), lane_bits);
  }
  PARITY_LANES_AVX2 static Vec load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  // As AVX-512's masked load: masked-off lanes are not read and come back as zeros.
  PARITY_LANES_AVX2 static Vec load(const float* p, Mask m) {
    return {_mm256_maskload_ps(p, half(m & 0xFFu)), _mm256_maskload_ps(p + 8, half(m >> 8u))};
  }
  PARITY_LANES_AVX2 static void store(float* p, Vec v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  PARITY_LANES_AVX2 static void store(float* p, Vec v, Mask m) {
    _mm256_maskstore_ps(p, half(m & 0xFFu), v.lo);
    _mm256_maskstore_ps(p + 8, half(m >> 8u), v.hi);
  }
  PARITY_LANES_AVX2 static Vec set1(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
  PARITY_LANES_AVX2 static Vec zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  PARITY_LANES_AVX2 static Vec fmadd(Vec a, Vec b, Vec c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  PARITY_LANES_AVX2 static Vec add(Vec a, Vec b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  PARITY_LANES_AVX2 static Vec mul(Vec a, Vec b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  PARITY_LANES_AVX2 static Vec min(Vec a, Vec b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  PARITY_LANES_AVX2 static Vec max(Vec a, Vec b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
};

#undef PARITY_LANES_AVX512
#undef PARITY_LANES_AVX2

}  // namespace parity::runtime::nn

#endif
