// Declarative kernel tests: build one node, feed inputs, check outputs.
//
//   OpTester("Add", 14).input<float>({2}, {1, 2}).input<float>({}, {3}).output<float>({2}, {4, 5}).run();
//
// The kernel is resolved through KernelRegistry exactly as the executor does (largest
// since_version <= opset) and run on a minimal in-memory KernelContext.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::testing {

class OpTester {
 public:
  OpTester(std::string op_type, int opset, std::string domain = "");

  OpTester& attr(const std::string& name, int64_t value);
  OpTester& attr(const std::string& name, int value) { return attr(name, static_cast<int64_t>(value)); }
  OpTester& attr(const std::string& name, float value);
  OpTester& attr(const std::string& name, double value) { return attr(name, static_cast<float>(value)); }
  OpTester& attr(const std::string& name, const std::string& value);
  OpTester& attr(const std::string& name, const char* value) { return attr(name, std::string(value)); }
  OpTester& attr(const std::string& name, const Tensor& value);
  OpTester& attr_ints(const std::string& name, const std::vector<int64_t>& values);
  OpTester& attr_floats(const std::string& name, const std::vector<float>& values);
  OpTester& attr_strings(const std::string& name, const std::vector<std::string>& values);
  /// Any attribute as parsed from a model.
  OpTester& attribute(const model::Attribute& a);

  template <typename T>
  OpTester& input(const Shape& shape, const std::vector<T>& values) {
    return input(Tensor::from_vector<T>(shape, values));
  }
  OpTester& input(const Tensor& value);
  /// An input the kernel also sees at plan time through KernelInit::constant_input().
  OpTester& constant_input(const Tensor& value);
  template <typename T>
  OpTester& constant_input(const Shape& shape, const std::vector<T>& values) {
    return constant_input(Tensor::from_vector<T>(shape, values));
  }
  /// An omitted optional input (empty name).
  OpTester& missing_input();

  template <typename T>
  OpTester& output(const Shape& shape, const std::vector<T>& values) {
    return output(Tensor::from_vector<T>(shape, values));
  }
  OpTester& output(const Tensor& expected);
  /// An output whose dtype and shape are checked but whose values are not.
  OpTester& output_shape_only(DType dtype, const Shape& shape);
  /// An omitted optional output (empty name).
  OpTester& missing_output();

  /// Tolerances for floating outputs: |a - e| <= atol + rtol * |e| (NaN matches NaN).
  OpTester& tolerance(double atol, double rtol);
  OpTester& precision(runtime::Precision precision);
  /// Kernel tier run() uses (reference by default; kOptimized falls back to the reference kernel
  /// where no optimized one takes the node, as the planner does).
  OpTester& kernels(runtime::KernelTier tier);

  /// Builds the kernel, runs it once and EXPECTs every output to match.
  void run();
  /// Builds the kernel and runs it; returns the produced outputs (no checks). With kOptimized the
  /// optimized kernel is used and `used_optimized` (if given) tells whether one accepted the node.
  std::vector<Tensor> run_outputs(runtime::KernelTier tier = runtime::KernelTier::kReference,
                                  bool* used_optimized = nullptr);
  /// The two-tier check: runs the node with its optimized kernel and with its reference kernel on
  /// the same inputs and EXPECTs every output to agree within the tolerance. Unless
  /// `expect_optimized` is false, it also fails when no optimized kernel took the node (so a test
  /// can never silently compare the reference with itself).
  void compare_tiers(bool expect_optimized = true);
  /// Runs and expects a parity::Error with the given code (at plan or run time); returns its message.
  std::string run_expect_error(ErrorCode code);

 private:
  runtime::NodeSpec spec_;
  std::vector<std::optional<runtime::Value>> inputs_;
  std::vector<std::optional<Tensor>> constants_;
  struct Expected {
    bool present = false;
    bool shape_only = false;
    Tensor tensor;
    DType dtype = DType::kUndefined;
    Shape shape;
  };
  std::vector<Expected> expected_;
  double atol_ = 1e-5;
  double rtol_ = 1e-5;
  runtime::Precision precision_ = runtime::Precision::kFloat32;
  runtime::KernelTier tier_ = runtime::KernelTier::kReference;
};

/// Seeded uniform float32 tensor with values in [lo, hi).
Tensor random_uniform(const Shape& shape, uint32_t seed, float lo, float hi);

/// An OpTester for a one-output node (compare_tiers checks every declared output).
OpTester one_output_node(const std::string& op_type, int opset, const std::string& domain = "");

/// EXPECTs that actual matches expected (dtype, shape, values within tolerance; NaN == NaN).
::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, double atol, double rtol);

}  // namespace parity::testing
