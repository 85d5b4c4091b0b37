// Helpers for the transform tests: the PP-OCRv4 models scripts/setup.sh fetches, seeded inputs,
// running a model file (parity's ref runtime when built, else ONNX Runtime) and comparing outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>

#include "core/tensor_map.h"
#include "model/graph.h"
#include "model/model.h"
#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {

inline std::filesystem::path ocr_model(const std::string& file) {
  return source_dir() / ".cache" / "npm" / "ocr-models" / "assets" / file;
}

inline Tensor seeded_uniform(const Shape& shape, unsigned seed, DType dtype = DType::kFloat32) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = dist(gen);
  return dtype == DType::kFloat32 ? t : t.cast(dtype);
}

/// Runs a model file with a registered runner and returns copies of its outputs.
inline TensorMap run_with(const std::string& runner_name, const std::filesystem::path& model, const TensorMap& feed) {
  auto runner = runners::RunnerRegistry::instance().find(runner_name)->create({.model_path = model.string()});
  runners::ActiveRunner active(*runner);
  TensorMap out;
  for (const auto& [name, t] : active->infer(feed)) out.set(name, t.clone());
  return out;
}
inline TensorMap run_with_ort(const std::filesystem::path& model, const TensorMap& feed) {
  return run_with("ort", model, feed);
}

/// Writes a copy of the model whose outputs are the named tensors (to read intermediate values).
inline std::filesystem::path with_outputs(const std::filesystem::path& model, const std::vector<std::string>& names,
                                          const std::filesystem::path& out) {
  auto graph = model::Graph::from_model(model::load_model(model).value());
  graph->outputs.clear();
  for (const auto& n : names) graph->outputs.push_back(graph->tensor(n));
  model::save_model(graph->to_model(), out).throw_if_error();
  return out;
}

/// Largest |a - b| over float tensors of equal shape (as float64).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0.0;
  for (int64_t i = 0; i < a.numel() && i < b.numel(); ++i) {
    const double d = std::abs(a.value_as_double(i) - b.value_as_double(i));
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace parity::testing
