// Spec: https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Adagrad.html,
//       onnx_aionnxpreviewtraining_Momentum.html, onnx_aionnxpreviewtraining_Adam.html
// ai.onnx.preview.training optimizers: Adagrad, Momentum, Adam. Inputs are
// (R learning rate, T update count, X1..Xn, G1..Gn, state tensors...), outputs the updated X's then
// the updated states.
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

/// Splits the variadic inputs into n groups of `groups` tensors each (X, G, then the states).
int64_t tensor_count(const KernelInit& init, int groups) {
  const int64_t rest = static_cast<int64_t>(init.num_inputs()) - 2;
  if (rest <= 0 || rest % groups != 0)
    init.fail("expects R, T and ", groups, " equally long groups of tensors, got ", init.num_inputs(), " inputs");
  return rest / groups;
}

/// Applies update(x, g, states..., outs...) element-wise in double for every tensor group.
/// `states` inputs follow X and G; outputs are X_new then one per state.
template <typename Update>
void run_optimizer(KernelContext& ctx, int64_t n, int n_states, Update&& update) {
  for (int64_t t = 0; t < n; ++t) {
    const Tensor& x = ctx.input(2 + t);
    std::vector<const Tensor*> ins = {&x, &ctx.input(2 + n + t)};
    for (int s = 0; s < n_states; ++s) ins.push_back(&ctx.input(2 + (2 + s) * n + t));
    for (const Tensor* in : ins) {
      if (in->shape() != x.shape() || in->dtype() != x.dtype())
        ctx.fail("tensor group ", t, ": every tensor must match X (", dtype_name(x.dtype()), " ",
                 shape_to_string(x.shape()), "), got ", dtype_name(in->dtype()), " ", shape_to_string(in->shape()));
    }
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<T*> outs;
      for (int o = 0; o <= n_states; ++o) {
        const size_t index = static_cast<size_t>(o * n + t);
        if (ctx.has_output(index)) outs.push_back(ctx.allocate_output(index, x.dtype(), x.shape()).template data<T>());
        else outs.push_back(nullptr);
      }
      std::vector<double> in_values(ins.size()), out_values(outs.size());
      for (int64_t i = 0; i < x.numel(); ++i) {
        for (size_t k = 0; k < ins.size(); ++k) in_values[k] = static_cast<double>(to_compute(ins[k]->data<T>()[i]));
        update(in_values, out_values);
        for (size_t k = 0; k < outs.size(); ++k)
          if (outs[k]) outs[k][i] = convert_scalar<T>(out_values[k]);
      }
    });
  }
}

class AdagradKernel final : public Kernel {
 public:
  explicit AdagradKernel(const KernelInit& init)
      : n_(tensor_count(init, 3)),
        decay_factor_(init.attr_float("decay_factor", 0.0f)),
        epsilon_(init.attr_float("epsilon", 1e-6f)),
        norm_coefficient_(init.attr_float("norm_coefficient", 0.0f)) {}
  void compute(KernelContext& ctx) const override {
    const double r = read_double_scalar(ctx, ctx.input(0), "R");
    const double t = static_cast<double>(read_int_scalar(ctx, ctx.input(1), "T"));
    const double rate = r / (1.0 + t * decay_factor_);
    run_optimizer(ctx, n_, 1, [&](const std::vector<double>& in, std::vector<double>& out) {
      const double x = in[0], g = norm_coefficient_ * in[0] + in[1], h = in[2];
      const double h_new = h + g * g;
      out[0] = x - rate * g / (std::sqrt(h_new) + epsilon_);
      out[1] = h_new;
    });
  }

 private:
  int64_t n_;
  double decay_factor_, epsilon_, norm_coefficient_;
};

class MomentumKernel final : public Kernel {
 public:
  explicit MomentumKernel(const KernelInit& init)
      : n_(tensor_count(init, 3)),
        alpha_(init.attr_float("alpha")),
        beta_(init.attr_float("beta")),
        norm_coefficient_(init.attr_float("norm_coefficient")) {
    const std::string mode = init.attr_string("mode");
    if (mode != "standard" && mode != "nesterov") init.fail("attribute 'mode' must be standard or nesterov, got '", mode, "'");
    nesterov_ = mode == "nesterov";
  }
  void compute(KernelContext& ctx) const override {
    const double r = read_double_scalar(ctx, ctx.input(0), "R");
    const int64_t t = read_int_scalar(ctx, ctx.input(1), "T");
    const double beta = t > 0 ? beta_ : 1.0;  // the first update takes the full gradient
    run_optimizer(ctx, n_, 1, [&](const std::vector<double>& in, std::vector<double>& out) {
      const double x = in[0], g = norm_coefficient_ * in[0] + in[1], v = in[2];
      const double v_new = alpha_ * v + beta * g;
      out[0] = nesterov_ ? x - r * (g + alpha_ * v_new) : x - r * v_new;
      out[1] = v_new;
    });
  }

 private:
  int64_t n_;
  double alpha_, beta_, norm_coefficient_;
  bool nesterov_ = false;
};

class AdamKernel final : public Kernel {
 public:
  explicit AdamKernel(const KernelInit& init)
      : n_(tensor_count(init, 4)),
        alpha_(init.attr_float("alpha", 0.9f)),
        beta_(init.attr_float("beta", 0.999f)),
        epsilon_(init.attr_float("epsilon", 1e-6f)),
        norm_coefficient_(init.attr_float("norm_coefficient", 0.0f)),
        norm_coefficient_post_(init.attr_float("norm_coefficient_post", 0.0f)) {}
  void compute(KernelContext& ctx) const override {
    const double r = read_double_scalar(ctx, ctx.input(0), "R");
    const int64_t t = read_int_scalar(ctx, ctx.input(1), "T");
    const double td = static_cast<double>(t);
    const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(beta_, td)) / (1.0 - std::pow(alpha_, td)) : r;
    run_optimizer(ctx, n_, 2, [&](const std::vector<double>& in, std::vector<double>& out) {
      const double x = in[0], g = norm_coefficient_ * in[0] + in[1], v = in[2], h = in[3];
      const double v_new = alpha_ * v + (1.0 - alpha_) * g;
      const double h_new = beta_ * h + (1.0 - beta_) * g * g;
      const double x_new = x - rate * (v_new / (std::sqrt(h_new) + epsilon_));
      out[0] = (1.0 - norm_coefficient_post_) * x_new;
      out[1] = v_new;
      out[2] = h_new;
    });
  }

 private:
  int64_t n_;
  double alpha_, beta_, epsilon_, norm_coefficient_, norm_coefficient_post_;
};

}  // namespace

PARITY_REGISTER_KERNEL(kTrainingDomain, "Adagrad", 1, AdagradKernel);
PARITY_REGISTER_KERNEL(kTrainingDomain, "Momentum", 1, MomentumKernel);
PARITY_REGISTER_KERNEL(kTrainingDomain, "Adam", 1, AdamKernel);

}  // namespace parity::runtime::ops
