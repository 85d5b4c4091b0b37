// Helpers for tests that compare the kernel tiers and plan rewrites through whole sessions.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "runtime/session.h"

namespace parity::testing {

/// A session over an in-memory model with the given kernel tier; throws the creation error.
inline runtime::Session session_with_kernels(const onnx::ModelProto& model, runtime::KernelTier tier) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.kernels = tier;
  auto session = runtime::Session::create(model, options);
  if (!session) throw session.error();
  return std::move(session).value();
}

/// Output `name` of `model` run once with `feed` on the reference kernels (the oracle).
inline Tensor reference_output(const onnx::ModelProto& model, const TensorMap& feed, const std::string& name = "y") {
  return session_with_kernels(model, runtime::KernelTier::kReference).run(feed).at(name);
}

/// An optimized run's output and how far a kernel's process-wide run counter moved during it.
struct CountedRun {
  Tensor output;
  uint64_t counted = 0;
};

/// Runs `model` on the optimized kernels at `threads`: tests of a direct kernel check both that
/// it ran (`counter`) and what it computed.
inline CountedRun optimized_run_counting(const onnx::ModelProto& model, const TensorMap& feed, int threads,
                                         uint64_t (*counter)(), const std::string& name = "y") {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = test_kernel_isa();
  options.threads = threads;
  auto session = runtime::Session::create(model, options);
  if (!session) throw session.error();
  const uint64_t before = counter();
  Tensor output = session.value().run(feed).at(name);
  return {std::move(output), counter() - before};
}

/// Checks that a direct kernel ran in `run` exactly when the CPU has it (`available`) and the case
/// should take it (`expected`).
inline void expect_direct_path(const CountedRun& run, bool available, bool expected, int threads) {
  if (available && expected) EXPECT_GT(run.counted, 0u) << threads << " threads: the direct path did not run";
  else EXPECT_EQ(run.counted, 0u) << threads << " threads: the direct path ran";
}

/// Labels of the nodes a plain run executes, in order (from RunOptions.profile): what fused or
/// folded plans really run.
inline std::vector<std::string> executed_node_labels(const runtime::Session& session, const TensorMap& feed) {
  std::vector<runtime::NodeTiming> profile;
  runtime::RunOptions options;
  options.profile = &profile;
  session.run(feed, options);
  std::vector<std::string> labels;
  for (const auto& p : profile) labels.push_back(p.label);
  return labels;
}

/// True when some label contains `text`.
inline bool any_label_contains(const std::vector<std::string>& labels, const std::string& text) {
  for (const auto& label : labels)
    if (label.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace parity::testing
