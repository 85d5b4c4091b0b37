// Spec: https://onnx.ai/onnx/operators/onnx__QLinearConv.html, onnx__ConvInteger.html
// Optimized QLinearConv (2-D, constant int8 weights without zero points, constant scales and
// zero points) and ConvInteger (the same weights; the input's zero point may be a run-time value)
// on oneDNN's int8 convolution, beside the reference kernels in conv.cpp. ConvInteger outputs the
// int32 sums themselves.
//
// oneDNN computes the exact integer part: (x - x_zero_point) * w summed in int32 (VNNI on
// AVX512) plus the int32 bias, with the source zero point as a oneDNN attribute and padding that
// reads as the zero point, as the spec's centered values do. The requantization
// (round-half-even of acc * x_scale * w_scale / y_scale in double, plus y_zero_point, saturated)
// is the reference kernel's own arithmetic, so the results are bit-identical to it. Runs oneDNN
// cannot take (another dtype or rank, a geometry it rejects) and CPUs without VNNI
// (dnnl_support::int8_sums_exactly) run the reference kernel.
#if PARITY_HAVE_DNNL

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"
#include "runtime/ops/nn/conv_core.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/reduced_precision.h"

namespace parity::runtime::nn {
namespace {

using dnnl::memory;
using dnnl_support::cpu_engine;
using dnnl_support::constant_scalar_input;
using dnnl_support::int8_data_type;
using dnnl_support::int8_weights_without_zero_point;

/// A constant one-element input as a double (a scale or zero point).
std::optional<double> constant_scalar(const KernelInit& init, size_t i) {
  std::optional<Tensor> t = constant_scalar_input(init, i);
  if (!t) return std::nullopt;
  return t->value_as_double(0);
}

/// The primitive and reorders for one input shape.
struct QConvPlan {
  bool supported = false;
  dnnl::convolution_forward primitive;
  memory::desc src_desc, dst_desc, x_plain, acc_plain, scratchpad;
  dnnl::reorder src_in, dst_out;
  memory weights;
};

class DnnlQLinearConvKernel : public Kernel, public NativeInt8Kernel {
 public:
  // An int8 layer of a plan (runtime/reduced_precision.h): integer already, nothing to quantize.
  bool take_int8_scales(const std::map<size_t, float>& scales) override { return scales.empty(); }
  bool runs_int8() const override { return true; }

  /// ConvInteger(x, w, x_zero_point, w_zero_point) -> int32.
  static std::unique_ptr<Kernel> create_integer(const KernelInit& init) {
    if (!dnnl_support::int8_sums_exactly()) return nullptr;  // the reference kernel, exact
    auto reference = init.create_reference_kernel();  // also validates the attributes
    const DType x_type = init.input_dtype(0);
    if (x_type != DType::kUInt8 && x_type != DType::kInt8) return nullptr;
    std::optional<Tensor> w = int8_weights_without_zero_point(init, 1, 3, 4);
    const int64_t group = init.attr_int("group", 1);
    if (!w || group <= 0 || w->dim(0) % group != 0) return nullptr;
    auto kernel = std::unique_ptr<DnnlQLinearConvKernel>(new DnnlQLinearConvKernel(std::move(reference)));
    kernel->window_ = WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false);
    kernel->group_ = group;
    kernel->weights_ = std::move(*w);
    kernel->x_type_ = x_type;
    kernel->requantize_ = false;
    return kernel;
  }

  /// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, bias).
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (!dnnl_support::int8_sums_exactly()) return nullptr;  // the reference kernel, exact
    auto reference = init.create_reference_kernel();  // also validates the attributes
    const DType x_type = init.input_dtype(0);
    if (x_type != DType::kUInt8 && x_type != DType::kInt8) return nullptr;
    std::optional<Tensor> w = int8_weights_without_zero_point(init, 3, 5, 4);
    if (!w) return nullptr;
    const std::optional<double> x_scale = constant_scalar(init, 1), x_zp = constant_scalar(init, 2);
    const std::optional<double> y_scale = constant_scalar(init, 6), y_zp = constant_scalar(init, 7);
    std::optional<Tensor> w_scale = init.constant_input(4);
    std::optional<Tensor> y_zp_tensor = init.constant_input(7);
    if (!x_scale || !x_zp || !y_scale || !y_zp || !w_scale || !y_zp_tensor) return nullptr;
    if (init.input_dtype(2) != x_type) return nullptr;
    const DType y_type = y_zp_tensor->dtype();
    if (y_type != DType::kUInt8 && y_type != DType::kInt8) return nullptr;
    const int64_t out_channels = w->dim(0);
    if (w_scale->numel() != 1 && w_scale->numel() != out_channels) return nullptr;
    std::optional<Tensor> bias;
    if (init.has_input(8)) {
      bias = init.constant_input(8);
      if (!bias || bias->dtype() != DType::kInt32 || bias->numel() != out_channels) return nullptr;
    }
    const int64_t group = init.attr_int("group", 1);
    if (group <= 0 || out_channels % group != 0) return nullptr;
    auto kernel = std::unique_ptr<DnnlQLinearConvKernel>(new DnnlQLinearConvKernel(std::move(reference)));
    kernel->window_ = WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false);
    kernel->group_ = group;
    kernel->weights_ = std::move(*w);
    kernel->bias_ = std::move(bias);
    kernel->x_type_ = x_type;
    kernel->y_type_ = y_type;
    kernel->x_zero_point_ = static_cast<int32_t>(*x_zp);
    kernel->y_zero_point_ = *y_zp;
    // The reference's multiplier, in double: x_scale * w_scale[m] / y_scale.
    for (int64_t m = 0; m < out_channels; ++m)
      kernel->multipliers_.push_back(*x_scale * w_scale->value_as_double(w_scale->numel() == 1 ? 0 : m) / *y_scale);
    return kernel;
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != x_type_ || x.rank() != 4 || x.numel() == 0) return reference_->compute(ctx);
    const ConvProblem p = make_conv_problem(x.shape(), weights_.shape(), group_, window_, ctx);
    if (shape_numel(p.output_shape()) == 0) return reference_->compute(ctx);
    // ConvInteger's zero point is an input that may be made at run time (absent: 0).
    int32_t zero_point = x_zero_point_;
    if (!requantize_ && ctx.has_input(2)) {
      const Tensor& zp = ctx.input(2);
      if (zp.numel() != 1 || zp.dtype() != x_type_) return reference_->compute(ctx);
      zero_point = static_cast<int32_t>(zp.value_as_double(0));
    }
    std::shared_ptr<const QConvPlan> plan = cache_.get(x.shape(), [&] { return make_plan(p, x.shape()); });
    if (!plan->supported) return reference_->compute(ctx);
    if (!requantize_) {  // ConvInteger: the sums are the output
      Tensor acc = ctx.allocate_output_uninitialized(0, DType::kInt32, p.output_shape());
      run(*plan, x, zero_point, acc);
    } else {
      Tensor acc = Tensor::uninitialized(DType::kInt32, p.output_shape());
      run(*plan, x, zero_point, acc);
      requantize(acc, p, ctx);
    }
    count_dnnl_fast_path_run();
  }

 private:
  explicit DnnlQLinearConvKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  QConvPlan make_plan(const ConvProblem& p, const Shape& x_shape) const {
    QConvPlan plan;
    const WindowGeometry& g = p.geom;
    memory::dims strides, dilations, pad_l, pad_r;
    for (int64_t i = 0; i < g.rank; ++i) {
      if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) return plan;
      strides.push_back(g.strides[i]);
      dilations.push_back(g.dilations[i] - 1);
      pad_l.push_back(g.pad_begin[i]);
      pad_r.push_back(g.pad_end[i]);
    }
    dnnl_support::ThreadScope scope(1);
    try {
      const Shape y_shape = p.output_shape();
      const int64_t out_per_group = weights_.dim(0) / group_, in_per_group = weights_.dim(1);
      memory::dims w_dims{out_per_group, in_per_group, weights_.dim(2), weights_.dim(3)};
      if (group_ > 1) w_dims.insert(w_dims.begin(), group_);
      const memory::desc w_plain(w_dims, memory::data_type::s8,
                                 group_ > 1 ? memory::format_tag::goihw : memory::format_tag::oihw);
      const memory::desc src(dnnl_support::to_dims(x_shape), int8_data_type(x_type_), memory::format_tag::any);
      const memory::desc dst(dnnl_support::to_dims(y_shape), memory::data_type::s32, memory::format_tag::any);
      const memory::desc w_any(w_dims, memory::data_type::s8, memory::format_tag::any);
      const memory::desc bias = bias_ ? memory::desc({weights_.dim(0)}, memory::data_type::s32, memory::format_tag::a)
                                      : memory::desc();
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, src, w_any, bias, dst, strides,
                                                 dilations, pad_l, pad_r);
      const dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
      plan.primitive = dnnl::convolution_forward(pd);
      plan.src_desc = pd.src_desc();
      plan.dst_desc = pd.dst_desc();
      plan.scratchpad = pd.scratchpad_desc();
      plan.x_plain = dnnl_support::plain_desc(x_shape, int8_data_type(x_type_));
      plan.acc_plain = dnnl_support::plain_desc(y_shape, memory::data_type::s32);
      if (plan.src_desc != plan.x_plain) plan.src_in = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan.x_plain, cpu_engine(), plan.src_desc));
      if (plan.dst_desc != plan.acc_plain) plan.dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plan.dst_desc, cpu_engine(), plan.acc_plain));
      plan.weights = memory(pd.weights_desc(), cpu_engine());
      memory source = dnnl_support::wrap(w_plain, weights_);
      dnnl_support::execute(dnnl::reorder(source, plan.weights), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, plan.weights}}, 1);
      plan.supported = true;
    } catch (const dnnl::error&) {
      plan.supported = false;
    }
    return plan;
  }

  void run(const QConvPlan& plan, const Tensor& x, int32_t zero_point, Tensor& acc) const {
    dnnl_support::ThreadScope scope(1);
    dnnl::stream stream(cpu_engine());
    memory src = dnnl_support::wrap(plan.x_plain, x);
    if (plan.src_desc != plan.x_plain) {
      memory converted(plan.src_desc, cpu_engine());
      plan.src_in.execute(stream, src, converted);
      src = converted;
    }
    memory acc_plain = dnnl_support::wrap(plan.acc_plain, acc);
    memory dst = plan.dst_desc != plan.acc_plain ? memory(plan.dst_desc, cpu_engine()) : acc_plain;
    memory zp(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), cpu_engine(), &zero_point);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_WEIGHTS, plan.weights},
                                         {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp}};
    if (bias_) args[DNNL_ARG_BIAS] = dnnl_support::wrap(memory::desc({bias_->numel()}, memory::data_type::s32,
                                                                      memory::format_tag::a), *bias_);
    memory scratchpad;
    if (plan.scratchpad.get_size() > 0) {
      scratchpad = memory(plan.scratchpad, cpu_engine());
      args[DNNL_ARG_SCRATCHPAD] = scratchpad;
    }
    plan.primitive.execute(stream, args);
    if (plan.dst_desc != plan.acc_plain) plan.dst_out.execute(stream, dst, acc_plain);
    stream.wait();
  }

  /// The reference kernel's requantization of the int32 sums.
  void requantize(const Tensor& acc, const ConvProblem& p, KernelContext& ctx) const {
    const double lo = y_type_ == DType::kUInt8 ? 0.0 : -128.0, hi = y_type_ == DType::kUInt8 ? 255.0 : 127.0;
    Tensor& y = ctx.allocate_output_uninitialized(0, y_type_, p.output_shape());
    const int64_t plane = p.geom.out_numel(), channels = p.out_channels;
    const int32_t* a = acc.data<int32_t>();
    auto store = [&](auto* out) {
      using Q = std::remove_pointer_t<decltype(out)>;
      ctx.parallel_for(p.batch * channels, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const double m = multipliers_[row % channels];
          for (int64_t i = row * plane; i < (row + 1) * plane; ++i) {
            const double v = std::nearbyint(static_cast<double>(a[i]) * m) + y_zero_point_;
            out[i] = std::isnan(v) ? Q{0} : static_cast<Q>(std::clamp(v, lo, hi));  // NaN: as the reference
          }
        }
      });
    };
    if (y_type_ == DType::kUInt8) store(y.data<uint8_t>());
    else store(y.data<int8_t>());
  }

  std::unique_ptr<Kernel> reference_;
  bool requantize_ = true;  // QLinearConv; false for ConvInteger
  WindowAttrs window_;
  int64_t group_ = 1;
  Tensor weights_;
  std::optional<Tensor> bias_;
  DType x_type_ = DType::kUInt8, y_type_ = DType::kUInt8;
  int32_t x_zero_point_ = 0;
  double y_zero_point_ = 0;
  std::vector<double> multipliers_;
  dnnl_support::ShapeCache<QConvPlan> cache_;
};

}  // namespace

struct DnnlConvInteger {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlQLinearConvKernel::create_integer(init); }
};

PARITY_REGISTER_OPTIMIZED_KERNEL("", "ConvInteger", 10, DnnlConvInteger);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "QLinearConv", 10, DnnlQLinearConvKernel);

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
