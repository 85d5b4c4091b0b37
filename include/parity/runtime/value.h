// Runtime values: a tensor, a sequence of tensors, or an optional that may be empty.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace parity::runtime {

/// What flows between kernels: a tensor, a sequence of tensors, an empty optional, or nothing.
class Value {
 public:
  /// Which form a value holds: nothing yet, a tensor, a sequence, or an empty optional.
  enum class Kind { kEmpty, kTensor, kSequence, kOptionalNone };
  /** \var Kind::kEmpty
      Nothing (an output not produced yet). */
  /** \var Kind::kTensor
      A tensor. */
  /** \var Kind::kSequence
      A sequence of tensors. */
  /** \var Kind::kOptionalNone
      An ONNX Optional without a value. */

  Value() = default;  ///< The empty value (kEmpty): an output not produced yet.
  /// A tensor value.
  Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT(implicit)
  /// A sequence of tensors; `elem_dtype` records the element type even for an empty sequence.
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

  Kind kind() const { return kind_; }  ///< Which form the value holds.
  bool is_tensor() const { return kind_ == Kind::kTensor; }  ///< True for kTensor.
  bool is_sequence() const { return kind_ == Kind::kSequence; }  ///< True for kSequence.
  bool is_none() const { return kind_ == Kind::kOptionalNone; }  ///< True for an empty optional (kOptionalNone).
  bool is_empty() const { return kind_ == Kind::kEmpty; }  ///< True for kEmpty.

  const Tensor& tensor() const;  ///< The tensor; throws kRuntime when the value is not a tensor.
  Tensor& tensor();  ///< As tensor(), mutable.
  const std::vector<Tensor>& sequence_items() const;  ///< The sequence's tensors; throws kRuntime when the value is not a sequence.
  std::vector<Tensor>& sequence_items();  ///< As sequence_items(), mutable.
  /// Element dtype of a sequence (known even when the sequence is empty).
  DType sequence_dtype() const { return elem_dtype_; }
  void set_sequence_dtype(DType d) { elem_dtype_ = d; }  ///< Sets the element dtype of a sequence.

 private:
  Kind kind_ = Kind::kEmpty;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
  DType elem_dtype_ = DType::kUndefined;
};

}  // namespace parity::runtime
