// Spec: https://onnx.ai/onnx/operators/onnx__NegativeLogLikelihoodLoss.html,
//       onnx__SoftmaxCrossEntropyLoss.html
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over axis 1, then NLL).
//
// Inputs are (N, C, d1..dk) with targets (N, d1..dk); targets equal to ignore_index contribute
// neither loss nor weight. 'mean' divides by the summed weights of the counted targets.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

enum class LossReduction { kNone, kSum, kMean };

LossReduction parse_reduction(const KernelInit& init) {
  const std::string r = init.attr_string("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  init.fail("attribute 'reduction' must be none, sum or mean, got '", r, "'");
}

/// Shared by both ops: log_prob (N, C, D...) in double -> loss output 0.
class NllCore {
 public:
  explicit NllCore(const KernelInit& init) : reduction_(parse_reduction(init)) {
    if (init.has_attr("ignore_index")) ignore_index_ = init.attr_int("ignore_index");
  }

  /// log_prob laid out as (N, C, D) flattened; target as (N, D).
  void compute(KernelContext& ctx, const Shape& input_shape, DType out_dtype, const std::vector<double>& log_prob,
               size_t target_index, size_t weight_index) const {
    if (input_shape.size() < 2) ctx.fail("input must have shape (N, C, d1, ..., dk), got ", shape_to_string(input_shape));
    const Tensor& target = ctx.input(target_index);
    const int64_t n = input_shape[0], c = input_shape[1];
    const int64_t d = size_from_axis(input_shape, 2);
    Shape expected_target = input_shape;
    expected_target.erase(expected_target.begin() + 1);
    if (target.shape() != expected_target)
      ctx.fail("target has shape ", shape_to_string(target.shape()), ", expected ", shape_to_string(expected_target));
    const std::vector<int64_t> labels = read_int_values(ctx, target, "target");
    std::vector<double> weight;
    if (ctx.has_input(weight_index)) {
      const Tensor& w = ctx.input(weight_index);
      if (w.rank() != 1 || w.dim(0) != c) ctx.fail("weight must have shape (", c, "), got ", shape_to_string(w.shape()));
      for (int64_t i = 0; i < c; ++i) weight.push_back(w.value_as_double(i));
    }
    std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
    double loss_sum = 0.0, weight_sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        const int64_t label = labels[i * d + j];
        if (ignore_index_ && label == *ignore_index_) continue;
        if (label < 0 || label >= c) ctx.fail("target value ", label, " is out of range [0, ", c, ")");
        const double w = weight.empty() ? 1.0 : weight[label];
        const double l = -log_prob[(i * c + label) * d + j] * w;
        loss[i * d + j] = l;
        loss_sum += l;
        weight_sum += w;
      }
    }
    dispatch_dtype<FloatTypes>(out_dtype, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (reduction_ == LossReduction::kNone) {
        Tensor& out = ctx.allocate_output(0, out_dtype, expected_target);
        T* po = out.data<T>();
        for (size_t i = 0; i < loss.size(); ++i) po[i] = convert_scalar<T>(loss[i]);
      } else {
        const double v = reduction_ == LossReduction::kSum ? loss_sum : loss_sum / weight_sum;
        ctx.allocate_output(0, out_dtype, {}).data<T>()[0] = convert_scalar<T>(v);
      }
    });
  }

 private:
  LossReduction reduction_;
  std::optional<int64_t> ignore_index_;
};

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.value_as_double(i);
  return v;
}

class NegativeLogLikelihoodLossKernel final : public Kernel {
 public:
  explicit NegativeLogLikelihoodLossKernel(const KernelInit& init) : core_(init) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    if (!is_floating(input.dtype())) ctx.fail("input must be floating point, got ", dtype_name(input.dtype()));
    core_.compute(ctx, input.shape(), input.dtype(), as_doubles(input), 1, 2);
  }

 private:
  NllCore core_;
};

class SoftmaxCrossEntropyLossKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyLossKernel(const KernelInit& init) : core_(init) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& scores = ctx.input(0);
    if (!is_floating(scores.dtype())) ctx.fail("scores must be floating point, got ", dtype_name(scores.dtype()));
    if (scores.rank() < 2) ctx.fail("scores must have shape (N, C, d1, ..., dk), got ", shape_to_string(scores.shape()));
    const int64_t n = scores.dim(0), c = scores.dim(1);
    const int64_t d = size_from_axis(scores.shape(), 2);
    std::vector<double> log_prob = as_doubles(scores);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        double peak = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k) peak = std::max(peak, log_prob[(i * c + k) * d + j]);
        double sum = 0.0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(log_prob[(i * c + k) * d + j] - peak);
        const double log_sum = std::log(sum) + peak;
        for (int64_t k = 0; k < c; ++k) log_prob[(i * c + k) * d + j] -= log_sum;
      }
    }
    core_.compute(ctx, scores.shape(), scores.dtype(), log_prob, 1, 2);
    if (ctx.has_output(1)) {
      dispatch_dtype<FloatTypes>(scores.dtype(), ctx, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Tensor& out = ctx.allocate_output(1, scores.dtype(), scores.shape());
        T* po = out.data<T>();
        for (size_t i = 0; i < log_prob.size(); ++i) po[i] = convert_scalar<T>(log_prob[i]);
      });
    }
  }

 private:
  NllCore core_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "NegativeLogLikelihoodLoss", (12, 13), NegativeLogLikelihoodLossKernel);
PARITY_REGISTER_KERNEL("", "SoftmaxCrossEntropyLoss", (12, 13), SoftmaxCrossEntropyLossKernel);

}  // namespace parity::runtime::ops
