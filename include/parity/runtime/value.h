// Runtime values: a tensor, a sequence of tensors, or an optional that may be empty.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace parity::runtime {

/// What flows between kernels: a tensor, a sequence of tensors, an empty optional, or nothing.
class Value {
 public:
  enum class Kind { kEmpty, kTensor, kSequence, kOptionalNone };

  Value() = default;
  Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT(implicit)
  static Value sequence(std::vector<Tensor> items, DType elem_dtype = DType::kUndefined) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.sequence_ = std::move(items);
    v.elem_dtype_ = elem_dtype;
    return v;
  }
  /// An optional without a value (ONNX Optional with no element).
  static Value none() {
    Value v;
    v.kind_ = Kind::kOptionalNone;
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kOptionalNone; }
  bool is_empty() const { return kind_ == Kind::kEmpty; }

  const Tensor& tensor() const;
  Tensor& tensor();
  const std::vector<Tensor>& sequence_items() const;
  std::vector<Tensor>& sequence_items();
  /// Element dtype of a sequence (known even when the sequence is empty).
  DType sequence_dtype() const { return elem_dtype_; }
  void set_sequence_dtype(DType d) { elem_dtype_ = d; }

 private:
  Kind kind_ = Kind::kEmpty;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
  DType elem_dtype_ = DType::kUndefined;
};

}  // namespace parity::runtime
