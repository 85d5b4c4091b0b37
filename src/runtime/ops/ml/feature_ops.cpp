// Spec: https://onnx.ai/onnx/operators/onnx_aionnxml_ArrayFeatureExtractor.html,
//       onnx_aionnxml_Binarizer.html, onnx_aionnxml_Normalizer.html, onnx_aionnxml_Scaler.html,
//       onnx_aionnxml_OneHotEncoder.html, onnx_aionnxml_LabelEncoder.html
// ai.onnx.ml feature transforms: ArrayFeatureExtractor, Binarizer, Normalizer, Scaler,
// OneHotEncoder, LabelEncoder. Behaviour left open by the spec follows ONNX Runtime.
#include <cstring>
#include <cmath>
#include <algorithm>
#include <map>

#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/ml/ml_util.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using ml::numeric_values;
using ml::write_float_output;

/// Selects entries of the last axis; 1-D data gives a [1, K] result (as the reference does).
class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  explicit ArrayFeatureExtractorKernel(const KernelInit&) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() == 0) ctx.fail("X must have rank >= 1");
    std::vector<int64_t> indices = ops::read_int_values(ctx, ctx.input(1), "Y");
    const int64_t dim = x.shape().back();
    for (int64_t i : indices)
      if (i < 0 || i >= dim) ctx.fail("index ", i, " is out of range for the last axis of size ", dim);
    const int64_t k = static_cast<int64_t>(indices.size());
    Shape out_shape = x.rank() == 1 ? Shape{1, k} : x.shape();
    out_shape.back() = k;
    const int64_t rows = dim == 0 ? 0 : x.numel() / dim;
    Tensor& out = ctx.allocate_output(0, x.dtype(), out_shape);
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(x);
      S* dst = tensor_ops::elements<S>(out);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < k; ++j) dst[r * k + j] = src[r * dim + indices[j]];
    });
  }
};

class BinarizerKernel final : public Kernel {
 public:
  explicit BinarizerKernel(const KernelInit& init) : threshold_(init.attr_float("threshold", 0.0f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
    ops::dispatch_dtype<ops::NumericTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i)
        dst[i] = convert_scalar<T>(convert_scalar<double>(src[i]) > static_cast<double>(threshold_) ? 1 : 0);
    });
  }

 private:
  float threshold_;
};

enum class Norm { kMax, kL1, kL2 };

/// Row-wise normalization of [N, C] (or [C]); a zero norm leaves the row unchanged.
class NormalizerKernel final : public Kernel {
 public:
  explicit NormalizerKernel(const KernelInit& init) {
    const std::string norm = init.attr_string("norm", "MAX");
    if (norm == "MAX") {
      norm_ = Norm::kMax;
    } else if (norm == "L1") {
      norm_ = Norm::kL1;
    } else if (norm == "L2") {
      norm_ = Norm::kL2;
    } else {
      init.fail("norm must be MAX, L1 or L2, got '", norm, "'");
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 1 && x.rank() != 2) ctx.fail("X must be [C] or [N, C], got ", shape_to_string(x.shape()));
    std::vector<double> v = numeric_values(x, ctx, "X");
    const int64_t cols = x.shape().back();
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    for (int64_t r = 0; r < rows; ++r) {
      double* row = v.data() + r * cols;
      double norm = 0.0;
      if (norm_ == Norm::kMax) {
        norm = *std::max_element(row, row + cols);
      } else {
        for (int64_t j = 0; j < cols; ++j) norm += norm_ == Norm::kL1 ? std::abs(row[j]) : row[j] * row[j];
        if (norm_ == Norm::kL2) norm = std::sqrt(norm);
      }
      if (norm != 0.0)
        for (int64_t j = 0; j < cols; ++j) row[j] /= norm;
    }
    write_float_output(ctx.allocate_output(0, compute_dtype(DType::kFloat32, ctx.precision()), x.shape()), v);
  }

 private:
  Norm norm_ = Norm::kMax;
};

/// Y = (X - offset) * scale, offset/scale holding one value or one per feature (last axis).
class ScalerKernel final : public Kernel {
 public:
  explicit ScalerKernel(const KernelInit& init)
      : offset_(init.attr_floats("offset", {})), scale_(init.attr_floats("scale", {})) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<double> v = numeric_values(x, ctx, "X");
    const int64_t cols = x.rank() == 0 ? 1 : x.shape().back();
    for (const auto* param : {&offset_, &scale_})
      if (param->size() > 1 && static_cast<int64_t>(param->size()) != cols)
        ctx.fail("offset/scale have ", param->size(), " entries but X has ", cols, " features");
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t j = cols == 0 ? 0 : i % static_cast<size_t>(cols);
      const double offset = offset_.empty() ? 0.0 : offset_[offset_.size() == 1 ? 0 : j];
      const double scale = scale_.empty() ? 1.0 : scale_[scale_.size() == 1 ? 0 : j];
      v[i] = (v[i] - offset) * scale;
    }
    write_float_output(ctx.allocate_output(0, compute_dtype(DType::kFloat32, ctx.precision()), x.shape()), v);
  }

 private:
  std::vector<float> offset_;
  std::vector<float> scale_;
};

/// One-hot over a category list: output shape X.shape + [categories].
class OneHotEncoderKernel final : public Kernel {
 public:
  explicit OneHotEncoderKernel(const KernelInit& init) : zeros_(init.attr_int("zeros", 1) != 0) {
    if (init.has_attr("cats_strings") == init.has_attr("cats_int64s"))
      init.fail("exactly one of cats_strings and cats_int64s must be set");
    if (init.has_attr("cats_strings")) {
      const auto cats = init.attr_strings("cats_strings");
      for (size_t i = 0; i < cats.size(); ++i) string_cats_.emplace(cats[i], static_cast<int64_t>(i));
      count_ = static_cast<int64_t>(cats.size());
    } else {
      const auto cats = init.attr_ints("cats_int64s");
      for (size_t i = 0; i < cats.size(); ++i) int_cats_.emplace(cats[i], static_cast<int64_t>(i));
      count_ = static_cast<int64_t>(cats.size());
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> slots(static_cast<size_t>(x.numel()), -1);
    if (x.dtype() == DType::kString) {
      if (string_cats_.empty() && count_ > 0) ctx.fail("string input but the categories are integers");
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto it = string_cats_.find(x.data<std::string>()[i]);
        if (it != string_cats_.end()) slots[i] = it->second;
      }
    } else {
      if (int_cats_.empty() && count_ > 0) ctx.fail("numeric input but the categories are strings");
      const std::vector<double> v = numeric_values(x, ctx, "X");
      for (size_t i = 0; i < v.size(); ++i) {
        auto it = int_cats_.find(static_cast<int64_t>(v[i]));
        if (it != int_cats_.end()) slots[i] = it->second;
      }
    }
    if (!zeros_)
      for (int64_t s : slots)
        if (s < 0) ctx.fail("input holds a category that is not in the list (zeros=0)");
    Shape out_shape = x.shape();
    out_shape.push_back(count_);
    std::vector<double> v(static_cast<size_t>(x.numel() * count_), 0.0);
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i] >= 0) v[i * count_ + slots[i]] = 1.0;
    write_float_output(ctx.allocate_output(0, compute_dtype(DType::kFloat32, ctx.precision()), out_shape), v);
  }

 private:
  bool zeros_;
  int64_t count_ = 0;
  std::map<std::string, int64_t> string_cats_;
  std::map<int64_t, int64_t> int_cats_;
};

/// LabelEncoder-1 maps int64 <-> string through classes_strings; 2+ maps keys_* to values_*
/// (strings, int64s or floats) with a typed default; 4 adds keys_tensor / values_tensor /
/// default_tensor of any element type (see compute_tensors).
class LabelEncoderKernel final : public Kernel {
 public:
  explicit LabelEncoderKernel(const KernelInit& init)
      : v1_(init.opset() < 2),
        default_string_(init.attr_string("default_string", "_Unused")),
        default_int_(init.attr_int("default_int64", -1)),
        default_float_(init.attr_float("default_float", -0.0f)) {
    if (v1_) {
      classes_ = init.attr_strings("classes_strings", {});
      return;
    }
    if (init.has_attr("keys_tensor") || init.has_attr("values_tensor")) {
      init_tensors(init);
      return;
    }
    int key_kinds = 0;
    if (init.has_attr("keys_strings")) key_strings_ = init.attr_strings("keys_strings"), ++key_kinds, key_type_ = DType::kString;
    if (init.has_attr("keys_int64s")) key_ints_ = init.attr_ints("keys_int64s"), ++key_kinds, key_type_ = DType::kInt64;
    if (init.has_attr("keys_floats")) key_floats_ = init.attr_floats("keys_floats"), ++key_kinds, key_type_ = DType::kFloat32;
    int value_kinds = 0;
    if (init.has_attr("values_strings")) value_strings_ = init.attr_strings("values_strings"), ++value_kinds, value_type_ = DType::kString;
    if (init.has_attr("values_int64s")) value_ints_ = init.attr_ints("values_int64s"), ++value_kinds, value_type_ = DType::kInt64;
    if (init.has_attr("values_floats")) value_floats_ = init.attr_floats("values_floats"), ++value_kinds, value_type_ = DType::kFloat32;
    if (key_kinds != 1 || value_kinds != 1) init.fail("exactly one keys_* and one values_* attribute must be set");
    const size_t keys = std::max({key_strings_.size(), key_ints_.size(), key_floats_.size()});
    const size_t values = std::max({value_strings_.size(), value_ints_.size(), value_floats_.size()});
    if (keys != values) init.fail("there are ", keys, " keys but ", values, " values");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (v1_) {
      compute_v1(ctx, x);
      return;
    }
    if (keys_tensor_.defined()) {
      compute_tensors(ctx, x);
      return;
    }
    const bool float_input = x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64;
    const DType expected_key = float_input ? DType::kFloat32 : x.dtype();
    if (expected_key != key_type_)
      ctx.fail("input of dtype ", dtype_name(x.dtype()), " does not match the ", dtype_name(key_type_), " keys");
    // Position of each input element in the key list, or -1.
    std::vector<int64_t> found(static_cast<size_t>(x.numel()), -1);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (key_type_ == DType::kString) {
        found[i] = position(key_strings_, x.data<std::string>()[i]);
      } else if (key_type_ == DType::kInt64) {
        if (x.dtype() != DType::kInt64) ctx.fail("input must be int64");
        found[i] = position(key_ints_, x.data<int64_t>()[i]);
      } else {
        found[i] = position(key_floats_, static_cast<float>(x.value_as_double(i)));
      }
    }
    const DType out_dtype =
        value_type_ == DType::kFloat32 ? compute_dtype(DType::kFloat32, ctx.precision()) : value_type_;
    Tensor& out = ctx.allocate_output(0, out_dtype, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t f = found[i];
      if (value_type_ == DType::kString) {
        out.data<std::string>()[i] = f >= 0 ? value_strings_[f] : default_string_;
      } else if (value_type_ == DType::kInt64) {
        out.data<int64_t>()[i] = f >= 0 ? value_ints_[f] : default_int_;
      } else {
        const float v = f >= 0 ? value_floats_[f] : default_float_;
        if (out_dtype == DType::kFloat64) {
          out.data<double>()[i] = v;
        } else {
          out.data<float>()[i] = v;
        }
      }
    }
  }

 private:
  /// Opset 4: keys and values as tensors (or the older typed lists), one default element.
  void init_tensors(const KernelInit& init) {
    auto list_tensor = [&](const char* strings, const char* ints, const char* floats, const char* tensor) -> Tensor {
      if (init.has_attr(tensor)) return init.attr_tensor(tensor);
      if (init.has_attr(strings)) {
        const auto v = init.attr_strings(strings);
        return Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
      }
      if (init.has_attr(ints)) {
        const auto v = init.attr_ints(ints);
        return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
      }
      if (init.has_attr(floats)) {
        const auto v = init.attr_floats(floats);
        return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
      }
      init.fail("one of ", strings, ", ", ints, ", ", floats, " or ", tensor, " must be set");
    };
    keys_tensor_ = list_tensor("keys_strings", "keys_int64s", "keys_floats", "keys_tensor");
    values_tensor_ = list_tensor("values_strings", "values_int64s", "values_floats", "values_tensor");
    if (keys_tensor_.numel() != values_tensor_.numel())
      init.fail("there are ", keys_tensor_.numel(), " keys but ", values_tensor_.numel(), " values");
    const DType vt = values_tensor_.dtype();
    if (init.has_attr("default_tensor")) {
      default_tensor_ = init.attr_tensor("default_tensor");
      if (default_tensor_.numel() != 1 || default_tensor_.dtype() != vt)
        init.fail("default_tensor must be one element of the values' type");
    } else if (vt == DType::kString) {
      default_tensor_ = Tensor::from_vector<std::string>({1}, {default_string_});
    } else if (vt == DType::kInt64) {
      default_tensor_ = Tensor::from_vector<int64_t>({1}, {default_int_});
    } else {
      default_tensor_ = Tensor(vt, {1});  // zero
      if (vt == DType::kFloat32) default_tensor_.data<float>()[0] = default_float_;
    }
  }

  void compute_tensors(KernelContext& ctx, const Tensor& x) const {
    const bool string_keys = keys_tensor_.dtype() == DType::kString;
    if (string_keys != (x.dtype() == DType::kString))
      ctx.fail("input of dtype ", dtype_name(x.dtype()), " does not match the ", dtype_name(keys_tensor_.dtype()), " keys");
    const DType vt = values_tensor_.dtype();
    Tensor& out = ctx.allocate_output(0, vt, x.shape());
    const size_t es = dtype_size(vt);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t found = -1;
      for (int64_t k = 0; k < keys_tensor_.numel() && found < 0; ++k) {
        if (string_keys) {
          if (keys_tensor_.data<std::string>()[k] == x.data<std::string>()[i]) found = k;
        } else {
          const double a = keys_tensor_.value_as_double(k), b = x.value_as_double(i);
          if (a == b || (std::isnan(a) && std::isnan(b))) found = k;  // NaN keys match NaN
        }
      }
      const Tensor& src = found >= 0 ? values_tensor_ : default_tensor_;
      const int64_t at = found >= 0 ? found : 0;
      if (vt == DType::kString) out.data<std::string>()[i] = src.data<std::string>()[at];
      else std::memcpy(static_cast<char*>(out.raw_data()) + i * es, static_cast<const char*>(src.raw_data()) + at * es, es);
    }
  }

  template <typename T>
  static int64_t position(const std::vector<T>& keys, const T& key) {
    auto it = std::find(keys.begin(), keys.end(), key);
    return it == keys.end() ? -1 : static_cast<int64_t>(it - keys.begin());
  }

  void compute_v1(KernelContext& ctx, const Tensor& x) const {
    if (x.dtype() == DType::kString) {
      Tensor& out = ctx.allocate_output(0, DType::kInt64, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = position(classes_, x.data<std::string>()[i]);
        out.data<int64_t>()[i] = p >= 0 ? p : default_int_;
      }
    } else if (x.dtype() == DType::kInt64) {
      Tensor& out = ctx.allocate_output(0, DType::kString, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t v = x.data<int64_t>()[i];
        out.data<std::string>()[i] = v >= 0 && v < static_cast<int64_t>(classes_.size()) ? classes_[v] : default_string_;
      }
    } else {
      ctx.fail("input must be string or int64, got ", dtype_name(x.dtype()));
    }
  }

  bool v1_;
  std::string default_string_;
  int64_t default_int_;
  float default_float_;
  std::vector<std::string> classes_;
  DType key_type_ = DType::kUndefined;
  DType value_type_ = DType::kUndefined;
  std::vector<std::string> key_strings_;
  std::vector<int64_t> key_ints_;
  std::vector<float> key_floats_;
  std::vector<std::string> value_strings_;
  std::vector<int64_t> value_ints_;
  std::vector<float> value_floats_;
  Tensor keys_tensor_, values_tensor_, default_tensor_;  // opset 4's tensor form
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.onnx.ml", "ArrayFeatureExtractor", 1, ArrayFeatureExtractorKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "Binarizer", 1, BinarizerKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "Normalizer", 1, NormalizerKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "Scaler", 1, ScalerKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "OneHotEncoder", 1, OneHotEncoderKernel);
PARITY_REGISTER_KERNEL("ai.onnx.ml", "LabelEncoder", (1, 2, 4), LabelEncoderKernel);

}  // namespace parity::runtime
