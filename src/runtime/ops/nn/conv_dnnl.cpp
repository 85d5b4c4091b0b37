// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html, onnx__ConvTranspose.html
// Optimized Conv and ConvTranspose (fp32) on oneDNN, beside the reference kernels in conv.cpp and
// conv_transpose.cpp.
//
// Constant weights are reordered once into the layout oneDNN prefers for the convolution
// (format_tag::any); at plan time already when the input shape is static. oneDNN also picks the
// activation layout (channels-last on AVX-512); per input shape the cached plan holds the
// primitive plus the reorders between that layout and parity's NCHW tensors. Between consecutive
// convolutions the planner hands values over in channels-last order (runtime/channels_last.h),
// which removes those reorders: measured on ResNet-50 they were 22% of the oneDNN time (130
// reorders per run, 25 after), on MobileNetV2 48% (121 per run, 15 after).
//
// With several threads the output rows (first spatial dim) are split into slices, one per thread,
// each a single-threaded primitive run on parity's thread pool: oneDNN's own OpenMP workers spin
// after every parallel region and made 2 threads several times slower than 1 on a loaded machine.
// Where the weights outweigh the activations (deep layers at small spatial sizes), every row slice
// would read all the weights, so the output channels are split instead: each slice a primitive
// over its own weights, bias and output channels (whole groups of a grouped convolution); the rule
// that picks the axis per layer is in conv_split.cpp.
//
// The kernels fuse their elementwise tails (activations, scalar or per-channel affine constants,
// a residual Add) as oneDNN post-ops; runs the fast path does not take (non-fp32 tensors, an
// addend whose shape is not the output's, a geometry oneDNN rejects, zero-size tensors) run the
// reference kernels of the head and of every fused tail instead, so results never depend on
// whether a node was fused.
//
// int8 layers of a plan (runtime/reduced_precision.h) run oneDNN's s8 convolution or
// deconvolution: the source is quantized per tensor with the calibrated scale, the weights per
// output channel, the products
// accumulate in int32 (VNNI on AVX512), and the output scales (source scale x weight scale per
// channel) dequantize to fp32 before the fused tails. Without VNNI oneDNN sums exactly only u8
// sources (take_non_negative_source); there a 1x1 convolution of a signed source runs parity's
// s8 x s8 product (conv_int8_pointwise.h) instead, and other int8 convolutions compute in fp32 on
// the fake-quantized operands.
#if PARITY_HAVE_DNNL

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"
#include "runtime/buffer_pool.h"
#include "runtime/channels_last.h"
#include "runtime/packed_state.h"
#include "runtime/kernel_preferences.h"
#include "runtime/reduced_precision.h"
#include "runtime/reduced_storage.h"
#include "runtime/dnnl/row_chunks.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/math/matmul_fast.h"
#include "runtime/ops/nn/conv_core.h"
#include "runtime/ops/nn/conv_depthwise_fast.h"
#include "runtime/ops/nn/conv_expand_depthwise.h"
#include "runtime/ops/nn/conv_int8_pointwise.h"
#include "runtime/ops/nn/conv_pointwise_fast.h"
#include "runtime/ops/nn/conv_split.h"
#include "runtime/ops/nn/conv_stem_fast.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn/swish_fast.h"

namespace parity::runtime::nn {
namespace {

using dnnl::memory;
using dnnl_support::cpu_engine;
using dnnl_support::plain_desc;
using dnnl_support::wrap;

/// Weights descriptor over ONNX's weight buffer as oneDNN indexes convolution weights:
/// dims [G,] O/G, I/G, k...; `transposed` for ConvTranspose, whose ONNX layout is [I, O/G, k...].
memory::desc onnx_weights_desc(const Shape& w, int64_t group, bool transposed,
                               memory::data_type type = memory::data_type::f32) {
  const int64_t k_numel = shape_numel(Shape(w.begin() + 2, w.end()));
  const int64_t out_per_group = transposed ? w[1] : w[0] / group;
  const int64_t in_per_group = transposed ? w[0] / group : w[1];
  memory::dims dims, strides;
  if (group > 1) {
    dims.push_back(group);
    strides.push_back(out_per_group * in_per_group * k_numel);
  }
  dims.push_back(out_per_group);
  dims.push_back(in_per_group);
  if (transposed) {  // memory order [G, I/G, O/G, k]
    strides.push_back(k_numel);
    strides.push_back(out_per_group * k_numel);
  } else {  // memory order [G, O/G, I/G, k]
    strides.push_back(in_per_group * k_numel);
    strides.push_back(k_numel);
  }
  const std::vector<int64_t> k_strides = shape_strides(Shape(w.begin() + 2, w.end()));
  for (size_t d = 2; d < w.size(); ++d) {
    dims.push_back(w[d]);
    strides.push_back(k_strides[d - 2]);
  }
  return memory::desc(dims, type, strides);
}

bool is_pointwise(const ConvProblem& p) {
  const WindowGeometry& g = p.geom;
  for (int64_t i = 0; i < g.rank; ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
  return p.group == 1;
}

memory::desc activation_desc(const Shape& shape, bool plain, memory::data_type type = memory::data_type::f32) {
  if (plain) return plain_desc(shape, type);
  return memory::desc(dnnl_support::to_dims(shape), type, memory::format_tag::any);
}

/// One slice of the output, a range of rows (along the first spatial dim) or of channels, and the
/// part of the input it reads: the primitive for that slice, its packed weights, and the reorders
/// between the plain tensors' views and the layouts the primitive chose. With one thread there is
/// a single slice, the whole tensor.
struct ConvChunk {
  dnnl::primitive primitive;
  memory weights;
  memory::desc scratchpad;
  memory::desc x_view, y_view, addend_view;  // the slice inside x / y / the residual addend
  int64_t x_offset = 0, y_offset = 0, addend_offset = 0;  // element offset of the slice's first element
  int64_t y_span = 0;  // channels-last row slice: elements of the slice's rows in one batch item (contiguous)
  int64_t out_channel = 0;  // the slice's first output channel: its bias and per-channel post-op operands
  Shape y_shape;            // what the primitive computes
  memory::desc src_desc, dst_desc;     // what the primitive reads / writes
  bool reorder_src = false, reorder_dst = false;
  /// A reorder between a plain view and the primitive's layout, with a caller-provided
  /// scratchpad like the convolution (slices run on any of parity's threads).
  struct Reorder {
    dnnl::reorder primitive;
    memory::desc scratchpad;
    void run(const dnnl::stream& stream, const memory& from, const memory& to) const {
      std::unordered_map<int, memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
      if (scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = dnnl_support::thread_scratchpad(scratchpad);
      primitive.execute(stream, args);
    }
  };
  Reorder src_in, dst_out, residual_in;
};

/// oneDNN's geometry for one run: strides, dilations (0 = dense), paddings.
struct DnnlGeometry {
  memory::dims strides, dilations, pad_l, pad_r;
};

/// Everything one input shape (and thread count) needs, built once.
struct ConvPlan {
  bool supported = false;  // false: oneDNN rejected the geometry; the reference path runs
  ConvSplitAxis axis = ConvSplitAxis::kRows;
  std::vector<ConvChunk> chunks;
  /// A trailing Swish that the primitive leaves out: each slice applies it to its own output
  /// rows right after the primitive wrote them (swish_fast.h); batch items are y_batch_stride apart.
  std::optional<float> swish_after;
  int64_t batch = 1, y_batch_stride = 0;
};

/// The part of a convolution one slice computes: its own problem (channels, groups), the shapes
/// it reads and writes, its paddings, and where it starts inside the whole tensors.
struct SliceExtent {
  ConvProblem problem;
  Shape x_shape, y_shape;
  DnnlGeometry geometry;
  int64_t in_row = 0, out_row = 0;          // row slices
  int64_t in_channel = 0, out_channel = 0;  // channel slices
};

class DnnlConvKernel : public Kernel,
                       public FusableKernel,
                       public ChannelsLastKernel,
                       public PackedStateKernel,
                       public ReducedStorageKernel,
                       public Int8StorageKernel,
                       public Int8EngineKernel,
                       public NativeInt8Kernel,
                       public QuantizedOutputKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init, bool transposed) {
    auto reference = init.create_reference_kernel();  // also validates the attributes
    if (init.input_dtype(0) != DType::kUndefined && init.input_dtype(0) != DType::kFloat32) return nullptr;
    if (init.has_input(2) && init.input_dtype(2) != DType::kUndefined && init.input_dtype(2) != DType::kFloat32)
      return nullptr;
    if (!init.has_input(1)) return nullptr;
    std::optional<Tensor> w = init.constant_input(1);
    if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->rank() > 5) return nullptr;
    auto kernel = std::unique_ptr<DnnlConvKernel>(new DnnlConvKernel(init, transposed, std::move(reference), *w));
    if (kernel->group_ <= 0 || kernel->out_channels() <= 0) return nullptr;
    // A bf16 layer of a reduced-precision plan (runtime/reduced_precision.h): bf16 source and
    // weights, fp32 accumulation and destination (the wrapper rounds the result to bf16).
    if (compute_precision_of(init) == DType::kBFloat16 && dnnl_support::native_bf16()) {
      kernel->compute_type_ = memory::data_type::bf16;
    }
    // An int8 layer: the weights (fake-quantized by the layer's init) as their int8 values, where
    // oneDNN sums them exactly; elsewhere parity's s8 x s8 product for a 1x1 convolution, and fp32
    // on the fake-quantized operands for the others.
    kernel->int8_layer_ = compute_precision_of(init) == DType::kInt8;
    if (kernel->int8_layer_ && dnnl_support::int8_sums_exactly()) kernel->start_int8();
    else if (kernel->int8_layer_) kernel->start_int8_pointwise();
    const auto* source = dynamic_cast<const PackedStateSource*>(&init);
    kernel->capture_constant_bias(init);
    kernel->start_point_product();
    kernel->start_pointwise_direct(init);
    kernel->start_depthwise_direct(init);
    kernel->start_stem_direct(init);
    if (source && source->saved_packed_state()) kernel->restore(*source->saved_packed_state(), init);
    else if (std::optional<Shape> x = init.input_static_shape(0); x && !kernel->int8_pointwise_) kernel->prepack(*x);
    kernel->static_input_shape_ = init.input_static_shape(0);
    return kernel;
  }

  // Plan files: the weights packed at plan time, with oneDNN's descriptor of their layout (a plain
  // C struct, valid for the oneDNN build and ISA that the plan's machine fingerprint pins).
  std::optional<PackedState> packed_state() const override {
    // int8 weights packed for an s8 source carry oneDNN's compensation (extra flags), which a
    // plan does not restore: an int8 layer packs again at load, from the plan's weights.
    if (!prepacked_ || int8_) return std::nullopt;
    // Winograd's transformed weights have no blocked layout a plan can describe: such a layer
    // keeps the plan's plain weights and transforms them again at load.
    if (prepacked_desc_.data.format_kind != dnnl_blocked) return std::nullopt;
    const dnnl_memory_desc_t& desc = prepacked_desc_.data;
    PackedState state;
    state.layout.assign(reinterpret_cast<const char*>(&desc), sizeof desc);
    const size_t size = prepacked_desc_.get_size();
    state.data = Tensor::from_bytes(DType::kUInt8, {static_cast<int64_t>(size)}, prepacked_.get_data_handle(), size);
    return state;
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    // oneDNN 2.6 applies deconvolution post-ops in a slow generic pass (measured: PP-OCRv4 det's
    // two ConvTransposes went from 0.1 s to 2.6 s with a fused bias Add + Sigmoid), so ConvTranspose
    // takes no tails.
    if (transposed_) return false;
    if (depthwise_tail_) return fuse_after_depthwise(tail, first_extra_input);
    if (fuse_depthwise_tail(tail)) {
      chain_.add_tail(tail, first_extra_input);
      return true;
    }
    if (int8_pointwise_) {
      // The s8 x s8 path applies the tails in its own loops: a tail they lack stays a node of its
      // own rather than sending every run of this layer to the reference kernels.
      FusedTails trial = tails_;
      if (!trial.add(tail, first_extra_input, out_channels(), static_cast<size_t>(weights_.rank())) || !trial.loops_ok())
        return false;
    }
    if (!tails_.add(tail, first_extra_input, out_channels(), static_cast<size_t>(weights_.rank()))) return false;
    chain_.add_tail(tail, first_extra_input);
    // The post-ops are part of every cached primitive.
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
    return true;
  }

  // Channels-last hand-off: convolutions (not transposed) read X and the residual addend, and
  // write Y, in channels-last order when the planner pairs them; the primitive's own layout on
  // AVX-512 is channels-last, so the conversions disappear.
  bool can_write_channels_last() const override { return !transposed_; }
  void write_channels_last() override {
    output_channels_last_ = true;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
  }
  bool can_read_channels_last(size_t input) const override {
    return !transposed_ && (input == 0 || tails_.residual_input() == input);
  }
  bool prefers_channels_last(size_t input) const override { return !transposed_ && input == 0; }
  void read_channels_last(size_t input) override {
    if (input == 0) input_channels_last_ = true;
    else residual_channels_last_ = true;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
  }

  // bf16 storage (runtime/reduced_storage.h): a native bf16 convolution reads a bf16 source as is
  // and may write its output as bf16.
  bool reads_reduced_input(size_t input) const override { return input == 0 && native_reduced(); }
  bool can_write_reduced() const override { return native_reduced(); }
  void write_reduced() override {
    output_reduced_ = true;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
  }

  // int8 storage (runtime/reduced_storage.h): oneDNN's int8 convolution reads an s8 or u8 source
  // as it is and requantizes its output in the epilogue (not after a residual sum, which
  // accumulates onto the destination in its own type).
  bool reads_int8_input(size_t input) const override { return input == 0 && int8_ && !transposed_ && !depthwise_tail_; }
  bool can_write_int8() const override {
    // Without VNNI the readers take u8 only (take_non_negative_source).
    const bool type_ok = dnnl_support::int8_sums_exactly() || tails_.output_non_negative();
    return int8_ && type_ok && !transposed_ && !depthwise_tail_ && !tails_.has_residual();
  }
  void write_int8(float scale) override {
    output_int8_ = tails_.output_non_negative() ? DType::kUInt8 : DType::kInt8;
    y_scale_ = scale;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
  }
  DType int8_output_dtype() const override { return output_int8_; }
  bool output_non_negative() const override { return tails_.output_non_negative(); }
  DType int8_source_dtype() const override {
    if (!int8_) return int8_pointwise_ ? DType::kInt8 : DType::kUndefined;
    return non_negative_source_ ? DType::kUInt8 : DType::kInt8;
  }
  // The s8 x s8 product names itself in plans and inspect; oneDNN's int8 convolution is named by
  // the plan with oneDNN's ISA.
  std::string int8_engine() const override {
    return int8_pointwise_ && !int8_ ? int8_pointwise_->engine() : std::string();
  }
  // Without VNNI, oneDNN's int8 convolution (AVX2: vpmaddubsw) sums u8 sources of at most 127
  // exactly; an int8 layer there starts its int8 path only once its source is known >= 0.
  // A 1x1 layer that runs the s8 x s8 product moves to oneDNN's u8 convolution then: three
  // instructions per 32 products (vpmaddubsw, vpmaddwd, vpaddd) against four, and it may store
  // its output as int8.
  bool take_non_negative_source(float scale) override {
    if (!int8_layer_ || transposed_ || depthwise_tail_ || !(scale > 0) || !std::isfinite(scale)) return runs_int8();
    if (!int8_) {
      if (!dnnl_support::isa_includes(dnnl_support::effective_isa(), dnnl::cpu_isa::avx2)) return runs_int8();
      // A product on 1x1 maps (squeeze-excitation) keeps its direct loop (start_point_product), or
      // the s8 x s8 product.
      if (point_weights_ && static_input_shape_ &&
          std::all_of(static_input_shape_->begin() + 2, static_input_shape_->end(), [](int64_t d) { return d == 1; }))
        return runs_int8();
      std::optional<Int8PointwiseProduct> pointwise = std::move(int8_pointwise_);
      int8_pointwise_.reset();
      start_int8();
      non_negative_source_ = true;
      if (!take_int8_scales({{0, scale}}) || !int8_has_jit_implementation()) {
        // oneDNN's reference int8 convolution is many times slower than its fp32 jit kernels.
        non_negative_source_ = false;
        stop_int8();
        int8_pointwise_ = std::move(pointwise);
        return runs_int8();
      }
      prepacked_ = memory();  // the fp32 weights' packing
      prepacked_desc_ = memory::desc();
    }
    if (scale != x_scale_) return int8_;
    non_negative_source_ = true;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
    return int8_;
  }

  // int8 (runtime/reduced_precision.h): the source's calibrated scale.
  bool take_int8_scales(const std::map<size_t, float>& scales) override {
    const bool ok = (int8_ || int8_pointwise_) && scales.size() == 1 && scales.count(0) && scales.at(0) > 0 &&
                    std::isfinite(scales.at(0));
    if (!ok) {
      stop_int8();
      int8_pointwise_.reset();
      return false;
    }
    x_scale_ = scales.at(0);
    if (!int8_) {
      int8_pointwise_->set_source_scale(x_scale_);
      return true;
    }
    output_scales_ = channel_weight_scales();
    for (float& s : output_scales_) s *= x_scale_;
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
    return true;
  }
  bool runs_int8() const override { return int8_ || int8_pointwise_.has_value(); }

  // The quantized fp32 hand-off (runtime/reduced_storage.h): the s8 x s8 product rounds each
  // finished tile, after its tails; other runs of the layer round the whole output.
  bool can_write_quantized() const override { return int8_pointwise_.has_value() && !int8_ && !depthwise_tail_; }
  void write_quantized(float scale) override { quantized_output_scale_ = scale; }
  float quantized_output_scale() const override { return quantized_output_scale_; }

  void compute(KernelContext& ctx) const override {
    if (depthwise_tail_) {
      run_expand_depthwise(ctx);
      return;
    }
    if (int8_pointwise_ && !int8_) {
      if (run_int8_pointwise(ctx)) {
        count_dnnl_fast_path_run();
        return;
      }
      // The layer's wrapper leaves the source to this kernel: fp32 on the fake-quantized source
      // (the reference path quantizes its own copy).
      const Tensor& x = ctx.input(0);
      if (x.dtype() == DType::kFloat32) {
        Tensor quantized = x.clone();
        fake_quantize_int8(quantized.data<float>(), quantized.numel(), x_scale_);
        compute_on(ctx, quantized);
        quantize_output(ctx);
        return;
      }
    }
    compute_on(ctx, ctx.input(0));
    quantize_output(ctx);
  }

 private:
  /// write_quantized on a run that did not round its tiles.
  void quantize_output(KernelContext& ctx) const {
    if (!(quantized_output_scale_ > 0) || !ctx.has_output(0)) return;
    Value& out = ctx.output_value(0);
    if (!out.is_tensor() || out.tensor().dtype() != DType::kFloat32) return;
    Tensor& y = out.tensor();
    fake_quantize_int8(y.data<float>(), y.numel(), quantized_output_scale_);
  }

  /// compute() with `x` as the source (ctx's input 0, or its fake-quantized copy).
  void compute_on(KernelContext& ctx, const Tensor& x) const {
    const ConvProblem p = problem(x.shape(), ctx);  // fails like the reference on bad shapes
    const Shape out_shape = p.output_shape();
    // Fused tails append their inputs after the head's own: index 2 is the bias only if the node had one.
    const Tensor* bias = num_head_inputs_ > 2 && ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const bool source_ok = x.dtype() == DType::kFloat32 || (x.dtype() == DType::kBFloat16 && native_reduced()) ||
                           (int8_ && is_int8_storage(x.dtype()));
    bool fast = source_ok && shape_numel(out_shape) > 0 && x.numel() > 0 &&
                (!bias || (bias->dtype() == DType::kFloat32 && bias->numel() == p.out_channels)) &&
                tails_.fast_path_ok(ctx, out_shape);
    if (fast && runs_point_product(p, x)) {
      run_point_product(p, x, bias, out_shape, ctx);
      count_dnnl_fast_path_run();
      return;
    }
    if (fast && runs_stem_direct(p, x, bias)) {
      run_stem_direct(p, x, out_shape, ctx);
      count_dnnl_fast_path_run();
      return;
    }
    if (fast && runs_depthwise_direct(p, x, bias)) {
      run_depthwise_direct(p, x, out_shape, ctx);
      count_dnnl_fast_path_run();
      return;
    }
    if (fast && runs_pointwise_direct(p, x, bias)) {
      run_pointwise_direct(p, x, out_shape, ctx);
      count_dnnl_fast_path_run();
      return;
    }
    std::shared_ptr<const ConvPlan> plan;
    if (fast) {
      const int64_t chunks = chunk_count(p, ctx);
      std::vector<int64_t> key = x.shape();
      key.push_back(chunks);
      key.push_back(bias != nullptr);
      // The primitive's source type: an int8 layer's fp32 source is quantized (quantized_source) first.
      const DType source_dtype = !int8_ || is_int8_storage(x.dtype()) ? x.dtype()
                                 : non_negative_source_                ? DType::kUInt8
                                                                       : DType::kInt8;
      key.push_back(static_cast<int64_t>(source_dtype));
      plan = cache_->get(key, [&] { return make_plan(p, bias != nullptr, chunks, source_dtype); });
      fast = plan->supported;
    }
    if (!fast) {
      run_reference(ctx);
      return;
    }
    if (int8_) {
      const Tensor xq = is_int8_storage(x.dtype()) ? x : quantized_source(x, ctx);
      const Tensor scaled_bias = bias ? int8_bias(*bias) : Tensor();
      run(*plan, xq, bias ? &scaled_bias : nullptr, out_shape, ctx);
    } else {
      run(*plan, x, bias, out_shape, ctx);
    }
    count_dnnl_fast_path_run();
  }

  DnnlConvKernel(const KernelInit& init, bool transposed, std::unique_ptr<Kernel> reference, Tensor weights)
      : transposed_(transposed),
        chain_(std::move(reference), init.num_inputs()),
        weights_(std::move(weights)),
        num_head_inputs_(init.num_inputs()),
        winograd_allowed_(winograd_allowed(init)),
        options_(kernel_options(init)),
        isa_(kernel_isa(init)),
        cache_(std::make_unique<dnnl_support::ShapeCache<ConvPlan>>()) {
    if (transposed) {
      transpose_attrs_ = ConvTransposeAttrs::parse(init);
      group_ = transpose_attrs_.group;
    } else {
      window_ = WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false);
      group_ = init.attr_int("group", 1);
    }
  }

  /// A convolution of a 1x1 kernel (group 1) on 1x1 maps, MobileNetV3's squeeze-excitation
  /// layers, is a product of a few rows against [O, I] weights: it runs the direct small-product
  /// loop (ops/math/matmul_fast.h), whose cost is reading the weights, where a oneDNN primitive
  /// took 10-12 us per call on the smallest ones and read the larger ones more slowly.
  void start_point_product() {
    if (transposed_ || group_ != 1 || !options_.conv_point_product) return;
    const Shape& w = weights_.shape();
    if (std::any_of(w.begin() + 2, w.end(), [](int64_t k) { return k != 1; })) return;
    point_weights_.emplace(weights_.reshaped({w[0], w[1]}), /*transposed=*/true, isa_);
  }

  bool runs_point_product(const ConvProblem& p, const Tensor& x) const {
    if (!point_weights_ || int8_ || compute_type_ != memory::data_type::f32 || x.dtype() != DType::kFloat32) return false;
    if (p.batch > ops::small_gemm::kMaxRows || !tails_.loops_ok()) return false;
    const WindowGeometry& g = p.geom;
    for (int64_t d = 0; d < g.rank; ++d)
      if (g.in[d] != 1 || g.out[d] != 1 || g.pad_begin[d] != 0) return false;
    return true;
  }

  /// A [N, C, 1, ...] tensor is the same in NCHW and channels-last order, so no layout matters.
  void run_point_product(const ConvProblem& p, const Tensor& x, const Tensor* bias, const Shape& out_shape,
                         KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    float* out = y.data<float>();
    point_weights_->multiply_all(ctx, x.data<float>(), p.in_channels, p.batch, out);
    if (bias) {
      const float* b = bias->data<float>();
      for (int64_t r = 0; r < p.batch; ++r)
        for (int64_t c = 0; c < p.out_channels; ++c) out[r * p.out_channels + c] += b[c];
    }
    const Tensor* addend = tails_.residual(ctx);
    tails_.apply_to_rows(out, p.batch, p.out_channels, addend ? addend->data<float>() : nullptr);
  }

  /// Input channels up to which a 1x1 stride-1 convolution between channels-last maps may run
  /// the direct loop (conv_pointwise_fast.h) instead of oneDNN (see runs_pointwise_direct): with
  /// longer reductions the loop reads its weights once per few pixels, and EfficientNet's
  /// 192 -> 1152 layers on 7x7 maps took twice oneDNN's time.
  static constexpr int64_t kPointwiseDirectMaxInput = 64;
  /// Output channels up to which a 1x1 convolution with a residual Add takes the direct loop.
  static constexpr int64_t kPointwiseResidualMaxOutput = 64;

  /// Packs the weights (and a constant bias) for the direct loop, when this is a narrow 1x1
  /// convolution; whether a run takes it depends on the layouts and tails (runs_pointwise_direct).
  void start_pointwise_direct(const KernelInit& init) {
    if (transposed_ || group_ != 1 || !options_.conv_pointwise_direct || !pointwise_direct_available(isa_) || weights_.rank() != 4) return;
    const Shape& w = weights_.shape();
    if (w[2] != 1 || w[3] != 1 || w[1] > kPointwiseDirectMaxInput) return;
    if (!has_constant_bias_or_none_) return;
    const float* bias = constant_bias_ ? constant_bias_->data<float>() : nullptr;
    pointwise_direct_.emplace(pack_pointwise_weights(weights_.data<float>(), w[0], w[1], bias, isa_));
  }

  /// Kernel sizes up to which a depthwise convolution runs the direct loop: measured per layer on
  /// MobileNetV2/V3 and EfficientNet-B0 (1 thread), the loop beat oneDNN on 3x3 kernels (MobileNetV2's
  /// 96-channel stride-2 layer 0.47 -> 0.42 ms, EfficientNet's 32-channel one on 112x112 with its
  /// Swish 0.46 -> 0.39 ms) and lost on every 5x5 one (1152 channels on 7x7: 0.07 -> 0.11 ms).
  static constexpr int64_t kDepthwiseDirectMaxKernel = 3;

  /// Packs the weights (and a constant bias) for the direct depthwise loop when this is a 2-D
  /// depthwise convolution (one input and one output channel per group) of a small kernel.
  void start_depthwise_direct(const KernelInit& init) {
    if (transposed_ || !options_.conv_depthwise_direct || !depthwise_direct_available(isa_) || weights_.rank() != 4) return;
    const Shape& w = weights_.shape();
    if (w[1] != 1 || w[0] != group_ || group_ < 2 || w[2] > kDepthwiseDirectMaxKernel ||
        w[3] > kDepthwiseDirectMaxKernel)
      return;
    if (!has_constant_bias_or_none_) return;
    const float* bias = constant_bias_ ? constant_bias_->data<float>() : nullptr;
    depthwise_direct_.emplace(
        pack_depthwise_weights(weights_.data<float>(), w[0], w[2], w[3], bias, isa_));
  }

  /// Whether the fused tails suit the direct row loops (depthwise, stem): an activation they apply
  /// in registers or a lone Swish they apply to each finished row; no residual Add.
  bool row_loop_takes_tails(const FusedTails& tails) const {
    const std::optional<FusedTails::SimpleChain> simple = tails.simple_chain();
    return (simple && !simple->sum) || (tails.lone_swish() && fast_swish_available(isa_));
  }

  static bool undilated_with_nonnegative_pads(const WindowGeometry& g) {
    for (int64_t d = 0; d < g.rank; ++d)
      if (g.dilations[d] != 1 || g.pad_begin[d] < 0 || g.pad_end[d] < 0) return false;
    return true;
  }

  /// One image's 2-D geometry as the direct row loops take it.
  static DepthwiseGeometry image_geometry(const WindowGeometry& wg) {
    DepthwiseGeometry g;
    g.in_h = wg.in[0];
    g.in_w = wg.in[1];
    g.out_h = wg.out[0];
    g.out_w = wg.out[1];
    g.stride_h = wg.strides[0];
    g.stride_w = wg.strides[1];
    g.pad_top = wg.pad_begin[0];
    g.pad_left = wg.pad_begin[1];
    return g;
  }

  /// What the row loops apply after the sum: an activation, or a Swish on each finished row.
  struct RowLoopEpilogue {
    PointwiseEpilogue activation;
    std::optional<float> swish_alpha;
    const float* swish() const { return swish_alpha ? &*swish_alpha : nullptr; }
    /// Points at swish_alpha: valid while this struct lives.
    RowFinish finish() const { return {activation, swish()}; }
  };

  /// The row loops' epilogue for the accepted tails (row_loop_takes_tails).
  static RowLoopEpilogue row_loop_epilogue(const FusedTails& tails) {
    RowLoopEpilogue epilogue;
    if (const std::optional<FusedTails::SimpleChain> simple = tails.simple_chain()) {
      epilogue.activation.activation = pointwise_activation(simple->activation);
      epilogue.activation.lo = simple->lo;
      epilogue.activation.hi = simple->hi;
    } else {
      epilogue.swish_alpha = tails.trailing_swish();
    }
    return epilogue;
  }

  /// Calls rows(image, first, last) on bands of output rows of every image, the batch's rows
  /// split between the threads (a band never crosses an image).
  static void split_image_rows(KernelContext& ctx, int64_t batch, int64_t out_h,
                               const std::function<void(int64_t, int64_t, int64_t)>& rows) {
    auto run_rows = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end;) {
        const int64_t image = r / out_h, oy = r - image * out_h, stop = std::min(end, (image + 1) * out_h);
        rows(image, oy, oy + (stop - r));
        r = stop;
      }
    };
    const int64_t total = batch * out_h;
    if (total > 1 && ctx.num_threads() > 1) ctx.parallel_for(total, run_rows);
    else run_rows(0, total);
  }

  // The row loops decline only a layer running oneDNN's int8 path (int8_): an int8 layer that
  // computes in fp32 on quantized values (no VNNI, a signed source) gets a source the wrapper
  // already quantized and weights quantized at init, so the loops compute what oneDNN's fp32
  // kernel would, as fast as the fp32 plan's layer.
  bool runs_depthwise_direct(const ConvProblem& p, const Tensor& x, const Tensor* bias) const {
    if (!depthwise_direct_ || int8_ || compute_type_ != memory::data_type::f32 || x.dtype() != DType::kFloat32) return false;
    if (!input_channels_last_ || !output_channels_last_ || output_reduced_ || x.rank() != 4) return false;
    if ((bias != nullptr) != constant_bias_.has_value() || p.in_channels != p.group || p.out_channels != p.group) return false;
    return row_loop_takes_tails(tails_) && undilated_with_nonnegative_pads(p.geom);
  }

  /// Channels-last in and out: output rows of all images split between the threads.
  void run_depthwise_direct(const ConvProblem& p, const Tensor& x, const Shape& out_shape, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const DepthwiseGeometry g = image_geometry(p.geom);
    const RowLoopEpilogue epilogue = row_loop_epilogue(tails_);
    const int64_t c = p.out_channels, in_image = g.in_h * g.in_w * c, out_image = g.out_h * g.out_w * c;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const DepthwiseWeights& w = *depthwise_direct_;
    split_image_rows(ctx, p.batch, g.out_h, [&](int64_t image, int64_t first, int64_t last) {
      depthwise_rows(in + image * in_image, w, g, first, last, out + image * out_image, epilogue.activation,
                     epilogue.swish());
    });
  }

  /// A depthwise Conv fused as a tail of this 1x1 convolution (conv_expand_depthwise.h): both
  /// layers' weights packed for the direct loops, the tail's window attributes and its own tails.
  struct DepthwiseTail {
    PointwiseWeights expand;
    DepthwiseWeights weights;
    Shape weight_shape;
    WindowAttrs window;
    FusedTails tails;
  };

  /// Expanded maps (one image) from which a depthwise tail is accepted: the 112x112 blocks of the
  /// mobile networks (3.2-4.8 MB). Fixed, so that a plan replays the same fusions on any machine of
  /// its ISA; whether a run expands row by row into a ring or in two passes is decided per run
  /// (expand_depthwise_ring_bytes(), the L2 size). From 1 MiB, the 56x56 blocks of 144 channels
  /// (1.8 MB) fused as well and ran their two passes on a 2 MB L2 (the direct 1x1 loop instead of
  /// oneDNN's, a map allocated per run), slower against ORT than with 2 MiB (medians of three
  /// alternating runs): MobileNetV2 1.03x -> 1.06x at 1 thread and 0.99x -> 1.10x at 2,
  /// EfficientNet-B0 1.04x -> 1.06x at 1 thread.
  static constexpr int64_t kExpandDepthwiseMinBytes = int64_t{2} << 20;

  /// Accepts `tail` as a depthwise tail when this is a narrow 1x1 convolution (constant bias)
  /// whose tails suit the row loops, with a static input and an output of at least
  /// kExpandDepthwiseMinBytes, and the tail a 2-D depthwise Conv of at most 3x3 whose weights and
  /// bias are constants. Only the model and the session's ISA decide, not the measuring switches.
  /// Not on int8 layers: fusion comes before the int8 path is settled (take_non_negative_source),
  /// and a fused depthwise tail would read the expanded map without quantizing it.
  bool fuse_depthwise_tail(const KernelInit& tail) {
    if (!pointwise_direct_available(isa_) || !depthwise_direct_available(isa_) || transposed_ || group_ != 1 || int8_layer_ ||
        compute_type_ != memory::data_type::f32 || !has_constant_bias_or_none_ || weights_.rank() != 4)
      return false;
    const Shape& head = weights_.shape();
    if (head[2] != 1 || head[3] != 1 || head[1] > kPointwiseDirectMaxInput) return false;
    if (tail.op_type() != "Conv" || !tail.spec().domain.empty() || !tail.has_input(1) || !row_loop_takes_tails(tails_))
      return false;
    const auto ones = [](const std::vector<int64_t>& v) { return std::all_of(v.begin(), v.end(), [](int64_t k) { return k == 1; }); };
    const auto zeros = [](const std::vector<int64_t>& v) { return std::all_of(v.begin(), v.end(), [](int64_t k) { return k == 0; }); };
    if (!ones(window_.strides) || !zeros(window_.pads) || !static_input_shape_ || static_input_shape_->size() != 4) return false;
    const int64_t channels = out_channels();
    const Shape& x = *static_input_shape_;
    // In double: the dims come from the model and may be absurd.
    if (static_cast<double>(channels) * static_cast<double>(x[2]) * static_cast<double>(x[3]) * sizeof(float) <
        static_cast<double>(kExpandDepthwiseMinBytes))
      return false;
    const std::optional<Tensor> w = tail.constant_input(1);
    if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4 || w->dim(0) != channels || w->dim(1) != 1 ||
        w->dim(2) < 1 || w->dim(3) < 1 || w->dim(2) > kDepthwiseDirectMaxKernel || w->dim(3) > kDepthwiseDirectMaxKernel ||
        tail.attr_int("group", 1) != channels)
      return false;
    std::optional<Tensor> bias;
    if (tail.has_input(2)) {
      bias = tail.constant_input(2);
      if (!bias || bias->dtype() != DType::kFloat32 || bias->numel() != channels) return false;
    }
    const WindowAttrs window = WindowAttrs::parse(tail, /*has_dilations=*/true, /*has_ceil_mode=*/false);
    if (!ones(window.dilations)) return false;
    const float* head_bias = constant_bias_ ? constant_bias_->data<float>() : nullptr;
    depthwise_tail_.emplace(DepthwiseTail{
        pack_pointwise_weights(weights_.data<float>(), channels, head[1], head_bias, isa_),
        pack_depthwise_weights(w->data<float>(), channels, w->dim(2), w->dim(3), bias ? bias->data<float>() : nullptr, isa_),
        w->shape(), window, FusedTails(isa_)});
    return true;
  }

  void capture_constant_bias(const KernelInit& init) {
    if (!init.has_input(2)) {
      has_constant_bias_or_none_ = true;
      return;
    }
    constant_bias_ = init.constant_input(2);
    has_constant_bias_or_none_ = constant_bias_ && constant_bias_->dtype() == DType::kFloat32 &&
                                 constant_bias_->numel() == out_channels();
    if (!has_constant_bias_or_none_) constant_bias_.reset();
  }

  /// After a depthwise tail, activations (or a Swish) the row loop applies to its output rows.
  bool fuse_after_depthwise(const KernelInit& tail, size_t first_extra_input) {
    FusedTails tails = depthwise_tail_->tails;
    if (!tails.add(tail, first_extra_input, out_channels(), 4) || !row_loop_takes_tails(tails)) return false;
    depthwise_tail_->tails = std::move(tails);
    chain_.add_tail(tail, first_extra_input);
    return true;
  }

  /// The 1x1 convolution and its depthwise tail: output rows of all images split between the
  /// threads, each band expanding the rows it reads into a ring of its own. The loop works
  /// channels-last; an NCHW side (a graph input or output, a consumer that reads NCHW) is
  /// converted, which costs far less than two layers through the reference kernels. Other
  /// sources take the reference chain.
  void run_expand_depthwise(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const ConvProblem p = problem(x.shape(), ctx);
    const DepthwiseTail& tail = *depthwise_tail_;
    const ConvProblem d = make_conv_problem(p.output_shape(), tail.weight_shape, p.out_channels, tail.window, ctx);
    const Tensor* bias = num_head_inputs_ > 2 && ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const bool fast = x.dtype() == DType::kFloat32 && !output_reduced_ && x.rank() == 4 &&
                      (bias != nullptr) == constant_bias_.has_value() && x.numel() > 0 &&
                      shape_numel(d.output_shape()) > 0 && is_pointwise(p) && undilated_with_nonnegative_pads(d.geom);
    if (!fast) {
      run_reference(ctx);
      return;
    }
    const Tensor x_channels_last = input_channels_last_ ? x : permute_channels(x, true);
    Tensor nchw_out;
    Tensor& y = output_channels_last_ ? ctx.allocate_output_uninitialized(0, DType::kFloat32, d.output_shape())
                                      : (nchw_out = Tensor(DType::kFloat32, d.output_shape()));
    run_expand_depthwise_rows(p, d, x_channels_last, y, ctx);
    if (!output_channels_last_) ctx.set_output(0, Value(permute_channels(y, false)));
    count_dnnl_fast_path_run();
  }

  /// Channels-last x into channels-last y. A map larger than L2 is expanded row by row into a
  /// ring each band of output rows owns; a smaller one (or with KernelOptions::conv_expand_depthwise_ring off)
  /// in two passes, the whole expanded map and then the depthwise rows, as two layers would.
  void run_expand_depthwise_rows(const ConvProblem& p, const ConvProblem& d, const Tensor& x, Tensor& y,
                                 KernelContext& ctx) const {
    const DepthwiseTail& tail = *depthwise_tail_;
    const DepthwiseGeometry g = image_geometry(d.geom);
    const RowLoopEpilogue expand = row_loop_epilogue(tails_);
    const RowLoopEpilogue depthwise = row_loop_epilogue(tail.tails);
    const int64_t in_image = g.in_h * g.in_w * p.in_channels, out_image = g.out_h * g.out_w * p.out_channels;
    const int64_t map_floats = g.in_h * g.in_w * p.out_channels;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    if (options_.conv_expand_depthwise_ring && map_floats * static_cast<int64_t>(sizeof(float)) >= expand_depthwise_ring_bytes()) {
      split_image_rows(ctx, p.batch, g.out_h, [&](int64_t image, int64_t first, int64_t last) {
        // Kept per thread: a ring is a few hundred KB, allocated again each run otherwise.
        thread_local std::vector<float> ring;
        ring.resize(std::max<size_t>(ring.size(), static_cast<size_t>(expand_depthwise_scratch(tail.weights, g))));
        expand_depthwise_rows(in + image * in_image, tail.expand, expand.finish(), tail.weights, g, first, last,
                              out + image * out_image, depthwise.finish(), ring.data());
      });
      return;
    }
    std::vector<float> map(static_cast<size_t>(map_floats));
    const int64_t pixels = g.in_h * g.in_w;
    const int64_t tile = std::max<int64_t>(16, (int64_t{1} << 14) / p.out_channels);  // ~64 KB of output
    const int64_t tiles = (pixels + tile - 1) / tile;
    for (int64_t image = 0; image < p.batch; ++image) {
      ctx.parallel_for(tiles, [&](int64_t first, int64_t last) {
        for (int64_t t = first; t < last; ++t) {
          const int64_t r0 = t * tile, n = std::min(tile, pixels - r0);
          float* rows = map.data() + r0 * p.out_channels;
          pointwise_rows(in + image * in_image + r0 * p.in_channels, n, tail.expand, rows, expand.activation);
          if (expand.swish_alpha) swish_in_place(rows, n * p.out_channels, *expand.swish_alpha, isa_);
        }
      });
      split_image_rows(ctx, 1, g.out_h, [&](int64_t, int64_t first, int64_t last) {
        depthwise_rows(map.data(), tail.weights, g, first, last, out + image * out_image, depthwise.activation,
                       depthwise.swish());
      });
    }
  }

  /// Input channels up to which a 3x3 group-1 convolution runs the direct stem loop: the RGB
  /// stems of image networks, whose reduction (27 taps) is too short for oneDNN's kernels.
  static constexpr int64_t kStemDirectMaxInput = 4;

  /// Packs the weights (and a constant bias) for the direct stem loop when this is a 2-D 3x3
  /// convolution of at most kStemDirectMaxInput input channels.
  void start_stem_direct(const KernelInit& init) {
    if (transposed_ || group_ != 1 || !options_.conv_stem_direct || !stem_direct_available(isa_) || weights_.rank() != 4) return;
    const Shape& w = weights_.shape();
    if (w[1] > kStemDirectMaxInput || w[2] != 3 || w[3] != 3) return;
    if (!has_constant_bias_or_none_) return;
    const float* bias = constant_bias_ ? constant_bias_->data<float>() : nullptr;
    stem_direct_.emplace(pack_stem_weights(weights_.data<float>(), w[0], w[1], w[2], w[3], bias, isa_));
  }

  bool runs_stem_direct(const ConvProblem& p, const Tensor& x, const Tensor* bias) const {
    if (!stem_direct_ || int8_ || compute_type_ != memory::data_type::f32 || x.dtype() != DType::kFloat32) return false;
    if (output_reduced_ || x.rank() != 4 || (bias != nullptr) != constant_bias_.has_value()) return false;
    return row_loop_takes_tails(tails_) && undilated_with_nonnegative_pads(p.geom);
  }

  /// Either layout in and out (the model's NCHW input, usually, and channels-last towards the next
  /// convolution): output rows of all images split between the threads.
  void run_stem_direct(const ConvProblem& p, const Tensor& x, const Shape& out_shape, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const DepthwiseGeometry g = image_geometry(p.geom);
    const RowLoopEpilogue epilogue = row_loop_epilogue(tails_);
    const StemWeights& w = *stem_direct_;
    const int64_t in_image = g.in_h * g.in_w * w.in, out_image = g.out_h * g.out_w * w.out;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    split_image_rows(ctx, p.batch, g.out_h, [&](int64_t image, int64_t first, int64_t last) {
      stem_rows(in + image * in_image, input_channels_last_, w, g, first, last, out + image * out_image,
                output_channels_last_, epilogue.activation, epilogue.swish());
    });
  }

  static PointwiseEpilogue::Activation pointwise_activation(FusedTails::SimpleChain::Activation a) {
    using From = FusedTails::SimpleChain::Activation;
    using To = PointwiseEpilogue::Activation;
    switch (a) {
      case From::kRelu: return To::kRelu;
      case From::kClip: return To::kClip;
      case From::kHardSwish: return To::kHardSwish;
      default: return To::kNone;
    }
  }

  bool runs_pointwise_direct(const ConvProblem& p, const Tensor& x, const Tensor* bias) const {
    if (!pointwise_direct_ || int8_ || compute_type_ != memory::data_type::f32 || x.dtype() != DType::kFloat32) return false;
    if (!input_channels_last_ || !output_channels_last_ || output_reduced_ || x.rank() != 4) return false;
    if ((bias != nullptr) != constant_bias_.has_value() || !tails_.loops_ok()) return false;
    // Where it pays (measured per layer on MobileNetV2/V3 and EfficientNet-B0 heads, 1 thread):
    // a trailing Swish, which then runs on each tile while it is in L1 instead of as a pass over
    // the whole output (EfficientNet's 16 -> 96 at 112x112: 1.22 -> 1.11 ms), and a residual Add
    // on a short reduction, whose addend oneDNN first copies into the output (MobileNetV3's
    // 16 -> 16 at 112x112: 0.13 -> 0.09 ms); not on wide outputs (ResNet-50's 64 -> 256 + Add +
    // Relu at 56x56: 1.20 -> 1.25 ms). Without either, oneDNN's kernel was as fast or faster
    // (16 -> 96 + Clip at 112x112: 0.52 ms against 0.61 ms), so it keeps those.
    const bool swish = tails_.trailing_swish().has_value();
    const bool residual = tails_.has_residual() && p.out_channels <= kPointwiseResidualMaxOutput;
    if (!swish && !residual) return false;
    if (tails_.has_residual() && !residual_channels_last_) return false;
    const WindowGeometry& g = p.geom;
    for (int64_t d = 0; d < g.rank; ++d)
      if (g.strides[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0 || g.in[d] != g.out[d]) return false;
    return true;
  }

  /// Channels-last in and out: pixels are rows of channels, so the convolution is one product
  /// over all rows, run in tiles (split between the threads) whose tails run while they are in L1.
  void run_pointwise_direct(const ConvProblem& p, const Tensor& x, const Shape& out_shape, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const int64_t rows = shape_numel(out_shape) / p.out_channels;
    const Tensor* addend = tails_.residual(ctx);
    const float* residual = addend ? addend->data<float>() : nullptr;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const PointwiseWeights& w = *pointwise_direct_;
    // Tiles of about 16K output values (64 KB): the tails' pass finds the tile in L1/L2.
    const int64_t tile = std::max<int64_t>(16, (int64_t{1} << 14) / p.out_channels);
    const int64_t tiles = (rows + tile - 1) / tile;
    // A residual Add and one Relu / Clip / HardSwish run on the values in registers; other
    // chains (a Swish, per-channel constants) run as loops over each tile.
    const std::optional<FusedTails::SimpleChain> simple = tails_.simple_chain();
    auto run_tiles = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t r0 = t * tile, n = std::min(tile, rows - r0);
        const float* tile_residual = residual ? residual + r0 * w.out : nullptr;
        if (simple) {
          PointwiseEpilogue e;
          e.residual = simple->sum ? tile_residual : nullptr;
          e.activation = pointwise_activation(simple->activation);
          e.lo = simple->lo;
          e.hi = simple->hi;
          pointwise_rows(in + r0 * w.in, n, w, out + r0 * w.out, e);
        } else {
          pointwise_rows(in + r0 * w.in, n, w, out + r0 * w.out);
          tails_.apply_to_rows(out + r0 * w.out, n, w.out, tile_residual);
        }
      }
    };
    if (tiles > 1 && ctx.num_threads() > 1) ctx.parallel_for(tiles, run_tiles);
    else run_tiles(0, tiles);
  }

  /// An int8 layer on a CPU without exact oneDNN int8 sums: a 1x1 convolution (stride 1, no
  /// padding, group 1) takes parity's s8 x s8 product with the weights' int8 values and
  /// per-channel scales (the source scale comes with take_int8_scales).
  void start_int8_pointwise() {
    if (transposed_ || group_ != 1 || !Int8PointwiseProduct::available(isa_) || weights_.rank() < 3) return;
    const Shape& w = weights_.shape();
    if (std::any_of(w.begin() + 2, w.end(), [](int64_t k) { return k != 1; })) return;
    if (std::any_of(window_.strides.begin(), window_.strides.end(), [](int64_t s) { return s != 1; }) ||
        std::any_of(window_.pads.begin(), window_.pads.end(), [](int64_t p) { return p != 0; }))
      return;
    QuantizedWeights q = quantize_weights_int8(weights_, 0);
    // A channel of zero weights (pruned) has scale 0 and values 0: any positive scale computes the
    // same zeros (its output is the bias).
    for (float& s : q.scales)
      if (!(s > 0)) s = 1.0f;
    int8_pointwise_.emplace(q.values.data<int8_t>(), w[0], w[1], std::move(q.scales), isa_);
  }

  /// The s8 x s8 product of an fp32 source (either layout), its bias and fused tails; false when
  /// this run does not fit it (nothing written).
  bool run_int8_pointwise(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() < 3 || x.numel() == 0 || !tails_.loops_ok()) return false;
    const ConvProblem p = problem(x.shape(), ctx);  // fails like the reference on bad shapes
    const Shape out_shape = p.output_shape();
    const Tensor* bias = num_head_inputs_ > 2 && ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (bias && (bias->dtype() != DType::kFloat32 || bias->numel() != p.out_channels)) return false;
    if (!is_pointwise(p) || shape_numel(out_shape) == 0 || !tails_.fast_path_ok(ctx, out_shape)) return false;
    const WindowGeometry& g = p.geom;
    for (int64_t d = 0; d < g.rank; ++d)
      if (g.in[d] != g.out[d]) return false;
    // Channels-last, pixels are rows of channels (a map of one pixel per image is the same in
    // either layout); an NCHW side (a graph input or output, a reader that wants NCHW) is
    // converted by the product tile by tile.
    const bool one_pixel = g.in_numel() == 1;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    Int8PointwiseProduct::Maps maps;
    maps.x = x.data<float>();
    maps.x_nchw = !input_channels_last_ && !one_pixel;
    maps.y = y.data<float>();
    maps.y_nchw = !output_channels_last_ && !one_pixel;
    if (const Tensor* addend = tails_.residual(ctx)) {
      maps.residual = addend->data<float>();
      maps.residual_nchw = !residual_channels_last_ && !one_pixel;
    }
    maps.batch = p.batch;
    maps.pixels = g.out_numel();
    const int64_t channels = p.out_channels;
    Int8PointwiseProduct::TileTails tails;
    const float quantize = quantized_output_scale_;
    if (!tails_.empty() || quantize > 0)
      tails = [&](float* tile, int64_t rows, const float* residual) {
        if (!tails_.empty()) tails_.apply_to_rows(tile, rows, channels, residual);
        if (quantize > 0) fake_quantize_int8(tile, rows * channels, quantize);
      };
    int8_pointwise_->run(ctx, maps, bias ? bias->data<float>() : nullptr, tails);
    return true;
  }

  /// int8: the weights' values and per-channel scales; the source's data type becomes s8.
  void start_int8() {
    // Per output channel: axis 0 of Conv's [O, I/G, k...]; for ConvTranspose's [I, O/G, k...]
    // axis 1, one scale per channel within a group (runtime::int8_weight_axis).
    QuantizedWeights q = quantize_weights_int8(weights_, transposed_ ? 1 : 0);
    int8_weights_ = std::move(q.values);
    weight_scales_ = std::move(q.scales);
    // A channel of zero weights (pruned) has scale 0 and values 0: any positive scale computes
    // the same zeros, and keeps its output scale usable for the bias.
    for (float& s : weight_scales_)
      if (!(s > 0)) s = 1.0f;
    output_scales_ = channel_weight_scales();  // until take_int8_scales: the packing does not depend on them
    compute_type_ = memory::data_type::s8;
    int8_ = true;
  }
  /// The weight scale of each output channel (ConvTranspose's repeat for every group).
  std::vector<float> channel_weight_scales() const {
    std::vector<float> scales(static_cast<size_t>(out_channels()));
    for (size_t c = 0; c < scales.size(); ++c) scales[c] = weight_scales_[c % weight_scales_.size()];
    return scales;
  }

  static bool is_int8_storage(DType dtype) { return dtype == DType::kInt8 || dtype == DType::kUInt8; }

  /// The type output 0 is written in: fp32, or bf16 / int8 storage (runtime/reduced_storage.h).
  DType output_dtype() const {
    if (output_reduced_) return DType::kBFloat16;
    return output_int8_ != DType::kUndefined ? output_int8_ : DType::kFloat32;
  }
  static memory::data_type data_type_of(DType dtype) {
    switch (dtype) {
      case DType::kBFloat16: return memory::data_type::bf16;
      case DType::kInt8: return memory::data_type::s8;
      case DType::kUInt8: return memory::data_type::u8;
      default: return memory::data_type::f32;
    }
  }

  /// The post-op chain of a slice; an int8 output appends the requantization to y_scale_ (the
  /// destination's conversion rounds to nearest even, as quantize_int8). The clamp is eltwise_clip:
  /// after a fused Clip (eltwise_clip_v2), a second clip_v2 step made oneDNN 2.6's int8
  /// convolutions write wrong values (Int8Kernels.Int8StorageBetweenConvolutions*).
  dnnl::post_ops output_post_ops(const Shape& y_shape, bool drop_trailing_swish) const {
    dnnl::post_ops ops = tails_.post_ops(y_shape, drop_trailing_swish);
    if (output_int8_ == DType::kUndefined) return ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, 1.f / y_scale_, 0.f);
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, output_int8_ == DType::kUInt8 ? 0.f : -127.f, 127.f);
    return ops;
  }

  /// Back to fp32 on the (fake-quantized) weights: the layer's wrapper quantizes the source.
  void stop_int8() {
    if (!int8_) return;
    int8_ = false;
    compute_type_ = memory::data_type::f32;
    prepacked_ = memory();
    prepacked_desc_ = memory::desc();
    std::lock_guard<std::mutex> lock(packed_mutex_);
    packed_.clear();
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
  }

  /// The source's int8 values, in the source's own layout (plain or channels-last).
  Tensor quantized_source(const Tensor& x, KernelContext& ctx) const {
    // A non-negative source quantizes to values 0..127, whose bits as u8 are the same.
    Tensor xq = pooled_uninitialized_tensor(non_negative_source_ ? DType::kUInt8 : DType::kInt8, x.shape());
    const float* from = x.data<float>();
    auto* to = static_cast<int8_t*>(xq.raw_data());
    constexpr int64_t kBlock = int64_t{1} << 16;
    const int64_t blocks = (x.numel() + kBlock - 1) / kBlock;
    const float scale = x_scale_;
    auto quantize_blocks = [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const int64_t first = b * kBlock, n = std::min(kBlock, x.numel() - first);
        quantize_int8(from + first, to + first, n, scale);
      }
    };
    if (blocks > 1) ctx.parallel_for(blocks, quantize_blocks);
    else quantize_blocks(0, blocks);
    return xq;
  }

  /// oneDNN 2.x adds the bias to the int32 sum before the output scale: the bias in those units.
  Tensor int8_bias(const Tensor& bias) const {
    Tensor scaled(DType::kFloat32, bias.shape());
    for (int64_t c = 0; c < bias.numel(); ++c) {
      const float s = output_scales_[c];
      scaled.data<float>()[c] = s > 0 ? bias.data<float>()[c] / s : 0.0f;
    }
    return scaled;
  }

  /// The reference kernels, on NCHW copies of channels-last inputs; a channels-last output is
  /// permuted back into that order. An int8 layer's reference reads the source fake-quantized.
  void run_reference(KernelContext& ctx) const {
    std::map<size_t, Value> replaced;
    // A bf16-stored source (runtime/reduced_storage.h) widens exactly to fp32 for the reference.
    Tensor x = ctx.input(0).dtype() == DType::kBFloat16 ? ctx.input(0).cast(DType::kFloat32) : ctx.input(0);
    // An int8-stored source times its scale is the fake-quantized fp32 source, exactly.
    if (is_int8_storage(x.dtype())) x = dequantized(x, x_scale_);
    else if ((int8_ || int8_pointwise_) && x.dtype() == DType::kFloat32) {
      x = x.clone();
      fake_quantize_int8(x.data<float>(), x.numel(), x_scale_);
    }
    if (input_channels_last_) replaced[0] = Value(permute_channels(x, false));
    else if (x.dtype() != ctx.input(0).dtype() || int8_ || int8_pointwise_) replaced[0] = Value(x);
    if (residual_channels_last_ && ctx.has_input(*tails_.residual_input()))
      replaced[*tails_.residual_input()] = Value(permute_channels(ctx.input(*tails_.residual_input()), false));
    chain_.compute(ctx, replaced);
    if (output_channels_last_) {
      Tensor nchw = ctx.output_value(0).tensor();
      ctx.set_output(0, Value(permute_channels(nchw, true)));
    }
    if (output_reduced_ && ctx.output_value(0).tensor().dtype() == DType::kFloat32)
      ctx.set_output(0, Value(ctx.output_value(0).tensor().cast(DType::kBFloat16)));
    if (output_int8_ != DType::kUndefined && ctx.output_value(0).tensor().dtype() == DType::kFloat32)
      ctx.set_output(0, Value(requantized(ctx.output_value(0).tensor(), y_scale_, output_int8_)));
  }

  /// float(q) * scale for an int8 or uint8 tensor.
  static Tensor dequantized(const Tensor& q, float scale) {
    Tensor out(DType::kFloat32, q.shape());
    float* to = out.data<float>();
    if (q.dtype() == DType::kUInt8)
      for (int64_t i = 0; i < q.numel(); ++i) to[i] = static_cast<float>(q.data<uint8_t>()[i]) * scale;
    else
      for (int64_t i = 0; i < q.numel(); ++i) to[i] = static_cast<float>(q.data<int8_t>()[i]) * scale;
    return out;
  }

  /// quantize_int8(y, scale) as `dtype` (uint8: negative values, which a non-negative chain does
  /// not produce, clamp to 0).
  static Tensor requantized(const Tensor& y, float scale, DType dtype) {
    Tensor q(DType::kInt8, y.shape());
    quantize_int8(y.data<float>(), q.data<int8_t>(), y.numel(), scale);
    if (dtype == DType::kInt8) return q;
    Tensor u(DType::kUInt8, y.shape());
    for (int64_t i = 0; i < y.numel(); ++i) u.data<uint8_t>()[i] = static_cast<uint8_t>(std::max<int8_t>(q.data<int8_t>()[i], 0));
    return u;
  }

  bool native_reduced() const { return compute_type_ == memory::data_type::bf16 && !transposed_; }

  int64_t out_channels() const { return transposed_ ? weights_.dim(1) * group_ : weights_.dim(0); }

  ConvProblem problem(const Shape& x, const KernelContext& ctx) const {
    return transposed_ ? make_conv_transpose_problem(x, weights_.shape(), transpose_attrs_, ctx)
                       : make_conv_problem(x, weights_.shape(), group_, window_, ctx);
  }

  /// oneDNN's paddings for the geometry, or nullopt when it cannot express them.
  std::optional<DnnlGeometry> dnnl_geometry(const ConvProblem& p) const {
    const WindowGeometry& g = p.geom;
    DnnlGeometry d;
    for (int64_t i = 0; i < g.rank; ++i) {
      const int64_t ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
      d.strides.push_back(g.strides[i]);
      d.dilations.push_back(g.dilations[i] - 1);
      d.pad_l.push_back(g.pad_begin[i]);
      // Conv: oneDNN sizes the output with ONNX's floor formula, so ONNX's end padding fits as is
      // (a stride-2 1x1 conv over an even size leaves the last row unread, which is fine).
      // ConvTranspose: the end padding that makes the output size exact (output_padding and
      // output_shape grow the output, i.e. make it negative, which oneDNN does not take).
      const int64_t pad_r = transposed_ ? (g.in[i] - 1) * g.strides[i] + ek - g.pad_begin[i] - g.out[i]
                                        : g.pad_end[i];
      if (g.pad_begin[i] < 0 || pad_r < 0) return std::nullopt;
      d.pad_r.push_back(pad_r);
    }
    return d;
  }

  /// Channel slices narrower than this many output channels run direct: measured on ResNet-18 at
  /// 2 threads (critical path, thread CPU time), Winograd on 32-channel slices of its 64-channel
  /// 56x56 layers took 1.12-1.25 ms against 0.98 ms for direct row slices; on 64-channel slices of
  /// the 128-channel 28x28 layers 0.74 ms against 0.94-1.06 ms.
  static constexpr int64_t kWinogradSliceMinChannels = 64;

  /// The primitive descriptor of a convolution or a deconvolution.
  struct PrimitiveDesc {
    std::optional<dnnl::convolution_forward::primitive_desc> conv;
    std::optional<dnnl::deconvolution_forward::primitive_desc> deconv;
    const dnnl::primitive_desc& base() const {
      return conv ? static_cast<const dnnl::primitive_desc&>(*conv) : static_cast<const dnnl::primitive_desc&>(*deconv);
    }
    dnnl::primitive primitive() const {
      return conv ? dnnl::primitive(dnnl::convolution_forward(*conv)) : dnnl::primitive(dnnl::deconvolution_forward(*deconv));
    }
  };

  /// fp32 3x3 stride-1 convolutions (not grouped, not dilated) with at least 16 input and output
  /// channels and a 4x4 output or larger run Winograd's F(2x2,3x3) / F(4x4,3x3) where oneDNN has
  /// it: 2-2.4x fewer multiplications; measured on this machine's AVX-512 at 1 thread, 1.3-2.4x
  /// faster than the direct convolution from 16 channels at 112x112 to 512 at 7x7, and equal at
  /// 128->32 channels on 7x7. The transforms add round-off of the order of the direct sum's
  /// (ResNet-50's logits: largest difference to ONNX Runtime 1.5e-5 either way);
  /// SessionOptions::winograd = false (ref's --no-winograd) keeps every convolution direct.
  /// Only whole outputs: on row slices (several threads) oneDNN picks its F(4x4,3x3) kernel for
  /// every slice, and ResNet-18 at 2 threads took 15.7 ms against 12.3 ms sliced direct; channel
  /// slices would each transform the whole input again.
  bool winograd_applies(const ConvProblem& p, const DnnlGeometry& d, const Shape& y_shape) const {
    if (!winograd_allowed_ || transposed_ || int8_ || compute_type_ != memory::data_type::f32) return false;
    const WindowGeometry& g = p.geom;
    if (y_shape.size() != 4 || y_shape[2] != g.out[0]) return false;
    if (y_shape[1] != out_channels() && y_shape[1] < kWinogradSliceMinChannels) return false;
    if (p.group != 1 || g.kernel.size() != 2 || p.in_channels < 16 || p.out_channels < 16) return false;
    for (size_t i = 0; i < 2; ++i)
      if (g.kernel[i] != 3 || d.strides[i] != 1 || d.dilations[i] != 0 || g.out[i] < 4) return false;
    return true;
  }

  /// Primitive descriptor for one geometry; throws dnnl::error when oneDNN has no implementation.
  PrimitiveDesc make_primitive_desc(const ConvProblem& p, const Shape& x_shape, const Shape& y_shape,
                                    const DnnlGeometry& d, bool has_bias, const dnnl::primitive_attr& attr,
                                    std::optional<memory::data_type> src_type = std::nullopt) const {
    const ConvActivationLayout layout = options_.conv_layout;
    // Transposed convolutions always run on plain NCHW, where oneDNN 2.6 picks its GEMM + col2im
    // implementation (ONNX Runtime's approach too): in the blocked layout a ConvTranspose with
    // few output channels pads them to 16 (PP-OCRv4 det's 24 -> 1 channel 2x2 stride-2 head took
    // 17.6 ms instead of 1.2 ms, its 24 -> 24 one 6.4 ms instead of 4.2 ms).
    // int8 transposed convolutions take the layout oneDNN's int8 deconvolution wants.
    const bool plain = (transposed_ && !int8_) || layout == ConvActivationLayout::kPlain ||
                       (layout == ConvActivationLayout::kPointwisePlain && is_pointwise(p));
    const memory::desc src = activation_desc(x_shape, plain, src_type.value_or(compute_type_));
    const memory::desc dst = activation_desc(y_shape, plain, data_type_of(output_dtype()));
    const memory::desc w_plain = onnx_weights_desc(weight_shape(p), p.group, transposed_);
    const memory::desc weights(w_plain.dims(), compute_type_, memory::format_tag::any);
    // int8: the source is s8 or u8, the destination f32 (dequantized by the output scales) or, with
    // int8 storage, s8/u8 (requantized by output_post_ops).
    const memory::desc bias = has_bias ? plain_desc({p.out_channels}) : memory::desc();
    PrimitiveDesc pd;
    if (transposed_) {
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                             src, weights, bias, dst, d.strides, d.dilations, d.pad_l, d.pad_r);
      pd.deconv.emplace(desc, attr, cpu_engine());
    } else {
      if (winograd_applies(p, d, y_shape)) {
        try {
          dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::convolution_winograd, src, weights, bias, dst,
                                               d.strides, d.dilations, d.pad_l, d.pad_r);
          pd.conv.emplace(desc, attr, cpu_engine());
          return pd;
        } catch (const dnnl::error&) {
          // No Winograd implementation for this geometry, layout or post-op chain: direct below.
        }
      }
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           src, weights, bias, dst, d.strides, d.dilations, d.pad_l, d.pad_r);
      pd.conv.emplace(desc, attr, cpu_engine());
    }
    return pd;
  }

  /// The ONNX weight shape of a convolution `p` of this kernel or of a channel slice of it.
  Shape weight_shape(const ConvProblem& p) const {
    if (transposed_) return weights_.shape();  // transposed convolutions are not channel-sliced
    Shape w = weights_.shape();
    w[0] = p.out_channels;
    w[1] = p.in_channels / p.group;
    return w;
  }

  /// Reorders the plain ONNX weights of output channels [first_channel, first_channel +
  /// slice.out_channels) into `desc`: all of them for the whole convolution.
  memory pack_weights(const memory::desc& desc, const ConvProblem& slice, int64_t first_channel, int threads) const {
    const memory::data_type type = int8_ ? memory::data_type::s8 : memory::data_type::f32;
    const Shape w_shape = weight_shape(slice);
    const memory::desc w_plain = onnx_weights_desc(w_shape, slice.group, transposed_, type);
    memory packed(desc, cpu_engine());
    const Tensor& plain = int8_ ? int8_weights_ : weights_;
    const int64_t channel_elements = shape_numel(Shape(w_shape.begin() + 1, w_shape.end()));
    auto* first = static_cast<std::byte*>(const_cast<void*>(plain.raw_data())) +
                  first_channel * channel_elements * static_cast<int64_t>(dtype_size(plain.dtype()));
    memory source(w_plain, cpu_engine(), first);
    dnnl_support::execute(dnnl::reorder(source, packed), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, packed}}, threads);
    return packed;
  }

  /// The weights of output channels from `first_channel` on packed into `desc`, shared by every
  /// plan (input shape, slice) that wants that layout: a model with dynamic spatial dims sees many
  /// shapes but few weight layouts. Channel slices of equal size share a layout, not their
  /// weights, hence the first channel in the key.
  memory packed_weights(const memory::desc& desc, const ConvProblem& slice, int64_t first_channel) const {
    std::lock_guard<std::mutex> lock(packed_mutex_);
    for (const PackedWeights& w : packed_)
      if (w.first_channel == first_channel && w.packed.get_desc() == desc) return w.packed;
    packed_.push_back({first_channel, pack_weights(desc, slice, first_channel, 1)});
    return packed_.back().packed;
  }

  struct PlanTimeContext : KernelContext {  // only for fail(): shape errors surface at run time
    size_t num_inputs() const override { return 0; }
    size_t num_outputs() const override { return 0; }
    bool has_input(size_t) const override { return false; }
    const Value& input_value(size_t) const override { fail("no inputs at plan time"); }
    bool has_output(size_t) const override { return false; }
    void set_output(size_t, Value) override {}
    Value& output_value(size_t) override { fail("no outputs at plan time"); }
    std::vector<Value> run_subgraph(const Subgraph&, std::vector<Value>) override { fail("no subgraphs"); }
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { fn(0, n); }
    int num_threads() const override { return 1; }
    Precision precision() const override { return Precision::kFloat32; }
    uint64_t next_random_seed() override { return 0; }
    std::string node_label() const override { return "plan"; }
  };

  /// Whether oneDNN has a jit (not reference) int8 implementation for the static input shape with
  /// this kernel's source type and post-ops (true for dynamic shapes: decided per run).
  bool int8_has_jit_implementation() const {
    if (!static_input_shape_) return true;
    PlanTimeContext ctx;
    try {
      const ConvProblem p = problem(*static_input_shape_, ctx);
      std::optional<DnnlGeometry> d = dnnl_geometry(p);
      if (!d || shape_numel(p.output_shape()) == 0) return false;
      dnnl::primitive_attr attr = primitive_attr();
      attr.set_post_ops(output_post_ops(p.output_shape(), false));
      const memory::data_type source = non_negative_source_ ? memory::data_type::u8 : memory::data_type::s8;
      const PrimitiveDesc pd = make_primitive_desc(p, input_shape(p), p.output_shape(), *d, num_head_inputs_ > 2, attr, source);
      const std::string impl = pd.base().impl_info_str();
      return impl.rfind("ref", 0) != 0 && impl.find(":ref") == std::string::npos;
    } catch (const Error&) {
      return false;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  /// Plan time, static input shape: packs the weights for the unfused primitive; plans for the
  /// same weights layout reuse them.
  void prepack(const Shape& x_shape) {
    PlanTimeContext ctx;
    try {
      const ConvProblem p = problem(x_shape, ctx);
      std::optional<DnnlGeometry> d = dnnl_geometry(p);
      if (!d || shape_numel(p.output_shape()) == 0) return;
      const PrimitiveDesc pd = make_primitive_desc(p, input_shape(p), p.output_shape(), *d, false, primitive_attr());
      prepacked_desc_ = pd.base().weights_desc();
      dnnl_support::ThreadScope scope(1);
      prepacked_ = pack_weights(prepacked_desc_, p, 0, 1);
    } catch (const Error&) {
      // A static shape that does not fit the weights: the run reports it.
    } catch (const dnnl::error&) {
    }
  }

  /// Uses saved packed weights in place (they stay in the plan's mapping, held by `state.data`).
  void restore(const PackedState& state, const KernelInit& init) {
    const memory::desc desc = dnnl_support::restored_weights_desc(state, init);
    prepacked_data_ = state.data;
    prepacked_desc_ = desc;
    prepacked_ = memory(desc, cpu_engine(), prepacked_data_.raw_data());
  }

  static Shape input_shape(const ConvProblem& p) {
    Shape x{p.batch, p.in_channels};
    x.insert(x.end(), p.geom.in.begin(), p.geom.in.end());
    return x;
  }

  /// Primitives run single-threaded on parity's threads (one per slice) with a scratchpad the
  /// caller provides, so any thread may run them.
  static dnnl::primitive_attr plan_attr() { return dnnl_support::user_scratchpad_attr(); }
  /// The convolution's attributes: plan_attr, and for int8 the per-channel output scales.
  dnnl::primitive_attr primitive_attr() const {
    dnnl::primitive_attr attr = plan_attr();
    if (int8_) attr.set_output_scales(1 << 1, output_scales_);  // along the destination's channels
    return attr;
  }

  /// How many slices to run in parallel: one per thread for convolutions big enough to pay for
  /// the hand-off, never more row slices than there are output rows (split_axis picks rows or
  /// output channels).
  int64_t chunk_count(const ConvProblem& p, const KernelContext& ctx) const {
    // Below ~256K multiply-adds a slice's thread hand-off costs more than it saves. (Measured on
    // MobileNetV2 at 2 threads once the pool's chunks became claimable: ref/ort 1.22-1.31x at
    // 256K, 1.32-1.35x at 1M, 1.47-1.49x at 4M; PP-OCRv4 rec unchanged.)
    constexpr int64_t kMinParallelWork = int64_t{1} << 18;
    if (transposed_) {
      // A slice of a transposed conv's output reads a ragged input range, unless the windows do
      // not overlap (kernel == stride, no padding or dilation along the rows: PP-OCRv4 det's 2x2
      // stride-2 upsampling), where input rows [i0, i1) make exactly output rows [i0*s, i1*s).
      const WindowGeometry& g = p.geom;
      if (g.kernel[0] != g.strides[0] || g.dilations[0] != 1 || g.pad_begin[0] != 0 || g.out[0] != g.in[0] * g.strides[0])
        return 1;
      const int64_t macs = shape_numel(input_shape(p)) * (p.out_channels / p.group) * p.geom.kernel_numel();
      return dnnl_support::row_chunk_count(ctx, g.in[0], 1, macs, kMinParallelWork);
    }
    const int64_t macs = shape_numel(p.output_shape()) * (p.in_channels / p.group) * p.geom.kernel_numel();
    const int64_t threads = ctx.num_threads();
    auto channel_slices_possible = [&] {
      return threads > 1 && channel_split_possible() && options_.conv_channel_split != ChannelSplitPolicy::kOff &&
             !channel_slice_bounds(p, threads).empty();
    };
    // Below the threshold, a convolution of many weights on a tiny map (MobileNetV3's
    // squeeze-excitation 1x1 convs on 1x1 maps, 113K-230K weights) is bound by reading its weights,
    // which channel slices share out: MobileNetV3-Large's convolutions at 2 threads, critical path
    // (thread CPU time of the slowest slice), 3.79 -> 3.53 ms with these split.
    constexpr int64_t kWeightBoundWeights = int64_t{1} << 16;
    if (macs < kMinParallelWork) return weights_.numel() >= kWeightBoundWeights && channel_slices_possible() ? threads : 1;
    // Channel slices need no rows to split: a 1-row output may take them.
    const int64_t row_chunks = dnnl_support::row_chunk_count(ctx, p.geom.out[0], 1, macs, kMinParallelWork);
    if (row_chunks < threads && channel_slices_possible()) return threads;
    return row_chunks;
  }

  /// Whether this kernel's slices may be output-channel ranges: fp32 convolutions. int8 output
  /// scales and the bf16 paths stay on row slices (their per-channel scales and rounding would
  /// need slicing too, and bf16 is not native on the machines measured); so do ConvTransposes.
  bool channel_split_possible() const {
    return !transposed_ && !int8_ && compute_type_ == memory::data_type::f32 && !output_reduced_;
  }

  /// Which axis `chunks` slices of `p` cut (conv_split.h); rows when channel slices are not possible.
  ConvSplitAxis split_axis(const ConvProblem& p, int64_t chunks) const {
    if (chunks < 2 || !channel_split_possible()) return ConvSplitAxis::kRows;
    ConvSplitLayout layout{input_channels_last_, output_channels_last_};
    layout.policy = options_.conv_channel_split;
    layout.winograd_slices = winograd_on_channel_slices(p, chunks);
    ConvSplitAxis axis = choose_conv_split_axis(p, chunks, layout);
    // Fewer output rows than slices (chunk_count gave them for channel slices): channel slices.
    if (axis == ConvSplitAxis::kRows && p.geom.out[0] < chunks && options_.conv_channel_split != ChannelSplitPolicy::kOff)
      return ConvSplitAxis::kChannels;
    return axis;
  }

  /// Whether `chunks` channel slices of `p` would each run Winograd (winograd_applies): row slices
  /// never do.
  bool winograd_on_channel_slices(const ConvProblem& p, int64_t chunks) const {
    const std::vector<int64_t> bounds = channel_slice_bounds(p, chunks);
    std::optional<DnnlGeometry> d = dnnl_geometry(p);
    if (bounds.empty() || !d) return false;
    for (size_t c = 0; c + 1 < bounds.size(); ++c) {
      const SliceExtent slice = channel_slice(p, *d, bounds, static_cast<int64_t>(c));
      if (!winograd_applies(slice.problem, slice.geometry, slice.y_shape)) return false;
    }
    return true;
  }

  /// Output rows [o0, o1) of the first spatial dim (slice c of `chunks`) and the input rows
  /// [i0, i1) they read; the slice's own paddings are whatever of its window lies outside the
  /// input. nullopt for a slice that reads only padding.
  std::optional<SliceExtent> row_slice(const ConvProblem& p, const DnnlGeometry& full, int64_t c, int64_t chunks) const {
    const WindowGeometry& g = p.geom;
    SliceExtent slice{p, input_shape(p), p.output_shape(), full};
    int64_t o0 = g.out[0] * c / chunks, o1 = g.out[0] * (c + 1) / chunks;
    int64_t i0 = 0, i1 = g.in[0];
    if (chunks > 1 && transposed_) {  // non-overlapping windows (chunk_count)
      i0 = g.in[0] * c / chunks;
      i1 = g.in[0] * (c + 1) / chunks;
      if (i1 <= i0) return std::nullopt;
      o0 = i0 * g.strides[0];
      o1 = i1 * g.strides[0];
    } else if (chunks > 1) {
      const int64_t ek = (g.kernel[0] - 1) * g.dilations[0] + 1;
      const int64_t start = o0 * g.strides[0] - g.pad_begin[0], end = (o1 - 1) * g.strides[0] - g.pad_begin[0] + ek;
      i0 = std::max<int64_t>(0, start);
      i1 = std::min<int64_t>(g.in[0], end);
      if (i1 <= i0) return std::nullopt;
      slice.geometry.pad_l[0] = i0 - start;
      slice.geometry.pad_r[0] = end - i1;
    }
    slice.x_shape[2] = i1 - i0;
    slice.y_shape[2] = o1 - o0;
    slice.in_row = i0;
    slice.out_row = o0;
    return slice;
  }

  /// Output channels [bounds[c], bounds[c + 1]) (whole groups) and the input channels they read:
  /// all of them, or their groups' for a grouped convolution.
  SliceExtent channel_slice(const ConvProblem& p, const DnnlGeometry& full, const std::vector<int64_t>& bounds,
                            int64_t c) const {
    SliceExtent slice{p, {}, {}, full};
    const int64_t m0 = bounds[c], m1 = bounds[c + 1];
    slice.problem.out_channels = m1 - m0;
    if (p.group > 1) {
      const int64_t out_per_group = p.out_channels / p.group, in_per_group = p.in_channels / p.group;
      slice.problem.group = (m1 - m0) / out_per_group;
      slice.problem.in_channels = slice.problem.group * in_per_group;
      slice.in_channel = m0 / out_per_group * in_per_group;
    }
    slice.out_channel = m0;
    slice.x_shape = input_shape(slice.problem);
    slice.y_shape = slice.problem.output_shape();
    return slice;
  }

  /// Whether a trailing Swish runs as swish_in_place over each slice's output rows instead of as
  /// oneDNN's post-op: on AVX-512 machines, for fp32 channels-last outputs (whose row slices are
  /// contiguous). Measured on EfficientNet-B0 at 1 thread: ~13% less CPU time per run than the
  /// post-op. Cutting the output into extra L2-sized slices for the pass was slower than one pass
  /// over the whole output (the primitive's per-call cost outweighs the cache misses).
  /// KernelOptions::conv_separate_swish = false keeps oneDNN's post-op everywhere.
  bool separate_swish() const {
    return options_.conv_separate_swish && fast_swish_available(isa_) && !transposed_ && output_channels_last_ &&
           output_dtype() == DType::kFloat32 && tails_.trailing_swish();
  }

  ConvPlan make_plan(const ConvProblem& p, bool has_bias, int64_t chunks, DType x_dtype) const {
    ConvPlan plan;
    const ConvSplitAxis axis = split_axis(p, chunks);
    plan.axis = axis;
    std::optional<DnnlGeometry> full = dnnl_geometry(p);
    if (!full) return plan;
    dnnl_support::ThreadScope scope(1);
    const Shape y_shape = p.output_shape();
    const std::vector<int64_t> channel_bounds =
        axis == ConvSplitAxis::kChannels ? channel_slice_bounds(p, chunks) : std::vector<int64_t>{};
    if (axis == ConvSplitAxis::kChannels && channel_bounds.empty()) return plan;
    try {
      dnnl::primitive_attr attr = primitive_attr();
      if (separate_swish()) {
        plan.swish_after = tails_.trailing_swish();
        plan.batch = y_shape[0];
        plan.y_batch_stride = (output_channels_last_ ? channels_last_strides(y_shape) : shape_strides(y_shape))[0];
      }
      for (int64_t c = 0; c < chunks; ++c) {
        std::optional<SliceExtent> slice =
            axis == ConvSplitAxis::kChannels ? channel_slice(p, *full, channel_bounds, c) : row_slice(p, *full, c, chunks);
        if (!slice) return plan;  // a row slice that reads only padding
        attr.set_post_ops(output_post_ops(slice->y_shape, plan.swish_after.has_value()));
        plan.chunks.push_back(make_chunk(p, *slice, has_bias, attr, x_dtype));
      }
      plan.supported = true;
    } catch (const dnnl::error&) {
      plan.supported = false;
      plan.chunks.clear();
    }
    return plan;
  }

  /// The primitive, weights, views and reorders of one slice of `p`.
  ConvChunk make_chunk(const ConvProblem& p, const SliceExtent& slice, bool has_bias, const dnnl::primitive_attr& attr,
                       DType x_dtype) const {
    const memory::data_type x_type = !int8_                   ? data_type_of(x_dtype)
                                     : x_dtype == DType::kUInt8 ? memory::data_type::u8
                                                                : memory::data_type::s8;
    const memory::data_type y_type = data_type_of(output_dtype());
    auto strides_of = [](const Shape& shape, bool channels_last) {
      return channels_last ? channels_last_strides(shape) : shape_strides(shape);
    };
    // Views keep the whole tensors' strides: a slice's rows or channels inside them.
    const Shape y_shape = p.output_shape();
    const std::vector<int64_t> x_strides = strides_of(input_shape(p), input_channels_last_);
    const std::vector<int64_t> y_strides = strides_of(y_shape, output_channels_last_);
    const std::vector<int64_t> addend_strides = strides_of(y_shape, residual_channels_last_);
    ConvChunk chunk;
    const PrimitiveDesc typed = make_primitive_desc(slice.problem, slice.x_shape, slice.y_shape, slice.geometry,
                                                    has_bias, attr, int8_ ? std::optional(x_type) : std::nullopt);
    const dnnl::primitive_desc& pd = typed.base();
    chunk.primitive = typed.primitive();
    chunk.scratchpad = pd.scratchpad_desc();
    const memory::desc w_desc = pd.weights_desc();
    const bool whole_weights = slice.problem.out_channels == p.out_channels;
    chunk.weights = whole_weights && prepacked_ && w_desc == prepacked_desc_
                        ? prepacked_
                        : packed_weights(w_desc, slice.problem, slice.out_channel);
    chunk.x_view = memory::desc(dnnl_support::to_dims(slice.x_shape), x_type, x_strides);
    chunk.y_view = memory::desc(dnnl_support::to_dims(slice.y_shape), y_type, y_strides);
    chunk.addend_view = memory::desc(dnnl_support::to_dims(slice.y_shape), memory::data_type::f32, addend_strides);
    chunk.x_offset = slice.in_row * x_strides[2] + slice.in_channel * x_strides[1];
    chunk.y_offset = slice.out_row * y_strides[2] + slice.out_channel * y_strides[1];
    // Row slices: their rows; channel slices that write y directly: their elements, which are then
    // contiguous (otherwise the swish pass runs on the dense buffer before the copy).
    chunk.y_span = whole_weights ? slice.y_shape[2] * y_strides[2] : shape_numel(slice.y_shape) / slice.y_shape[0];
    chunk.addend_offset = slice.out_row * addend_strides[2] + slice.out_channel * addend_strides[1];
    chunk.out_channel = slice.out_channel;
    chunk.y_shape = slice.y_shape;
    chunk.src_desc = pd.src_desc();
    chunk.dst_desc = pd.dst_desc();
    // A channel slice of a channels-last tensor is strided, which oneDNN's jit kernels do not take
    // (they fall back to ref:any): the primitive reads and writes dense buffers, and jit reorders
    // copy the slice's channels in and out.
    chunk.reorder_src = chunk.src_desc != chunk.x_view;
    chunk.reorder_dst = chunk.dst_desc != chunk.y_view;
    auto reorder = [](const memory::desc& from, const memory::desc& to) {
      const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, plan_attr());
      return ConvChunk::Reorder{dnnl::reorder(pd), pd.scratchpad_desc()};
    };
    if (chunk.reorder_src) chunk.src_in = reorder(chunk.x_view, chunk.src_desc);
    if (chunk.reorder_dst) chunk.dst_out = reorder(chunk.dst_desc, chunk.y_view);
    if (tails_.has_residual()) chunk.residual_in = reorder(chunk.addend_view, chunk.dst_desc);
    return chunk;
  }

  void run(const ConvPlan& plan, const Tensor& x, const Tensor* bias, const Shape& out_shape, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, output_dtype(), out_shape);
    const Tensor* addend = tails_.residual(ctx);
    // Element offsets into the source and the output, in their own element sizes (fp32 or bf16).
    auto* x_bytes = static_cast<std::byte*>(const_cast<void*>(x.raw_data()));
    auto* y_bytes = static_cast<std::byte*>(y.raw_data());
    const size_t x_size = dtype_size(x.dtype()), y_size = dtype_size(y.dtype());
    float* addend_data = addend ? const_cast<float*>(addend->data<float>()) : nullptr;
    auto run_chunk = [&](const ConvChunk& chunk) {
      dnnl_support::ThreadScope scope(1);
      dnnl::stream stream(cpu_engine());
      memory src(chunk.x_view, cpu_engine(), x_bytes + chunk.x_offset * x_size);
      if (chunk.reorder_src) {
        memory converted = dnnl_support::thread_buffer(chunk.src_desc, dnnl_support::BufferSlot::kSource);
        chunk.src_in.run(stream, src, converted);
        src = converted;
      }
      memory y_view(chunk.y_view, cpu_engine(), y_bytes + chunk.y_offset * y_size);
      memory dst = chunk.reorder_dst ? dnnl_support::thread_buffer(chunk.dst_desc, dnnl_support::BufferSlot::kDestination)
                                     : y_view;
      if (addend_data) {  // the sum post-op accumulates onto dst
        memory addend_view(chunk.addend_view, cpu_engine(), addend_data + chunk.addend_offset);
        chunk.residual_in.run(stream, addend_view, dst);
      }
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, chunk.weights}, {DNNL_ARG_DST, dst}};
      if (bias) {
        float* channels = const_cast<float*>(bias->data<float>()) + chunk.out_channel;
        args[DNNL_ARG_BIAS] = memory(plain_desc({chunk.y_shape[1]}), cpu_engine(), channels);
      }
      if (chunk.scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = dnnl_support::thread_scratchpad(chunk.scratchpad);
      tails_.add_binary_args(args, chunk.y_shape, chunk.out_channel);
      chunk.primitive.execute(stream, args);
      if (plan.swish_after && chunk.reorder_dst) {
        // Elementwise on the slice's dense buffer before it is copied out (a channel slice's
        // output channels are strided in y).
        stream.wait();
        const int64_t elements = static_cast<int64_t>(chunk.dst_desc.get_size() / sizeof(float));
        swish_in_place(static_cast<float*>(dst.get_data_handle()), elements, *plan.swish_after, isa_);
      }
      if (chunk.reorder_dst) chunk.dst_out.run(stream, dst, y_view);
      stream.wait();
      if (plan.swish_after && !chunk.reorder_dst) {
        float* rows = reinterpret_cast<float*>(y_bytes) + chunk.y_offset;
        for (int64_t b = 0; b < plan.batch; ++b) swish_in_place(rows + b * plan.y_batch_stride, chunk.y_span, *plan.swish_after, isa_);
      }
    };
    const int64_t chunks = static_cast<int64_t>(plan.chunks.size());
    if (plan.axis == ConvSplitAxis::kChannels) count_conv_channel_slice_run();
    if (chunks == 1) {
      run_chunk(plan.chunks[0]);
      return;
    }
    ctx.parallel_for(chunks, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) run_chunk(plan.chunks[c]);
    });
  }

  bool transposed_;
  memory::data_type compute_type_ = memory::data_type::f32;  // of the source and the weights
  // int8 layers: the weights' int8 values, their per-channel scales, the source's scale and the
  // output scales (source scale x weight scale).
  bool int8_ = false;
  Tensor int8_weights_;
  std::vector<float> weight_scales_, output_scales_;
  float x_scale_ = 0;
  bool output_reduced_ = false;  // output 0 written as bf16 (runtime/reduced_storage.h)
  bool int8_layer_ = false;           // built as an int8 layer (whether or not int8_ runs)
  bool non_negative_source_ = false;  // take_non_negative_source: X quantizes to u8
  DType output_int8_ = DType::kUndefined;  // kInt8 / kUInt8: output 0 stored as int8 (reduced_storage.h)
  float y_scale_ = 0;                      // the scale of those int8 values
  float quantized_output_scale_ = 0;       // write_quantized: output 0 rounded to this int8 grid
  ops::ReferenceChain chain_;  // the reference kernels of the node and its fused tails
  Tensor weights_;
  size_t num_head_inputs_;
  bool winograd_allowed_;  // SessionOptions::winograd
  KernelOptions options_;  // SessionOptions::kernel_options
  KernelIsa isa_;          // the vector tier the direct loops may use
  WindowAttrs window_;
  ConvTransposeAttrs transpose_attrs_;
  int64_t group_ = 1;
  FusedTails tails_{isa_};
  bool input_channels_last_ = false, residual_channels_last_ = false, output_channels_last_ = false;
  memory::desc prepacked_desc_;
  memory prepacked_;
  Tensor prepacked_data_;  // the bytes behind prepacked_ when restored from a plan
  mutable std::mutex packed_mutex_;
  struct PackedWeights {
    int64_t first_channel = 0;
    memory packed;
  };
  mutable std::vector<PackedWeights> packed_;
  std::unique_ptr<dnnl_support::ShapeCache<ConvPlan>> cache_;
  std::optional<ops::small_gemm::DirectWeights> point_weights_;  // see start_point_product()
  std::optional<DepthwiseWeights> depthwise_direct_;  // see start_depthwise_direct()
  std::optional<DepthwiseTail> depthwise_tail_;      // see fuse_depthwise_tail()
  std::optional<Tensor> constant_bias_;              // the node's bias when it is a constant
  bool has_constant_bias_or_none_ = false;           // no bias input, or a constant fp32 one
  std::optional<Shape> static_input_shape_;          // X's shape when the model fixes it
  std::optional<StemWeights> stem_direct_;  // see start_stem_direct()
  std::optional<PointwiseWeights> pointwise_direct_;  // see start_pointwise_direct()
  std::optional<Int8PointwiseProduct> int8_pointwise_;  // see start_int8_pointwise()
};

struct DnnlConv {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlConvKernel::create(init, false); }
};
struct DnnlConvTranspose {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlConvKernel::create(init, true); }
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Conv", (1, 11), DnnlConv);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "ConvTranspose", (1, 11), DnnlConvTranspose);

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
