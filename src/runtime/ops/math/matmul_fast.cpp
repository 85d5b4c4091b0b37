#include "runtime/ops/math/matmul_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/kernel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PARITY_SMALL_GEMM_AVX2 1
#endif

namespace parity::runtime::ops::small_gemm {
namespace {

std::atomic<uint64_t> g_runs{0};

/// Portable loop: eight partial sums per output so the compiler can keep them in a vector.
void multiply_baseline(const float* x, int64_t ldx, const float* w, int64_t n, int64_t k_dim, float* y, int64_t ldy,
                       int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t j = 0; j < n; ++j) {
      const float* wj = w + j * k_dim;
      float partial[8] = {};
      int64_t k = 0;
      for (; k + 8 <= k_dim; k += 8)
        for (int l = 0; l < 8; ++l) partial[l] += xr[k + l] * wj[k + l];
      float sum = 0.f;
      for (; k < k_dim; ++k) sum += xr[k] * wj[k];
      for (float p : partial) sum += p;
      y[r * ldy + j] = sum;
    }
  }
}

/// Outputs per pass of multiply_kn: rows x this many partial sums stay in L1 while the weights'
/// rows stream through, each read once.
constexpr int64_t kKnColumnBlock = 512;

void multiply_kn_baseline(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t n, int64_t k_dim,
                          float* y, int64_t ldy, int64_t rows) {
  for (int64_t j0 = 0; j0 < n; j0 += kKnColumnBlock) {
    const int64_t cols = std::min(kKnColumnBlock, n - j0);
    for (int64_t r = 0; r < rows; ++r) std::fill_n(y + r * ldy + j0, cols, 0.0f);
    for (int64_t k = 0; k < k_dim; ++k) {
      const float* wk = w + k * ldw + j0;
      for (int64_t r = 0; r < rows; ++r) {
        const float xv = x[r * ldx + k];
        float* yr = y + r * ldy + j0;
        for (int64_t j = 0; j < cols; ++j) yr[j] += xv * wk[j];
      }
    }
  }
}

#if PARITY_SMALL_GEMM_AVX2
/// Four rows of the weights per pass over a block of outputs: each partial sum is loaded and
/// stored once per four multiply-adds, and the four rows stream side by side.
__attribute__((target("avx2,fma"))) void multiply_kn_avx2(const float* x, int64_t ldx, const float* w, int64_t ldw,
                                                           int64_t n, int64_t k_dim, float* y, int64_t ldy,
                                                           int64_t rows) {
  for (int64_t j0 = 0; j0 < n; j0 += kKnColumnBlock) {
    const int64_t cols = std::min(kKnColumnBlock, n - j0), cols_vec = cols & ~int64_t{7};
    for (int64_t r = 0; r < rows; ++r) std::fill_n(y + r * ldy + j0, cols, 0.0f);
    int64_t k = 0;
    for (; k + 4 <= k_dim; k += 4) {
      const float* w0 = w + k * ldw + j0;
      const float* w1 = w0 + ldw;
      const float* w2 = w1 + ldw;
      const float* w3 = w2 + ldw;
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * ldx + k;
        const __m256 x0 = _mm256_set1_ps(xr[0]), x1 = _mm256_set1_ps(xr[1]);
        const __m256 x2 = _mm256_set1_ps(xr[2]), x3 = _mm256_set1_ps(xr[3]);
        float* yr = y + r * ldy + j0;
        int64_t j = 0;
        for (; j < cols_vec; j += 8) {
          __m256 acc = _mm256_loadu_ps(yr + j);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + j), x0, acc);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + j), x1, acc);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + j), x2, acc);
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + j), x3, acc);
          _mm256_storeu_ps(yr + j, acc);
        }
        for (; j < cols; ++j) yr[j] += xr[0] * w0[j] + xr[1] * w1[j] + xr[2] * w2[j] + xr[3] * w3[j];
      }
    }
    for (; k < k_dim; ++k) {
      const float* wk = w + k * ldw + j0;
      for (int64_t r = 0; r < rows; ++r) {
        const float xv = x[r * ldx + k];
        float* yr = y + r * ldy + j0;
        for (int64_t j = 0; j < cols; ++j) yr[j] += xv * wk[j];
      }
    }
  }
}

__attribute__((target("avx2,fma"))) inline float horizontal_sum(__m256 v) {
  const __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 shuffled = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  return _mm_cvtss_f32(_mm_add_ss(shuffled, _mm_shuffle_ps(shuffled, shuffled, 1)));
}

/// Two rows at once: each weight load serves both (the weights, not x, are what streams from
/// cache), four outputs per row share each load of x.
__attribute__((target("avx2,fma"))) void multiply_two_rows_avx2(const float* x0, const float* x1, const float* w,
                                                                  int64_t n, int64_t k_dim, float* y0, float* y1) {
  const int64_t k_vec = k_dim & ~int64_t{7};
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* w0 = w + j * k_dim;
    const float* w1 = w0 + k_dim;
    const float* w2 = w1 + k_dim;
    const float* w3 = w2 + k_dim;
    __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps(), a02 = _mm256_setzero_ps(), a03 = _mm256_setzero_ps();
    __m256 a10 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps(), a12 = _mm256_setzero_ps(), a13 = _mm256_setzero_ps();
    for (int64_t k = 0; k < k_vec; k += 8) {
      const __m256 xa = _mm256_loadu_ps(x0 + k), xb = _mm256_loadu_ps(x1 + k);
      const __m256 v0 = _mm256_loadu_ps(w0 + k), v1 = _mm256_loadu_ps(w1 + k);
      const __m256 v2 = _mm256_loadu_ps(w2 + k), v3 = _mm256_loadu_ps(w3 + k);
      a00 = _mm256_fmadd_ps(v0, xa, a00);
      a01 = _mm256_fmadd_ps(v1, xa, a01);
      a02 = _mm256_fmadd_ps(v2, xa, a02);
      a03 = _mm256_fmadd_ps(v3, xa, a03);
      a10 = _mm256_fmadd_ps(v0, xb, a10);
      a11 = _mm256_fmadd_ps(v1, xb, a11);
      a12 = _mm256_fmadd_ps(v2, xb, a12);
      a13 = _mm256_fmadd_ps(v3, xb, a13);
    }
    float s0[4] = {horizontal_sum(a00), horizontal_sum(a01), horizontal_sum(a02), horizontal_sum(a03)};
    float s1[4] = {horizontal_sum(a10), horizontal_sum(a11), horizontal_sum(a12), horizontal_sum(a13)};
    const float* ws[4] = {w0, w1, w2, w3};
    for (int c = 0; c < 4; ++c) {
      for (int64_t k = k_vec; k < k_dim; ++k) {
        s0[c] += x0[k] * ws[c][k];
        s1[c] += x1[k] * ws[c][k];
      }
      y0[j + c] = s0[c];
      y1[j + c] = s1[c];
    }
  }
  for (; j < n; ++j) {
    const float* wj = w + j * k_dim;
    __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
    for (int64_t k = 0; k < k_vec; k += 8) {
      const __m256 v = _mm256_loadu_ps(wj + k);
      a = _mm256_fmadd_ps(v, _mm256_loadu_ps(x0 + k), a);
      b = _mm256_fmadd_ps(v, _mm256_loadu_ps(x1 + k), b);
    }
    float sa = horizontal_sum(a), sb = horizontal_sum(b);
    for (int64_t k = k_vec; k < k_dim; ++k) {
      sa += x0[k] * wj[k];
      sb += x1[k] * wj[k];
    }
    y0[j] = sa;
    y1[j] = sb;
  }
}

/// Rows in pairs, then a last single row: four outputs at a time share each load of x; K's
/// remainder runs scalar.
__attribute__((target("avx2,fma"))) void multiply_avx2(const float* x, int64_t ldx, const float* w, int64_t n,
                                                        int64_t k_dim, float* y, int64_t ldy, int64_t rows) {
  const int64_t k_vec = k_dim & ~int64_t{7};
  int64_t first_single = 0;
  for (; first_single + 2 <= rows; first_single += 2)
    multiply_two_rows_avx2(x + first_single * ldx, x + (first_single + 1) * ldx, w, n, k_dim, y + first_single * ldy,
                           y + (first_single + 1) * ldy);
  for (int64_t r = first_single; r < rows; ++r) {
    const float* xr = x + r * ldx;
    float* yr = y + r * ldy;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float* w0 = w + j * k_dim;
      const float* w1 = w0 + k_dim;
      const float* w2 = w1 + k_dim;
      const float* w3 = w2 + k_dim;
      __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
      for (int64_t k = 0; k < k_vec; k += 8) {
        const __m256 xv = _mm256_loadu_ps(xr + k);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + k), xv, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + k), xv, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + k), xv, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + k), xv, a3);
      }
      float s0 = horizontal_sum(a0), s1 = horizontal_sum(a1), s2 = horizontal_sum(a2), s3 = horizontal_sum(a3);
      for (int64_t k = k_vec; k < k_dim; ++k) {
        s0 += xr[k] * w0[k];
        s1 += xr[k] * w1[k];
        s2 += xr[k] * w2[k];
        s3 += xr[k] * w3[k];
      }
      yr[j] = s0;
      yr[j + 1] = s1;
      yr[j + 2] = s2;
      yr[j + 3] = s3;
    }
    for (; j < n; ++j) {
      const float* wj = w + j * k_dim;
      __m256 a = _mm256_setzero_ps();
      for (int64_t k = 0; k < k_vec; k += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(wj + k), _mm256_loadu_ps(xr + k), a);
      float s = horizontal_sum(a);
      for (int64_t k = k_vec; k < k_dim; ++k) s += xr[k] * wj[k];
      yr[j] = s;
    }
  }
}

/// Weights of at least this many bytes per call come from L3 or memory rather than L2: there the
/// AVX-512 loop asks for the next four rows while it reads these.
constexpr int64_t kPrefetchBytes = int64_t{1} << 20;

/// The sum of the sixteen lanes, through memory: GCC 12's _mm512_reduce_add_ps and 256-bit
/// extracts warn of an uninitialized operand (-Wmaybe-uninitialized in its own headers).
__attribute__((target("avx512f"))) inline float lane_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  const __m256 eight = _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
}

/// `kOutputs` outputs (rows of the weights from `w`) for one or two rows (`kRows`) of x, sixteen
/// lanes, K's remainder through masked loads (`tail`, from `k_vec` on). With `kPrefetch` the next
/// `kOutputs` weight rows are requested one line per line read (a kv-cache decoder step's
/// 512 x 2048 layers and its 512 x 8000 vocabulary head streamed ~15% faster from memory on one
/// core than without).
template <int kRows, int kOutputs, bool kPrefetch>
__attribute__((target("avx512f"))) inline void dot_block_avx512(const float* x, int64_t ldx, const float* w,
                                                                 int64_t k_dim, int64_t k_vec, __mmask16 tail,
                                                                 float* y, int64_t ldy) {
  __m512 acc[kRows][kOutputs];
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kOutputs; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t k = 0; k < k_dim; k += 16) {
    const __mmask16 mask = k < k_vec ? __mmask16{0xFFFF} : tail;
    __m512 xv[kRows];
    for (int r = 0; r < kRows; ++r) xv[r] = _mm512_maskz_loadu_ps(mask, x + r * ldx + k);
    for (int c = 0; c < kOutputs; ++c) {
      const float* row = w + c * k_dim + k;
      if (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(row + kOutputs * k_dim), _MM_HINT_T0);
      const __m512 v = _mm512_maskz_loadu_ps(mask, row);
      for (int r = 0; r < kRows; ++r) acc[r][c] = _mm512_fmadd_ps(v, xv[r], acc[r][c]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kOutputs; ++c) y[r * ldy + c] = lane_sum(acc[r][c]);
}

/// One or two rows (`kRows`) of x against the weights' rows four outputs at a time, then the
/// remaining outputs one by one (without prefetching past the last rows).
template <int kRows, bool kPrefetch>
__attribute__((target("avx512f"))) void multiply_rows_avx512(const float* x, int64_t ldx, const float* w, int64_t n,
                                                              int64_t k_dim, float* y, int64_t ldy) {
  const int64_t k_vec = k_dim & ~int64_t{15};
  const __mmask16 tail = static_cast<__mmask16>((1u << (k_dim - k_vec)) - 1u);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    dot_block_avx512<kRows, 4, kPrefetch>(x, ldx, w + j * k_dim, k_dim, k_vec, tail, y + j, ldy);
  for (; j < n; ++j) dot_block_avx512<kRows, 1, false>(x, ldx, w + j * k_dim, k_dim, k_vec, tail, y + j, ldy);
}

/// Rows in pairs, then a last single row; prefetching where the weights outgrow L2.
template <bool kPrefetch>
void multiply_avx512_rows(const float* x, int64_t ldx, const float* w, int64_t n, int64_t k_dim, float* y,
                          int64_t ldy, int64_t rows) {
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) multiply_rows_avx512<2, kPrefetch>(x + r * ldx, ldx, w, n, k_dim, y + r * ldy, ldy);
  if (r < rows) multiply_rows_avx512<1, kPrefetch>(x + r * ldx, ldx, w, n, k_dim, y + r * ldy, ldy);
}

void multiply_avx512(const float* x, int64_t ldx, const float* w, int64_t n, int64_t k_dim, float* y, int64_t ldy,
                     int64_t rows) {
  if (n * k_dim * static_cast<int64_t>(sizeof(float)) >= kPrefetchBytes)
    multiply_avx512_rows<true>(x, ldx, w, n, k_dim, y, ldy, rows);
  else
    multiply_avx512_rows<false>(x, ldx, w, n, k_dim, y, ldy, rows);
}
#endif

using MultiplyFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t, int64_t);
using MultiplyKnFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t,
                              int64_t);

MultiplyKnFn pick_kn(KernelIsa isa) {
#if PARITY_SMALL_GEMM_AVX2
  if (isa >= KernelIsa::kAvx2) return multiply_kn_avx2;
#endif
  return multiply_kn_baseline;
}

MultiplyFn pick(KernelIsa isa) {
#if PARITY_SMALL_GEMM_AVX2
  if (isa >= KernelIsa::kAvx512) return multiply_avx512;
  if (isa >= KernelIsa::kAvx2) return multiply_avx2;
#endif
  return multiply_baseline;
}

}  // namespace

void multiply(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
              int64_t rows, KernelIsa isa) {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  pick(isa)(x, ldx, w_nk, n, k_dim, y, ldy, rows);
}

void multiply_kn(const float* x, int64_t ldx, const float* w_kn, int64_t ldw, int64_t n, int64_t k_dim, float* y,
                 int64_t ldy, int64_t rows, KernelIsa isa) {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  pick_kn(isa)(x, ldx, w_kn, ldw, n, k_dim, y, ldy, rows);
}

void multiply_kn_portable(const float* x, int64_t ldx, const float* w_kn, int64_t ldw, int64_t n, int64_t k_dim,
                          float* y, int64_t ldy, int64_t rows) {
  multiply_kn_baseline(x, ldx, w_kn, ldw, n, k_dim, y, ldy, rows);
}

DirectWeights::DirectWeights(const Tensor& weights, bool transposed, KernelIsa isa) : isa_(isa) {
  const Shape& s = weights.shape();
  rows_of_k_ = transposed || weights.numel() <= kMaxTransposedWeights;
  values_ = rows_of_k_ ? as_rows_of_k(weights, transposed) : weights.reshaped({s[s.size() - 2], s.back()});
  n_ = rows_of_k_ ? values_.dim(0) : values_.dim(1);
  k_ = rows_of_k_ ? values_.dim(1) : values_.dim(0);
}

void DirectWeights::multiply_columns(const float* x, int64_t ldx, int64_t rows, int64_t begin, int64_t end, float* y,
                                     int64_t ldy) const {
  const float* w = values_.data<float>();
  if (rows_of_k_) multiply(x, ldx, w + begin * k_, end - begin, k_, y + begin, ldy, rows, isa_);
  else multiply_kn(x, ldx, w + begin, n_, end - begin, k_, y + begin, ldy, rows, isa_);
}

void DirectWeights::multiply_all(KernelContext& ctx, const float* x, int64_t ldx, int64_t rows, float* y) const {
  // Each thread streams its own part of the weights: such a product is bound by reading them.
  // Below ~64K of them (~20 us) the hand-off to a polling worker (a few us) is no longer small
  // beside what the split saves.
  constexpr int64_t kMinParallelWeights = int64_t{1} << 16;
  if (ctx.num_threads() > 1 && n_ * k_ >= kMinParallelWeights && n_ >= 2 * ctx.num_threads()) {
    ctx.parallel_for(n_, [&](int64_t begin, int64_t end) { multiply_columns(x, ldx, rows, begin, end, y, n_); });
  } else {
    multiply_columns(x, ldx, rows, 0, n_, y, n_);
  }
}

Tensor as_rows_of_k(const Tensor& weights, bool transposed) {
  const Shape& s = weights.shape();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  if (transposed) return weights.reshaped({rows, cols});
  Tensor out = Tensor::uninitialized(DType::kFloat32, {cols, rows});
  const float* src = weights.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
  return out;
}

void multiply_portable(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
                       int64_t rows) {
  multiply_baseline(x, ldx, w_nk, n, k_dim, y, ldy, rows);
}

uint64_t runs() { return g_runs.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::ops::small_gemm
