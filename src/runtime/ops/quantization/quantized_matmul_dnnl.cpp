// Spec: https://onnx.ai/onnx/operators/onnx__MatMulInteger.html, onnx__QLinearMatMul.html
// Optimized MatMulInteger and QLinearMatMul (constant 2-D int8 B without zero points) on oneDNN's
// int8 matmul, beside the reference kernels in quantized_matmul.cpp.
//
// oneDNN computes the exact integer part, (a - a_zero_point) x b summed in int32 with A's scalar
// zero point as a run-time attribute (MatMulInteger's comes from DynamicQuantizeLinear in
// dynamically quantized models) and A's batch dims folded into rows. MatMulInteger outputs those
// sums; QLinearMatMul (constant scalar scales and zero points) requantizes them with the reference
// kernel's own arithmetic (float multiplier, round half to even, saturation). Both are
// bit-identical to the reference kernels. Other runs (another dtype, a per-row zero point, shapes
// oneDNN rejects) and CPUs without VNNI (dnnl_support::int8_sums_exactly) run the reference kernel.
#if PARITY_HAVE_DNNL

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"
#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/reduced_precision.h"

namespace parity::runtime::ops {
namespace {

using dnnl::memory;
using dnnl_support::cpu_engine;
using dnnl_support::constant_scalar_input;
using dnnl_support::int8_data_type;
using dnnl_support::int8_weights_without_zero_point;

struct QMatMulPrimitive {
  bool ok = false;
  dnnl::matmul primitive;
  memory::desc src, dst, scratchpad;
  memory weights;
};

class DnnlQuantizedMatMulKernel : public Kernel, public NativeInt8Kernel {
 public:
  /// MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32.
  static std::unique_ptr<Kernel> create_integer(const KernelInit& init) {
    if (!dnnl_support::int8_sums_exactly()) return nullptr;  // the reference kernel, exact
    const DType a_type = init.input_dtype(0);
    if (a_type != DType::kUInt8 && a_type != DType::kInt8) return nullptr;
    std::optional<Tensor> b = int8_weights_without_zero_point(init, 1, 3, 2);
    if (!b) return nullptr;
    auto kernel =
        std::unique_ptr<DnnlQuantizedMatMulKernel>(new DnnlQuantizedMatMulKernel(init.create_reference_kernel()));
    kernel->b_ = std::move(*b);
    kernel->a_type_ = a_type;
    kernel->requantize_ = false;
    return kernel;
  }

  /// QLinearMatMul(A, a_scale, a_zero_point, B, b_scale, b_zero_point, y_scale, y_zero_point).
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (!dnnl_support::int8_sums_exactly()) return nullptr;  // the reference kernel, exact
    const DType a_type = init.input_dtype(0);
    if (a_type != DType::kUInt8 && a_type != DType::kInt8) return nullptr;
    std::optional<Tensor> b = int8_weights_without_zero_point(init, 3, 5, 2);
    if (!b || !init.has_input(5)) return nullptr;
    const std::optional<Tensor> a_scale = constant_scalar_input(init, 1), a_zp = constant_scalar_input(init, 2);
    const std::optional<Tensor> b_scale = constant_scalar_input(init, 4), y_scale = constant_scalar_input(init, 6);
    const std::optional<Tensor> y_zp = constant_scalar_input(init, 7);
    if (!a_scale || !a_zp || !b_scale || !y_scale || !y_zp || a_zp->dtype() != a_type) return nullptr;
    if (y_zp->dtype() != DType::kUInt8 && y_zp->dtype() != DType::kInt8) return nullptr;
    auto kernel =
        std::unique_ptr<DnnlQuantizedMatMulKernel>(new DnnlQuantizedMatMulKernel(init.create_reference_kernel()));
    kernel->b_ = std::move(*b);
    kernel->a_type_ = a_type;
    kernel->y_type_ = y_zp->dtype();
    kernel->a_zero_point_ = static_cast<int32_t>(a_zp->value_as_double(0));
    kernel->y_zero_point_ = y_zp->value_as_double(0);
    // The reference's multiplier, in float: a_scale * b_scale / y_scale.
    kernel->multiplier_ = static_cast<float>(a_scale->value_as_double(0)) *
                          static_cast<float>(b_scale->value_as_double(0)) /
                          static_cast<float>(y_scale->value_as_double(0));
    return kernel;
  }

  // An int8 layer of a plan (runtime/reduced_precision.h): integer already, nothing to quantize.
  bool take_int8_scales(const std::map<size_t, float>& scales) override { return scales.empty(); }
  bool runs_int8() const override { return true; }

  void compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const int64_t k = b_.dim(0), n = b_.dim(1);
    if (a.dtype() != a_type_ || a.rank() < 2 || a.shape().back() != k || a.numel() == 0)
      return reference_->compute(ctx);
    // MatMulInteger's zero point is a run-time input (absent: 0); a per-row one takes the reference.
    int32_t zero_point = a_zero_point_;
    if (!requantize_ && ctx.has_input(2)) {
      const Tensor& zp = ctx.input(2);
      if (zp.numel() != 1 || zp.dtype() != a_type_) return reference_->compute(ctx);
      zero_point = static_cast<int32_t>(zp.value_as_double(0));
    }
    const int64_t rows = a.numel() / k;
    std::shared_ptr<const QMatMulPrimitive> p = cache_.get({rows}, [&] { return make(rows); });
    if (!p->ok) return reference_->compute(ctx);
    Shape out_shape = a.shape();
    out_shape.back() = n;
    Tensor acc = requantize_ ? Tensor::uninitialized(DType::kInt32, {rows, n})
                             : ctx.allocate_output_uninitialized(0, DType::kInt32, out_shape);
    {
      dnnl_support::ThreadScope scope(1);
      dnnl::stream stream(cpu_engine());
      memory zp(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), cpu_engine(), &zero_point);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, dnnl_support::wrap(p->src, a)},
                                           {DNNL_ARG_WEIGHTS, p->weights},
                                           {DNNL_ARG_DST, dnnl_support::wrap(p->dst, acc)},
                                           {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp}};
      memory scratchpad;
      if (p->scratchpad.get_size() > 0) {
        scratchpad = memory(p->scratchpad, cpu_engine());
        args[DNNL_ARG_SCRATCHPAD] = scratchpad;
      }
      p->primitive.execute(stream, args);
      stream.wait();
    }
    nn::count_dnnl_fast_path_run();
    if (!requantize_) return;  // MatMulInteger: the sums are the output
    Tensor& y = ctx.allocate_output_uninitialized(0, y_type_, out_shape);
    if (y_type_ == DType::kUInt8) requantize(acc, y.data<uint8_t>());
    else requantize(acc, y.data<int8_t>());
  }

 private:
  explicit DnnlQuantizedMatMulKernel(std::unique_ptr<Kernel> reference) : reference_(std::move(reference)) {}

  QMatMulPrimitive make(int64_t rows) const {
    QMatMulPrimitive p;
    dnnl_support::ThreadScope scope(1);
    const int64_t k = b_.dim(0), n = b_.dim(1);
    try {
      const memory::data_type a_type = int8_data_type(a_type_);
      p.src = memory::desc({rows, k}, a_type, memory::format_tag::ab);
      p.dst = memory::desc({rows, n}, memory::data_type::s32, memory::format_tag::ab);
      const memory::desc b_plain({k, n}, memory::data_type::s8, memory::format_tag::ab);
      const memory::desc b_any({k, n}, memory::data_type::s8, memory::format_tag::any);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p.src, b_any, p.dst), attr, cpu_engine());
      p.primitive = dnnl::matmul(pd);
      p.scratchpad = pd.scratchpad_desc();
      p.weights = memory(pd.weights_desc(), cpu_engine());
      memory source = dnnl_support::wrap(b_plain, b_);
      dnnl_support::execute(dnnl::reorder(source, p.weights), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, p.weights}}, 1);
      p.ok = true;
    } catch (const dnnl::error&) {
      p.ok = false;
    }
    return p;
  }

  /// The reference kernel's requantization: float(acc) * multiplier, rounded half to even in
  /// double, plus the zero point, saturated.
  template <typename Q>
  void requantize(const Tensor& acc, Q* out) const {
    const int32_t* a = acc.data<int32_t>();
    const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const double v = std::nearbyint(static_cast<double>(static_cast<float>(a[i]) * multiplier_)) + y_zero_point_;
      out[i] = std::isnan(v) ? Q{0} : static_cast<Q>(std::min(std::max(v, lo), hi));  // NaN: as the reference
    }
  }

  std::unique_ptr<Kernel> reference_;
  bool requantize_ = true;  // QLinearMatMul; false for MatMulInteger
  Tensor b_;
  DType a_type_ = DType::kUInt8, y_type_ = DType::kUInt8;
  int32_t a_zero_point_ = 0;
  double y_zero_point_ = 0;
  float multiplier_ = 1;
  dnnl_support::ShapeCache<QMatMulPrimitive> cache_;
};

}  // namespace

struct DnnlMatMulInteger {
  static std::unique_ptr<Kernel> create(const KernelInit& init) { return DnnlQuantizedMatMulKernel::create_integer(init); }
};

PARITY_REGISTER_OPTIMIZED_KERNEL("", "MatMulInteger", 10, DnnlMatMulInteger);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "QLinearMatMul", 10, DnnlQuantizedMatMulKernel);

}  // namespace parity::runtime::ops

#endif  // PARITY_HAVE_DNNL
