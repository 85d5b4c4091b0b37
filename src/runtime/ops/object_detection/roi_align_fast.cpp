// Spec: https://onnx.ai/onnx/operators/onnx__RoiAlign.html
// Optimized RoiAlign (fp32), beside the reference kernel in roi_align.cpp.
//
// The reference reads each channel's plane at every sample's four corners, in double, one region
// after another. Here X is first copied channels-last (once per run, far smaller than the work on
// it for a detection head's hundreds of regions x 256 channels), so each corner is a contiguous
// run of channels and a sample is four multiply-adds over vectors of channels; (region, channel
// block) jobs split over the threads. Samples come from the reference's roi_align_samples, so the
// coordinates are identical; sums are in float where the reference's are in double.
//
// Why: the detection bench model spent a quarter of its time in RoiAlign (64 regions x 256
// channels x 7x7 bins, 6.8 ms at 1 thread, and no speed-up at 2).
#include <algorithm>
#include <cstring>
#include <memory>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/object_detection/roi_align.h"

namespace parity::runtime::nn {
namespace {

/// Channels per job: a bin's partial sums stay in registers (four AVX-512 vectors).
constexpr int64_t kChannelBlock = 64;

/// X [n][c][h][w] as [n][h][w][c].
void copy_channels_last(KernelContext& ctx, const float* x, int64_t n, int64_t c, int64_t hw, float* out) {
  ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t image = plane / c, channel = plane % c;
      const float* src = x + plane * hw;
      float* dst = out + image * hw * c + channel;
      for (int64_t p = 0; p < hw; ++p) dst[p * c] = src[p];
    }
  });
}

/// One job's geometry: `channels` (at most kChannelBlock) channels of one region, read from the
/// region's channels-last image at stride `c`, written to out[channel][bin].
struct BlockJob {
  const float* image = nullptr;  // [h * w][c], at the block's first channel
  int64_t c = 0, channels = 0, bins = 0;
  const RoiSamples* sampled = nullptr;
  float* out = nullptr;  // [channels][bins]
};

/// The portable loop (and the summation order the AVX-512 one keeps).
template <bool kMax>
void pool_block_portable(const BlockJob& job) {
  float acc[kChannelBlock];
  const int64_t channels = job.channels, per_bin = job.sampled->per_bin;
  const float inverse_count = static_cast<float>(1.0 / job.sampled->count);
  for (int64_t bin = 0; bin < job.bins; ++bin) {
    for (int64_t j = 0; j < kChannelBlock; ++j) acc[j] = 0.0f;
    for (int64_t k = 0; k < per_bin; ++k) {
      const RoiSample& s = job.sampled->samples[static_cast<size_t>(bin * per_bin + k)];
      const float w0 = static_cast<float>(s.weight[0]), w1 = static_cast<float>(s.weight[1]);
      const float w2 = static_cast<float>(s.weight[2]), w3 = static_cast<float>(s.weight[3]);
      const float* p0 = job.image + s.offset[0] * job.c;
      const float* p1 = job.image + s.offset[1] * job.c;
      const float* p2 = job.image + s.offset[2] * job.c;
      const float* p3 = job.image + s.offset[3] * job.c;
      if constexpr (kMax) {
        for (int64_t j = 0; j < channels; ++j) {
          const float v = std::max({w0 * p0[j], w1 * p1[j], w2 * p2[j], w3 * p3[j]});
          acc[j] = k == 0 ? v : std::max(acc[j], v);
        }
      } else {
        for (int64_t j = 0; j < channels; ++j) acc[j] += (w0 * p0[j] + w1 * p1[j]) + (w2 * p2[j] + w3 * p3[j]);
      }
    }
    for (int64_t j = 0; j < channels; ++j) job.out[j * job.bins + bin] = kMax ? acc[j] : acc[j] * inverse_count;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
/// std::max(a, b) per lane (NaN cases included): MAXPS(b, a). The masked form, because g++ 12
/// warns about the undefined pass-through of the unmasked one.
__attribute__((target("avx512f"), always_inline)) inline __m512 std_max(__m512 a, __m512 b) {
  return _mm512_mask_max_ps(b, __mmask16{0xFFFF}, b, a);
}

/// The AVX-512 loop: a bin's sums for the block's channels stay in four registers (the last
/// vectors masked to the block's width), each sample adding its four weighted corners.
template <bool kMax>
__attribute__((target("avx512f"))) void pool_block_avx512(const BlockJob& job) {
  constexpr int kVectors = kChannelBlock / 16;
  __mmask16 masks[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    const int64_t lanes = std::clamp<int64_t>(job.channels - 16 * v, 0, 16);
    masks[v] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
  const int64_t per_bin = job.sampled->per_bin;
  const __m512 inverse_count = _mm512_set1_ps(static_cast<float>(1.0 / job.sampled->count));
  alignas(64) float sums[kChannelBlock];
  for (int64_t bin = 0; bin < job.bins; ++bin) {
    __m512 acc[kVectors];
    for (int v = 0; v < kVectors; ++v) acc[v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < per_bin; ++k) {
      const RoiSample& s = job.sampled->samples[static_cast<size_t>(bin * per_bin + k)];
      const float* corner[4];
      __m512 weight[4];
      for (int t = 0; t < 4; ++t) {
        corner[t] = job.image + s.offset[t] * job.c;
        weight[t] = _mm512_set1_ps(static_cast<float>(s.weight[t]));
      }
      for (int v = 0; v < kVectors; ++v) {
        if (masks[v] == 0) break;
        __m512 value[4];
        for (int t = 0; t < 4; ++t)
          value[t] = _mm512_mul_ps(weight[t], _mm512_maskz_loadu_ps(masks[v], corner[t] + 16 * v));
        if constexpr (kMax) {
          // The reference's order: std::max({v0, v1, v2, v3}), then std::max(acc, that).
          const __m512 largest = std_max(std_max(std_max(value[0], value[1]), value[2]), value[3]);
          acc[v] = k == 0 ? largest : std_max(acc[v], largest);
        } else {
          acc[v] = _mm512_add_ps(acc[v], _mm512_add_ps(_mm512_add_ps(value[0], value[1]), _mm512_add_ps(value[2], value[3])));
        }
      }
    }
    for (int v = 0; v < kVectors; ++v) _mm512_store_ps(sums + 16 * v, kMax ? acc[v] : _mm512_mul_ps(acc[v], inverse_count));
    for (int64_t j = 0; j < job.channels; ++j) job.out[j * job.bins + bin] = sums[j];
  }
}
#endif

using PoolBlock = void (*)(const BlockJob&);

PoolBlock pick_pool_block(bool max_mode, KernelIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa >= KernelIsa::kAvx512) return max_mode ? pool_block_avx512<true> : pool_block_avx512<false>;
#endif
  return max_mode ? pool_block_portable<true> : pool_block_portable<false>;
}

bool float_or_unknown(DType d) { return d == DType::kFloat32 || d == DType::kUndefined; }

class RoiAlignFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    if (!float_or_unknown(init.input_dtype(0)) || !float_or_unknown(init.input_dtype(1))) return nullptr;
    return std::unique_ptr<Kernel>(new RoiAlignFast(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    if (x.dtype() != DType::kFloat32 || rois.dtype() != DType::kFloat32) return reference_.compute(ctx);
    const RoiAlignGeometry& g = attributes_.geometry;
    const RoiAlignShape shape = check_roi_align_inputs(ctx, g);
    const int64_t c = shape.c, hw = shape.h * shape.w, bins = g.out_h * g.out_w;
    if (hw == 0 || c == 0 || shape.num_rois == 0) return reference_.compute(ctx);
    // Sampled before the threads start, so that a region's error is thrown on this thread.
    std::vector<RoiSamples> sampled;
    sampled.reserve(static_cast<size_t>(shape.num_rois));
    const float* roi_values = rois.data<float>();
    for (int64_t r = 0; r < shape.num_rois; ++r) {
      const double roi[4] = {roi_values[r * 4], roi_values[r * 4 + 1], roi_values[r * 4 + 2], roi_values[r * 4 + 3]};
      sampled.push_back(sample_roi_or_fail(ctx, g, roi, r, shape.h, shape.w));
    }
    std::vector<float> channels_last(static_cast<size_t>(shape.n * hw * c));
    copy_channels_last(ctx, x.data<float>(), shape.n, c, hw, channels_last.data());
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, Shape{shape.num_rois, c, g.out_h, g.out_w});
    float* out = y.data<float>();
    const int64_t blocks = (c + kChannelBlock - 1) / kChannelBlock;
    const PoolBlock pool_block = pick_pool_block(attributes_.max_mode, isa_);
    ctx.parallel_for(shape.num_rois * blocks, [&](int64_t begin, int64_t end) {
      for (int64_t job_index = begin; job_index < end; ++job_index) {
        const int64_t r = job_index / blocks, c0 = (job_index % blocks) * kChannelBlock;
        BlockJob job;
        job.image = channels_last.data() + shape.batch_indices[r] * hw * c + c0;
        job.c = c;
        job.channels = std::min(kChannelBlock, c - c0);
        job.bins = bins;
        job.sampled = &sampled[static_cast<size_t>(r)];
        job.out = out + (r * c + c0) * bins;
        pool_block(job);
      }
    });
  }

 private:
  explicit RoiAlignFast(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()), attributes_(init), isa_(kernel_isa(init)) {}

  ops::ReferenceChain reference_;
  RoiAlignAttributes attributes_;
  KernelIsa isa_;  // the vector tier of the pooling blocks
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "RoiAlign", (10, 16), RoiAlignFast);

}  // namespace parity::runtime::nn
