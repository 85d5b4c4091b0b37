#include "runtime/ops/nn/conv_int8_pointwise.h"

#include <algorithm>
#include <cmath>

#include "runtime/buffer_pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PARITY_INT8_POINTWISE_AVX2 1
#endif

namespace parity::runtime::nn {

namespace int8_gemm = ops::int8_gemm;

Int8PointwiseProduct::Int8PointwiseProduct(const int8_t* weights, int64_t out_channels, int64_t in_channels,
                                           std::vector<float> weight_scales, KernelIsa isa)
    : weights_(weights, in_channels, out_channels, /*nk=*/true), weight_scales_(std::move(weight_scales)), isa_(isa) {
  output_scales_ = weight_scales_;
}

void Int8PointwiseProduct::set_source_scale(float scale) {
  source_scale_ = scale;
  output_scales_.resize(weight_scales_.size());
  for (size_t c = 0; c < weight_scales_.size(); ++c) output_scales_[c] = scale * weight_scales_[c];
}

std::string Int8PointwiseProduct::engine() const {
  return std::string("parity s8s8 ") + int8_gemm::variant_name(isa_);
}

int64_t Int8PointwiseProduct::tile_rows() const {
  constexpr int64_t kTileOutputValues = int64_t{1} << 14;  // 64 KB of fp32 output
  const int64_t rows = (kTileOutputValues / std::max<int64_t>(1, out_channels()) + 23) / 24 * 24;
  return std::clamp<int64_t>(rows, 48, 240);
}

namespace {

#if PARITY_INT8_POINTWISE_AVX2
/// The 8 x 8 block of floats at `src` (rows src_stride apart) transposed into `dst`.
__attribute__((target("avx2"))) inline void transpose_floats_8x8(const float* src, int64_t src_stride, float* dst,
                                                          int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

/// dst[j * dst_stride + i] = src[i * src_stride + j] for a rows x cols block, in 8 x 8 blocks;
/// returns without touching the remainders past the last whole block of each dimension.
__attribute__((target("avx2"))) void transpose_float_blocks(const float* src, int64_t src_stride, int64_t rows, int64_t cols,
                                                      float* dst, int64_t dst_stride) {
  for (int64_t i = 0; i + 8 <= rows; i += 8)
    for (int64_t j = 0; j + 8 <= cols; j += 8) transpose_floats_8x8(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
}

/// For 8 channels [c0, c0 + 8) and pixels [i0, i0 + 8) of NCHW planes (`stride` apart): the
/// quantized values as 8 rows of 8 int16 (row stride lda), as quantize_rows rounds and clamps.
__attribute__((target("avx2"))) inline void quantize_transposed_8x8(const float* planes, int64_t stride, float inverse,
                                                                    int16_t* a, int64_t lda) {
  alignas(32) float block[64];
  transpose_floats_8x8(planes, stride, block, 8);
  const __m256 inv = _mm256_set1_ps(inverse), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  for (int i = 0; i < 8; ++i) {
    __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_load_ps(block + 8 * i), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    const __m256i v = _mm256_cvtps_epi32(q);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(a + i * lda), _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  }
}
#endif

/// dst[j * dst_stride + i] = src[i * src_stride + j] for a rows x cols block: whole 8 x 8 blocks
/// in AVX2 registers where the tier has it, the remainders of both dimensions element by element.
void transpose_floats(const float* src, int64_t src_stride, int64_t rows, int64_t cols, float* dst, int64_t dst_stride,
                      KernelIsa isa) {
  int64_t whole_rows = 0, whole_cols = 0;
#if PARITY_INT8_POINTWISE_AVX2
  if (isa >= KernelIsa::kAvx2) {
    transpose_float_blocks(src, src_stride, rows, cols, dst, dst_stride);
    whole_rows = rows / 8 * 8;
    whole_cols = cols / 8 * 8;
  }
#endif
  (void)isa;
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = src + i * src_stride;
    for (int64_t j = i < whole_rows ? whole_cols : 0; j < cols; ++j) dst[j * dst_stride + i] = row[j];
  }
}

/// rows[i * channels + c] = planes[c * stride + i] for n rows: an NCHW run of n pixels as rows.
void gather_nchw_rows(const float* planes, int64_t stride, int64_t n, int64_t channels, float* rows, KernelIsa isa) {
  transpose_floats(planes, stride, channels, n, rows, channels, isa);
}

/// planes[c * stride + i] = rows[i * channels + c]: n rows back into an NCHW run of n pixels.
void scatter_nchw_rows(const float* rows, int64_t n, int64_t channels, float* planes, int64_t stride, KernelIsa isa) {
  transpose_floats(rows, channels, n, channels, planes, stride, isa);
}

}  // namespace

void Int8PointwiseProduct::quantize_tile(const Maps& maps, int64_t image, int64_t pixel, int64_t n, int16_t* a,
                                         Scratch& scratch) const {
  const int64_t in = in_channels(), padded_k = weights_.padded_k();
  if (!maps.x_nchw) {
    int8_gemm::quantize_rows(maps.x + (image * maps.pixels + pixel) * in, n, in, padded_k, source_scale_, a, isa_);
    return;
  }
  // Transposed tile by tile while in cache: converting the whole map first took as long as the
  // product. AVX2: 8 x 8 blocks of channels and pixels transposed in registers and quantized.
  const float* first = maps.x + image * in * maps.pixels + pixel;
  int64_t whole_c = 0, whole_n = 0;
#if PARITY_INT8_POINTWISE_AVX2
  const float inverse = 1.0f / source_scale_;
  if (isa_ >= KernelIsa::kAvx2 && source_scale_ > 0 && std::isfinite(source_scale_) && std::isfinite(inverse)) {
    whole_c = in / 8 * 8;
    whole_n = n / 8 * 8;
    for (int64_t i = 0; i < whole_n; i += 8)
      for (int64_t c = 0; c < whole_c; c += 8)
        quantize_transposed_8x8(first + c * maps.pixels + i, maps.pixels, inverse, a + i * padded_k + c, padded_k);
  }
#endif
  if (whole_c == in && whole_n == n) {
    if (padded_k > in)
      for (int64_t i = 0; i < n; ++i) std::fill(a + i * padded_k + in, a + (i + 1) * padded_k, int16_t{0});
    return;
  }
  // What the blocks left (or all, below AVX2): each channel's remaining run of pixels quantized
  // as one contiguous row, then copied into the pixel rows.
  scratch.channel_run.resize(static_cast<size_t>(n));
  int16_t* run = scratch.channel_run.data();
  for (int64_t c = 0; c < in; ++c) {
    const int64_t start = c < whole_c ? whole_n : 0;
    if (start == n) continue;
    int8_gemm::quantize_rows(first + c * maps.pixels + start, 1, n - start, n - start, source_scale_, run, isa_);
    for (int64_t i = start; i < n; ++i) a[i * padded_k + c] = run[i - start];
  }
  if (padded_k > in)
    for (int64_t i = 0; i < n; ++i) std::fill(a + i * padded_k + in, a + (i + 1) * padded_k, int16_t{0});
}


void Int8PointwiseProduct::run_rows(const Maps& maps, int64_t begin, int64_t end, const float* bias,
                                    const TileTails& tails, Scratch& scratch) const {
  const int64_t out = out_channels(), padded_k = weights_.padded_k(), tile = tile_rows();
  scratch.quantized.resize(static_cast<size_t>(tile * padded_k));
  if (maps.y_nchw) scratch.out.resize(static_cast<size_t>(tile * out));
  if (maps.residual && maps.residual_nchw) scratch.residual.resize(static_cast<size_t>(tile * out));
  int8_gemm::Output o;
  o.scales = output_scales_.data();
  o.bias = bias;
  o.ld = out;
  for (int64_t r0 = begin; r0 < end;) {
    const int64_t image = r0 / maps.pixels, pixel = r0 - image * maps.pixels;
    const int64_t n = std::min({tile, end - r0, maps.pixels - pixel});  // a tile stays within its image
    quantize_tile(maps, image, pixel, n, scratch.quantized.data(), scratch);
    o.y = maps.y_nchw ? scratch.out.data() : maps.y + r0 * out;
    int8_gemm::multiply(scratch.quantized.data(), n, weights_, 0, weights_.column_blocks(), o, isa_);
    if (tails) {
      const float* residual = nullptr;
      if (maps.residual && !maps.residual_nchw) residual = maps.residual + r0 * out;
      if (maps.residual && maps.residual_nchw) {
        gather_nchw_rows(maps.residual + image * out * maps.pixels + pixel, maps.pixels, n, out, scratch.residual.data(), isa_);
        residual = scratch.residual.data();
      }
      tails(o.y, n, residual);
    }
    if (maps.y_nchw) scatter_nchw_rows(o.y, n, out, maps.y + image * out * maps.pixels + pixel, maps.pixels, isa_);
    r0 += n;
  }
}

void Int8PointwiseProduct::run(KernelContext& ctx, const Maps& maps, const float* bias, const TileTails& tails) const {
  const int64_t rows = maps.batch * maps.pixels;
  if (rows <= 0) return;
  const int64_t threads = ctx.num_threads(), in = in_channels(), out = out_channels();
  // Below ~1M multiply-adds a thread hand-off costs more than it saves (as for the int8 MatMul).
  constexpr int64_t kMinParallelWork = int64_t{1} << 20;
  const bool parallel = threads > 1 && rows * in * out >= kMinParallelWork;
  if (!parallel) {
    thread_local Scratch scratch;
    run_rows(maps, 0, rows, bias, tails, scratch);
    return;
  }
  // With at least a tile of rows per thread, each thread takes an even share of the rows (its
  // tiles read all the weights, which stay in its L2); on smaller maps (a deep layer's 7x7 pixels)
  // the rows are quantized once and the threads share out the weights' column blocks instead.
  if (rows >= threads * tile_rows()) {
    ctx.parallel_for(threads, [&](int64_t first, int64_t last) {
      thread_local Scratch scratch;
      for (int64_t t = first; t < last; ++t) {
        // Boundaries on multiples of 24 rows, as the tiles (tile_rows).
        const int64_t begin = rows * t / threads / 24 * 24, end = t + 1 == threads ? rows : rows * (t + 1) / threads / 24 * 24;
        if (end > begin) run_rows(maps, begin, end, bias, tails, scratch);
      }
    });
    return;
  }
  const int64_t padded_k = weights_.padded_k();
  Tensor quantized = pooled_uninitialized_tensor(DType::kInt16, {rows, padded_k});
  int16_t* a = quantized.data<int16_t>();
  thread_local Scratch scratch;
  for (int64_t image = 0; image < maps.batch; ++image)
    quantize_tile(maps, image, 0, maps.pixels, a + image * maps.pixels * padded_k, scratch);
  Tensor rows_out;
  if (maps.y_nchw) rows_out = pooled_uninitialized_tensor(DType::kFloat32, {rows, out});
  float* y = maps.y_nchw ? rows_out.data<float>() : maps.y;
  int8_gemm::Output o;
  o.y = y;
  o.scales = output_scales_.data();
  o.bias = bias;
  o.ld = out;
  ctx.parallel_for(weights_.column_blocks(), [&](int64_t begin, int64_t end) {
    int8_gemm::multiply(a, rows, weights_, begin, end, o, isa_);
  });
  for (int64_t image = 0; image < maps.batch; ++image) {
    float* image_rows = y + image * maps.pixels * out;
    if (tails) {
      const float* residual = nullptr;
      if (maps.residual && !maps.residual_nchw) residual = maps.residual + image * maps.pixels * out;
      if (maps.residual && maps.residual_nchw) {
        scratch.residual.resize(static_cast<size_t>(maps.pixels * out));
        gather_nchw_rows(maps.residual + image * out * maps.pixels, maps.pixels, maps.pixels, out, scratch.residual.data(), isa_);
        residual = scratch.residual.data();
      }
      tails(image_rows, maps.pixels, residual);
    }
    if (maps.y_nchw) scatter_nchw_rows(image_rows, maps.pixels, out, maps.y + image * out * maps.pixels, maps.pixels, isa_);
  }
}

}  // namespace parity::runtime::nn
