// Every ONNX node test (1.12's and 1.23's) with one input redeclared at another rank, planned and
// run on `ref` with zero-filled feeds of the declared shapes: a model whose shapes its kernels do
// not expect gets parity::Error naming the node, never a crash (`parity run` on a crafted model).
// Found this way: Col2Im divided by a zero block_shape, Scan-8 indexed the batch of a scalar.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_map.h"
#include "model/model.h"
#include "runtime/session.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

/// Plans and runs `model` with zero feeds; false when a feed cannot be made (dynamic or string).
/// parity::Error passes through: refusing the model is a fine outcome.
bool plan_and_run_with_zero_feeds(const onnx::ModelProto& model, const fs::path& base_dir) {
  auto session = runtime::Session::create(model, {}, base_dir);
  if (!session.is_ok()) return false;
  TensorMap feed;
  for (const auto& meta : session.value().input_metadata()) {
    if (!meta.shape.is_static() || meta.dtype == DType::kUndefined || meta.dtype == DType::kString) return false;
    feed.set(meta.name, Tensor(meta.dtype, meta.shape.to_static()));
  }
  session.value().run(feed);
  return true;
}

TEST(RunRankSweep, EveryNodeTestWithAnInputAtAnotherRankRunsOrFailsCleanly) {
  int variants = 0, ran = 0;
  for_each_onnx_node_test([&](const fs::path& test_dir) {
    const std::string name = test_dir.filename().string();
    // Expanded tests are function bodies of ops that have their own tests here.
    if (name.ends_with("_expanded")) return;
    auto loaded = model::load_model(test_dir / "model.onnx");
    ASSERT_TRUE(loaded.is_ok()) << test_dir;
    const onnx::ModelProto& original = loaded.value().proto();
    for (int input = 0; input < original.graph().input_size(); ++input) {
      if (!original.graph().input(input).type().has_tensor_type()) continue;
      for (int rank : {0, 1, 3, 5}) {
        for (int64_t dim : {1, 2, 0}) {
          SCOPED_TRACE(name + " input " + std::to_string(input) + " rank " + std::to_string(rank) + " dims " +
                       std::to_string(dim));
          onnx::ModelProto variant = original;
          auto* shape =
              variant.mutable_graph()->mutable_input(input)->mutable_type()->mutable_tensor_type()->mutable_shape();
          shape->Clear();
          for (int d = 0; d < rank; ++d) shape->add_dim()->set_dim_value(dim);
          ++variants;
          try {
            ran += plan_and_run_with_zero_feeds(variant, test_dir) ? 1 : 0;
          } catch (const Error&) {
          }
        }
      }
    }
  });
  EXPECT_GT(variants, 40000);
  EXPECT_GT(ran, 1000);
  RecordProperty("variants", variants);
  RecordProperty("ran", ran);
}

}  // namespace
}  // namespace parity::testing
