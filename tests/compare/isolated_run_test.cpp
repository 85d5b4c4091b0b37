// run_in_child's exchange (.npy files per tensor and a binary manifest): every dtype, shape, name
// and runtime comes back bit for bit and in order; what cannot travel, or a child that dies, is a
// failure with the reason and no partial results.
#include "compare/isolated_run.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <cstring>
#include <random>

#include "core/formats/polygraphy_json.h"
#include "core/run_results.h"
#include "support/test_support.h"

namespace parity::compare {
namespace {

// A tensor of the given dtype and shape filled with seeded random bytes (bool: 0 or 1).
Tensor random_tensor(DType dtype, Shape shape, std::mt19937& rng) {
  Tensor t(dtype, std::move(shape));
  auto* bytes = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.size_bytes(); ++i)
    bytes[i] = static_cast<unsigned char>(dtype == DType::kBool ? rng() % 2 : rng() % 256);
  return t;
}

void expect_same_maps(const TensorMap& expected, const TensorMap& actual, const std::string& what) {
  ASSERT_EQ(expected.names(), actual.names()) << what;
  for (const auto& [name, tensor] : expected) {
    const Tensor& back = actual.at(name);
    EXPECT_EQ(back.dtype(), tensor.dtype()) << what << " " << name;
    EXPECT_EQ(back.shape(), tensor.shape()) << what << " " << name;
    EXPECT_TRUE(back.bit_equal(tensor)) << what << " " << name;
  }
}

Isolation isolated() {
  Isolation isolation;
  isolation.enabled = true;
  return isolation;
}

TEST(IsolatedRunExchange, EveryDtypeShapeNameAndRuntimeComesBackBitForBit) {
  std::mt19937 rng(7);
  IsolatedRun sent;
  // Real outputs first: the Polygraphy fixture's iterations as they were recorded.
  const RunResults fixture = read_run_results((testing::polygraphy_fixtures_dir() / "run_results.json").string());
  ASSERT_FALSE(fixture.empty());
  for (const auto& iteration : fixture.runs[0].second) sent.iterations.push_back(iteration);
  // Then every dtype .npy holds, odd shapes, names in no sorted order and bytes JSON could not carry.
  IterationResult crafted;
  crafted.runner_name = "runner-\xff\xfe-N0";
  crafted.runtime = 0.1234567890123456789;
  const std::vector<std::pair<std::string, DType>> typed{
      {"z_float32", DType::kFloat32}, {"a/float16", DType::kFloat16},  {"bfloat16", DType::kBFloat16},
      {"float64", DType::kFloat64},   {"int8", DType::kInt8},          {"uint8", DType::kUInt8},
      {"int16", DType::kInt16},       {"uint16", DType::kUInt16},      {"int32", DType::kInt32},
      {"uint32", DType::kUInt32},     {"int64\nnewline", DType::kInt64}, {"uint64", DType::kUInt64},
      {"bool", DType::kBool},         {"complex64", DType::kComplex64}, {"\xe5\x90\x8d complex128", DType::kComplex128}};
  for (const auto& [name, dtype] : typed) crafted.outputs.set(name, random_tensor(dtype, {2, 3, 5}, rng));
  crafted.outputs.set("scalar", random_tensor(DType::kFloat32, {}, rng));
  crafted.outputs.set("empty", random_tensor(DType::kFloat32, {0, 4}, rng));
  crafted.outputs.set("large", random_tensor(DType::kFloat32, {1, 21, 128, 256}, rng));  // 2.75 MB
  sent.iterations.push_back(crafted);
  IterationResult no_runtime;  // no runtime, no outputs
  sent.iterations.push_back(no_runtime);
  sent.feeds.push_back({{"x", random_tensor(DType::kFloat32, {1, 3, 8, 8}, rng)}, {"ids", random_tensor(DType::kInt64, {4}, rng)}});
  sent.feeds.push_back({});

  const IsolatedRun back = run_in_child("exchange", isolated(), [&] { return sent; });
  ASSERT_EQ(back.failure, "");
  ASSERT_EQ(back.iterations.size(), sent.iterations.size());
  for (size_t i = 0; i < sent.iterations.size(); ++i) {
    const std::string what = "iteration " + std::to_string(i);
    EXPECT_EQ(back.iterations[i].runner_name, sent.iterations[i].runner_name) << what;
    EXPECT_EQ(back.iterations[i].runtime.has_value(), sent.iterations[i].runtime.has_value()) << what;
    if (sent.iterations[i].runtime) {
      const double expected = *sent.iterations[i].runtime, actual = back.iterations[i].runtime.value_or(-1);
      EXPECT_EQ(std::memcmp(&expected, &actual, sizeof(double)), 0) << what;
    }
    expect_same_maps(sent.iterations[i].outputs, back.iterations[i].outputs, what);
  }
  ASSERT_EQ(back.feeds.size(), 2u);
  expect_same_maps(sent.feeds[0], back.feeds[0], "feed 0");
  EXPECT_TRUE(back.feeds[1].empty());
}

TEST(IsolatedRunExchange, AStringOutputFailsNamingTheTensor) {
  IsolatedRun sent;
  IterationResult result;
  result.outputs.set("scores", Tensor::from_vector<float>({2}, {1.f, 2.f}));
  result.outputs.set("labels", Tensor(DType::kString, {2}));
  sent.iterations.push_back(result);
  const IsolatedRun back = run_in_child("strings", isolated(), [&] { return sent; });
  EXPECT_NE(back.failure.find("tensor 'labels'"), std::string::npos) << back.failure;
  EXPECT_TRUE(back.iterations.empty());
}

TEST(IsolatedRunExchange, AChildKilledByASignalReturnsNothing) {
  const IsolatedRun back = run_in_child("dies", isolated(), [&]() -> IsolatedRun {
    ::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would turn the signal into an exit status
    ::raise(SIGSEGV);
    return {};
  });
  EXPECT_NE(back.failure.find("signal 11 (SEGV"), std::string::npos) << back.failure;
  EXPECT_TRUE(back.iterations.empty());
  EXPECT_TRUE(back.feeds.empty());
}

}  // namespace
}  // namespace parity::compare
