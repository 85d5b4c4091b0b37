// `run --onnx-outputs mark all --validate / --check-fp16-range`: every intermediate tensor of the
// ref run is checked, and the first node producing a NaN/Inf, or the tensors float16 cannot hold,
// are named.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// x -> Abs -> a -> Neg -> b -> Sqrt -> c (NaN for x != 0) -> Relu -> y
std::string write_nan_model(const testing::TempDir& tmp) {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {8});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {8});
  testing::add_node(g, "Abs", {"x"}, {"a"}, "abs");
  testing::add_node(g, "Neg", {"a"}, {"b"}, "neg");
  testing::add_node(g, "Sqrt", {"b"}, {"c"}, "sqrt");
  testing::add_node(g, "Relu", {"c"}, {"y"}, "relu");
  testing::write_model(m, tmp / "nan.onnx");
  return (tmp / "nan.onnx").string();
}

TEST(ValueChecks, ValidateNamesTheFirstNodeProducingNaN) {
  testing::TempDir tmp;
  const std::string model = write_nan_model(tmp);
  auto r = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--validate", "--val-range", "[0.5,1]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "Validation | first NaN/Inf at layer 2: tensor 'c' (node 'sqrt', Sqrt) | NaN: 8, Inf: 0 of 8 values"))
      << r.output;
  // Without --validate the statistics-only run passes.
  r = run_parity({"run", model, "--ref", "--onnx-outputs", "mark", "all", "--val-range", "[0.5,1]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ValueChecks, Fp16RangeFlagsTheTensorsAFloat16PlanBreaks) {
  const std::string det = (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
  PARITY_REQUIRE_FILE(det);
  // Inputs scaled to pixel values: the first block's activations leave float16's range.
  auto r = run_parity({"run", det, "--ref", "--input-shapes", "x:[1,3,64,64]", "--val-range", "x:[0,5000]",
                       "--onnx-outputs", "mark", "all", "--check-fp16-range"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "fp16 range | 20 tensor(s) overflow float16 (|x| > 65504)")) << r.output;
  // A BatchNormalization variance of the model itself is beyond float16, whatever the input.
  EXPECT_TRUE(contains(r.output, "batch_norm_0.w_2 (node '', Constant) | 24 of 24 values above 65504")) << r.output;
  EXPECT_TRUE(contains(r.output, "p2o.Mul.3 (node 'p2o.Mul.2', Mul) | 801 of 16384 values above 65504")) << r.output;
  EXPECT_TRUE(contains(r.output, "nonzero values below 2^-24")) << r.output;
  r = run_parity({"run", det, "--ref", "--check-fp16-range"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "use it with --onnx-outputs mark all")) << r.output;
}

}  // namespace
}  // namespace parity
