// End-to-end: ONNX's low-precision types (float8, float4, int4/uint4, int2/uint2) through the
// files Polygraphy users exchange. numpy with ml_dtypes saves them as '<V1' bytes ('<f1' for
// float8_e5m2), so a run feeds them to the model's type and compares them with the other side's
// type; checked on ONNX 1.23's own Cast test models and data (.cache/onnx-testdata-1.23, set up by
// scripts/setup.sh) with inputs files written as numpy+ml_dtypes+Polygraphy write them
// (tests/data/formats/ml_dtypes.zip, scripts/make_format_fixtures.py).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "compare/backend_test_data.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "core/low_precision.h"
#include "runners/registry.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

fs::path node_suite() { return source_dir() / ".cache/onnx-testdata-1.23/node"; }

void require_node_suite() {
  if (fs::exists(node_suite())) return;
  if (std::getenv("CI")) FAIL() << "ONNX 1.23 test data missing; run scripts/setup.sh";
  GTEST_SKIP() << "ONNX 1.23 test data missing (run scripts/setup.sh)";
}

std::string fixture_member(const std::string& name) {
  const fs::path path = source_dir() / "tests/data/formats/ml_dtypes.zip";
  for (auto& [n, data] : zip_members_from_bytes(read_file(path), path.string()))
    if (n == name) return data;
  ADD_FAILURE() << "no fixture member " << name;
  return {};
}

onnx::GraphProto graph_of(const fs::path& model) {
  onnx::ModelProto proto;
  std::ifstream in(model, std::ios::binary);
  EXPECT_TRUE(proto.ParseFromIstream(&in)) << model;
  return proto.graph();
}

// Values equal, NaN matching NaN.
void expect_same_values(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.value_as_double(i), e = expected.value_as_double(i);
    if (std::isnan(e)) EXPECT_TRUE(std::isnan(a)) << "element " << i;
    else EXPECT_EQ(a, e) << "element " << i;
  }
}

const std::vector<std::string> kCastToFloatTests = {
    "test_cast_FLOAT8E4M3FN_to_FLOAT", "test_cast_FLOAT8E4M3FNUZ_to_FLOAT", "test_cast_FLOAT8E5M2_to_FLOAT",
    "test_cast_FLOAT8E5M2FNUZ_to_FLOAT", "test_cast_e8m0_FLOAT8E8M0_to_FLOAT", "test_cast_FLOAT4E2M1_to_FLOAT",
    "test_cast_INT4_to_FLOAT", "test_cast_UINT4_to_FLOAT", "test_cast_INT2_to_FLOAT", "test_cast_UINT2_to_FLOAT"};

TEST(LowPrecisionData, MlDtypesInputsFromPolygraphyJsonFeedTheModelsType) {
  require_node_suite();
  TempDir tmp;
  for (const std::string& test : kCastToFloatTests) {
    SCOPED_TRACE(test);
    const fs::path dir = node_suite() / test;
    const fs::path inputs = tmp / (test + ".inputs.json");
    write_file(inputs, fixture_member(test + ".inputs.json"));
    const fs::path outputs = tmp / (test + ".outputs.json");
    const CommandResult r = run_parity({"run", (dir / "model.onnx").string(), "--ref", "--load-inputs",
                                        inputs.string(), "--save-outputs", outputs.string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // The bytes ml_dtypes wrote are the values ONNX's own test feeds: the outputs are its expected ones.
    const auto expected = compare::load_backend_data_set(dir / "test_data_set_0", graph_of(dir / "model.onnx"));
    const RunResults saved = read_run_results(outputs.string());
    ASSERT_EQ(saved.runs.size(), 1u);
    expect_same_values(saved.runs[0].second.at(0).outputs.at("output"),
                       expected.outputs.at(0).second.tensor());
  }
}

const std::vector<std::string> kCastFromFloatTests = {
    "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_cast_FLOAT_to_FLOAT8E4M3FNUZ", "test_cast_FLOAT_to_FLOAT8E5M2",
    "test_cast_FLOAT_to_FLOAT8E5M2FNUZ", "test_cast_e8m0_FLOAT_to_FLOAT8E8M0", "test_cast_FLOAT_to_FLOAT4E2M1",
    "test_cast_FLOAT_to_INT4", "test_cast_FLOAT_to_UINT4", "test_cast_FLOAT_to_INT2", "test_cast_FLOAT_to_UINT2"};

TEST(LowPrecisionData, SavedOutputsOfEveryTypeLoadBackAndCompare) {
  require_node_suite();
  TempDir tmp;
  for (const std::string& test : kCastFromFloatTests) {
    SCOPED_TRACE(test);
    const std::string model = (node_suite() / test / "model.onnx").string();
    const std::string inputs = (tmp / (test + ".in.json")).string();
    const std::string outputs = (tmp / (test + ".out.json")).string();
    const CommandResult saved = run_parity({"run", model, "--ref", "--val-range", "[-8,8]", "--save-inputs", inputs,
                                            "--save-outputs", outputs});
    ASSERT_EQ(saved.exit_code, 0) << saved.output;
    const CommandResult loaded =
        run_parity({"run", model, "--ref", "--load-inputs", inputs, "--load-outputs", outputs});
    EXPECT_EQ(loaded.exit_code, 0) << loaded.output;
    EXPECT_EQ(loaded.last_line().rfind("[I] PASSED | ", 0), 0u) << loaded.output;
    // numpy keeps no type for the 1-byte ml_dtypes types but float8_e5m2's.
    const CommandResult shown = run_parity({"inspect", "data", outputs});
    EXPECT_EQ(shown.exit_code, 0) << shown.output;
    const bool e5m2 = test == "test_cast_FLOAT_to_FLOAT8E5M2";
    EXPECT_NE(shown.output.find(e5m2 ? "output [dtype=float8e5m2, shape=(3, 5)] | Stats: mean="
                                     : "output [dtype=V1"),
              std::string::npos)
        << shown.output;
  }
}

// x (`from`, [3, 5]) -> Cast(to) -> y, at IR 10 / opset 21, which ONNX Runtime 1.30 loads (the
// 1.23 test models are IR 14).
void write_cast_model(const fs::path& path, int from, int to) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("cast");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("Cast");
  node->add_input("x");
  node->add_output("y");
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name("to");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(to);
  for (auto [value, name, type] : {std::tuple{g->add_input(), "x", from}, std::tuple{g->add_output(), "y", to}}) {
    value->set_name(name);
    auto* tensor_type = value->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(type);
    tensor_type->mutable_shape()->add_dim()->set_dim_value(3);
    tensor_type->mutable_shape()->add_dim()->set_dim_value(5);
  }
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
}

TEST(LowPrecisionData, OrtOutputsCompareWithRefThroughFiles) {
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  if (!ort || (ort->availability && !ort->availability({}).is_ok())) {
    if (std::getenv("CI")) FAIL() << "ONNX Runtime unavailable; run scripts/setup.sh";
    GTEST_SKIP() << "ONNX Runtime unavailable (run scripts/setup.sh)";
  }
  TempDir tmp;
  // Integer sources for the 4-bit targets: ORT 1.30 rounds float -> int4 to nearest, where ONNX's
  // Cast (and its test data, which parity passes) truncates toward zero.
  struct Case {
    DType from, to;
    const char* range;
  };
  for (const Case& c : {Case{DType::kFloat32, kFloat8E4M3FN, "[-300,300]"}, Case{DType::kFloat32, kFloat8E5M2, "[-4,4]"},
                        Case{DType::kFloat32, kFloat8E4M3FNUZ, "[-4,4]"}, Case{DType::kInt8, kInt4, "[-8,7]"},
                        Case{DType::kUInt8, kUInt4, "[0,15]"}}) {
    SCOPED_TRACE(dtype_name(c.to));
    const std::string model = (tmp / "cast.onnx").string();
    // libonnx 1.12's proto predates the low-precision types: their numbers are parity's DType values.
    write_cast_model(model, static_cast<int>(c.from), static_cast<int>(c.to));
    const std::string inputs = (tmp / "in.json").string(), outputs = (tmp / "ort.json").string();
    const CommandResult saved = run_parity({"run", model, "--ort", "--val-range", c.range, "--iterations", "2",
                                            "--save-inputs", inputs, "--save-outputs", outputs});
    ASSERT_EQ(saved.exit_code, 0) << saved.output;
    const CommandResult loaded =
        run_parity({"run", model, "--ref", "--load-inputs", inputs, "--load-outputs", outputs});
    EXPECT_EQ(loaded.exit_code, 0) << loaded.output;
    EXPECT_NE(loaded.output.find("Passed: 2/2 iterations"), std::string::npos) << loaded.output;
  }
}

TEST(LowPrecisionData, VoidBytesTheModelDoesNotTakeAreOneClearError) {
  require_node_suite();
  TempDir tmp;
  // float8 bytes fed to a float32 input.
  const fs::path inputs = tmp / "in.json";
  write_file(inputs, fixture_member("test_cast_FLOAT8E4M3FN_to_FLOAT.inputs.json"));
  const CommandResult r = run_parity({"run", (node_suite() / "test_cast_FLOAT_to_FLOAT8E4M3FN/model.onnx").string(),
                                      "--ref", "--load-inputs", inputs.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("input 'input' of iteration 0 has dtype V1 (numpy's '|V1' bytes, as ml_dtypes' 1-byte "
                          "types are saved) but ref-runner"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace parity::testing
