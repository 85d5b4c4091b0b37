#include "runtime/ops/backend_node_harness.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "compare/backend_test_data.h"
#include "model/proto_convert.h"
#include "runtime/ops/op_tester.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

bool owned_by(const BackendNodeFamily& family, const std::string& domain, const std::string& op) {
  for (const runtime::KernelDef& def : runtime::KernelRegistry::instance().all()) {
    if (def.domain != domain || def.op_type != op) continue;
    for (const auto& folder : family.source_folders)
      if (def.source_file.find(folder) != std::string::npos) return true;
  }
  return false;
}

/// Floating tensors become float64 (what the executor feeds kernels in fp64-oracle mode).
Tensor for_precision(const Tensor& t, runtime::Precision precision) {
  if (precision == runtime::Precision::kFloat64 && is_floating(t.dtype()) && t.dtype() != DType::kFloat64)
    return t.cast(DType::kFloat64);
  return t;
}

struct CaseResult {
  bool applicable = false;
  std::string failure;  // empty when every data set passed
};

/// `family` null: any single-node case applies.
CaseResult run_case(const fs::path& dir, const BackendNodeFamily* family, runtime::Precision precision,
                    runtime::KernelTier tier, double atol, double rtol) {
  CaseResult result;
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!in || !model.ParseFromIstream(&in)) return result;
  const onnx::GraphProto& graph = model.graph();
  if (graph.node_size() != 1) return result;
  const onnx::NodeProto& node = graph.node(0);
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  if (family && !owned_by(*family, domain, node.op_type())) return result;
  result.applicable = true;
  int opset = 0;
  for (const auto& o : model.opset_import())
    if ((o.domain() == "ai.onnx" ? "" : o.domain()) == domain) opset = static_cast<int>(o.version());
  const bool shape_only = family && family->shape_only_ops.count(node.op_type()) > 0;

  for (const fs::path& data_dir : compare::backend_data_sets(dir)) {
    const compare::BackendDataSet set = compare::load_backend_data_set(data_dir, graph);
    std::map<std::string, Tensor> values;
    for (const auto& init : graph.initializer()) values[init.name()] = model::tensor_from_proto(init, dir);
    for (const auto& [name, value] : set.inputs) {
      if (!value.is_tensor()) return {};  // OpTester feeds tensors only: not applicable
      values[name] = value.tensor();
    }
    std::map<std::string, Tensor> expected_outputs;
    for (const auto& [name, value] : set.outputs) {
      if (!value.is_tensor()) return {};
      expected_outputs[name] = value.tensor();
    }
    OpTester tester(node.op_type(), opset, domain);
    tester.precision(precision).kernels(tier);
    for (const auto& a : node.attribute()) tester.attribute(model::attribute_from_proto(a, dir));
    for (const auto& name : node.input()) {
      if (name.empty()) {
        tester.missing_input();
        continue;
      }
      auto it = values.find(name);
      if (it == values.end()) {
        result.failure = "input '" + name + "' has no value";
        return result;
      }
      tester.input(for_precision(it->second, precision));
    }
    for (const auto& name : node.output()) {
      auto found = expected_outputs.find(name);
      if (found == expected_outputs.end()) {
        tester.missing_output();
        continue;
      }
      Tensor expected = for_precision(found->second, precision);
      if (shape_only) tester.output_shape_only(expected.dtype(), expected.shape());
      else tester.output(expected);
    }
    tester.tolerance(atol, rtol);
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      tester.run();
    }
    for (int i = 0; i < failures.size(); ++i) result.failure += failures.GetTestPartResult(i).message();
    if (!result.failure.empty()) return result;
  }
  return result;
}

}  // namespace

std::string run_single_node_case(const std::filesystem::path& dir, runtime::Precision precision,
                                 runtime::KernelTier tier, double atol, double rtol) {
  try {
    CaseResult r = run_case(dir, nullptr, precision, tier, atol, rtol);
    if (!r.applicable) return "not a readable single-node model";
    return r.failure;
  } catch (const Error& e) {
    return e.what();
  }
}

void expect_backend_node_cases_pass(const BackendNodeFamily& family, const BackendNodeRun& run) {
  const fs::path root = onnx_testdata_dir();
  PARITY_REQUIRE_FILE(root / "node");
  const bool fp64 = run.precision == runtime::Precision::kFloat64;
  // The skip file `parity test onnx-backend` reads: one list of cases that cannot pass as stored.
  const auto skips = compare::BackendSkips::load(compare::BackendSkips::source_tree_file(source_dir()));
  int applicable = 0, passed = 0;
  for (const auto& suite : run.suites) {
    if (!fs::exists(root / suite)) continue;
    std::set<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(root / suite))
      if (entry.is_directory()) dirs.insert(entry.path());
    for (const auto& dir : dirs) {
      const std::string name = dir.filename().string();
      if (skips.reason(suite + "/" + name, fp64)) continue;
      CaseResult r;
      try {
        r = run_case(dir, &family, run.precision, run.tier, 1e-7, 1e-3);  // the backend tests' tolerances
      } catch (const Error& e) {
        r.applicable = true;
        r.failure = e.what();
      }
      if (!r.applicable) continue;
      ++applicable;
      if (r.failure.empty()) ++passed;
      else ADD_FAILURE() << suite << "/" << name << ": " << r.failure;
    }
  }
  std::cout << family.label << " (" << (fp64 ? "fp64 oracle" : "fp32") << ", "
            << (run.tier == runtime::KernelTier::kOptimized ? "optimized" : "reference") << " kernels): " << passed
            << " of " << applicable << " single-node backend tests pass\n";
  EXPECT_GT(applicable, 0);
}

}  // namespace parity::testing
