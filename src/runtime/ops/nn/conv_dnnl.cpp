// Optimized Conv and ConvTranspose (fp32) on oneDNN, beside the reference kernels in conv.cpp and
// conv_transpose.cpp.
//
// Constant weights are reordered once into the layout oneDNN prefers for the convolution (blocked,
// format_tag::any); at plan time already when the input shape is static. Activations stay in
// parity's plain NCHW tensors: per input shape the cached plan holds the primitive plus the
// reorders between plain NCHW and the blocked layout the primitive picked for src/dst (none when it
// works on the plain layout directly).
//
// The kernels fuse their elementwise tails (activations, scalar or per-channel affine constants,
// a residual Add) as oneDNN post-ops; runs the fast path does not take (non-fp32 tensors, an
// addend whose shape is not the output's, a geometry oneDNN rejects, zero-size tensors) run the
// reference kernels of the head and of every fused tail instead, so results never depend on
// whether a node was fused.
#if PARITY_HAVE_DNNL

#include <cstdlib>
#include <cstring>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/ops/nn/conv_core.h"
#include "runtime/ops/nn/dnnl_fused_tails.h"

namespace parity::runtime::nn {
namespace {

using dnnl::memory;
using dnnl_support::cpu_engine;
using dnnl_support::plain_desc;
using dnnl_support::wrap;

/// Weights descriptor over ONNX's weight buffer as oneDNN indexes convolution weights:
/// dims [G,] O/G, I/G, k...; `transposed` for ConvTranspose, whose ONNX layout is [I, O/G, k...].
memory::desc onnx_weights_desc(const Shape& w, int64_t group, bool transposed) {
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
  return memory::desc(dims, memory::data_type::f32, strides);
}

/// Where activations live while the primitive runs. kAny lets oneDNN pick (blocked or NHWC, with
/// reorders from and to the plain tensors); kPlain forces plain NCHW src/dst (oneDNN then runs
/// im2col + GEMM); kPointwisePlain uses plain NCHW for 1x1 stride-1 unpadded convolutions (a
/// single GEMM without im2col) and kAny for the others. PARITY_DNNL_LAYOUT=plain|pointwise selects
/// the experimental settings, for measuring them against each other.
enum class ActivationLayout { kAny, kPlain, kPointwisePlain };
ActivationLayout activation_layout() {
  static const ActivationLayout layout = [] {
    const char* env = std::getenv("PARITY_DNNL_LAYOUT");
    const std::string value = env ? env : "";
    if (value == "plain") return ActivationLayout::kPlain;
    if (value == "pointwise") return ActivationLayout::kPointwisePlain;
    return ActivationLayout::kAny;
  }();
  return layout;
}

bool is_pointwise(const ConvProblem& p) {
  const WindowGeometry& g = p.geom;
  for (int64_t i = 0; i < g.rank; ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
  return p.group == 1;
}

memory::desc activation_desc(const Shape& shape, bool plain) {
  if (plain) return plain_desc(shape);
  return memory::desc(dnnl_support::to_dims(shape), memory::data_type::f32, memory::format_tag::any);
}

/// Everything one input shape needs, built once: the primitive, its packed weights and the
/// reorders between the plain tensors and the layouts the primitive chose.
struct ConvPlan {
  bool supported = false;  // false: oneDNN rejected the geometry; the reference path runs
  dnnl::primitive primitive;
  memory weights;
  memory::desc src_desc, dst_desc;
  bool reorder_src = false, reorder_dst = false;
  dnnl::reorder src_in, dst_out, residual_in;
};

/// oneDNN's geometry for one run: strides, dilations (0 = dense), paddings.
struct DnnlGeometry {
  memory::dims strides, dilations, pad_l, pad_r;
};

class DnnlConvKernel : public Kernel, public FusableKernel {
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
    if (std::optional<Shape> x = init.input_static_shape(0)) kernel->prepack(*x);
    return kernel;
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    // oneDNN 2.6 applies deconvolution post-ops in a slow generic pass (measured: PP-OCRv4 det's
    // two ConvTransposes went from 0.1 s to 2.6 s with a fused bias Add + Sigmoid), so ConvTranspose
    // takes no tails.
    if (transposed_) return false;
    if (!tails_.add(tail, first_extra_input, out_channels(), static_cast<size_t>(weights_.rank()))) return false;
    // The post-ops are part of every cached primitive.
    cache_ = std::make_unique<dnnl_support::ShapeCache<ConvPlan>>();
    return true;
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const ConvProblem p = problem(x.shape(), ctx);  // fails like the reference on bad shapes
    const Shape out_shape = p.output_shape();
    // Fused tails append their inputs after the head's own: index 2 is the bias only if the node had one.
    const Tensor* bias = num_head_inputs_ > 2 && ctx.has_input(2) ? &ctx.input(2) : nullptr;
    bool fast = x.dtype() == DType::kFloat32 && shape_numel(out_shape) > 0 && x.numel() > 0 &&
                (!bias || (bias->dtype() == DType::kFloat32 && bias->numel() == p.out_channels)) &&
                tails_.fast_path_ok(ctx, out_shape);
    std::shared_ptr<const ConvPlan> plan;
    if (fast) {
      std::vector<int64_t> key = x.shape();
      key.push_back(ctx.num_threads());
      key.push_back(bias != nullptr);
      plan = cache_->get(key, [&] { return make_plan(p, bias != nullptr, ctx.num_threads()); });
      fast = plan->supported;
    }
    if (!fast) {
      tails_.run_reference(ctx, *reference_, num_head_inputs_);
      return;
    }
    run(*plan, x, bias, out_shape, ctx);
    count_dnnl_fast_path_run();
  }

 private:
  DnnlConvKernel(const KernelInit& init, bool transposed, std::unique_ptr<Kernel> reference, Tensor weights)
      : transposed_(transposed),
        reference_(std::move(reference)),
        weights_(std::move(weights)),
        num_head_inputs_(init.num_inputs()),
        cache_(std::make_unique<dnnl_support::ShapeCache<ConvPlan>>()) {
    if (transposed) {
      transpose_attrs_ = ConvTransposeAttrs::parse(init);
      group_ = transpose_attrs_.group;
    } else {
      window_ = WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false);
      group_ = init.attr_int("group", 1);
    }
  }

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

  /// Primitive descriptor for one geometry; throws dnnl::error when oneDNN has no implementation.
  PrimitiveDesc make_primitive_desc(const ConvProblem& p, const DnnlGeometry& d, bool has_bias,
                                    const dnnl::primitive_attr& attr) const {
    Shape x_shape{p.batch, p.in_channels};
    x_shape.insert(x_shape.end(), p.geom.in.begin(), p.geom.in.end());
    const ActivationLayout layout = activation_layout();
    const bool plain = layout == ActivationLayout::kPlain ||
                       (layout == ActivationLayout::kPointwisePlain && !transposed_ && is_pointwise(p));
    const memory::desc src = activation_desc(x_shape, plain);
    const memory::desc dst = activation_desc(p.output_shape(), plain);
    const memory::desc w_plain = onnx_weights_desc(weights_.shape(), group_, transposed_);
    const memory::desc weights(w_plain.dims(), memory::data_type::f32, memory::format_tag::any);
    const memory::desc bias = has_bias ? plain_desc({p.out_channels}) : memory::desc();
    PrimitiveDesc pd;
    if (transposed_) {
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                             src, weights, bias, dst, d.strides, d.dilations, d.pad_l, d.pad_r);
      pd.deconv.emplace(desc, attr, cpu_engine());
    } else {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           src, weights, bias, dst, d.strides, d.dilations, d.pad_l, d.pad_r);
      pd.conv.emplace(desc, attr, cpu_engine());
    }
    return pd;
  }

  /// Reorders the plain ONNX weights into `desc`.
  memory pack_weights(const memory::desc& desc, int threads) const {
    const memory::desc w_plain = onnx_weights_desc(weights_.shape(), group_, transposed_);
    memory packed(desc, cpu_engine());
    memory source = wrap(w_plain, weights_);
    dnnl_support::execute(dnnl::reorder(source, packed), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, packed}}, threads);
    return packed;
  }

  /// Plan time, static input shape: packs the weights for the unfused primitive; plans for the
  /// same weights layout reuse them.
  void prepack(const Shape& x_shape) {
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
    } ctx;
    try {
      const ConvProblem p = problem(x_shape, ctx);
      std::optional<DnnlGeometry> d = dnnl_geometry(p);
      if (!d || shape_numel(p.output_shape()) == 0) return;
      const PrimitiveDesc pd = make_primitive_desc(p, *d, false, dnnl::primitive_attr());
      prepacked_desc_ = pd.base().weights_desc();
      prepacked_ = pack_weights(prepacked_desc_, 1);
    } catch (const Error&) {
      // A static shape that does not fit the weights: the run reports it.
    } catch (const dnnl::error&) {
    }
  }

  ConvPlan make_plan(const ConvProblem& p, bool has_bias, int threads) const {
    ConvPlan plan;
    std::optional<DnnlGeometry> d = dnnl_geometry(p);
    if (!d) return plan;
    dnnl_support::ThreadScope scope(threads);
    try {
      dnnl::primitive_attr attr;
      attr.set_post_ops(tails_.post_ops(p.output_shape()));
      const PrimitiveDesc typed = make_primitive_desc(p, *d, has_bias, attr);
      const dnnl::primitive_desc& pd = typed.base();
      plan.primitive = typed.primitive();
      plan.weights = prepacked_ && pd.weights_desc() == prepacked_desc_ ? prepacked_
                                                                        : pack_weights(pd.weights_desc(), threads);
      Shape x_shape{p.batch, p.in_channels};
      x_shape.insert(x_shape.end(), p.geom.in.begin(), p.geom.in.end());
      const memory::desc x_plain = plain_desc(x_shape), y_plain = plain_desc(p.output_shape());
      plan.src_desc = pd.src_desc();
      plan.dst_desc = pd.dst_desc();
      plan.reorder_src = plan.src_desc != x_plain;
      plan.reorder_dst = plan.dst_desc != y_plain;
      if (plan.reorder_src) plan.src_in = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), x_plain, cpu_engine(), plan.src_desc));
      if (plan.reorder_dst) {
        plan.dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan.dst_desc, cpu_engine(), y_plain));
        if (tails_.has_residual())
          plan.residual_in = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), y_plain, cpu_engine(), plan.dst_desc));
      }
      plan.supported = true;
    } catch (const dnnl::error&) {
      plan.supported = false;
    }
    return plan;
  }

  void run(const ConvPlan& plan, const Tensor& x, const Tensor* bias, const Shape& out_shape, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    dnnl_support::ThreadScope scope(ctx.num_threads());
    dnnl::stream stream(cpu_engine());
    memory src = wrap(plain_desc(x.shape()), x);
    if (plan.reorder_src) {
      memory blocked(plan.src_desc, cpu_engine());
      plan.src_in.execute(stream, src, blocked);
      src = blocked;
    }
    memory y_plain = wrap(plain_desc(out_shape), y);
    memory dst = plan.reorder_dst ? memory(plan.dst_desc, cpu_engine()) : y_plain;
    if (const Tensor* addend = tails_.residual(ctx)) {  // the sum post-op accumulates onto dst
      if (plan.reorder_dst) {
        memory addend_plain = wrap(plain_desc(out_shape), *addend);
        plan.residual_in.execute(stream, addend_plain, dst);
      } else {
        std::memcpy(y.raw_data(), addend->raw_data(), y.size_bytes());
      }
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, plan.weights}, {DNNL_ARG_DST, dst}};
    if (bias) args[DNNL_ARG_BIAS] = wrap(plain_desc({bias->numel()}), *bias);
    tails_.add_binary_args(args, out_shape);
    plan.primitive.execute(stream, args);
    if (plan.reorder_dst) plan.dst_out.execute(stream, dst, y_plain);
    stream.wait();
  }

  bool transposed_;
  std::unique_ptr<Kernel> reference_;
  Tensor weights_;
  size_t num_head_inputs_;
  WindowAttrs window_;
  ConvTransposeAttrs transpose_attrs_;
  int64_t group_ = 1;
  FusedTails tails_;
  memory::desc prepacked_desc_;
  memory prepacked_;
  std::unique_ptr<dnnl_support::ShapeCache<ConvPlan>> cache_;
};

struct DnnlConv {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlConvKernel::create(init, false); }
};
struct DnnlConvTranspose {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlConvKernel::create(init, true); }
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Conv", 1, DnnlConv);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Conv", 11, DnnlConv);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "ConvTranspose", 1, DnnlConvTranspose);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "ConvTranspose", 11, DnnlConvTranspose);

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
