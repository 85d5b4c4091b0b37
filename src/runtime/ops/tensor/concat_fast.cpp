// Spec: https://onnx.ai/onnx/operators/onnx__Concat.html
// Optimized Concat (any fixed-size dtype), beside the reference kernel in concat_split.cpp: the
// output is not zero-filled before it is written (one pass over memory fewer), and large outputs
// copy their blocks on several threads. DenseNet concatenates ever larger feature maps, and
// ShuffleNetV2 and SqueezeNet concatenate two branches per block. Strings, mismatched inputs and
// bad axes run the reference kernel (which reports the error).
//
// Channels-last hand-off (runtime/channels_last.h): a channel Concat (axis 1) between
// convolutions reads and writes channels-last values, where it concatenates each pixel's
// channels. SqueezeNet's fire modules concatenate two convolutions' outputs and feed a pooling
// or a convolution: in NCHW each of them cost two layout conversions around the Concat. The
// planner hands Concat channels-last inputs only where its output is handed off too
// (passes_layout_through); an input that still comes in NCHW is transposed while it is copied.
#include <algorithm>
#include <cstddef>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "runtime/channels_last.h"
#include "runtime/kernel_preferences.h"

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

/// dst[k * dst_stride + r] = src[r * src_stride + k] for r < rows, k < cols, in tiles that keep
/// both sides in cache: the copy between a channels-last block [pixels, C] and an NCHW one [C, pixels].
template <typename S>
void transpose_block(const S* src, int64_t src_stride, S* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t k0 = 0; k0 < cols; k0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), k1 = std::min(cols, k0 + kTile);
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t r = r0; r < r1; ++r) dst[k * dst_stride + r] = src[r * src_stride + k];
    }
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw"))) void copy_slice_avx512(std::byte* dst, const std::byte* src, int64_t n) {
  int64_t k = 0;
  for (; k + 64 <= n; k += 64) _mm512_storeu_si512(dst + k, _mm512_loadu_si512(src + k));
  if (k < n) {
    const __mmask64 mask = (uint64_t{1} << (n - k)) - 1;
    _mm512_mask_storeu_epi8(dst + k, mask, _mm512_maskz_loadu_epi8(mask, src + k));
  }
}
#endif

void copy_slice_memcpy(std::byte* dst, const std::byte* src, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n)); }

/// Copies one pixel's slice of one input (a few hundred bytes) into the output. As 64-byte
/// moves with a masked tail where the CPU has AVX-512BW: memcpy's call and size dispatch cost
/// more than such a move, and the generic element loop compiled to 16-byte moves (SqueezeNet's
/// 128-channel Concat on 55x55: 0.22 ms that way, 0.11 ms as vector moves, in a micro-benchmark).
using SliceCopy = void (*)(std::byte*, const std::byte*, int64_t);
SliceCopy slice_copy(KernelIsa isa) {
#if defined(__x86_64__)
  return isa >= KernelIsa::kAvx512 ? copy_slice_avx512 : copy_slice_memcpy;  // the tier includes AVX-512BW
#else
  (void)isa;
  return copy_slice_memcpy;
#endif
}

class FastConcat final : public Kernel, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    auto reference = init.create_reference_kernel();  // validates the attributes first
    if (init.opset() < 4 && !init.has_attr("axis")) return nullptr;  // Concat-1's default axis: the reference's case
    return std::unique_ptr<Kernel>(new FastConcat(init.attr_int("axis"), std::move(reference), kernel_isa(init)));
  }

  // Channels-last hand-off: only along the channel axis of NCHW-style values (-3: the channel axis
  // of the 4-D values 2-D convolutions make; another rank goes through NCHW order).
  bool can_read_channels_last(size_t) const override { return axis_ == 1 || axis_ == -3; }
  void read_channels_last(size_t input) override {
    if (channels_last_inputs_.size() <= input) channels_last_inputs_.resize(input + 1, false);
    channels_last_inputs_[input] = true;
  }
  bool can_write_channels_last() const override {
    return std::find(channels_last_inputs_.begin(), channels_last_inputs_.end(), true) != channels_last_inputs_.end();
  }
  void write_channels_last() override { channels_last_output_ = true; }
  bool passes_layout_through() const override { return true; }

  void compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    std::vector<bool> channels_last;  // per entry of `inputs`
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.has_input(i)) {
        inputs.push_back(&ctx.input(i));
        channels_last.push_back(i < channels_last_inputs_.size() && channels_last_inputs_[i]);
      }
    std::optional<Shape> out_shape = inputs.empty() ? std::nullopt : output_shape(inputs);
    if (!out_shape) {
      // The reference reports what is wrong; a value handed off channels-last is never malformed
      // this way (its producer checked its shape), so it does not matter that it is read as NCHW.
      reference_->compute(ctx);
      return;
    }
    const bool any_channels_last =
        channels_last_output_ || std::find(channels_last.begin(), channels_last.end(), true) != channels_last.end();
    const int64_t rank = inputs[0]->rank(), axis = axis_ < 0 ? axis_ + rank : axis_;
    if (any_channels_last && axis == 1) {
      concat_channels_mixed_layouts(inputs, channels_last, *out_shape, ctx);
      return;
    }
    if (any_channels_last) {  // a negative axis that is not the channels of this rank
      concat_through_nchw(inputs, channels_last, axis, *out_shape, ctx);
      return;
    }
    concat_blocks(inputs, axis, *out_shape, ctx.allocate_output_uninitialized(0, inputs[0]->dtype(), *out_shape), ctx);
  }

 private:
  /// Inputs in NCHW order into `out`: one contiguous block per (outer index, input).
  static void concat_blocks(const std::vector<const Tensor*>& inputs, int64_t axis, const Shape& out_shape, Tensor& out,
                            KernelContext& ctx) {
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank();
    const size_t elem = dtype_size(first.dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out_shape[d];
    // One job per (outer index, input): a contiguous block of the input to its place in the row.
    std::vector<int64_t> block_bytes, offset_bytes;
    int64_t row_bytes = 0;
    for (const Tensor* t : inputs) {
      block_bytes.push_back(t->shape()[axis] * inner * static_cast<int64_t>(elem));
      offset_bytes.push_back(row_bytes);
      row_bytes += block_bytes.back();
    }
    const int64_t jobs = outer * static_cast<int64_t>(inputs.size());
    auto copy = [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t o = job / static_cast<int64_t>(inputs.size());
        const size_t i = static_cast<size_t>(job % static_cast<int64_t>(inputs.size()));
        if (block_bytes[i] == 0) continue;
        std::memcpy(static_cast<std::byte*>(out.raw_data()) + o * row_bytes + offset_bytes[i],
                    static_cast<const std::byte*>(inputs[i]->raw_data()) + o * block_bytes[i],
                    static_cast<size_t>(block_bytes[i]));
      }
    };
    const int64_t total_bytes = outer * row_bytes;
    const int64_t chunks = std::min<int64_t>(
        {static_cast<int64_t>(ctx.num_threads()), jobs, total_bytes / (4 * ops::fast::kMinParallelElements)});
    if (chunks <= 1) {
      copy(0, jobs);
      return;
    }
    ctx.parallel_for(chunks, [&](int64_t first_chunk, int64_t last_chunk) {
      for (int64_t c = first_chunk; c < last_chunk; ++c) copy(jobs * c / chunks, jobs * (c + 1) / chunks);
    });
  }

  /// Channels-last values concatenated along another axis than their channels: each goes back to
  /// NCHW order, and the result is permuted to channels-last if it is handed off so.
  void concat_through_nchw(const std::vector<const Tensor*>& inputs, const std::vector<bool>& channels_last,
                           int64_t axis, const Shape& out_shape, KernelContext& ctx) const {
    std::vector<Tensor> planar;
    planar.reserve(inputs.size());
    std::vector<const Tensor*> planar_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      planar.push_back(channels_last[i] ? change_channel_layout(*inputs[i], false) : *inputs[i]);
      planar_inputs.push_back(&planar.back());
    }
    if (!channels_last_output_) {
      concat_blocks(planar_inputs, axis, out_shape, ctx.allocate_output_uninitialized(0, inputs[0]->dtype(), out_shape),
                    ctx);
      return;
    }
    Tensor joined = Tensor::uninitialized(inputs[0]->dtype(), out_shape);
    concat_blocks(planar_inputs, axis, out_shape, joined, ctx);
    ctx.set_output(0, Value(change_channel_layout(joined, true)));
  }

  /// Axis-1 Concat where some inputs or the output are channels-last. Channels-last inputs into a
  /// channels-last output are the plain Concat of [N * pixels, C_i] rows; any other pairing is a
  /// transposing copy per image.
  void concat_channels_mixed_layouts(const std::vector<const Tensor*>& inputs, const std::vector<bool>& channels_last,
                                     const Shape& out_shape, KernelContext& ctx) const {
    const Tensor& first = *inputs[0];
    Tensor& out = ctx.allocate_output_uninitialized(0, first.dtype(), out_shape);
    const int64_t batch = out_shape[0], channels = out_shape[1];
    const int64_t pixels = batch * channels == 0 ? 0 : shape_numel(out_shape) / (batch * channels);
    tensor_ops::visit_storage_type(first.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = static_cast<S*>(out.raw_data());
      const bool all_channels_last =
          channels_last_output_ && std::find(channels_last.begin(), channels_last.end(), false) == channels_last.end();
      const SliceCopy copy_slice = slice_copy(isa_);
      // Channels-last on every side: pixel by pixel, each input's slice in turn, so the output is
      // written once from start to end.
      auto interleave_pixels = [&](int64_t b, int64_t p0, int64_t p1) {
        std::byte* out_image = reinterpret_cast<std::byte*>(dst + b * channels * pixels);
        const int64_t pixel_bytes = channels * static_cast<int64_t>(sizeof(S));
        for (int64_t p = p0; p < p1; ++p) {
          int64_t offset = 0;  // bytes
          for (const Tensor* input : inputs) {
            const int64_t bytes = input->shape()[1] * static_cast<int64_t>(sizeof(S));
            const auto* image = static_cast<const std::byte*>(input->raw_data()) + b * bytes * pixels;
            copy_slice(out_image + p * pixel_bytes + offset, image + p * bytes, bytes);
            offset += bytes;
          }
        }
      };
      // Output pixels [p0, p1) of image b from every input.
      auto copy_pixels = [&](int64_t b, int64_t p0, int64_t p1) {
        if (all_channels_last) {
          interleave_pixels(b, p0, p1);
          return;
        }
        int64_t offset = 0;  // channel offset of input i in the output
        for (size_t i = 0; i < inputs.size(); ++i) {
          const int64_t c = inputs[i]->shape()[1];
          const S* image = static_cast<const S*>(inputs[i]->raw_data()) + b * c * pixels;
          S* out_image = dst + b * channels * pixels;
          if (c == 0) continue;
          if (channels_last[i] && channels_last_output_) {
            // An inline loop, not memmove: DenseNet copies 32 channels at a time, ~190K times a run.
            for (int64_t p = p0; p < p1; ++p) {
              const S* from = image + p * c;
              S* to = out_image + p * channels + offset;
              for (int64_t k = 0; k < c; ++k) to[k] = from[k];
            }
          } else if (channels_last_output_) {  // [c, pixels] -> columns of [pixels, channels]
            transpose_block(image + p0, pixels, out_image + p0 * channels + offset, channels, c, p1 - p0);
          } else if (channels_last[i]) {  // [pixels, c] -> rows of [channels, pixels]
            transpose_block(image + p0 * c, c, out_image + offset * pixels + p0, pixels, p1 - p0, c);
          } else {
            for (int64_t k = 0; k < c; ++k)
              std::copy(image + k * pixels + p0, image + k * pixels + p1, out_image + (offset + k) * pixels + p0);
          }
          offset += c;
        }
      };
      // Large outputs: pixel ranges on several threads.
      const int64_t total = batch * pixels;
      const int64_t chunks =
          std::min<int64_t>(ctx.num_threads(), channels == 0 ? 0 : shape_numel(out_shape) / ops::fast::kMinParallelElements);
      if (chunks <= 1 || total == 0) {
        for (int64_t b = 0; b < batch && pixels > 0; ++b) copy_pixels(b, 0, pixels);
        return;
      }
      ctx.parallel_for(chunks, [&](int64_t first_chunk, int64_t last_chunk) {
        for (int64_t chunk = first_chunk; chunk < last_chunk; ++chunk) {
          // Flat pixel range [q0, q1) over all images, cut at image boundaries.
          int64_t q = total * chunk / chunks;
          const int64_t q1 = total * (chunk + 1) / chunks;
          while (q < q1) {
            const int64_t b = q / pixels, p0 = q % pixels, p1 = std::min(pixels, p0 + (q1 - q));
            copy_pixels(b, p0, p1);
            q += p1 - p0;
          }
        }
      });
    });
  }

  FastConcat(int64_t axis, std::unique_ptr<Kernel> reference, KernelIsa isa)
      : axis_(axis), reference_(std::move(reference)), isa_(isa) {}

  /// The output shape when the fast path covers the inputs: same fixed-size dtype and rank,
  /// equal dims outside a valid axis.
  std::optional<Shape> output_shape(const std::vector<const Tensor*>& inputs) const {
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank();
    const size_t elem = dtype_size(first.dtype());
    if (rank == 0 || axis_ < -rank || axis_ >= rank || first.dtype() == DType::kString || elem == 0) return std::nullopt;
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Shape shape = first.shape();
    shape[axis] = 0;
    for (const Tensor* t : inputs) {
      if (t->dtype() != first.dtype() || t->rank() != rank) return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape()[d] != first.shape()[d]) return std::nullopt;
      shape[axis] += t->shape()[axis];
    }
    return shape;
  }

  int64_t axis_;
  std::unique_ptr<Kernel> reference_;
  KernelIsa isa_;  // the vector tier of the slice copies
  std::vector<bool> channels_last_inputs_;  // by input index
  bool channels_last_output_ = false;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Concat", (1, 4), FastConcat);

}  // namespace parity::runtime
