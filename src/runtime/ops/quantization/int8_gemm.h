// Exact s8 x s8 products for int8 MatMul/Gemm layers where oneDNN's int8 kernels would saturate
// (CPUs without VNNI, runtime/dnnl/int8_inputs.h). Without VNNI oneDNN multiplies u8 x s8 with
// vpmaddubsw, whose int16 pair sums overflow, and shifts signed sources to u8 with 7-bit weights;
// the layers of a transformer read signed values everywhere. This kernel widens both operands to
// int16 and multiplies with vpmaddwd: each pair of products is summed straight into int32 (two
// products of at most 127 x 127 are far from int32's limit), so the sums are the exact integers
// at 16 multiply-adds per instruction, while the weights stay int8 in memory (a quarter of fp32's
// bytes, which is what a product of a few rows is bound by).
//
// The weights are packed once, at plan time, in the order the kernel reads them: blocks of
// kBlockColumns output columns, and within a block each pair of K rows as 16 columns x 2 int8
// values (column-major pairs), so that one 16-byte load sign-extended to int16 is one vpmaddwd
// operand. The source rows are quantized per run into int16 pairs. Variants per tier (KernelIsa):
// AVX2 (also on AVX-512 CPUs), and a portable loop; both are tested against reference_sums.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu_isa.h"

namespace parity::runtime::ops::int8_gemm {

/// Output columns per block of packed weights (two AVX2 registers of int32 sums).
constexpr int64_t kBlockColumns = 16;

/// Constant int8 weights of a K x N product, packed for the kernel.
class PackedS8Weights {
 public:
  PackedS8Weights() = default;
  /// `values`: K x N row-major, or N x K row-major when `nk` (Gemm's transB, nn.Linear).
  PackedS8Weights(const int8_t* values, int64_t k, int64_t n, bool nk);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  /// K rounded up to even: the source rows' length (the padding holds zeros).
  int64_t padded_k() const { return k_pairs_ * 2; }
  int64_t column_blocks() const { return (n_ + kBlockColumns - 1) / kBlockColumns; }
  /// The packed pairs of column block `b`: padded_k() / 2 pairs of kBlockColumns x 2 values.
  const int8_t* block(int64_t b) const { return data_.data() + b * k_pairs_ * 2 * kBlockColumns; }
  size_t size_bytes() const { return data_.size(); }

 private:
  int64_t k_ = 0, n_ = 0, k_pairs_ = 0;
  std::vector<int8_t> data_;
};

/// Source rows for the kernel: dst[r * padded_k + k] = clamp(round_even(src[r * k_dim + k] /
/// scale), -127, 127) as quantize_int8 computes it (by the reciprocal), zeros in the padding.
void quantize_rows(const float* src, int64_t rows, int64_t k_dim, int64_t padded_k, float scale, int16_t* dst,
                   KernelIsa isa);

/// How a tile of int32 sums leaves the kernel.
struct Output {
  /// Exact sums: sums[r * ld + j] (used when `y` is null).
  int32_t* sums = nullptr;
  /// Dequantized: y[r * ld + j] = float(sum) * scales[j] (+ bias[j] when bias is set).
  float* y = nullptr;
  const float* scales = nullptr;
  const float* bias = nullptr;
  int64_t ld = 0;
};

/// The products of `rows` source rows (quantize_rows' layout, row stride w.padded_k()) with the
/// weights' column blocks [block_begin, block_end), written through `out`; `isa` picks the variant.
void multiply(const int16_t* a, int64_t rows, const PackedS8Weights& w, int64_t block_begin, int64_t block_end,
              const Output& out, KernelIsa isa);

/// The oracle: c[r * n + j] = sum_k a[r * k_dim + k] * b(k, j) in int32, b as K x N (or N x K when
/// `nk`), plain loops.
void reference_sums(const int8_t* a, int64_t rows, const int8_t* b, int64_t k_dim, int64_t n, bool nk, int32_t* c);

/// Whether `isa` has a variant worth running in place of fp32 products (AVX2 or above).
inline bool pays_on(KernelIsa isa) { return isa >= KernelIsa::kAvx2; }

/// The variant `isa` runs, for plans and inspect: "avx2" or "portable".
const char* variant_name(KernelIsa isa);

}  // namespace parity::runtime::ops::int8_gemm
