// libonnx's inference functions index input shapes and use attributes as indices or divisors
// before they check them (Einsum, ConvTranspose, Conv, MaxUnpool, LayerNormalization, GatherND,
// pooling strides, the arithmetic data propagators: model/schemas/inference_guards.cpp). A crafted
// model reaches them with any rank and any attribute value, so these sweeps redeclare every input
// of every ONNX node test (1.12's and 1.23's) at ranks 0-5, and set every integer attribute to
// extreme values, and run shape inference with data propagation, as `inspect model
// --shape-inference` does. Without the guards they crash; under `make test-sanitize` they also
// catch reads past a shape that happen not to crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

/// Calls `visit` with each node test's name and model from ONNX 1.12's and 1.23's suites; returns
/// how many there were.
int for_each_node_test(const std::function<void(const std::string&, const onnx::ModelProto&)>& visit) {
  return for_each_onnx_node_test([&](const fs::path& test_dir) {
    auto loaded = model::load_model(test_dir / "model.onnx");
    if (!loaded.is_ok()) {
      ADD_FAILURE() << test_dir << ": " << loaded.error().what();
      return;
    }
    visit(test_dir.filename().string(), loaded.value().proto());
  });
}

/// Lenient inference skips a node whose inference fails; it may still refuse the model (a
/// malformed attribute), but must not crash.
void infer_without_crashing(onnx::ModelProto& model) {
  try {
    model::infer_shapes(model, /*data_prop=*/true);
  } catch (const Error&) {
  }
}

enum class DimKind { kOne, kTwo, kZero, kSymbolic };

// Ranks go up to 5. (Built as "d" + std::to_string(d), g++ 12 warns falsely: -Wrestrict.)
const std::vector<std::string> kSymbols = {"d0", "d1", "d2", "d3", "d4"};

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
      case DimKind::kSymbolic: dim->set_dim_param(kSymbols.at(static_cast<size_t>(d))); break;
    }
  }
}

TEST(InferenceRankSweep, EveryNodeTestInputAtRanksZeroToFiveInfersWithoutCrashing) {
  int variants = 0;
  const int models = for_each_node_test([&](const std::string& name, const onnx::ModelProto& original) {
    for (int input = 0; input < original.graph().input_size(); ++input) {
      if (!original.graph().input(input).type().has_tensor_type()) continue;
      for (int rank = 0; rank <= 5; ++rank) {
        for (DimKind kind : {DimKind::kOne, DimKind::kTwo, DimKind::kZero, DimKind::kSymbolic}) {
          SCOPED_TRACE(name + " input " + std::to_string(input) + " rank " + std::to_string(rank) + " kind " +
                       std::to_string(static_cast<int>(kind)));
          onnx::ModelProto variant = original;
          redeclare_input(variant, input, rank, kind);
          ++variants;
          infer_without_crashing(variant);
        }
      }
    }
  });
  EXPECT_EQ(models, 932 + 1884);
  EXPECT_GT(variants, 120000);
  RecordProperty("variants", variants);
}

/// Values that inference functions use as indices, counts or sizes when they come from an
/// attribute: out of range both ways, zero, and the int64 extremes.
const std::vector<int64_t> kExtremeInts = {-100, -2, -1, 0, 1, 7, 100, INT64_MAX, INT64_MIN};

/// Each INT attribute of each node set to each extreme value; each INTS attribute replaced by an
/// empty list, one extreme value, and eight copies of one.
std::vector<onnx::ModelProto> attribute_variants(const onnx::ModelProto& original) {
  std::vector<onnx::ModelProto> variants;
  const auto& nodes = original.graph().node();
  for (int n = 0; n < nodes.size(); ++n) {
    for (int a = 0; a < nodes[n].attribute_size(); ++a) {
      const onnx::AttributeProto& attribute = nodes[n].attribute(a);
      if (attribute.type() == onnx::AttributeProto::INT) {
        for (int64_t value : kExtremeInts) {
          variants.push_back(original);
          variants.back().mutable_graph()->mutable_node(n)->mutable_attribute(a)->set_i(value);
        }
      } else if (attribute.type() == onnx::AttributeProto::INTS) {
        variants.push_back(original);
        variants.back().mutable_graph()->mutable_node(n)->mutable_attribute(a)->clear_ints();
        for (int64_t value : kExtremeInts) {
          for (int copies : {1, 8}) {
            variants.push_back(original);
            onnx::AttributeProto* changed = variants.back().mutable_graph()->mutable_node(n)->mutable_attribute(a);
            changed->clear_ints();
            for (int c = 0; c < copies; ++c) changed->add_ints(value);
          }
        }
      }
    }
  }
  return variants;
}

TEST(InferenceRankSweep, EveryNodeTestIntAttributeAtExtremeValuesInfersWithoutCrashing) {
  int variants = 0;
  for_each_node_test([&](const std::string& name, const onnx::ModelProto& original) {
    // An expanded test is its operator's function body: ops with their own tests here, whose
    // every attribute would be varied again in a graph of dozens of nodes (5x the sweep's time).
    if (name.ends_with("_expanded")) return;
    for (onnx::ModelProto& variant : attribute_variants(original)) {
      SCOPED_TRACE(name + " variant " + std::to_string(variants));
      ++variants;
      infer_without_crashing(variant);
    }
  });
  EXPECT_GT(variants, 20000);
  RecordProperty("variants", variants);
}

}  // namespace
}  // namespace parity::testing
