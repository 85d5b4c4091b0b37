// Small builders for the tensor/text/ml kernel tests (on top of the shared OpTester).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/tensor.h"
#include "runtime/ops/op_tester.h"

namespace parity::testing {

inline Tensor f32(const Shape& s, const std::vector<float>& v) { return Tensor::from_vector<float>(s, v); }
inline Tensor f64(const Shape& s, const std::vector<double>& v) { return Tensor::from_vector<double>(s, v); }
inline Tensor i64(const Shape& s, const std::vector<int64_t>& v) { return Tensor::from_vector<int64_t>(s, v); }
inline Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return Tensor::from_vector<int32_t>(s, v); }
inline Tensor str(const Shape& s, const std::vector<std::string>& v) { return Tensor::from_vector<std::string>(s, v); }
inline Tensor boolean(const Shape& s, const std::vector<bool>& v) {
  Tensor t(DType::kBool, s);
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.numel(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
/// A float tensor 0, 1, 2, ... of the given shape.
inline Tensor iota_f32(const Shape& shape) {
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

/// Runs the node expecting an error of `code` whose message names the node and contains `part`.
inline void expect_node_error(OpTester& tester, ErrorCode code, const std::string& part) {
  const std::string message = tester.run_expect_error(code);
  EXPECT_NE(message.find(part), std::string::npos) << message;
  EXPECT_NE(message.find("node 'test_node'"), std::string::npos) << message;
}

}  // namespace parity::testing
