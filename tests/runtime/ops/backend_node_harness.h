// Runs the single-node ONNX backend test cases (libonnx-testdata) of one kernel family directly
// against its kernels through OpTester, in either kernel tier and precision. One harness for all
// families: a family is a predicate over (domain, op) plus its documented exceptions.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace parity::testing {

struct BackendNodeFamily {
  std::string label;  // printed in the summary line
  /// Source folders of the family's kernels, e.g. "/ops/math/": a case belongs to the family
  /// when its op has a kernel registered from one of them.
  std::vector<std::string> source_folders;
  /// Ops whose outputs are random draws: only dtype and shape are checked.
  std::set<std::string> shape_only_ops;
};

struct BackendNodeRun {
  runtime::Precision precision = runtime::Precision::kFloat32;
  runtime::KernelTier tier = runtime::KernelTier::kReference;
  std::vector<std::string> suites = {"node", "pytorch-operator", "pytorch-converted", "simple"};
};

/// Runs one single-node case directory (model.onnx + test_data_set_*) through OpTester: "" when
/// every data set matches within atol + rtol*|expected|, else what differs.
std::string run_single_node_case(const std::filesystem::path& dir, runtime::Precision precision,
                                 runtime::KernelTier tier, double atol, double rtol);

/// Runs every applicable case but those in tests/runtime/conformance_skips.txt (the skip file of
/// `parity test onnx-backend`); ADD_FAILUREs each failing case, prints "label: P of N ..." and
/// EXPECTs at least one applicable case. Skips when the test data is not installed (fails with CI=true).
void expect_backend_node_cases_pass(const BackendNodeFamily& family, const BackendNodeRun& run);

}  // namespace parity::testing
