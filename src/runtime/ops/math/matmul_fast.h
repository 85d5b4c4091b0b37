// Direct matrix-vector products for the optimized MatMul/Gemm kernels when the product is a few
// rows against constant weights (classifier heads, openWakeWord's 1x2400 by 2400x32 layers):
// there the per-call cost of a oneDNN primitive (memory objects, argument maps, streams) is
// several times the arithmetic, so a plain vectorized loop over weights kept as [N, K] rows (or,
// past kMaxTransposedWeights, read in place as [K, N]) is faster, and it splits between threads
// by output columns. Picked per call from the kernel's tier (KernelIsa): AVX-512, else AVX2+FMA, else a
// portable loop.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "runtime/cpu_isa.h"

namespace parity::runtime {
class KernelContext;
}

namespace parity::runtime::ops::small_gemm {

/// Products of at most this many rows take the direct path.
constexpr int64_t kMaxRows = 4;
/// bf16 layers take the direct (fp32) path only for weights of at most this many elements
/// (matmul_dnnl.cpp); larger ones stay on oneDNN's bf16 matmul, which reads half the bytes.
constexpr int64_t kMaxWeights = int64_t{1} << 20;
/// [K, N] weights of at most this many elements (16 MiB) are kept transposed as [N, K] rows,
/// which the loop streams faster than [K, N] ones (a decoder's 512 x 8000 vocabulary head);
/// larger ones are read in place, where a copy would double a large layer's memory.
constexpr int64_t kMaxTransposedWeights = int64_t{1} << 22;

/// y[r * ldy + j] = sum_k x[r * ldx + k] * w_nk[j * k_dim + k] for r < rows, j < n.
void multiply(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
              int64_t rows, KernelIsa isa);

/// y[r * ldy + j] = sum_k x[r * ldx + k] * w_kn[k * ldw + j] for r < rows, j < n: weights as the
/// model stores them ([K, N] rows of stride ldw; a column slice of wider weights when ldw > n).
void multiply_kn(const float* x, int64_t ldx, const float* w_kn, int64_t ldw, int64_t n, int64_t k_dim, float* y,
                 int64_t ldy, int64_t rows, KernelIsa isa);

/// The portable loop multiply_kn() falls back to on CPUs without AVX2/FMA (exposed for tests).
void multiply_kn_portable(const float* x, int64_t ldx, const float* w_kn, int64_t ldw, int64_t n, int64_t k_dim,
                          float* y, int64_t ldy, int64_t rows);

/// The portable loop multiply() falls back to on CPUs without AVX2/FMA (exposed for tests).
void multiply_portable(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
                       int64_t rows);

/// `weights` (rank >= 2, leading dims 1, [K, N] when !transposed, [N, K] when transposed) as a
/// dense [N, K] tensor: the same storage when already so laid out, else a transposed copy.
Tensor as_rows_of_k(const Tensor& weights, bool transposed);

/// Constant weights as the direct path reads them: [N, K] rows (multiply) where they are small or
/// already so laid out, else [K, N] in place (multiply_kn), where a transposed copy would double
/// a large layer's memory (a language model's vocabulary head).
class DirectWeights {
 public:
  /// `weights`: rank >= 2 with leading dims 1; [K, N] when !transposed, [N, K] when transposed.
  DirectWeights(const Tensor& weights, bool transposed, KernelIsa isa);
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  /// Output columns [begin, end) of y[rows, ldy] = x[rows, ldx] * W (y points at column 0).
  void multiply_columns(const float* x, int64_t ldx, int64_t rows, int64_t begin, int64_t end, float* y,
                        int64_t ldy) const;
  /// y[rows, N] (dense) = x[rows, ldx] * W, the output columns split over ctx's threads when the
  /// weights are many enough for the split to pay.
  void multiply_all(KernelContext& ctx, const float* x, int64_t ldx, int64_t rows, float* y) const;

 private:
  Tensor values_;  // [N, K] when rows_of_k_, else [K, N]
  bool rows_of_k_ = true;
  int64_t n_ = 0, k_ = 0;
  KernelIsa isa_;  // the vector tier the products run at
};

/// How many products took the direct path, process-wide (tests check that it ran).
uint64_t runs();

}  // namespace parity::runtime::ops::small_gemm
