// Runs every single-node ONNX backend test (node, pytorch-converted, pytorch-operator) whose
// operator belongs to the nn/signal/object-detection families through its kernel directly.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <iostream>
#include <set>

#include "runtime/ops/nn_harness.h"
#include "support/test_support.h"

namespace parity::testing::nn {
namespace {

namespace fs = std::filesystem;

const std::set<std::string>& family_ops() {
  static const std::set<std::string> ops = {
      "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "AveragePool", "MaxPool", "MaxUnpool", "LpPool",
      "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "BatchNormalization", "InstanceNormalization",
      "LayerNormalization", "LpNormalization", "LRN", "MeanVarianceNormalization", "Dropout", "RNN", "LSTM",
      "GRU", "Resize", "Upsample", "GridSample", "DepthToSpace", "SpaceToDepth", "RoiAlign",
      "NonMaxSuppression", "DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"};
  return ops;
}

/// Cases whose expected outputs cannot be reproduced, with the reason.
const std::map<std::string, std::string>& known_impossible() {
  static const std::map<std::string, std::string> cases = {};
  return cases;
}

std::string single_op_type(const fs::path& dir) {
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!in || !model.ParseFromIstream(&in)) return "";
  if (model.graph().node_size() != 1) return "";
  return model.graph().node(0).op_type();
}

void run_suite(const std::string& suite, runtime::Precision precision) {
  const fs::path root = onnx_testdata_dir() / suite;
  if (!fs::exists(root)) GTEST_SKIP() << "no test data at " << root;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  const char* filter = std::getenv("PARITY_NN_FILTER");
  int passed = 0, failed = 0;
  std::vector<std::string> missing;
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    if (filter && name.find(filter) == std::string::npos) continue;
    const std::string op = single_op_type(dir);
    if (!family_ops().count(op)) continue;
    if (known_impossible().count(name)) continue;
    const std::string msg = run_backend_case(dir, precision);
    if (msg.rfind("skip:", 0) == 0) continue;
    if (msg.rfind("error: no kernel", 0) == 0) {
      missing.push_back(name);
      continue;
    }
    if (msg.empty()) {
      ++passed;
    } else {
      ++failed;
      ADD_FAILURE() << suite << "/" << name << " (" << op << "): " << msg;
    }
  }
  std::cout << suite << ": " << passed << " passed, " << failed << " failed, " << missing.size()
            << " without a kernel\n";
  EXPECT_TRUE(missing.empty()) << missing.size() << " cases have no kernel, e.g. " << missing.front();
}

TEST(NnBackendNodeTest, NodeSuite) { run_suite("node", runtime::Precision::kFloat32); }
TEST(NnBackendNodeTest, NodeSuiteFp64) { run_suite("node", runtime::Precision::kFloat64); }
TEST(NnBackendNodeTest, PytorchConverted) { run_suite("pytorch-converted", runtime::Precision::kFloat32); }
TEST(NnBackendNodeTest, PytorchOperator) { run_suite("pytorch-operator", runtime::Precision::kFloat32); }

}  // namespace
}  // namespace parity::testing::nn
