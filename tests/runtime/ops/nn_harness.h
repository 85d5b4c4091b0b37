// Declarative node building for the nn/signal/object-detection kernel tests; nodes run through
// OpTester (one kernel, no executor).
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::testing::nn {

/// Declarative node description: NodeBuilder("Conv", 11).ints("pads", {1,1,1,1}).inputs(3).
class NodeBuilder {
 public:
  NodeBuilder(std::string op_type, int opset);
  NodeBuilder& i(const std::string& name, int64_t v);
  NodeBuilder& f(const std::string& name, float v);
  NodeBuilder& s(const std::string& name, const std::string& v);
  NodeBuilder& ints(const std::string& name, std::vector<int64_t> v);
  NodeBuilder& floats(const std::string& name, std::vector<float> v);
  NodeBuilder& strings(const std::string& name, std::vector<std::string> v);
  /// Number of outputs to request (all named); default 1.
  NodeBuilder& outputs(size_t n);
  /// Marks output index as omitted ("").
  NodeBuilder& omit_output(size_t index);
  const runtime::NodeSpec& spec() const { return spec_; }

  /// Runs the reference kernel with the given inputs (an undefined Tensor = omitted optional
  /// input). Throws on errors.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          runtime::Precision precision = runtime::Precision::kFloat32) const;

 private:
  runtime::NodeSpec spec_;
};

/// float32 tensor helper.
Tensor ft(const Shape& shape, std::vector<float> values);
/// Deterministic pseudo-random float32 tensor in [-1, 1).
Tensor random_tensor(const Shape& shape, uint32_t seed);

/// Max |a - b| for two numeric tensors of equal shape (any numeric dtypes).
double max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace parity::testing::nn
