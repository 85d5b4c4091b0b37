// Spec: https://onnx.ai/onnx/operators/onnx_aionnxml_LinearClassifier.html,
//       onnx_aionnxml_LinearRegressor.html
// ai.onnx.ml LinearClassifier and LinearRegressor. Binary-classifier score layout and the
// transforms follow ONNX Runtime (the spec leaves them open).
#include "runtime/ops/ml/ml_util.h"

namespace parity::runtime {
namespace {

using ml::PostTransform;

/// X [N, C] (or [C]) times coefficients [targets, C]^T plus intercepts.
std::vector<double> linear_scores(const KernelContext& ctx, const Tensor& x, const std::vector<float>& coefficients,
                                  const std::vector<float>& intercepts, int64_t targets, int64_t& rows) {
  if (x.rank() != 1 && x.rank() != 2) ctx.fail("X must be [C] or [N, C], got ", shape_to_string(x.shape()));
  rows = x.rank() == 1 ? 1 : x.shape()[0];
  const int64_t features = x.shape().back();
  if (targets * features != static_cast<int64_t>(coefficients.size()))
    ctx.fail("coefficients hold ", coefficients.size(), " values, expected ", targets, " x ", features, " features");
  const std::vector<double> v = ml::numeric_values(x, ctx, "X");
  std::vector<double> scores(static_cast<size_t>(rows * targets), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < targets; ++t) {
      double s = intercepts.empty() ? 0.0 : intercepts[t];
      for (int64_t f = 0; f < features; ++f) s += v[r * features + f] * coefficients[t * features + f];
      scores[r * targets + t] = s;
    }
  return scores;
}

class LinearClassifierKernel final : public Kernel {
 public:
  explicit LinearClassifierKernel(const KernelInit& init)
      : coefficients_(init.attr_floats("coefficients")),
        intercepts_(init.attr_floats("intercepts", {})),
        transform_(ml::parse_post_transform(init)),
        label_strings_(init.attr_strings("classlabels_strings", {})),
        label_ints_(init.attr_ints("classlabels_ints", {})) {
    using_strings_ = !label_strings_.empty();
    if (using_strings_ == !label_ints_.empty()) init.fail("exactly one of classlabels_strings and classlabels_ints must be set");
    const size_t labels = using_strings_ ? label_strings_.size() : label_ints_.size();
    // Targets come from the intercepts when given (as in ONNX Runtime), else from the labels.
    targets_ = !intercepts_.empty() ? static_cast<int64_t>(intercepts_.size())
                                    : (labels == 2 && coefficients_.size() % 2 != 0 ? 1 : static_cast<int64_t>(labels));
    if (targets_ <= 0) init.fail("the classifier has no classes");
    if (targets_ > 1 && static_cast<int64_t>(labels) != targets_)
      init.fail(targets_, " score columns but ", labels, " class labels");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    int64_t rows = 0;
    std::vector<double> scores = linear_scores(ctx, x, coefficients_, intercepts_, targets_, rows);
    const bool binary = targets_ == 1;
    const bool two_labels = (using_strings_ ? label_strings_.size() : label_ints_.size()) == 2;
    Tensor& labels = ctx.allocate_output(0, using_strings_ ? DType::kString : DType::kInt64, {rows});
    for (int64_t r = 0; r < rows; ++r) {
      int64_t cls = 0;
      if (binary) {
        cls = scores[r] > 0 ? 1 : 0;
      } else {
        for (int64_t t = 1; t < targets_; ++t)
          if (scores[r * targets_ + t] > scores[r * targets_ + cls]) cls = t;
      }
      if (using_strings_) {
        labels.data<std::string>()[r] = binary && !two_labels ? std::to_string(cls) : label_strings_[cls];
      } else {
        labels.data<int64_t>()[r] = binary && !two_labels ? cls : label_ints_[cls];
      }
    }
    // Scores: a single column becomes [1 - s, s] when two labels exist (only PROBIT transforms it).
    const int64_t columns = binary && two_labels ? 2 : targets_;
    std::vector<double> z(static_cast<size_t>(rows * columns));
    for (int64_t r = 0; r < rows; ++r) {
      if (binary) {
        // Only PROBIT transforms a single score (ONNX Runtime); LOGISTIC/SOFTMAX leave it raw.
        const double s = transform_ == PostTransform::kProbit ? ml::probit(scores[r]) : scores[r];
        if (columns == 2) {
          z[r * 2] = 1.0 - s;
          z[r * 2 + 1] = s;
        } else {
          z[r] = s;
        }
      } else {
        std::copy(scores.begin() + r * targets_, scores.begin() + (r + 1) * targets_, z.begin() + r * targets_);
        ml::transform_row(z.data() + r * targets_, targets_, transform_);
      }
    }
    if (ctx.has_output(1))
      ml::write_float_output(ctx.allocate_output(1, compute_dtype(DType::kFloat32, ctx.precision()), {rows, columns}), z);
  }

 private:
  std::vector<float> coefficients_;
  std::vector<float> intercepts_;
  PostTransform transform_;
  std::vector<std::string> label_strings_;
  std::vector<int64_t> label_ints_;
  bool using_strings_ = false;
  int64_t targets_ = 1;
};

class LinearRegressorKernel final : public Kernel {
 public:
  explicit LinearRegressorKernel(const KernelInit& init)
      : coefficients_(init.attr_floats("coefficients", {})),
        intercepts_(init.attr_floats("intercepts", {})),
        transform_(ml::parse_post_transform(init)),
        targets_(init.attr_int("targets", 1)) {
    if (targets_ < 1) init.fail("targets must be >= 1, got ", targets_);
    if (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != targets_)
      init.fail(intercepts_.size(), " intercepts for ", targets_, " targets");
  }

  void compute(KernelContext& ctx) const override {
    int64_t rows = 0;
    std::vector<double> scores = linear_scores(ctx, ctx.input(0), coefficients_, intercepts_, targets_, rows);
    for (int64_t r = 0; r < rows; ++r) {
      if (targets_ > 1) {
        ml::transform_row(scores.data() + r * targets_, targets_, transform_);
      } else if (transform_ == PostTransform::kProbit) {
        scores[r] = ml::probit(scores[r]);  // single targets only get PROBIT (ONNX Runtime)
      }
    }
    ml::write_float_output(ctx.allocate_output(0, compute_dtype(DType::kFloat32, ctx.precision()), {rows, targets_}),
                           scores);
  }

 private:
  std::vector<float> coefficients_;
  std::vector<float> intercepts_;
  PostTransform transform_;
  int64_t targets_;
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.onnx.ml", "LinearClassifier", 1, LinearClassifierKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "LinearRegressor", 1, LinearRegressorKernel);

}  // namespace parity::runtime
