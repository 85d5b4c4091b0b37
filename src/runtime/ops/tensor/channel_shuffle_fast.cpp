// Spec: none (parity's own "ai.parity" domain: the kernel repeats the Reshape -> Transpose -> Reshape it replaces)
// Optimized ChannelShuffle (the reference kernel: channel_shuffle.h), with the channels-last
// hand-off (runtime/channels_last.h): in channels-last order the shuffle is a gather of each
// pixel's channels, so the convolutions, Concat and Slices around it keep channels-last instead
// of converting to NCHW for the Transpose and back.
#include "runtime/channels_last.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/tensor/channel_shuffle.h"

namespace parity::runtime {
namespace {

class FastChannelShuffle final : public tensor_ops::ChannelShuffle, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    return std::unique_ptr<Kernel>(new FastChannelShuffle(init));
  }

  bool can_read_channels_last(size_t input) const override { return input == 0; }
  void read_channels_last(size_t) override { channels_last_input_ = true; }
  bool can_write_channels_last() const override { return channels_last_input_; }
  void write_channels_last() override { channels_last_output_ = true; }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_elements(x, ctx);
    // The pixel gather needs the input to be the output's shape; any other channels-last input
    // (never seen from an exporter) is first put back in NCHW order.
    if (channels_last_input_ && x.shape() == shape_ && x.dtype() != DType::kString) {
      gather_pixels(x, allocate(ctx, x.dtype()), ctx);
      return;
    }
    const Tensor planar = channels_last_input_ ? change_channel_layout(x, false) : x;
    if (!channels_last_output_) {
      shuffle_planes(planar, allocate(ctx, x.dtype()));
      return;
    }
    Tensor shuffled = Tensor::uninitialized(x.dtype(), shape_);
    shuffle_planes(planar, shuffled);
    ctx.set_output(0, Value(change_channel_layout(shuffled, true)));
  }

 private:
  explicit FastChannelShuffle(const KernelInit& init) : ChannelShuffle(init) {}

  /// Channels-last input: output channel k * G + g of each pixel is its input channel
  /// g * (C / G) + k, written channels-last or in NCHW order.
  void gather_pixels(const Tensor& x, Tensor& out, KernelContext& ctx) const {
    const int64_t batch = shape_[0], channels = shape_[1], per_group = channels / groups_;
    const int64_t plane = channels == 0 || batch == 0 ? 0 : shape_numel(shape_) / (batch * channels);
    const int64_t pixels = batch * plane;
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(x);
      S* dst = tensor_ops::elements<S>(out);
      auto run = [&](int64_t p0, int64_t p1) {
        for (int64_t q = p0; q < p1; ++q) {
          const S* from = src + q * channels;
          if (channels_last_output_ && groups_ == 2) {
            interleave_pair(from, from + per_group, dst + q * channels, per_group);
          } else if (channels_last_output_) {
            S* to = dst + q * channels;
            for (int64_t g = 0; g < groups_; ++g)
              for (int64_t k = 0; k < per_group; ++k) to[k * groups_ + g] = from[g * per_group + k];
          } else {
            const int64_t n = q / plane, p = q % plane;
            S* image = dst + n * channels * plane + p;
            for (int64_t k = 0; k < per_group; ++k)
              for (int64_t g = 0; g < groups_; ++g) image[(k * groups_ + g) * plane] = from[g * per_group + k];
          }
        }
      };
      const int64_t chunks = std::min<int64_t>(ctx.num_threads(), pixels * channels / ops::fast::kMinParallelElements);
      if (chunks <= 1) {
        run(0, pixels);
        return;
      }
      ctx.parallel_for(chunks, [&](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) run(pixels * c / chunks, pixels * (c + 1) / chunks);
      });
    });
  }

  /// to = a0 b0 a1 b1 ...: ShuffleNet's two groups, a loop the compiler turns into vector unpacks.
  template <typename S>
  static void interleave_pair(const S* __restrict a, const S* __restrict b, S* __restrict to, int64_t count) {
    for (int64_t k = 0; k < count; ++k) {
      to[2 * k] = a[k];
      to[2 * k + 1] = b[k];
    }
  }

  bool channels_last_input_ = false;
  bool channels_last_output_ = false;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("ai.parity", "ChannelShuffle", 1, FastChannelShuffle);

}  // namespace parity::runtime
