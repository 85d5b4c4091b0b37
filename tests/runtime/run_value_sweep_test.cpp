// Every ONNX node test (1.12's and 1.23's) run on `ref` with its own inputs, one input at a time
// overwritten with values a crafted data file can hold: indices, shapes, axes, pads, counts and
// scales at -100, -2, -1, 0, 1, 7, 100, INT64_MAX, INT64_MIN; floats at NaN, +-inf, +-3e38, 0.
// Kernels read these as sizes and offsets (Gather indices, Reshape/Expand shapes, Slice starts,
// Pad pads, TopK k, Range limits, Resize scales), so each must be parity::Error or an output,
// never a crash, an out-of-bounds read or (under UBSan) a float-to-int overflow.
//
// The second sweep makes the overwritten input a constant (an initializer) instead: then the value
// is seen at plan time, by shape inference's data propagation, constant folding and the optimized
// kernels that precompute from constant operands (Resize's maps, Pad's and Slice's bounds, packed
// weights), which a fed value never reaches.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/allocation_limit.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_map.h"
#include "model/model.h"
#include "model/proto_convert.h"
#include "runtime/session.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kIntegerValues[] = {-100, -2, -1, 0, 1, 7, 100, std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min()};
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kFloatValues[] = {std::nan(""), kInf, -kInf, 3e38, -3e38, 0.0};

/// Which elements of the input the value overwrites: every one, or only the last (one bad index
/// among good ones).
enum class Where { kAll, kLast };

/// `original` with the chosen elements set to `value`; nullopt when the dtype takes neither kind.
template <typename Value>
std::optional<Tensor> overwritten(const Tensor& original, Value value, Where where) {
  if (original.numel() == 0) return std::nullopt;
  const bool integer_value = std::is_integral_v<Value>;
  if (integer_value ? !is_integer(original.dtype()) : !is_floating(original.dtype())) return std::nullopt;
  Tensor result = original.clone();
  visit_dtype(result.dtype(), [&]<typename T>(TypeTag<T>) {
    if constexpr (std::is_integral_v<T> == std::is_integral_v<Value> && requires { static_cast<T>(value); }) {
      // Integers wrap to the narrower type (well defined since C++20), as a crafted file's would.
      T* data = result.data<T>();
      const int64_t begin = where == Where::kAll ? 0 : result.numel() - 1;
      for (int64_t i = begin; i < result.numel(); ++i) data[i] = static_cast<T>(value);
    }
  });
  return result;
}

/// The test case's first data set as a feed, or nullopt when an input is not a plain tensor
/// (sequences, optionals) or the graph takes initializers as inputs without data.
std::optional<TensorMap> read_feed(const onnx::ModelProto& model, const fs::path& test_dir) {
  TensorMap feed;
  const fs::path data_dir = test_dir / "test_data_set_0";
  for (int i = 0; i < model.graph().input_size(); ++i) {
    const auto& input = model.graph().input(i);
    const fs::path file = data_dir / ("input_" + std::to_string(i) + ".pb");
    if (!input.type().has_tensor_type() || !fs::exists(file)) return std::nullopt;
    try {
      Tensor tensor = model::tensor_from_pb_file(file);
      if (!tensor.defined() || tensor.dtype() == DType::kString) return std::nullopt;
      feed.set(input.name(), std::move(tensor));
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  return feed;
}

bool is_loop_trip_count(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node())
    if (node.op_type() == "Loop" && node.input_size() > 0 && node.input(0) == name) return true;
  return false;
}

/// Runs `feed` through `session`, taking every output (sequences and optionals too).
void run_all_outputs(const runtime::Session& session, const TensorMap& feed) {
  runtime::NamedValues values;
  for (const auto& [name, tensor] : feed) values.emplace_back(name, runtime::Value(tensor));
  session.run_values(values);
}

/// Calls `fn(model, test_dir, feed)` for every node test (the expanded function bodies excepted)
/// whose first data set is a plain tensor feed.
void for_each_test_with_feed(
    const std::function<void(const onnx::ModelProto&, const fs::path&, const TensorMap&)>& fn) {
  for_each_onnx_node_test([&](const fs::path& test_dir) {
    const std::string name = test_dir.filename().string();
    if (name.ends_with("_expanded")) return;
    auto loaded = model::load_model(test_dir / "model.onnx");
    ASSERT_TRUE(loaded.is_ok()) << test_dir;
    const onnx::ModelProto& model = loaded.value().proto();
    std::optional<TensorMap> feed = read_feed(model, test_dir);
    if (!feed) return;
    SCOPED_TRACE(name);
    fn(model, test_dir, *feed);
  });
}

struct SweepCounts {
  int variants = 0;
  int ran = 0;
};

/// Runs `session` once per value and placement on `input`; parity::Error is a fine outcome.
template <typename Value, size_t N>
void sweep_input(runtime::Session& session, const TensorMap& feed, const std::string& input, const Value (&values)[N],
                 SweepCounts& counts) {
  for (Value value : values) {
    for (Where where : {Where::kAll, Where::kLast}) {
      std::optional<Tensor> changed = overwritten(feed.at(input), value, where);
      if (!changed) continue;
      SCOPED_TRACE(input + " = " + std::to_string(value) + (where == Where::kAll ? " (all)" : " (last)"));
      TensorMap variant = feed;
      variant.set(input, std::move(*changed));
      ++counts.variants;
      try {
        run_all_outputs(session, variant);
        ++counts.ran;
      } catch (const Error&) {
      }
    }
  }
}

TEST(RunValueSweep, EveryNodeTestWithExtremeInputValuesRunsOrFailsCleanly) {
  // Values like 100 in a shape or pads input ask for outputs of gigabytes; a small cap makes those
  // the clean "too large" error, fast.
  const size_t previous_cap = set_max_tensor_bytes(size_t{16} << 20);
  SweepCounts counts;
  for_each_test_with_feed([&](const onnx::ModelProto& model, const fs::path& test_dir, const TensorMap& feed) {
    auto session = runtime::Session::create(model, {}, test_dir);
    if (!session.is_ok()) return;
    for (const auto& input : model.graph().input()) {
      // A trip count of INT64_MAX is a model that runs for ever, as the spec says it should.
      if (!is_loop_trip_count(model.graph(), input.name()))
        sweep_input(session.value(), feed, input.name(), kIntegerValues, counts);
      sweep_input(session.value(), feed, input.name(), kFloatValues, counts);
    }
  });
  set_max_tensor_bytes(previous_cap);
  EXPECT_GT(counts.variants, 20000);
  EXPECT_GT(counts.ran, 10000);
  RecordProperty("variants", counts.variants);
  RecordProperty("ran", counts.ran);
}

/// `model` with graph input `input` turned into an initializer holding `value`.
onnx::ModelProto with_constant_input(const onnx::ModelProto& model, const std::string& input, const Tensor& value) {
  onnx::ModelProto constant = model;
  auto* inputs = constant.mutable_graph()->mutable_input();
  for (int i = 0; i < inputs->size(); ++i)
    if (inputs->Get(i).name() == input) {
      inputs->DeleteSubrange(i, 1);
      break;
    }
  model::tensor_to_proto(value, constant.mutable_graph()->add_initializer(), input);
  // Initializers that are not graph inputs need IR 4 or later.
  constant.set_ir_version(std::max<int64_t>(constant.ir_version(), 4));
  return constant;
}

/// Plans and runs `model` once per value and placement with `input` as a constant holding it; the
/// other inputs stay fed. parity::Error from planning or running is a fine outcome.
template <typename Value, size_t N>
void sweep_constant(const onnx::ModelProto& model, const fs::path& test_dir, const TensorMap& feed,
                    const std::string& input, const Value (&values)[N], SweepCounts& counts) {
  TensorMap others;
  for (const auto& [name, tensor] : feed)
    if (name != input) others.set(name, tensor);
  for (Value value : values) {
    for (Where where : {Where::kAll, Where::kLast}) {
      std::optional<Tensor> changed = overwritten(feed.at(input), value, where);
      if (!changed) continue;
      SCOPED_TRACE(input + " = " + std::to_string(value) + (where == Where::kAll ? " (all, constant)" : " (last, constant)"));
      ++counts.variants;
      try {
        auto session = runtime::Session::create(with_constant_input(model, input, *changed), {}, test_dir);
        if (!session.is_ok()) continue;
        run_all_outputs(session.value(), others);
        ++counts.ran;
      } catch (const Error&) {
      }
    }
  }
}

TEST(RunValueSweep, EveryNodeTestWithExtremeConstantsPlansAndRunsOrFailsCleanly) {
  const size_t previous_cap = set_max_tensor_bytes(size_t{16} << 20);
  SweepCounts counts;
  for_each_test_with_feed([&](const onnx::ModelProto& model, const fs::path& test_dir, const TensorMap& feed) {
    for (const auto& input : model.graph().input()) {
      if (!is_loop_trip_count(model.graph(), input.name()))
        sweep_constant(model, test_dir, feed, input.name(), kIntegerValues, counts);
      sweep_constant(model, test_dir, feed, input.name(), kFloatValues, counts);
    }
  });
  set_max_tensor_bytes(previous_cap);
  EXPECT_GT(counts.variants, 20000);
  EXPECT_GT(counts.ran, 10000);
  RecordProperty("variants", counts.variants);
  RecordProperty("ran", counts.ran);
}

}  // namespace
}  // namespace parity::testing
