// LibTorch runner (libparity_runner_torch module) on TorchScript files made by
// scripts/make_torch_fixtures.py, checked against PyTorch's own outputs and against ONNX Runtime
// running the ONNX export of the same module.
#include <gtest/gtest.h>

#include "model/proto_convert.h"
#include "peer_runner_test_util.h"
#include "runners/ort/ort_config.h"

#if PARITY_WITH_ORT_RUNNER
#include "runners/ort/ort_library.h"
#include "runners/ort/ort_runner.h"
#endif
#include "runners/registry.h"
#include "runners/runner_args.h"

namespace parity::testing {
namespace {

#define REQUIRE_TORCH() PARITY_REQUIRE_RUNNER("torch")

std::filesystem::path fixture(const std::string& file) { return source_dir() / "tests" / "data" / "torch" / file; }

Tensor fixture_tensor(const std::string& file) { return model::tensor_from_pb_file(fixture(file)); }

// Parses torch options the way `parity run` would: with the data loader's --input-shapes.
runners::RunnerOptions torch_args(const std::vector<std::string>& argv) {
  options::ArgParser parser("parity run", "");
  parser.add({.flags = {"--input-shapes"}, .arity = options::Arity::kOneOrMore});  // the data loader's
  runners::RunnerArgs().add_runtime_options_to(parser);                            // adds --input-dtypes
  return runners::RunnerArgs().parse_runtime_options(parser.parse(argv));
}

std::unique_ptr<runners::Runner> make_torch(const std::string& file, const runners::RunnerOptions& options = {}) {
  return runners::RunnerRegistry::instance().find("torch")->create({.model_path = fixture(file).string(),
                                                                    .options = options});
}

TEST(TorchRunner, MatchesPyTorchOnTheFixture) {
  REQUIRE_TORCH();
  auto runner = make_torch("conv_relu_linear.pt");
  runners::ActiveRunner active(*runner);
  const TensorMap out = active->infer({{"x", fixture_tensor("conv_relu_linear.input_0.pb")}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.names(), std::vector<std::string>{"output_0"});
  EXPECT_TRUE(tensors_close(out.at("output_0"), fixture_tensor("conv_relu_linear.output_0.pb"), 1e-5, 1e-6));
}

TEST(TorchRunner, InputMetadataFromScriptAndOptions) {
  REQUIRE_TORCH();
  {
    auto runner = make_torch("conv_relu_linear.pt");
    runners::ActiveRunner active(*runner);
    const TensorMetadata meta = active->input_metadata();
    ASSERT_EQ(meta.names(), std::vector<std::string>{"x"});  // forward()'s argument name
    EXPECT_EQ(meta.at("x").dtype, DType::kUndefined);
    EXPECT_TRUE(meta.at("x").shape.unknown_rank);
  }
  const runners::RunnerOptions args = torch_args({"--input-shapes", "x:[2,3,8,8]", "--input-dtypes", "x:float32"});
  auto runner = make_torch("conv_relu_linear.pt", args);
  runners::ActiveRunner active(*runner);
  const TensorMetadata meta = active->input_metadata();
  EXPECT_EQ(meta.at("x").dtype, DType::kFloat32);
  EXPECT_EQ(meta.at("x").shape, (DimShape{2, 3, 8, 8}));
  // The declared shape is now checked before LibTorch sees the input.
  EXPECT_THROW(active->infer({{"x", Tensor(DType::kFloat32, {1, 3, 8, 8})}}), Error);

  const runners::RunnerOptions wrong = torch_args({"--input-shapes", "y:[1]"});
  auto bad = make_torch("conv_relu_linear.pt", wrong);
  EXPECT_THROW(bad->activate(), Error);
}

TEST(TorchRunner, OutputNamesAndTuples) {
  REQUIRE_TORCH();
  const runners::RunnerOptions args = torch_args({"--torch-output-names", "doubled_relu", "row_sum"});
  auto runner = make_torch("two_heads.pt", args);
  runners::ActiveRunner active(*runner);
  const TensorMap out = active->infer({{"x", fixture_tensor("two_heads.input_0.pb")}});
  EXPECT_EQ(out.names(), (std::vector<std::string>{"doubled_relu", "row_sum"}));
  EXPECT_TRUE(tensors_close(out.at("doubled_relu"), fixture_tensor("two_heads.output_0.pb")));
  EXPECT_TRUE(tensors_close(out.at("row_sum"), fixture_tensor("two_heads.output_1.pb")));

  const runners::RunnerOptions too_few = torch_args({"--torch-output-names", "only_one"});
  auto wrong = make_torch("two_heads.pt", too_few);
  runners::ActiveRunner active_wrong(*wrong);
  try {
    active_wrong->infer({{"x", fixture_tensor("two_heads.input_0.pb")}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("returned 2 tensors"), std::string::npos) << e.what();
  }
}

TEST(TorchRunner, Int64Inputs) {
  REQUIRE_TORCH();
  auto runner = make_torch("embedding.pt");
  runners::ActiveRunner active(*runner);
  const Tensor ids = fixture_tensor("embedding.input_0.pb");
  ASSERT_EQ(ids.dtype(), DType::kInt64);
  const TensorMap out = active->infer({{"ids", ids}});
  EXPECT_TRUE(tensors_close(out.at("output_0"), fixture_tensor("embedding.output_0.pb"), 0, 0));
}

TEST(TorchRunner, BadFilesAreOneLineErrors) {
  REQUIRE_TORCH();
  TempDir dir;
  write_file(dir / "not_a_model.pt", "garbage");
  auto runner = runners::RunnerRegistry::instance().find("torch")->create({.model_path = (dir / "not_a_model.pt").string()});
  try {
    runner->activate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("LibTorch cannot load"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }

  // A shape forward() cannot take: LibTorch's own reason, without the TorchScript traceback.
  auto conv = make_torch("conv_relu_linear.pt");
  runners::ActiveRunner active(*conv);
  try {
    active->infer({{"x", Tensor(DType::kFloat32, {1, 3, 4, 4})}});
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(what.find("LibTorch failed to run"), std::string::npos) << what;
    EXPECT_NE(what.find("shapes cannot be multiplied"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// The TorchScript file and its ONNX export (same module, same weights) agree across runtimes.
TEST(TorchRunner, AgreesWithOnnxRuntimeOnTheOnnxExport) {
  REQUIRE_TORCH();
  PARITY_REQUIRE_RUNNER("ort");
#if PARITY_WITH_ORT_RUNNER
  for (const std::string name : {"conv_relu_linear", "two_heads", "embedding"}) {
    SCOPED_TRACE(name);
    auto torch_runner = make_torch(name + ".pt");
    auto ort_runner = runners::ort::make_ort_runner(fixture(name + ".onnx").string(), {});
    runners::ActiveRunner t(*torch_runner), o(*ort_runner);
    const Tensor input = fixture_tensor(name + ".input_0.pb");
    const TensorMap torch_out = t->infer({{t->input_metadata().names()[0], input}});
    const TensorMap ort_out = o->infer({{o->input_metadata().names()[0], input}});
    ASSERT_EQ(torch_out.size(), ort_out.size());
    auto ti = torch_out.begin();
    for (auto oi = ort_out.begin(); oi != ort_out.end(); ++oi, ++ti)
      EXPECT_TRUE(tensors_close(ti->second, oi->second, 1e-5, 1e-5)) << oi->first;
  }
#endif
}

}  // namespace
}  // namespace parity::testing
