// Every kernel family against the single-node ONNX backend test cases, kernel by kernel (no
// executor): float32 with the reference kernels, float32 with the optimized tier (which falls back
// to the reference kernel where none exists), and the fp64 oracle.
#include <gtest/gtest.h>

#include "runtime/ops/backend_node_harness.h"

namespace parity::testing {
namespace {

using runtime::KernelTier;
using runtime::Precision;

const BackendNodeFamily& math_family() {
  static const BackendNodeFamily family{
      .label = "math/activation/logical/reduction/quantization/loss/training/random families",
      .source_folders = {"/ops/math/", "/ops/activation/", "/ops/logical/", "/ops/reduction/", "/ops/quantization/",
                         "/ops/loss/", "/ops/training/", "/ops/random/"},
      // Outputs drawn from numpy's random stream: only dtype and shape can be checked.
      .shape_only_ops = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
                         "Multinomial"},
  };
  return family;
}

const BackendNodeFamily& tensor_family() {
  static const BackendNodeFamily family{
      .label = "tensor/text/ml families",
      .source_folders = {"/ops/tensor/", "/ops/text/", "/ops/ml/"},
  };
  return family;
}

const BackendNodeFamily& nn_family() {
  static const BackendNodeFamily family{
      .label = "nn/signal/object-detection families",
      .source_folders = {"/ops/nn/", "/ops/signal/", "/ops/object_detection/"},
  };
  return family;
}

class BackendNodeCases : public ::testing::TestWithParam<const BackendNodeFamily*> {};

TEST_P(BackendNodeCases, Float32ReferenceKernels) {
  expect_backend_node_cases_pass(*GetParam(), {.precision = Precision::kFloat32, .tier = KernelTier::kReference});
}

TEST_P(BackendNodeCases, Float32OptimizedKernels) {
  expect_backend_node_cases_pass(*GetParam(), {.precision = Precision::kFloat32, .tier = KernelTier::kOptimized});
}

TEST_P(BackendNodeCases, Fp64Oracle) {
  expect_backend_node_cases_pass(*GetParam(), {.precision = Precision::kFloat64, .tier = KernelTier::kReference});
}

INSTANTIATE_TEST_SUITE_P(Families, BackendNodeCases,
                         ::testing::Values(&math_family(), &tensor_family(), &nn_family()),
                         [](const ::testing::TestParamInfo<const BackendNodeFamily*>& info) {
                           const std::string& label = info.param->label;
                           return label.substr(0, label.find('/'));
                         });

}  // namespace
}  // namespace parity::testing
