// Runs the single-node ONNX backend tests whose operator is implemented by the tensor, text or
// ai.onnx.ml kernel families directly against those kernels (no executor involved), so the
// families are validated on real data even before/independently of the graph executor.
#include <gtest/gtest-spi.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "onnx/proto_convert.h"
#include "runtime/ops/op_tester.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using runtime::KernelDef;
using runtime::KernelRegistry;

void add_attribute(OpTester& tester, const Attribute& a) {
  switch (a.type) {
    case AttrType::kInt: tester.attr(a.name, a.i); break;
    case AttrType::kFloat: tester.attr(a.name, a.f); break;
    case AttrType::kString: tester.attr(a.name, a.s); break;
    case AttrType::kTensor: tester.attr(a.name, a.t); break;
    case AttrType::kInts: tester.attr_ints(a.name, a.ints); break;
    case AttrType::kFloats: tester.attr_floats(a.name, a.floats); break;
    case AttrType::kStrings: tester.attr_strings(a.name, a.strings); break;
    default: fail(ErrorCode::kUnsupported, "attribute '", a.name, "' of type ", attr_type_name(a.type));
  }
}

bool owned_by_these_families(const std::string& domain, const std::string& op) {
  for (const KernelDef& def : KernelRegistry::instance().all())
    if (def.domain == domain && def.op_type == op &&
        (def.source_file.find("/ops/tensor/") != std::string::npos ||
         def.source_file.find("/ops/text/") != std::string::npos ||
         def.source_file.find("/ops/ml/") != std::string::npos))
      return true;
  return false;
}

struct CaseResult {
  bool applicable = false;
  std::string failure;  // empty when it passed
};

CaseResult run_case(const fs::path& dir) {
  CaseResult result;
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!in || !model.ParseFromIstream(&in)) return result;
  const onnx::GraphProto& graph = model.graph();
  if (graph.node_size() != 1) return result;
  const onnx::NodeProto& node = graph.node(0);
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  if (!owned_by_these_families(domain, node.op_type())) return result;
  result.applicable = true;
  int opset = 0;
  for (const auto& o : model.opset_import())
    if ((o.domain() == "ai.onnx" ? "" : o.domain()) == domain) opset = static_cast<int>(o.version());

  std::map<std::string, Tensor> values;
  const fs::path data_dir = dir / "test_data_set_0";
  for (const auto& init : graph.initializer()) values[init.name()] = onnx_io::tensor_from_proto(init, dir);
  // Graph inputs that are initializers (older models list them) have no input_N.pb.
  int fed = 0;
  for (int i = 0; i < graph.input_size(); ++i) {
    if (values.count(graph.input(i).name())) continue;
    values[graph.input(i).name()] =
        onnx_io::tensor_from_pb_file(data_dir / ("input_" + std::to_string(fed++) + ".pb"));
  }

  OpTester tester(node.op_type(), opset, domain);
  for (const auto& a : node.attribute()) add_attribute(tester, onnx_io::attribute_from_proto(a, dir));
  for (const auto& name : node.input()) {
    if (name.empty()) {
      tester.missing_input();
    } else {
      auto it = values.find(name);
      if (it == values.end()) {
        result.failure = "input '" + name + "' has no value";
        return result;
      }
      tester.input(it->second);
    }
  }
  for (const auto& name : node.output()) {
    int index = -1;
    for (int j = 0; j < graph.output_size(); ++j)
      if (graph.output(j).name() == name) index = j;
    if (index < 0) {
      tester.missing_output();
    } else {
      tester.output(onnx_io::tensor_from_pb_file(data_dir / ("output_" + std::to_string(index) + ".pb")));
    }
  }
  // The backend tests' own default tolerances.
  tester.tolerance(1e-7, 1e-3);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    tester.run();
  }
  for (int i = 0; i < failures.size(); ++i) result.failure += failures.GetTestPartResult(i).message();
  return result;
}

TEST(TensorFamilyNodeConformance, BackendNodeTestsPass) {
  const fs::path root = onnx_testdata_dir();
  if (!fs::exists(root / "node")) GTEST_SKIP() << "no ONNX backend test data at " << root;
  int applicable = 0;
  int passed = 0;
  for (const char* suite : {"node", "pytorch-operator", "pytorch-converted", "simple"}) {
    if (!fs::exists(root / suite)) continue;
    std::set<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(root / suite))
      if (entry.is_directory()) dirs.insert(entry.path());
    for (const auto& dir : dirs) {
      CaseResult r;
      try {
        r = run_case(dir);
      } catch (const Error& e) {
        r.applicable = true;
        r.failure = e.what();
      }
      if (!r.applicable) continue;
      ++applicable;
      if (r.failure.empty()) {
        ++passed;
      } else {
        ADD_FAILURE() << suite << "/" << dir.filename().string() << ": " << r.failure;
      }
    }
  }
  std::cout << "tensor/text/ml families: " << passed << " of " << applicable << " single-node backend tests pass\n";
  EXPECT_GT(applicable, 0);
}

}  // namespace
}  // namespace parity::testing
