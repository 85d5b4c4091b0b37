// Declarative single-node kernel tests for the tensor/text/ml op families:
//   OpTester("Slice", 13).input(x).input(i64({2}, {0, 1}))...output(expected).run();
// Kernels are resolved through the KernelRegistry like the executor does, then run on a small
// in-memory KernelContext.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime::testing {

template <typename T>
Tensor make(const Shape& shape, const std::vector<T>& values) {
  return Tensor::from_vector<T>(shape, values);
}
inline Tensor f32(const Shape& s, const std::vector<float>& v) { return make<float>(s, v); }
inline Tensor f64(const Shape& s, const std::vector<double>& v) { return make<double>(s, v); }
inline Tensor i64(const Shape& s, const std::vector<int64_t>& v) { return make<int64_t>(s, v); }
inline Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return make<int32_t>(s, v); }
inline Tensor str(const Shape& s, const std::vector<std::string>& v) { return make<std::string>(s, v); }
inline Tensor boolean(const Shape& s, const std::vector<bool>& v) {
  Tensor t(DType::kBool, s);
  PARITY_ASSERT(static_cast<int64_t>(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
/// A float tensor 0, 1, 2, ... of the given shape.
Tensor iota_f32(const Shape& shape);

/// Checks dtype, shape and values; floating values compare with |a - e| <= atol + rtol * |e|
/// (NaN equals NaN), everything else exactly.
::testing::AssertionResult tensors_match(const Tensor& expected, const Tensor& actual, double atol = 1e-6,
                                         double rtol = 1e-6);

class OpTester {
 public:
  OpTester(std::string op_type, int opset, std::string domain = "");

  OpTester& attr(const std::string& name, int64_t value);
  OpTester& attr(const std::string& name, int value) { return attr(name, static_cast<int64_t>(value)); }
  OpTester& attr(const std::string& name, float value);
  OpTester& attr(const std::string& name, const char* value) { return attr(name, std::string(value)); }
  OpTester& attr(const std::string& name, const std::string& value);
  OpTester& attr(const std::string& name, const std::vector<int64_t>& values);
  OpTester& attr(const std::string& name, const std::vector<float>& values);
  OpTester& attr(const std::string& name, const std::vector<std::string>& values);
  OpTester& attr(const std::string& name, const Tensor& value);
  OpTester& attr(const Attribute& attribute);

  /// Adds an input; constant inputs are also visible to the kernel at plan time.
  OpTester& input(Tensor value, bool constant = false);
  /// An omitted optional input (empty name).
  OpTester& missing_input();
  /// Adds an output whose value must match `expected`.
  OpTester& output(Tensor expected);
  /// Adds an output that is produced but not checked.
  OpTester& any_output();
  /// An omitted optional output.
  OpTester& missing_output();
  OpTester& tolerance(double atol, double rtol);
  OpTester& precision(Precision p);

  /// Plans and runs the node, checks every expected output, returns the produced outputs.
  std::vector<Tensor> run();
  /// Plans and runs the node expecting a parity::Error of `code` whose message contains `part`
  /// and names the node.
  void expect_error(ErrorCode code, const std::string& part);

 private:
  std::vector<Tensor> execute();

  NodeSpec spec_;
  std::vector<std::optional<Tensor>> inputs_;
  std::vector<bool> constant_;
  std::vector<std::optional<Tensor>> expected_;
  std::vector<bool> output_checked_;
  double atol_ = 1e-6;
  double rtol_ = 1e-6;
  Precision precision_ = Precision::kFloat32;
};

}  // namespace parity::runtime::testing
