// Helpers shared by the ai.onnx.ml kernels: numeric input reading, score post-transforms
// (ONNX Runtime's semantics, since ORT is the runtime these kernels are compared against).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace parity::runtime::ml {

inline constexpr const char* kDomain = "ai.onnx.ml";

/// Values of a numeric input (float, double, int32, int64 ...) as double.
inline std::vector<double> numeric_values(const Tensor& t, const KernelContext& ctx, const char* what) {
  if (t.dtype() == DType::kString || t.dtype() == DType::kBool || is_complex(t.dtype()))
    ctx.fail(what, " must be numeric, got ", dtype_name(t.dtype()));
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = t.value_as_double(i);
  return out;
}

/// A float output (float64 in the fp64-oracle mode) filled from doubles.
inline void write_float_output(Tensor& out, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (out.dtype() == DType::kFloat64) {
      out.data<double>()[i] = values[i];
    } else {
      out.data<float>()[i] = static_cast<float>(values[i]);
    }
  }
}

enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

inline PostTransform parse_post_transform(const KernelInit& init) {
  const std::string s = init.attr_string("post_transform", "NONE");
  if (s == "NONE") return PostTransform::kNone;
  if (s == "SOFTMAX") return PostTransform::kSoftmax;
  if (s == "LOGISTIC") return PostTransform::kLogistic;
  if (s == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (s == "PROBIT") return PostTransform::kProbit;
  init.fail("unknown post_transform '", s, "'");
}

inline double logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/// Inverse error function: Giles' approximation refined by two Newton steps.
inline double erf_inv(double x) {
  if (x <= -1.0) return -INFINITY;
  if (x >= 1.0) return INFINITY;
  double w = -std::log((1.0 - x) * (1.0 + x));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double y = p * x;
  for (int i = 0; i < 2; ++i) y -= (std::erf(y) - x) / (2.0 / std::sqrt(M_PI) * std::exp(-y * y));
  return y;
}

inline double probit(double v) { return std::sqrt(2.0) * erf_inv(2.0 * v - 1.0); }

/// Applies the transform to one row of scores with two or more entries.
inline void transform_row(double* scores, int64_t n, PostTransform transform) {
  switch (transform) {
    case PostTransform::kNone: break;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) scores[i] = logistic(scores[i]);
      break;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) scores[i] = probit(scores[i]);
      break;
    case PostTransform::kSoftmax:
    case PostTransform::kSoftmaxZero: {
      // SOFTMAX_ZERO leaves exact zeros out of the normalization (they stay 0).
      const bool skip_zero = transform == PostTransform::kSoftmaxZero;
      double max_v = -INFINITY;
      for (int64_t i = 0; i < n; ++i) max_v = std::max(max_v, scores[i]);
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        if (skip_zero && std::abs(scores[i]) <= 1e-7) {
          scores[i] = scores[i] * std::exp(-max_v);
        } else {
          scores[i] = std::exp(scores[i] - max_v);
          sum += scores[i];
        }
      }
      for (int64_t i = 0; i < n; ++i) scores[i] /= sum;
      break;
    }
  }
}

}  // namespace parity::runtime::ml
