// Spec: https://onnx.ai/onnx/operators/onnx__MaxPool.html, onnx__AveragePool.html,
//       onnx__GlobalMaxPool.html, onnx__GlobalAveragePool.html
// Optimized MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool (fp32) on oneDNN, beside the
// reference kernels in pool.cpp. The primitive is cached per input shape and runs single-threaded;
// at several threads a 2-D MaxPool between convolutions (channels-last in and out) runs a direct
// loop instead, its output rows split over the threads.
// Tensors are NCHW, except that a pool reads and writes channels-last values when the planner
// pairs it with convolutions (runtime/channels_last.h): ResNet-50's stem MaxPool and its
// GlobalAveragePool read the convolutions' layout instead of converting it first.
//
// What oneDNN cannot express exactly goes to the reference kernel: MaxPool's Indices output
// (declined at plan time), non-fp32 tensors, zero-size tensors, windows that can lie entirely in
// padding, and AveragePool with count_include_pad whose ceil_mode windows reach past the end
// padding (ONNX does not count those positions; oneDNN divides by the full kernel size).
#include "runtime/ops/nn/pool_dnnl.h"

#if PARITY_HAVE_DNNL

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "runtime/channels_last.h"
#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/row_chunks.h"
#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

using dnnl::memory;
using dnnl_support::cpu_engine;
using dnnl_support::plain_desc;
using dnnl_support::wrap;

struct PoolPlan {
  bool supported = false;
  dnnl::primitive primitive;
  memory::desc scratchpad;  // user-provided: the primitive may run on any thread
  memory::desc src_desc, dst_desc;
  Shape out_shape;
  // A channels-last window pool whose output must be NCHW: the primitive writes the input's
  // layout (its fast kernels want one layout on both sides), this reorder converts.
  std::optional<dnnl::reorder> to_output;
  memory::desc output_desc, reorder_scratchpad;
};

enum class PoolOp { kMax, kAverage, kGlobalMax, kGlobalAverage };

/// `shape`'s descriptor in NCHW or channels-last order.
memory::desc layout_desc(const Shape& shape, bool channels_last) {
  if (!channels_last) return plain_desc(shape);
  // By tag, not strides: a [N, C, 1, 1] output then still counts as channels-last, which
  // oneDNN's jit pooling wants on both sides.
  using tag = memory::format_tag;
  const tag t = shape.size() == 3 ? tag::acb : shape.size() == 4 ? tag::acdb : tag::acdeb;
  return memory::desc(dnnl_support::to_dims(shape), memory::data_type::f32, t);
}

std::atomic<uint64_t> g_direct_max_pool_runs{0};

/// One output row of a 2-D MaxPool over channels-last maps: each output position takes the
/// channel-wise max of the window's positions that lie inside the map, the first one copied, a
/// later one kept where it is greater (the reference's rule, so a NaN wins only when it comes
/// first); a window with no position inside is -inf, as in the reference.
inline __attribute__((always_inline)) void max_pool_row_body(const float* image, const WindowGeometry& g, int64_t c,
                                                             int64_t oh, float* out_row) {
  const int64_t in_h = g.in[0], in_w = g.in[1];
  for (int64_t ow = 0; ow < g.out[1]; ++ow) {
    float* __restrict out = out_row + ow * c;
    bool first = true;
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      const int64_t ih = oh * g.strides[0] - g.pad_begin[0] + kh * g.dilations[0];
      if (ih < 0 || ih >= in_h) continue;
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
        const int64_t iw = ow * g.strides[1] - g.pad_begin[1] + kw * g.dilations[1];
        if (iw < 0 || iw >= in_w) continue;
        const float* __restrict v = image + (ih * in_w + iw) * c;
        if (first) {
          std::copy(v, v + c, out);
          first = false;
        } else {
          for (int64_t k = 0; k < c; ++k) out[k] = v[k] > out[k] ? v[k] : out[k];
        }
      }
    }
    if (first) std::fill(out, out + c, -std::numeric_limits<float>::infinity());
  }
}

void max_pool_row_portable(const float* image, const WindowGeometry& g, int64_t c, int64_t oh, float* out_row) {
  max_pool_row_body(image, g, c, oh, out_row);
}

#if defined(__x86_64__) && defined(__GNUC__)
/// The same loop vectorized 8 channels wide: SSE's 4 made it slower than oneDNN's jit kernel.
__attribute__((target("avx2"))) void max_pool_row_avx2(const float* image, const WindowGeometry& g, int64_t c,
                                                       int64_t oh, float* out_row) {
  max_pool_row_body(image, g, c, oh, out_row);
}
#endif

/// GlobalAveragePool of channels [k0, k1) of one channels-last image of `plane` positions of `c`
/// channels: float sums over blocks of kBlock positions, added into double totals (the reference
/// sums in double; a float sum over a 160x160 plane would drift). `partial` and `total` hold
/// k1 - k0 values of scratch.
constexpr int64_t kMeanBlock = 64;
inline __attribute__((always_inline)) void channel_means_body(const float* image, int64_t plane, int64_t c, int64_t k0,
                                                              int64_t k1, float* __restrict partial,
                                                              double* __restrict total, float* out) {
  const int64_t n = k1 - k0;
  for (int64_t k = 0; k < n; ++k) total[k] = 0.0;
  for (int64_t p0 = 0; p0 < plane; p0 += kMeanBlock) {
    for (int64_t k = 0; k < n; ++k) partial[k] = 0.f;
    for (int64_t p = p0; p < std::min(plane, p0 + kMeanBlock); ++p) {
      const float* __restrict row = image + p * c + k0;
      for (int64_t k = 0; k < n; ++k) partial[k] += row[k];
    }
    for (int64_t k = 0; k < n; ++k) total[k] += partial[k];
  }
  for (int64_t k = 0; k < n; ++k) out[k0 + k] = static_cast<float>(total[k] / static_cast<double>(plane));
}

void channel_means_portable(const float* image, int64_t plane, int64_t c, int64_t k0, int64_t k1, float* partial,
                            double* total, float* out) {
  channel_means_body(image, plane, c, k0, k1, partial, total, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
/// The same loops 16 channels wide (the portable build vectorizes them 4 wide): EfficientNet-B0's
/// 17 pools took 0.40 ms against ONNX Runtime's 0.30 ms. Each channel's sums run in the same
/// order, so the results are the same.
__attribute__((target("avx512f"))) void channel_means_avx512(const float* image, int64_t plane, int64_t c, int64_t k0,
                                                             int64_t k1, float* partial, double* total, float* out) {
  channel_means_body(image, plane, c, k0, k1, partial, total, out);
}

/// The same loops 8 channels wide, for CPUs without AVX-512.
__attribute__((target("avx2"))) void channel_means_avx2(const float* image, int64_t plane, int64_t c, int64_t k0,
                                                        int64_t k1, float* partial, double* total, float* out) {
  channel_means_body(image, plane, c, k0, k1, partial, total, out);
}
#endif

using ChannelMeansFn = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, float*, double*, float*);
/// The channel sums 16 wide where `isa` has AVX-512, 8 wide on AVX2, when `wide` allows it
/// (KernelOptions::global_pool_wide).
ChannelMeansFn pick_channel_means(KernelIsa isa, bool wide) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (wide && isa >= KernelIsa::kAvx512) return channel_means_avx512;
  if (wide && isa >= KernelIsa::kAvx2) return channel_means_avx2;
#endif
  return channel_means_portable;
}

#if defined(__x86_64__) && defined(__GNUC__)
/// The row loop with each output position's maxima in registers, 64 channels at a time (the AVX2
/// loop loads and stores the output once per window position): the window's positions inside
/// the map are listed once per output position, then each channel block takes the first one and
/// keeps a later value where it is greater, as max_pool_row_body does.
__attribute__((target("avx512f"))) void max_pool_row_avx512(const float* image, const WindowGeometry& g, int64_t c,
                                                           int64_t oh, float* out_row) {
  constexpr int64_t kVectors = 4, kBlock = 16 * kVectors;
  const int64_t in_h = g.in[0], in_w = g.in[1];
  std::vector<const float*> taps(static_cast<size_t>(g.kernel[0] * g.kernel[1]));
  for (int64_t ow = 0; ow < g.out[1]; ++ow) {
    size_t count = 0;
    for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
      const int64_t ih = oh * g.strides[0] - g.pad_begin[0] + kh * g.dilations[0];
      if (ih < 0 || ih >= in_h) continue;
      for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
        const int64_t iw = ow * g.strides[1] - g.pad_begin[1] + kw * g.dilations[1];
        if (iw >= 0 && iw < in_w) taps[count++] = image + (ih * in_w + iw) * c;
      }
    }
    float* out = out_row + ow * c;
    if (count == 0) {
      std::fill(out, out + c, -std::numeric_limits<float>::infinity());
      continue;
    }
    for (int64_t k0 = 0; k0 < c; k0 += kBlock) {
      __mmask16 masks[kVectors];
      __m512 acc[kVectors];
      for (int64_t v = 0; v < kVectors; ++v) {
        const int64_t lanes = std::clamp<int64_t>(c - k0 - 16 * v, 0, 16);
        masks[v] = static_cast<__mmask16>((1u << lanes) - 1u);
        acc[v] = _mm512_maskz_loadu_ps(masks[v], taps[0] + k0 + 16 * v);
      }
      for (size_t t = 1; t < count; ++t)
        for (int64_t v = 0; v < kVectors; ++v) {
          const __m512 value = _mm512_maskz_loadu_ps(masks[v], taps[t] + k0 + 16 * v);
          // MAXPS(value, acc) is `value > acc ? value : acc`: a NaN only wins as the first value.
          acc[v] = _mm512_mask_max_ps(acc[v], __mmask16{0xFFFF}, value, acc[v]);
        }
      for (int64_t v = 0; v < kVectors; ++v) _mm512_mask_storeu_ps(out + k0 + 16 * v, masks[v], acc[v]);
    }
  }
}
#endif

using MaxPoolRowFn = void (*)(const float*, const WindowGeometry&, int64_t, int64_t, float*);

/// Whether the AVX-512 row loop runs at `isa`: it also beats oneDNN on one thread.
bool max_pool_row_avx512_available(KernelIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  return isa >= KernelIsa::kAvx512;
#else
  return false;
#endif
}

MaxPoolRowFn pick_max_pool_row(KernelIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (max_pool_row_avx512_available(isa)) return max_pool_row_avx512;
  if (isa >= KernelIsa::kAvx2) return max_pool_row_avx2;
#endif
  return max_pool_row_portable;
}

class DnnlPoolKernel : public Kernel, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init, PoolOp op) {
    auto reference = init.create_reference_kernel();  // also validates the attributes
    if (init.input_dtype(0) != DType::kUndefined && init.input_dtype(0) != DType::kFloat32) return nullptr;
    if (op == PoolOp::kMax && init.has_output(1)) return nullptr;  // Indices: oneDNN has no such output
    // AveragePool-19's dilations: left to the reference kernel.
    if (op == PoolOp::kAverage) {
      const std::vector<int64_t> dilations = init.attr_ints("dilations", {});
      if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) return nullptr;
    }
    return std::unique_ptr<Kernel>(new DnnlPoolKernel(init, op, std::move(reference)));
  }

  // Channels-last hand-off. oneDNN's fast pooling kernels want the same layout on both sides, so
  // a window pool writes channels-last only when it reads so (the planner decides a node's
  // inputs before its output: nodes are in topological order). A global pool's [N, C, 1, 1]
  // output is the same in both orders.
  bool is_global() const { return op_ == PoolOp::kGlobalAverage || op_ == PoolOp::kGlobalMax; }
  bool can_write_channels_last() const override { return is_global() || input_channels_last_; }
  void write_channels_last() override { output_channels_last_ = true; }
  bool can_read_channels_last(size_t input) const override { return input == 0; }
  void read_channels_last(size_t) override { input_channels_last_ = true; }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() < 3 || x.rank() > 5 || x.numel() == 0) {
      run_reference(ctx);
      return;
    }
    if (is_global()) {
      if (input_channels_last_) global_pool_channels_last(x, ctx);
      else global_pool_planar(x, ctx);
      return;
    }
    if (op_ == PoolOp::kMax && input_channels_last_ && output_channels_last_ && x.rank() == 4 &&
        options_.max_pool_direct && (direct_max_pool_on_one_thread(isa_) || splits_between_threads(x, ctx))) {
      max_pool_channels_last(x, ctx);
      return;
    }
    std::shared_ptr<const PoolPlan> plan = cache_.get(x.shape(), [&] { return make_plan(x.shape(), ctx); });
    if (!plan->supported) {
      run_reference(ctx);
      return;
    }
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, plan->out_shape);
    memory src = wrap(plan->src_desc, x);
    memory dst = plan->to_output ? dnnl_support::thread_buffer(plan->dst_desc, dnnl_support::BufferSlot::kDestination)
                                 : wrap(plan->dst_desc, y);
    // Single-threaded: pools are memory-bound and small next to the convolutions around them,
    // and oneDNN's OpenMP workers spin after each parallel region (see runtime/dnnl/row_chunks.h).
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if (plan->scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = dnnl_support::thread_scratchpad(plan->scratchpad);
    dnnl_support::execute(plan->primitive, args, 1);
    if (plan->to_output) {
      std::unordered_map<int, memory> reorder_args{{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, wrap(plan->output_desc, y)}};
      if (plan->reorder_scratchpad.get_size() > 0)
        reorder_args[DNNL_ARG_SCRATCHPAD] = dnnl_support::thread_scratchpad(plan->reorder_scratchpad);
      dnnl_support::execute(*plan->to_output, reorder_args, 1);
    }
    count_dnnl_fast_path_run();
  }

 private:
  DnnlPoolKernel(const KernelInit& init, PoolOp op, std::unique_ptr<Kernel> reference)
      : op_(op),
        reference_(std::move(reference), init.num_inputs()),
        options_(kernel_options(init)),
        isa_(kernel_isa(init)),
        channel_means_(pick_channel_means(isa_, options_.global_pool_wide)),
        max_pool_row_(pick_max_pool_row(isa_)) {
    if (op == PoolOp::kMax || op == PoolOp::kAverage) {
      attrs_ = WindowAttrs::parse(init, /*has_dilations=*/op == PoolOp::kMax, /*has_ceil_mode=*/true);
      count_include_pad_ = op == PoolOp::kAverage && init.attr_int("count_include_pad", 0) != 0;
    }
  }

  /// GlobalAveragePool / GlobalMaxPool of a channels-last input in one pass, a row of C running
  /// values per image. oneDNN 2.6 has no fast kernel for it: its reduction runs reference code
  /// on channels-last sources (2.4 ms for ResNet-50's 1x2048x7x7) and a pooling window over the
  /// whole plane is slow on large planes (30 ms for PP-OCRv4 det's 1x96x160x160). The output
  /// [N, C, 1, ...] is the same in both orders.
  void global_pool_channels_last(const Tensor& x, KernelContext& ctx) const {
    const int64_t n = x.dim(0), c = x.dim(1), plane = x.numel() / (n * c);
    Shape out_shape(x.shape().size(), 1);
    out_shape[0] = n;
    out_shape[1] = c;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const bool max = op_ == PoolOp::kGlobalMax;
    if (!max) {
      // Averages (channel_means_body); with several threads, each image's channels split between
      // them in multiples of 16 once the image has 32K values or more.
      const ChannelMeansFn channel_means = channel_means_;
      const int64_t parts =
          options_.global_pool_wide && ctx.num_threads() > 1 && plane * c >= (int64_t{1} << 15) && c >= 32 ? 2 : 1;
      auto bound = [&](int64_t part) { return part == parts ? c : (c * part / parts) & ~int64_t{15}; };
      auto run_parts = [&](int64_t begin, int64_t end) {
        std::vector<float> partial(static_cast<size_t>(c));
        std::vector<double> total(static_cast<size_t>(c));
        for (int64_t part = begin; part < end; ++part)
          for (int64_t b = 0; b < n; ++b)
            channel_means(x.data<float>() + b * plane * c, plane, c, bound(part), bound(part + 1), partial.data(),
                          total.data(), y.data<float>() + b * c);
      };
      if (parts > 1) ctx.parallel_for(parts, run_parts);
      else run_parts(0, 1);
      count_dnnl_fast_path_run();
      return;
    }
    for (int64_t b = 0; b < n; ++b) {
      const float* image = x.data<float>() + b * plane * c;
      float* out = y.data<float>() + b * c;
      std::copy(image, image + c, out);
      for (int64_t p = 1; p < plane; ++p) {
        const float* row = image + p * c;
        for (int64_t k = 0; k < c; ++k) out[k] = row[k] > out[k] || std::isnan(row[k]) ? row[k] : out[k];
      }
    }
    count_dnnl_fast_path_run();
  }

  /// GlobalAveragePool / GlobalMaxPool of an NCHW input: each (image, channel) plane is a
  /// contiguous row. oneDNN 2.6's reduction took 0.35 ms for DenseNet-121's 1x1024x7x7 (a plane
  /// of 49 per channel), ONNX Runtime 0.01 ms. Averages sum 16 interleaved float lanes per block
  /// of kMeanBlock positions into a double total, as the channels-last loop sums per block.
  void global_pool_planar(const Tensor& x, KernelContext& ctx) const {
    const int64_t n = x.dim(0), c = x.dim(1), rows = n * c, plane = x.numel() / rows;
    Shape out_shape(x.shape().size(), 1);
    out_shape[0] = n;
    out_shape[1] = c;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const bool max = op_ == PoolOp::kGlobalMax;
    const int64_t min_rows = std::max<int64_t>(1, ops::fast::kMinParallelElements / std::max<int64_t>(plane, 1));
    ops::fast::parallel_chunks(ctx, rows, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) out[r] = max ? plane_max(in + r * plane, plane) : plane_mean(in + r * plane, plane);
    });
    count_dnnl_fast_path_run();
  }

  static float plane_mean(const float* row, int64_t plane) {
    constexpr int kLanes = 16;
    double total = 0.0;
    for (int64_t p0 = 0; p0 < plane; p0 += kMeanBlock) {
      const int64_t p1 = std::min(plane, p0 + kMeanBlock);
      float lanes[kLanes] = {};
      int64_t p = p0;
      for (; p + kLanes <= p1; p += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] += row[p + l];
      float partial = 0.f;
      for (int l = 0; l < kLanes; ++l) partial += lanes[l];
      for (; p < p1; ++p) partial += row[p];
      total += partial;
    }
    return static_cast<float>(total / static_cast<double>(plane));
  }

  /// The reference kernel's maximum (std::max from -inf, so a NaN never replaces a number).
  static float plane_max(const float* row, int64_t plane) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t p = 0; p < plane; ++p) best = std::max(best, row[p]);
    return best;
  }

  /// Whether a MaxPool of `x` is large enough to split between threads (the direct loop's only
  /// use where it does not run on one thread too: direct_max_pool_on_one_thread).
  bool splits_between_threads(const Tensor& x, const KernelContext& ctx) const {
    // Below ~64K input values a thread hand-off costs more than the split saves.
    constexpr int64_t kMinParallelInput = int64_t{1} << 16;
    return ctx.num_threads() > 1 && x.numel() >= kMinParallelInput && x.dim(2) > 1;
  }

  /// A 2-D MaxPool from and to channels-last maps, its output rows split over the session's
  /// threads: oneDNN's pooling ran single-threaded (a primitive per row slice would need its own
  /// paddings), and at 2 threads SqueezeNet's three MaxPools were 11% of its time.
  void max_pool_channels_last(const Tensor& x, KernelContext& ctx) const {
    const WindowGeometry g = resolve_window(attrs_, {x.dim(2), x.dim(3)}, attrs_.kernel_shape, ctx);
    const int64_t n = x.dim(0), c = x.dim(1);
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, {n, c, g.out[0], g.out[1]});
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const int64_t in_image = c * g.in[0] * g.in[1], out_row = c * g.out[1], rows = n * g.out[0];
    const MaxPoolRowFn max_pool_row = max_pool_row_;
    ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        max_pool_row(in + (r / g.out[0]) * in_image, g, c, r % g.out[0], out + r * out_row);
    });
    count_dnnl_fast_path_run();
    g_direct_max_pool_runs.fetch_add(1, std::memory_order_relaxed);
  }

  /// The reference kernel, on an NCHW copy of a channels-last input; a channels-last output is
  /// permuted back into that order.
  void run_reference(KernelContext& ctx) const {
    std::map<size_t, Value> replaced;
    if (input_channels_last_ && ctx.input_value(0).is_tensor() && ctx.input(0).rank() >= 3)
      replaced[0] = Value(permute_channels(ctx.input(0), false));
    reference_.compute(ctx, replaced);
    if (output_channels_last_ && ctx.output_value(0).is_tensor() && ctx.output_value(0).tensor().rank() >= 3) {
      Tensor nchw = ctx.output_value(0).tensor();
      ctx.set_output(0, Value(permute_channels(nchw, true)));
    }
  }

  PoolPlan make_plan(const Shape& x_shape, const KernelContext& ctx) const {
    PoolPlan plan;
    dnnl_support::ThreadScope scope(1);
    if (op_ == PoolOp::kGlobalMax || op_ == PoolOp::kGlobalAverage) {
      plan.out_shape = Shape(x_shape.size(), 1);
      plan.out_shape[0] = x_shape[0];
      plan.out_shape[1] = x_shape[1];
      try {
        dnnl::reduction::desc desc(op_ == PoolOp::kGlobalMax ? dnnl::algorithm::reduction_max
                                                             : dnnl::algorithm::reduction_mean,
                                   plain_desc(x_shape), plain_desc(plan.out_shape), 0.f, 0.f);
        const dnnl::reduction::primitive_desc pd(desc, dnnl_support::user_scratchpad_attr(), cpu_engine());
        plan.primitive = dnnl::reduction(pd);
        plan.scratchpad = pd.scratchpad_desc();
        plan.src_desc = pd.src_desc();
        plan.dst_desc = pd.dst_desc();
        plan.supported = true;
      } catch (const dnnl::error&) {
      }
      return plan;
    }
    if (static_cast<int64_t>(attrs_.kernel_shape.size()) != static_cast<int64_t>(x_shape.size()) - 2) return plan;
    const std::vector<int64_t> in(x_shape.begin() + 2, x_shape.end());
    const WindowGeometry g = resolve_window(attrs_, in, attrs_.kernel_shape, ctx);
    memory::dims strides, kernel, dilations, pad_l, pad_r;
    for (int64_t i = 0; i < g.rank; ++i) {
      const int64_t ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
      // ceil_mode: the last window may reach past the end padding; oneDNN sees that as padding.
      const int64_t right = std::max(g.pad_end[i], (g.out[i] - 1) * g.strides[i] + ek - g.in[i] - g.pad_begin[i]);
      if (g.out[i] <= 0 || (g.in[i] - ek + g.pad_begin[i] + right) / g.strides[i] + 1 != g.out[i]) return plan;
      if (g.pad_begin[i] >= ek || right >= ek) return plan;  // a window could hold only padding
      if (count_include_pad_ && right > g.pad_end[i]) return plan;
      strides.push_back(g.strides[i]);
      kernel.push_back(g.kernel[i]);
      dilations.push_back(g.dilations[i] - 1);
      pad_l.push_back(g.pad_begin[i]);
      pad_r.push_back(right);
    }
    plan.out_shape = {x_shape[0], x_shape[1]};
    plan.out_shape.insert(plan.out_shape.end(), g.out.begin(), g.out.end());
    const dnnl::algorithm algorithm = op_ == PoolOp::kMax      ? dnnl::algorithm::pooling_max
                                      : count_include_pad_     ? dnnl::algorithm::pooling_avg_include_padding
                                                               : dnnl::algorithm::pooling_avg_exclude_padding;
    try {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm,
                                          layout_desc(x_shape, input_channels_last_),
                                          layout_desc(plan.out_shape, input_channels_last_), strides, kernel,
                                          dilations, pad_l, pad_r);
      const dnnl::pooling_v2_forward::primitive_desc pd(desc, dnnl_support::user_scratchpad_attr(), cpu_engine());
      plan.primitive = dnnl::pooling_v2_forward(pd);
      plan.scratchpad = pd.scratchpad_desc();
      plan.src_desc = pd.src_desc();
      plan.dst_desc = pd.dst_desc();
      if (output_channels_last_ != input_channels_last_) {
        plan.output_desc = layout_desc(plan.out_shape, output_channels_last_);
        const dnnl::reorder::primitive_desc rpd(cpu_engine(), plan.dst_desc, cpu_engine(), plan.output_desc,
                                                dnnl_support::user_scratchpad_attr());
        plan.to_output = dnnl::reorder(rpd);
        plan.reorder_scratchpad = rpd.scratchpad_desc();
      }
      plan.supported = true;
    } catch (const dnnl::error&) {
    }
    return plan;
  }

  PoolOp op_;
  ops::ReferenceChain reference_;
  KernelOptions options_;  // SessionOptions::kernel_options
  KernelIsa isa_;          // the vector tier the direct loops may use
  ChannelMeansFn channel_means_;
  MaxPoolRowFn max_pool_row_;
  WindowAttrs attrs_;
  bool count_include_pad_ = false;
  bool input_channels_last_ = false, output_channels_last_ = false;
  dnnl_support::ShapeCache<PoolPlan> cache_;
};

template <PoolOp kOp>
struct DnnlPool {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlPoolKernel::create(init, kOp); }
};
using DnnlMaxPool = DnnlPool<PoolOp::kMax>;
using DnnlAveragePool = DnnlPool<PoolOp::kAverage>;
using DnnlGlobalMaxPool = DnnlPool<PoolOp::kGlobalMax>;
using DnnlGlobalAveragePool = DnnlPool<PoolOp::kGlobalAverage>;

}  // namespace

uint64_t direct_max_pool_runs() { return g_direct_max_pool_runs.load(std::memory_order_relaxed); }

// On an AVX2-only AMD EPYC oneDNN 2.6's single-threaded pooling took several times the AVX2 row
// loop's time on ResNet's and GoogLeNet's pools, so the loop runs at one thread from AVX2 up.
bool direct_max_pool_on_one_thread(KernelIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  return isa >= KernelIsa::kAvx2;
#else
  (void)isa;
  return false;
#endif
}

PARITY_REGISTER_OPTIMIZED_KERNEL("", "MaxPool", (1, 8, 10, 11, 12), DnnlMaxPool);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "AveragePool", (1, 7, 10, 11, 19), DnnlAveragePool);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "GlobalMaxPool", 1, DnnlGlobalMaxPool);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "GlobalAveragePool", 1, DnnlGlobalAveragePool);

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
