// int8 1x1 convolutions (stride 1, no padding, group 1) on parity's exact s8 x s8 kernel
// (ops/quantization/int8_gemm.h), for int8 layers on CPUs where oneDNN's int8 convolution does not
// sum signed sources exactly (no VNNI: its vpmaddubsw takes u8 x s8 and saturates on signed
// sources, runtime/dnnl/int8_inputs.h). Such layers otherwise compute in fp32 on fake-quantized
// operands and gain nothing from int8; the 1x1 layers that read a signed value (a residual Add, a
// Swish, a squeeze-excitation scale) are most of a mobile network's multiply-adds.
//
// On a channels-last map a 1x1 convolution is one product: the pixels are rows of in_channels
// values and the weights [out, in] are the kernel's N x K operand. The rows are quantized with the
// layer's calibrated source scale in tiles (per thread), multiplied with the weights packed once,
// dequantized per output channel (source scale x weight scale) with the bias, and the caller's
// fused tails run on each finished tile while it is still in cache (conv_dnnl.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parity/runtime/kernel.h"
#include "runtime/cpu_isa.h"
#include "runtime/ops/quantization/int8_gemm.h"

namespace parity::runtime::nn {

class Int8PointwiseProduct {
 public:
  /// Whether a layer on a CPU of tier `isa` gains from this path.
  static bool available(KernelIsa isa) { return ops::int8_gemm::pays_on(isa); }

  /// `weights`: the layer's int8 weight values [out_channels, in_channels]; `weight_scales`: one
  /// per output channel (positive).
  Int8PointwiseProduct(const int8_t* weights, int64_t out_channels, int64_t in_channels,
                       std::vector<float> weight_scales, KernelIsa isa);

  /// The source's calibrated scale: the products dequantize with it times each channel's weight scale.
  void set_source_scale(float scale);
  float source_scale() const { return source_scale_; }
  int64_t in_channels() const { return weights_.k(); }
  int64_t out_channels() const { return weights_.n(); }
  /// "parity s8s8 <variant>", for plans and inspect.
  std::string engine() const;

  /// The maps of one run: `batch` images of `pixels` pixels, each tensor in channels-last order
  /// (pixels are rows of channels) or NCHW (one plane of pixels per channel), which the product
  /// converts tile by tile while the tile is in cache. `residual`: the fused residual Add's
  /// addend (or nullptr), in the output's shape.
  struct Maps {
    const float* x = nullptr;
    bool x_nchw = false;
    float* y = nullptr;
    bool y_nchw = false;
    const float* residual = nullptr;
    bool residual_nchw = false;
    int64_t batch = 1, pixels = 1;
  };

  /// Called on each finished tile of output rows, channels-last: `rows` rows of out_channels
  /// values, and the residual addend's same rows in the same order (nullptr without one).
  using TileTails = std::function<void(float* tile, int64_t rows, const float* residual_rows)>;

  /// y = dequantized(int8(x) x int8(W)^T) (+ bias[out]), then `tails` per tile (may be empty).
  /// Split between the context's threads by rows, or by output-channel blocks when there are too
  /// few rows to share.
  void run(KernelContext& ctx, const Maps& maps, const float* bias, const TileTails& tails) const;

 private:
  /// Rows per tile: about 64 KB of output, between 48 and 240 rows (each tile reads all the
  /// weights once), a multiple of 24: of the kernel's 6-row tile and of the 8 x 8 blocks an NCHW
  /// source is transposed in.
  int64_t tile_rows() const;
  /// Per-thread buffers of run_rows.
  struct Scratch {
    std::vector<int16_t> quantized, channel_run;  // channel_run: one channel's pixels of an NCHW source
    std::vector<float> out, residual;
  };
  /// Source rows [first, first + n) of image `image` (pixel offset `pixel`), quantized into `a`
  /// (row stride padded_k).
  void quantize_tile(const Maps& maps, int64_t image, int64_t pixel, int64_t n, int16_t* a, Scratch& scratch) const;
  /// Rows [begin, end) (of all images) in tiles that stay within an image: quantized, multiplied,
  /// finished by `tails`, and stored in the output's layout.
  void run_rows(const Maps& maps, int64_t begin, int64_t end, const float* bias, const TileTails& tails,
                Scratch& scratch) const;

  ops::int8_gemm::PackedS8Weights weights_;
  std::vector<float> weight_scales_, output_scales_;
  float source_scale_ = 0;
  KernelIsa isa_;
};

}  // namespace parity::runtime::nn
