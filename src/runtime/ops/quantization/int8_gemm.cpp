#include "runtime/ops/quantization/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PARITY_INT8_GEMM_AVX2 1
#endif

namespace parity::runtime::ops::int8_gemm {

PackedS8Weights::PackedS8Weights(const int8_t* values, int64_t k, int64_t n, bool nk)
    : k_(k), n_(n), k_pairs_((k + 1) / 2) {
  data_.assign(static_cast<size_t>(column_blocks() * k_pairs_ * 2 * kBlockColumns), int8_t{0});
  for (int64_t b = 0; b < column_blocks(); ++b) {
    int8_t* out = data_.data() + b * k_pairs_ * 2 * kBlockColumns;
    for (int64_t p = 0; p < k_pairs_; ++p)
      for (int64_t c = 0; c < kBlockColumns; ++c) {
        const int64_t j = b * kBlockColumns + c;
        if (j >= n) continue;
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t kk = 2 * p + h;
          if (kk < k) out[(p * kBlockColumns + c) * 2 + h] = nk ? values[j * k + kk] : values[kk * n + j];
        }
      }
  }
}

namespace {

int16_t quantize_one(float x, float inverse) {
  return static_cast<int16_t>(std::clamp(std::nearbyint(x * inverse), -127.0f, 127.0f));
}

#if PARITY_INT8_GEMM_AVX2
__attribute__((target("avx2"))) int64_t quantize_row_avx2(const float* src, int64_t k_dim, float inverse,
                                                          int16_t* dst) {
  const __m256 inv = _mm256_set1_ps(inverse), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  int64_t k = 0;
  for (; k + 8 <= k_dim; k += 8) {
    __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(src + k), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    const __m256i v = _mm256_cvtps_epi32(q);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + k),
                     _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  }
  return k;
}
#endif

}  // namespace

void quantize_rows(const float* src, int64_t rows, int64_t k_dim, int64_t padded_k, float scale, int16_t* dst,
                   KernelIsa isa) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = src + r * k_dim;
    int16_t* q = dst + r * padded_k;
    std::fill(q + k_dim, q + padded_k, int16_t{0});
    if (!(scale > 0) || !std::isfinite(scale)) {
      std::fill(q, q + k_dim, int16_t{0});
      continue;
    }
    const float inverse = 1.0f / scale;
    if (!std::isfinite(inverse)) {  // subnormal scale: divide, as quantize_int8 does
      for (int64_t k = 0; k < k_dim; ++k)
        q[k] = static_cast<int16_t>(std::clamp(std::nearbyint(x[k] / scale), -127.0f, 127.0f));
      continue;
    }
    int64_t k = 0;
#if PARITY_INT8_GEMM_AVX2
    if (isa >= KernelIsa::kAvx2) k = quantize_row_avx2(x, k_dim, inverse, q);
#endif
    for (; k < k_dim; ++k) q[k] = quantize_one(x[k], inverse);
  }
  (void)isa;
}

namespace {

/// Source rows per pass over the column blocks: their int16 copy stays in L2 while each block's
/// weights are read once per pass (a multiple of the tile's 6 rows).
constexpr int64_t kRowChunk = 60;

/// Writes one row of a tile: `sums` holds kBlockColumns values of which the first `valid` count.
void store_row(const int32_t* sums, int64_t row, int64_t col0, int64_t valid, const Output& out) {
  if (!out.y) {
    std::memcpy(out.sums + row * out.ld + col0, sums, static_cast<size_t>(valid) * sizeof(int32_t));
    return;
  }
  float* y = out.y + row * out.ld + col0;
  for (int64_t c = 0; c < valid; ++c) {
    const float v = static_cast<float>(sums[c]) * out.scales[col0 + c];
    y[c] = out.bias ? v + out.bias[col0 + c] : v;
  }
}

void multiply_portable(const int16_t* a, int64_t rows, const PackedS8Weights& w, int64_t block_begin,
                       int64_t block_end, const Output& out) {
  const int64_t pairs = w.padded_k() / 2, lda = w.padded_k();
  for (int64_t b = block_begin; b < block_end; ++b) {
    const int8_t* wb = w.block(b);
    const int64_t col0 = b * kBlockColumns, valid = std::min(kBlockColumns, w.n() - col0);
    for (int64_t r = 0; r < rows; ++r) {
      int32_t sums[kBlockColumns] = {};
      const int16_t* x = a + r * lda;
      for (int64_t p = 0; p < pairs; ++p) {
        const int8_t* wp = wb + p * 2 * kBlockColumns;
        for (int64_t c = 0; c < kBlockColumns; ++c) sums[c] += x[2 * p] * wp[2 * c] + x[2 * p + 1] * wp[2 * c + 1];
      }
      store_row(sums, r, col0, valid, out);
    }
  }
}

#if PARITY_INT8_GEMM_AVX2

/// Writes row `row` of a tile from its two registers of int32 sums (columns col0 ..).
__attribute__((target("avx2,fma"))) inline void store_tile_row(__m256i lo, __m256i hi, int64_t row, int64_t col0,
                                                               int64_t valid, const Output& out) {
  if (valid == kBlockColumns && out.y) {
    float* y = out.y + row * out.ld + col0;
    const __m256 s0 = _mm256_loadu_ps(out.scales + col0), s1 = _mm256_loadu_ps(out.scales + col0 + 8);
    const __m256 v0 = _mm256_cvtepi32_ps(lo), v1 = _mm256_cvtepi32_ps(hi);
    if (out.bias) {
      _mm256_storeu_ps(y, _mm256_fmadd_ps(v0, s0, _mm256_loadu_ps(out.bias + col0)));
      _mm256_storeu_ps(y + 8, _mm256_fmadd_ps(v1, s1, _mm256_loadu_ps(out.bias + col0 + 8)));
    } else {
      _mm256_storeu_ps(y, _mm256_mul_ps(v0, s0));
      _mm256_storeu_ps(y + 8, _mm256_mul_ps(v1, s1));
    }
    return;
  }
  alignas(32) int32_t sums[kBlockColumns];
  _mm256_store_si256(reinterpret_cast<__m256i*>(sums), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8), hi);
  store_row(sums, row, col0, valid, out);
}

/// MR rows x kBlockColumns columns: per pair of K, two 16-byte weight loads widened to int16, one
/// broadcast source pair per row, one vpmaddwd per row and half-block (MR = 6: twelve int32
/// accumulators, the most AVX2's sixteen registers hold beside the weights and the source).
/// The accumulators are named variables, each row's pinned in registers after its update: held in
/// an array, GCC 12 kept them on the stack (a load and a store per multiply-add, 2.4x slower on a
/// 960 x 240 x 240 product).
template <int MR>
__attribute__((target("avx2,fma"))) void tile_avx2(const int16_t* a, int64_t lda, const int8_t* wb, int64_t pairs,
                                                   int64_t row0, int64_t col0, int64_t valid, const Output& out) {
  static_assert(MR >= 1 && MR <= 6);
  const __m256i zero = _mm256_setzero_si256();
  __m256i c00 = zero, c01 = zero, c10 = zero, c11 = zero, c20 = zero, c21 = zero;
  __m256i c30 = zero, c31 = zero, c40 = zero, c41 = zero, c50 = zero, c51 = zero;
  for (int64_t p = 0; p < pairs; ++p) {
    const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 32 * p)));
    const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 32 * p + 16)));
#define PARITY_INT8_GEMM_ROW(i)                                                  \
    if constexpr (MR > i) {                                                      \
      int32_t pair;                                                              \
      std::memcpy(&pair, a + i * lda + 2 * p, sizeof pair);                      \
      const __m256i x = _mm256_set1_epi32(pair);                                 \
      c##i##0 = _mm256_add_epi32(c##i##0, _mm256_madd_epi16(x, w0));             \
      c##i##1 = _mm256_add_epi32(c##i##1, _mm256_madd_epi16(x, w1));             \
      __asm__("" : "+x"(c##i##0), "+x"(c##i##1));                                \
    }
    PARITY_INT8_GEMM_ROW(0)
    PARITY_INT8_GEMM_ROW(1)
    PARITY_INT8_GEMM_ROW(2)
    PARITY_INT8_GEMM_ROW(3)
    PARITY_INT8_GEMM_ROW(4)
    PARITY_INT8_GEMM_ROW(5)
#undef PARITY_INT8_GEMM_ROW
  }
  store_tile_row(c00, c01, row0, col0, valid, out);
  if constexpr (MR > 1) store_tile_row(c10, c11, row0 + 1, col0, valid, out);
  if constexpr (MR > 2) store_tile_row(c20, c21, row0 + 2, col0, valid, out);
  if constexpr (MR > 3) store_tile_row(c30, c31, row0 + 3, col0, valid, out);
  if constexpr (MR > 4) store_tile_row(c40, c41, row0 + 4, col0, valid, out);
  if constexpr (MR > 5) store_tile_row(c50, c51, row0 + 5, col0, valid, out);
}

void multiply_avx2(const int16_t* a, int64_t rows, const PackedS8Weights& w, int64_t block_begin, int64_t block_end,
                   const Output& out) {
  const int64_t pairs = w.padded_k() / 2, lda = w.padded_k();
  for (int64_t chunk = 0; chunk < rows; chunk += kRowChunk) {
    const int64_t chunk_end = std::min(rows, chunk + kRowChunk);
    for (int64_t b = block_begin; b < block_end; ++b) {
      const int8_t* wb = w.block(b);
      const int64_t col0 = b * kBlockColumns, valid = std::min(kBlockColumns, w.n() - col0);
      int64_t r = chunk;
      for (; r + 6 <= chunk_end; r += 6) tile_avx2<6>(a + r * lda, lda, wb, pairs, r, col0, valid, out);
      switch (chunk_end - r) {
        case 5: tile_avx2<5>(a + r * lda, lda, wb, pairs, r, col0, valid, out); break;
        case 4: tile_avx2<4>(a + r * lda, lda, wb, pairs, r, col0, valid, out); break;
        case 3: tile_avx2<3>(a + r * lda, lda, wb, pairs, r, col0, valid, out); break;
        case 2: tile_avx2<2>(a + r * lda, lda, wb, pairs, r, col0, valid, out); break;
        case 1: tile_avx2<1>(a + r * lda, lda, wb, pairs, r, col0, valid, out); break;
        default: break;
      }
    }
  }
}

#endif  // PARITY_INT8_GEMM_AVX2

}  // namespace

void multiply(const int16_t* a, int64_t rows, const PackedS8Weights& w, int64_t block_begin, int64_t block_end,
              const Output& out, KernelIsa isa) {
#if PARITY_INT8_GEMM_AVX2
  if (isa >= KernelIsa::kAvx2) return multiply_avx2(a, rows, w, block_begin, block_end, out);
#endif
  (void)isa;
  multiply_portable(a, rows, w, block_begin, block_end, out);
}

void reference_sums(const int8_t* a, int64_t rows, const int8_t* b, int64_t k_dim, int64_t n, bool nk, int32_t* c) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t k = 0; k < k_dim; ++k) sum += int32_t{a[r * k_dim + k]} * (nk ? b[j * k_dim + k] : b[k * n + j]);
      c[r * n + j] = sum;
    }
}

const char* variant_name(KernelIsa isa) {
#if PARITY_INT8_GEMM_AVX2
  if (isa >= KernelIsa::kAvx2) return "avx2";
#endif
  (void)isa;
  return "portable";
}

}  // namespace parity::runtime::ops::int8_gemm
