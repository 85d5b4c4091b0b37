// Direct matrix-vector products for the optimized MatMul/Gemm kernels when the product is a few
// rows against constant weights (classifier heads, openWakeWord's 1x2400 by 2400x32 layers):
// there the per-call cost of a oneDNN primitive (memory objects, argument maps, streams) is
// several times the arithmetic, so a plain vectorized loop over weights kept as [N, K] rows is
// faster. Picked at run time: AVX2+FMA when the CPU has it, else a portable loop.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace parity::runtime::ops::small_gemm {

/// Products of at most this many rows take the direct path.
constexpr int64_t kMaxRows = 4;
/// Weights of at most this many elements are kept (transposed if needed) for the direct path.
constexpr int64_t kMaxWeights = int64_t{1} << 20;

/// y[r * ldy + j] = sum_k x[r * ldx + k] * w_nk[j * k_dim + k] for r < rows, j < n.
void multiply(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
              int64_t rows);

/// The portable loop multiply() falls back to on CPUs without AVX2/FMA (exposed for tests).
void multiply_portable(const float* x, int64_t ldx, const float* w_nk, int64_t n, int64_t k_dim, float* y, int64_t ldy,
                       int64_t rows);

/// `weights` (rank >= 2, leading dims 1, [K, N] when !transposed, [N, K] when transposed) as a
/// dense [N, K] tensor: the same storage when already so laid out, else a transposed copy.
Tensor as_rows_of_k(const Tensor& weights, bool transposed);

/// How many products took the direct path, process-wide (tests check that it ran).
uint64_t runs();

}  // namespace parity::runtime::ops::small_gemm
