// libonnx's inference functions index input shapes before they check ranks (Einsum, ConvTranspose,
// Conv, MaxUnpool, the arithmetic data propagators: model/schemas/inference_guards.cpp). A crafted
// model reaches them with any rank, so this sweep redeclares every input of every ONNX 1.23 node
// test at ranks 0-5 (dims 1, 2, 0 or symbolic) and runs shape inference with data propagation, as
// `inspect model --shape-inference` does. Without the guards it crashes; under `make
// test-sanitize` it also catches reads past a shape that happen not to crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

enum class DimKind { kOne, kTwo, kZero, kSymbolic };

void redeclare_input(onnx::ModelProto& model, int input, int rank, DimKind kind) {
  onnx::TensorShapeProto* shape =
      model.mutable_graph()->mutable_input(input)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->Clear();
  for (int d = 0; d < rank; ++d) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    switch (kind) {
      case DimKind::kOne: dim->set_dim_value(1); break;
      case DimKind::kTwo: dim->set_dim_value(2); break;
      case DimKind::kZero: dim->set_dim_value(0); break;
      case DimKind::kSymbolic: dim->set_dim_param("d" + std::to_string(d)); break;
    }
  }
}

TEST(InferenceRankSweep, EveryNodeTestInputAtRanksZeroToFiveInfersWithoutCrashing) {
  const fs::path suite = source_dir() / ".cache/onnx-testdata-1.23/node";
  if (!fs::exists(suite)) {
    if (std::getenv("CI")) FAIL() << suite << " is missing; run scripts/setup.sh";
    GTEST_SKIP() << suite << " is missing (run scripts/setup.sh)";
  }
  int models = 0, variants = 0, failed_inference = 0;
  for (const auto& entry : fs::directory_iterator(suite)) {
    const fs::path path = entry.path() / "model.onnx";
    if (!fs::exists(path)) continue;
    auto loaded = model::load_model(path);
    ASSERT_TRUE(loaded.is_ok()) << path;
    ++models;
    const onnx::ModelProto& original = loaded.value().proto();
    for (int input = 0; input < original.graph().input_size(); ++input) {
      if (!original.graph().input(input).type().has_tensor_type()) continue;
      for (int rank = 0; rank <= 5; ++rank) {
        for (DimKind kind : {DimKind::kOne, DimKind::kTwo, DimKind::kZero, DimKind::kSymbolic}) {
          SCOPED_TRACE(entry.path().filename().string() + " input " + std::to_string(input) + " rank " +
                       std::to_string(rank) + " kind " + std::to_string(static_cast<int>(kind)));
          onnx::ModelProto variant = original;
          redeclare_input(variant, input, rank, kind);
          ++variants;
          // Lenient inference skips a node whose inference fails; it may still refuse the model
          // (a malformed attribute), but must not crash.
          try {
            model::infer_shapes(variant, /*data_prop=*/true);
          } catch (const Error&) {
            ++failed_inference;
          }
        }
      }
    }
  }
  EXPECT_EQ(models, 1884);
  EXPECT_GT(variants, 80000);
  RecordProperty("variants", variants);
  RecordProperty("failed_inference", failed_inference);
}

}  // namespace
}  // namespace parity::testing
