// Spec: https://onnx.ai/onnx/operators/onnx__Constant.html, onnx__ConstantOfShape.html
// Constant and ConstantOfShape.
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

/// In the fp64 oracle, floating constants are stored as double like every other floating tensor.
Tensor in_compute_dtype(const Tensor& t, Precision precision) {
  const DType d = compute_dtype(t.dtype(), precision);
  return d == t.dtype() ? t : t.cast(d);
}

class Constant : public Kernel {
 public:
  explicit Constant(const KernelInit& init) {
    int found = 0;
    for (const auto& [name, attr] : init.spec().attributes) {
      if (name == "value") value_ = attr.t;
      else if (name == "value_float") value_ = Tensor::scalar<float>(attr.f);
      else if (name == "value_floats") value_ = Tensor::from_vector<float>({static_cast<int64_t>(attr.floats.size())}, attr.floats);
      else if (name == "value_int") value_ = Tensor::scalar<int64_t>(attr.i);
      else if (name == "value_ints") value_ = Tensor::from_vector<int64_t>({static_cast<int64_t>(attr.ints.size())}, attr.ints);
      else if (name == "value_string") value_ = Tensor::scalar<std::string>(attr.s);
      else if (name == "value_strings")
        value_ = Tensor::from_vector<std::string>({static_cast<int64_t>(attr.strings.size())}, attr.strings);
      else if (name == "sparse_value") init.fail("sparse_value constants are not supported");
      else continue;
      ++found;
    }
    if (found != 1) init.fail("exactly one value attribute is required, found ", found);
    value_ = in_compute_dtype(value_, init.precision());
  }
  void compute(KernelContext& ctx) const override { ctx.set_output(0, Value(value_)); }

 private:
  Tensor value_;
};

class ConstantOfShape : public Kernel {
 public:
  explicit ConstantOfShape(const KernelInit& init) {
    value_ = init.has_attr("value") ? init.attr_tensor("value") : Tensor::scalar<float>(0.0f);
    if (value_.numel() != 1) init.fail("attribute 'value' must hold exactly one element, has ", value_.numel());
    value_ = in_compute_dtype(value_, init.precision());
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& shape_t = ctx.input(0);
    if (shape_t.dtype() != DType::kInt64) ctx.fail("input 'input' must be int64, got ", dtype_name(shape_t.dtype()));
    Shape shape = shape_t.to_vector<int64_t>();
    for (int64_t d : shape)
      if (d < 0) ctx.fail("shape ", shape_to_string(shape), " has a negative dimension");
    Tensor& out = ctx.allocate_output(0, value_.dtype(), shape);
    visit_dtype(value_.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T v = value_.data<T>()[0];
      for (auto& x : out.values<T>()) x = v;
    });
  }

 private:
  Tensor value_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Constant", (1, 9, 11, 12, 13), Constant);
PARITY_REGISTER_KERNEL("", "ConstantOfShape", 9, ConstantOfShape);

}  // namespace parity::runtime
