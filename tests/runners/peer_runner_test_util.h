// Helpers for the peer-runner tests: run an ONNX backend test case (model.onnx + test_data_set_0)
// through a Runner and compare with the expected outputs.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "compare/backend_test_data.h"
#include "core/tensor_map.h"
#include "model/model.h"
#include "runners/runner.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {

/// The first data set of an ONNX backend test case, read by the loader `parity test onnx-backend` uses.
inline compare::BackendDataSet load_case(const std::filesystem::path& case_dir) {
  const model::Model model = model::load_model(case_dir / "model.onnx").value();
  const auto sets = compare::backend_data_sets(case_dir);
  if (sets.empty()) fail(ErrorCode::kNotFound, case_dir.string(), " has no test_data_set_N folder");
  return compare::load_backend_data_set(sets.front(), model.proto().graph());
}

/// Inputs of an ONNX backend test case, named after the model's inputs (the runner's).
inline TensorMap load_case_inputs(const std::filesystem::path& case_dir) {
  TensorMap feed;
  for (const auto& [name, value] : load_case(case_dir).inputs) feed.set(name, value.tensor());
  return feed;
}

/// Expected outputs in order (output_0.pb, output_1.pb, ...).
inline std::vector<Tensor> load_case_outputs(const std::filesystem::path& case_dir) {
  std::vector<Tensor> out;
  for (const auto& [name, value] : load_case(case_dir).outputs) out.push_back(value.tensor());
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
