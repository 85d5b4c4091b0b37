// Helpers for the peer-runner tests: run an ONNX backend test case (model.onnx + test_data_set_0)
// through a Runner and compare with the expected outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/tensor_map.h"
#include "onnx/proto_convert.h"
#include "runners/runner.h"
#include "support/test_support.h"

namespace parity::testing {

/// Inputs of an ONNX backend test case, named after the runner's inputs (input_i is the i-th input).
inline TensorMap load_case_inputs(Runner& runner, const std::filesystem::path& case_dir) {
  TensorMap feed;
  const TensorMetadata meta = runner.input_metadata();
  size_t i = 0;
  for (const auto& m : meta) {
    const auto file = case_dir / "test_data_set_0" / ("input_" + std::to_string(i++) + ".pb");
    if (!std::filesystem::exists(file)) break;
    feed.set(m.name, onnx_io::tensor_from_pb_file(file));
  }
  return feed;
}

/// Expected outputs in order (output_0.pb, output_1.pb, ...).
inline std::vector<Tensor> load_case_outputs(const std::filesystem::path& case_dir) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const auto file = case_dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(file)) break;
    out.push_back(onnx_io::tensor_from_pb_file(file));
  }
  return out;
}

/// Element-wise closeness for numeric tensors (|a-b| <= atol + rtol*|b|); equality for strings.
inline ::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected, double rtol = 1e-4,
                                                double atol = 1e-5) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << " vs "
                                         << dtype_name(expected.dtype());
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(actual.shape()) << " vs "
                                         << shape_to_string(expected.shape());
  if (actual.dtype() == DType::kString) {
    auto a = actual.values<std::string>();
    auto e = expected.values<std::string>();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != e[i]) return ::testing::AssertionFailure() << "string " << i << ": '" << a[i] << "' vs '" << e[i] << "'";
    return ::testing::AssertionSuccess();
  }
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.value_as_double(i), e = expected.value_as_double(i);
    if (a == e || (std::isnan(a) && std::isnan(e))) continue;
    if (!(std::abs(a - e) <= atol + rtol * std::abs(e)))
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs " << e;
  }
  return ::testing::AssertionSuccess();
}

inline std::filesystem::path node_case(const std::string& name) { return onnx_testdata_dir() / "node" / name; }

}  // namespace parity::testing
