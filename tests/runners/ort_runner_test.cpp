// ONNX Runtime runner: parity's binding to ORT's C ABI against the library scripts/setup.sh installs.
#include <gtest/gtest.h>

#include "runners/ort/ort_config.h"

#if PARITY_WITH_ORT_RUNNER
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "peer_runner_test_util.h"
#include "runners/ort/ort_library.h"
#include "runners/ort/ort_runner.h"
#include "runners/registry.h"

namespace parity::testing {
namespace {

using runners::ort::OrtLibrary;
using runners::ort::OrtRunnerOptions;

// Skips (with the reason) when ORT is not installed, so the suite still runs without set-up;
// fails instead under CI=true.
#define REQUIRE_ORT() PARITY_REQUIRE_RUNNER("ort")

TEST(OrtRunner, LoadsLibraryThroughTheCApi) {
  REQUIRE_ORT();
  const OrtLibrary* lib = OrtLibrary::load("").value();
  EXPECT_EQ(lib->version().rfind("1.", 0), 0u) << lib->version();
  const auto providers = lib->available_providers();
  EXPECT_NE(std::find(providers.begin(), providers.end(), "CPUExecutionProvider"), providers.end());
}

TEST(OrtRunner, MissingLibraryIsUnavailableWithReason) {
  auto lib = OrtLibrary::load("/nonexistent/libonnxruntime.so.1");
  ASSERT_FALSE(lib.is_ok());
  EXPECT_EQ(lib.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(lib.error().what()).find("/nonexistent"), std::string::npos);

  // Creating the runner works; activating it reports the reason.
  OrtRunnerOptions options;
  options.library = "/nonexistent";
  auto runner = runners::ort::make_ort_runner(node_case("test_add").string() + "/model.onnx", options);
  try {
    runner->activate();
    FAIL() << "activation should fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
  }
}

TEST(OrtRunner, DefaultSearchTriesTheInstalledCopyBesideLibparityFirst) {
  const char* env = std::getenv("PARITY_ORT_LIBRARY");
  const std::string saved = env ? env : "";
  unsetenv("PARITY_ORT_LIBRARY");
  const auto candidates = runners::ort::default_library_candidates();
  if (!saved.empty()) setenv("PARITY_ORT_LIBRARY", saved.c_str(), 1);
  ASSERT_GE(candidates.size(), 2u);
  // This test links libparity.so from the build tree: the installed layout's folder is beside it.
  const auto libparity_dir = std::filesystem::weakly_canonical(std::filesystem::path(PARITY_BUILD_DIR) / "src");
  EXPECT_EQ(candidates.front(), (libparity_dir / "parity" / "onnxruntime" / "libonnxruntime.so.1").string());
  EXPECT_EQ(candidates.back(), "libonnxruntime.so.1");  // the system loader path comes last
}

TEST(OrtRunner, NotAnOrtLibraryIsRejected) {
  // libparity itself has no OrtGetApiBase.
  auto lib = OrtLibrary::load((std::filesystem::path(PARITY_BUILD_DIR) / "src" / "libparity.so").string());
  ASSERT_FALSE(lib.is_ok());
  EXPECT_NE(std::string(lib.error().what()).find("OrtGetApiBase"), std::string::npos) << lib.error().what();
}

// Runs one ONNX backend node test case through the ORT runner and checks every output.
void expect_case_passes(const std::string& name, OrtRunnerOptions options = {}) {
  SCOPED_TRACE(name);
  auto runner = runners::ort::make_ort_runner((node_case(name) / "model.onnx").string(), options);
  runners::ActiveRunner active(*runner);
  const TensorMap feed = load_case_inputs(node_case(name));
  const TensorMap out = active->infer(feed);
  const auto expected = load_case_outputs(node_case(name));
  ASSERT_EQ(out.size(), expected.size());
  size_t i = 0;
  for (const auto& [output_name, tensor] : out) EXPECT_TRUE(tensors_close(tensor, expected[i++])) << output_name;
}

TEST(OrtRunner, RunsNumericBoolFloat16AndStringModels) {
  REQUIRE_ORT();
  expect_case_passes("test_add");                        // float32
  expect_case_passes("test_and_bcast4v4d");              // bool
  expect_case_passes("test_cast_FLOAT_to_FLOAT16");      // float16 output
  expect_case_passes("test_cast_FLOAT16_to_DOUBLE");     // float16 input, float64 output
  expect_case_passes("test_argmax_default_axis_example"); // int64 output
  expect_case_passes("test_cast_STRING_to_FLOAT");      // string input
}

// ONNX 1.23's CastLike cases with float8, int4/uint4 and int2/uint2 tensors on both sides: parity
// packs the sub-byte inputs for ORT, unpacks its outputs, and maps ORT's element type numbers
// (which differ from TensorProto's after FLOAT4E2M1).
TEST(OrtRunner, LowPrecisionTensorsPassBothWays) {
  REQUIRE_ORT();
  const std::filesystem::path dir = source_dir() / ".cache/onnx-testdata-1.23/node";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " is missing; run scripts/setup.sh";
  for (const char* name : {"test_castlike_FLOAT_to_INT4", "test_castlike_FLOAT_to_UINT4", "test_castlike_INT4_to_INT8",
                           "test_castlike_FLOAT_to_INT2", "test_castlike_UINT2_to_FLOAT",
                           "test_castlike_FLOAT_to_FLOAT8E4M3FN", "test_castlike_FLOAT8E5M2_to_FLOAT"}) {
    SCOPED_TRACE(name);
    const std::filesystem::path case_dir = dir / name;
    auto runner = runners::ort::make_ort_runner((case_dir / "model.onnx").string(), {});
    runners::ActiveRunner active(*runner);
    const TensorMap out = active->infer(load_case_inputs(case_dir));
    const auto expected = load_case_outputs(case_dir);
    ASSERT_EQ(out.size(), expected.size());
    size_t i = 0;
    for (const auto& [output_name, tensor] : out) EXPECT_TRUE(tensors_close(tensor, expected[i++])) << output_name;
  }
}

// Identity on a string tensor: a string output, without StringNormalizer's need for system locales.
TEST(OrtRunner, StringTensorsRoundTrip) {
  REQUIRE_ORT();
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("string_identity");
  auto* node = graph->add_node();
  node->set_op_type("Identity");
  node->add_input("s");
  node->add_output("t");
  for (auto* info : {graph->add_input(), graph->add_output()}) {
    info->set_name(info == &graph->input(0) ? "s" : "t");
    auto* tensor_type = info->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(onnx::TensorProto::STRING);
    tensor_type->mutable_shape()->add_dim()->set_dim_param("n");
  }
  TempDir dir;
  {
    std::ofstream out(dir / "strings.onnx", std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
  }
  auto runner = runners::ort::make_ort_runner((dir / "strings.onnx").string(), {});
  runners::ActiveRunner active(*runner);
  const TensorMetadata meta = active->input_metadata();
  EXPECT_EQ(meta.at("s").dtype, DType::kString);
  ASSERT_EQ(meta.at("s").shape.dims.size(), 1u);
  EXPECT_EQ(meta.at("s").shape.dims[0].symbol, "n");  // symbolic dimension from the session
  const Tensor in = Tensor::from_vector<std::string>({3}, {"parity", "", "ünïcode"});
  const TensorMap out = active->infer({{"s", in}});
  EXPECT_TRUE(out.at("t").bit_equal(in));
}

TEST(OrtRunner, OptionsReachTheSession) {
  REQUIRE_ORT();
  OrtRunnerOptions options;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  options.optimization_level = "disable";
  options.providers = {"cpu"};
  expect_case_passes("test_conv_with_strides_padding", options);
  options.optimization_level = "extended";
  expect_case_passes("test_conv_with_strides_padding", options);

  options.optimization_level = "fastest";
  auto runner = runners::ort::make_ort_runner((node_case("test_add") / "model.onnx").string(), options);
  EXPECT_THROW(runner->activate(), Error);
}

TEST(OrtRunner, InputMetadataComesFromTheSession) {
  REQUIRE_ORT();
  auto runner = runners::ort::make_ort_runner((node_case("test_add") / "model.onnx").string(), {});
  runners::ActiveRunner active(*runner);
  const TensorMetadata meta = active->input_metadata();
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_EQ(meta.names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(meta.at("x").dtype, DType::kFloat32);
  EXPECT_EQ(meta.at("x").shape, (DimShape{3, 4, 5}));
}

TEST(OrtRunner, OrtErrorsCarryOrtsMessage) {
  REQUIRE_ORT();
  TempDir dir;
  write_file(dir / "broken.onnx", "this is not a protobuf");
  auto runner = runners::ort::make_ort_runner((dir / "broken.onnx").string(), {});
  try {
    runner->activate();
    FAIL() << "a broken model must not load";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    const std::string what = e.what();
    EXPECT_NE(what.find("ONNX Runtime cannot load"), std::string::npos) << what;
    EXPECT_NE(what.find("broken.onnx"), std::string::npos) << what;
  }

  // A shape the graph cannot take fails inside ORT; its message is passed on.
  auto add = runners::ort::make_ort_runner((node_case("test_add") / "model.onnx").string(), {});
  runners::ActiveRunner active(*add);
  TensorMap feed{{"x", Tensor(DType::kFloat32, {3, 4, 5})}, {"y", Tensor(DType::kFloat32, {2, 4, 5})}};
  try {
    active->infer(feed, /*check_inputs=*/false);
    FAIL() << "mismatched shapes must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
  }
}

TEST(OrtRunner, ProviderNamesResolveAgainstTheBuild) {
  const std::vector<std::string> available = {"XnnpackExecutionProvider", "CPUExecutionProvider"};
  EXPECT_EQ(runners::ort::resolve_providers({}, available), (std::vector<std::string>{"CPUExecutionProvider"}));
  EXPECT_EQ(runners::ort::resolve_providers({"xnnpack", "CPU"}, available),
            (std::vector<std::string>{"XnnpackExecutionProvider", "CPUExecutionProvider"}));
  try {
    runners::ort::resolve_providers({"cuda"}, available);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("XnnpackExecutionProvider"), std::string::npos);
  }
}

TEST(OrtRunner, RegisteredWithItsOptionGroup) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("ort");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->flag, "--ort");
  const runners::RunnerOptions options = info->parse_options({"--ort-threads", "2", "--ort-opt-level", "basic",
                                                               "--ort-providers", "cpu", "--ort-library", "/nonexistent",
                                                               "--ort-config", "a.b=1", "--ort-config", "c=x=y"});
  const OrtRunnerOptions* o = options.find<OrtRunnerOptions>();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->intra_op_threads, 2);
  EXPECT_EQ(o->optimization_level, "basic");
  EXPECT_EQ(o->providers, (std::vector<std::string>{"cpu"}));
  using Entry = std::pair<std::string, std::string>;
  EXPECT_EQ(o->config_entries, (std::vector<Entry>{{"a.b", "1"}, {"c", "x=y"}}));
  EXPECT_FALSE(info->availability(options).is_ok());
  EXPECT_NE(info->availability(options).message().find("/nonexistent"), std::string::npos);
  // Defaults where nothing is given; a bad value names its option.
  EXPECT_EQ(info->parse_options({}).find<OrtRunnerOptions>()->optimization_level, "all");
  EXPECT_THROW(info->parse_options({"--ort-threads", "-1"}), Error);
  EXPECT_THROW(info->parse_options({"--ort-config", "novalue"}), Error);
}

TEST(OrtRunner, ListRunnersShowsVersionOrReason) {
  auto ok = run_parity({"runners"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("ort"), std::string::npos);
  auto missing = run_parity({"--list-runners", "--ort-library", "/nonexistent"});
  EXPECT_EQ(missing.exit_code, 0) << missing.output;
  EXPECT_NE(missing.output.find("unavailable: cannot load ONNX Runtime from /nonexistent"), std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_WITH_ORT_RUNNER
