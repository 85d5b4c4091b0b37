// MaxPool between convolutions reads and writes channels-last maps and runs the direct loop of
// pool_dnnl.cpp (at one thread where its AVX-512 form runs, else at several) with its output rows
// split over the threads: checked against the reference kernels over window geometries
// (ceil_mode windows past the end, padding, dilation, non-square), odd channel counts on both
// sides of the loop's 64-channel blocks, batch 2, 1 and 2 threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/model_builder.h"
#include "runtime/ops/nn/pool_dnnl.h"
#include "runtime/ops/nn_harness.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"
#include "support/test_support.h"

#if PARITY_HAVE_DNNL

namespace parity::testing {
namespace {

using nn::random_tensor;

struct PoolCase {
  Shape x;  // [N, C, H, W] of the conv's input and output (3x3, pads 1)
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
};

/// x -> Conv 3x3 (pads 1) -> MaxPool -> Conv 1x1 -> y: the pool between two convolutions reads
/// and writes channels-last.
ModelBuilder pool_between_convolutions(const PoolCase& c, uint32_t seed) {
  const int64_t channels = c.x[1];
  ModelBuilder m(12);
  m.input("x", DType::kFloat32, c.x);
  m.initializer("w1", random_tensor({channels, channels, 3, 3}, seed));
  m.initializer("w2", random_tensor({5, channels, 1, 1}, seed + 1));
  add_ints_attr(m.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  auto& pool = m.node("MaxPool", {"c1"}, {"p1"}, "max_pool");
  add_ints_attr(pool, "kernel_shape", c.kernel);
  if (!c.strides.empty()) add_ints_attr(pool, "strides", c.strides);
  if (!c.pads.empty()) add_ints_attr(pool, "pads", c.pads);
  if (!c.dilations.empty()) add_ints_attr(pool, "dilations", c.dilations);
  if (c.ceil_mode) add_int_attr(pool, "ceil_mode", 1);
  m.node("Conv", {"p1", "w2"}, {"y"}, "conv2");
  m.output("y", DType::kFloat32, {});
  return m;
}

TEST(DirectMaxPool, ChannelsLastWindowsMatchReference) {
  // At least 64K input values each (below that the pool stays on oneDNN), but the last.
  const std::vector<PoolCase> cases = {
      {{2, 37, 31, 29}, {3, 3}, {2, 2}, {}, {}, true},             // SqueezeNet's: windows past the end
      {{1, 16, 65, 64}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, false},  // ResNet's stem
      {{1, 24, 51, 55}, {2, 2}, {2, 2}, {}, {}, false},
      {{1, 20, 60, 57}, {3, 3}, {1, 1}, {0, 1, 2, 1}, {2, 2}, false},
      {{2, 7, 71, 67}, {1, 3}, {1, 2}, {}, {}, true},
      {{1, 64, 35, 31}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, false},  // one whole channel block
      {{1, 70, 33, 31}, {3, 3}, {2, 2}, {}, {}, true},              // a block and a 6-channel tail
      {{1, 8, 9, 11}, {3, 3}, {2, 2}, {}, {}, true},
  };
  uint32_t seed = 900;
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " kernel " + std::to_string(c.kernel[0]) + "x" + std::to_string(c.kernel[1]));
    const bool large = shape_numel(c.x) >= (int64_t{1} << 16);
    const ModelBuilder m = pool_between_convolutions(c, seed);
    const TensorMap feed{{"x", random_tensor(c.x, seed + 2)}};
    const Tensor want = reference_output(m.model(), feed);
    for (int threads : {1, 2}) {
      const CountedRun run = optimized_run_counting(m.model(), feed, threads, runtime::nn::direct_max_pool_runs);
      const bool direct = runtime::nn::direct_max_pool_on_one_thread(test_kernel_isa()) || (threads == 2 && large);
      EXPECT_EQ(run.counted, direct ? 1u : 0u) << threads << " threads";
      EXPECT_TRUE(tensors_close(run.output, want, 1e-4, 1e-4)) << threads << " threads";
    }
    seed += 3;
  }
}

TEST(DirectMaxPool, PlainMapsStayOnOneDnn) {
  // A graph input is NCHW: the pool reads it as such, and oneDNN runs it.
  ModelBuilder m(12);
  m.input("x", DType::kFloat32, {1, 6, 9, 9});
  auto& pool = m.node("MaxPool", {"x"}, {"y"}, "max_pool");
  add_ints_attr(pool, "kernel_shape", {3, 3});
  add_ints_attr(pool, "strides", {2, 2});
  m.output("y", DType::kFloat32, {});
  const TensorMap feed{{"x", random_tensor({1, 6, 9, 9}, 930)}};
  runtime::SessionOptions reference;
  reference.kernel_options.isa_cap = test_kernel_isa();
  reference.kernels = runtime::KernelTier::kReference;
  const Tensor want = runtime::Session::create(m.model(), reference).value().run(feed).at("y");
  const uint64_t before = runtime::nn::direct_max_pool_runs();
  const Tensor got = runtime::Session::create(m.model()).value().run(feed).at("y");
  EXPECT_EQ(runtime::nn::direct_max_pool_runs(), before);
  EXPECT_TRUE(tensors_close(got, want, 0, 0));
}

}  // namespace
}  // namespace parity::testing

#endif  // PARITY_HAVE_DNNL
