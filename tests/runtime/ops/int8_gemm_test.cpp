// parity's exact s8 x s8 product (runtime/ops/quantization/int8_gemm.h) against its reference
// loops, on every vector tier up to the test's (AVX2 and the portable loop here; CTest also runs
// the suite capped at AVX2): exact int32 sums on random and edge shapes (K and N tails, one row,
// row counts around the tile and chunk sizes, large K, the full int8 range including -128 in the
// source), the dequantizing store, weights given as K x N or N x K, and column block ranges; and
// the int8 1x1 convolution built on it (ops/nn/conv_int8_pointwise.h) against the dequantized
// reference sums of the same quantized operands, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "parity/runtime/reduced_precision.h"
#include "runtime/ops/nn/conv_int8_pointwise.h"
#include "runtime/ops/quantization/int8_gemm.h"
#include "runtime/thread_pool.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace ig = runtime::ops::int8_gemm;
using runtime::KernelIsa;

std::vector<int8_t> random_int8(int64_t count, uint32_t seed, int lo = -128, int hi = 127) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (int8_t& x : v) x = static_cast<int8_t>(dist(gen));
  return v;
}

/// The source in the kernel's layout: int16 rows of padded_k values, zeros in the padding.
std::vector<int16_t> widened(const std::vector<int8_t>& a, int64_t rows, int64_t k, int64_t padded_k) {
  std::vector<int16_t> out(static_cast<size_t>(rows * padded_k), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < k; ++i) out[r * padded_k + i] = a[r * k + i];
  return out;
}

struct Case {
  int64_t rows, k, n;
  bool nk;
};

void expect_exact_sums(const Case& c, uint32_t seed, KernelIsa isa) {
  SCOPED_TRACE("rows=" + std::to_string(c.rows) + " k=" + std::to_string(c.k) + " n=" + std::to_string(c.n) +
               (c.nk ? " nk" : " kn") + " isa=" + runtime::kernel_isa_name(isa));
  const std::vector<int8_t> a = random_int8(c.rows * c.k, seed);
  // Weights as layers hold them (symmetric: -127..127), the source over the whole int8 range.
  const std::vector<int8_t> b = random_int8(c.k * c.n, seed + 1, -127, 127);
  std::vector<int32_t> want(static_cast<size_t>(c.rows * c.n));
  ig::reference_sums(a.data(), c.rows, b.data(), c.k, c.n, c.nk, want.data());
  const ig::PackedS8Weights w(b.data(), c.k, c.n, c.nk);
  ASSERT_EQ(w.padded_k() % 2, 0);
  const std::vector<int16_t> a16 = widened(a, c.rows, c.k, w.padded_k());
  std::vector<int32_t> got(want.size(), -1);
  ig::Output out;
  out.sums = got.data();
  out.ld = c.n;
  ig::multiply(a16.data(), c.rows, w, 0, w.column_blocks(), out, isa);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

TEST(Int8Gemm, SumsEqualTheReferenceOnRandomAndEdgeShapes) {
  const std::vector<Case> cases = {
      {1, 1, 1, false},    {1, 2, 16, false},  {1, 3, 17, true},    {1, 256, 256, false}, {1, 512, 1536, true},
      {2, 33, 40, false},  {3, 7, 15, true},   {4, 64, 32, false},  {5, 48, 40, false},   {7, 33, 20, true},
      {8, 100, 48, true},  {63, 31, 33, false}, {64, 16, 16, true}, {65, 17, 31, false},  {130, 256, 96, true},
      {1, 4097, 18, false}, {3, 6000, 5, true},
  };
  for (KernelIsa isa : testing::tested_kernel_isas()) {
    uint32_t seed = 900;
    for (const Case& c : cases) expect_exact_sums(c, seed += 7, isa);
  }
}

TEST(Int8Gemm, ExtremeValuesSumExactlyPastTheInt16Range) {
  // Every product at the limits: pairs of -128 x -127 or 127 x 127 sum to over 32,258 per pair,
  // which vpmaddubsw's int16 sums could not hold; vpmaddwd's int32 sums can.
  for (KernelIsa isa : testing::tested_kernel_isas()) {
    const int64_t rows = 3, k = 2049, n = 19;
    std::vector<int8_t> a(static_cast<size_t>(rows * k)), b(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < rows * k; ++i) a[i] = i % 3 == 0 ? int8_t{-128} : int8_t{127};
    for (int64_t i = 0; i < k * n; ++i) b[i] = i % 5 == 0 ? int8_t{127} : int8_t{-127};
    std::vector<int32_t> want(static_cast<size_t>(rows * n)), got(want.size());
    ig::reference_sums(a.data(), rows, b.data(), k, n, false, want.data());
    const ig::PackedS8Weights w(b.data(), k, n, false);
    const std::vector<int16_t> a16 = widened(a, rows, k, w.padded_k());
    ig::Output out;
    out.sums = got.data();
    out.ld = n;
    ig::multiply(a16.data(), rows, w, 0, w.column_blocks(), out, isa);
    EXPECT_EQ(got, want) << runtime::kernel_isa_name(isa);
    EXPECT_GT(std::abs(want[0]), 32767);
  }
}

TEST(Int8Gemm, DequantizingStoreAndColumnBlockRanges) {
  for (KernelIsa isa : testing::tested_kernel_isas()) {
    SCOPED_TRACE(runtime::kernel_isa_name(isa));
    const int64_t rows = 6, k = 45, n = 37;  // three column blocks, the last of 5 columns
    const std::vector<int8_t> a = random_int8(rows * k, 950), b = random_int8(k * n, 951, -127, 127);
    std::vector<int32_t> sums(static_cast<size_t>(rows * n));
    ig::reference_sums(a.data(), rows, b.data(), k, n, true, sums.data());
    std::vector<float> scales(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      scales[j] = 0.001f * float(1 + j % 7);
      bias[j] = 0.25f * float(j % 5) - 0.5f;
    }
    const ig::PackedS8Weights w(b.data(), k, n, true);
    ASSERT_EQ(w.column_blocks(), 3);
    const std::vector<int16_t> a16 = widened(a, rows, k, w.padded_k());
    std::vector<float> y(static_cast<size_t>(rows * n), -7.0f);
    ig::Output out;
    out.y = y.data();
    out.scales = scales.data();
    out.bias = bias.data();
    out.ld = n;
    // Blocks in two calls, as threads split them.
    ig::multiply(a16.data(), rows, w, 0, 1, out, isa);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = ig::kBlockColumns; j < n; ++j) ASSERT_EQ(y[r * n + j], -7.0f) << "wrote outside its blocks";
    ig::multiply(a16.data(), rows, w, 1, 3, out, isa);
    for (int64_t i = 0; i < rows * n; ++i) {
      const int64_t j = i % n;
      ASSERT_NEAR(y[i], float(sums[i]) * scales[j] + bias[j], 1e-6f * (1.0f + std::fabs(float(sums[i]) * scales[j])))
          << "element " << i;
    }
  }
}

TEST(Int8Gemm, QuantizedRowsMatchQuantizeInt8AndPadWithZeros) {
  const int64_t rows = 3, k = 21;
  std::vector<float> x(static_cast<size_t>(rows * k));
  std::mt19937 gen(960);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (float& v : x) v = dist(gen);
  x[5] = 1e9f;  // saturates
  for (KernelIsa isa : testing::tested_kernel_isas()) {
    std::vector<int16_t> q(static_cast<size_t>(rows * 22), 99);
    ig::quantize_rows(x.data(), rows, k, 22, 0.02f, q.data(), isa);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < k; ++i) {
        const float want = std::clamp(std::nearbyint(x[r * k + i] * (1.0f / 0.02f)), -127.0f, 127.0f);
        ASSERT_EQ(q[r * 22 + i], static_cast<int16_t>(want)) << runtime::kernel_isa_name(isa) << " element " << i;
      }
      EXPECT_EQ(q[r * 22 + 21], 0);
    }
    EXPECT_EQ(q[5], 127);
  }
}

/// A context with `threads` threads (parallel_for on a thread pool) and nothing else.
class ThreadsContext final : public runtime::KernelContext {
 public:
  using Value = runtime::Value;
  using Precision = runtime::Precision;
  explicit ThreadsContext(int threads) : pool_(threads) {}
  size_t num_inputs() const override { return 0; }
  size_t num_outputs() const override { return 0; }
  bool has_input(size_t) const override { return false; }
  const Value& input_value(size_t) const override { fail("no inputs"); }
  bool has_output(size_t) const override { return false; }
  void set_output(size_t, Value) override {}
  Value& output_value(size_t) override { fail("no outputs"); }
  std::vector<Value> run_subgraph(const runtime::Subgraph&, std::vector<Value>) override { fail("no subgraphs"); }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { pool_.parallel_for(n, fn); }
  int num_threads() const override { return pool_.num_threads(); }
  Precision precision() const override { return Precision::kFloat32; }
  uint64_t next_random_seed() override { return 0; }
  std::string node_label() const override { return "test"; }

 private:
  runtime::ThreadPool pool_;
};

struct PointwiseCase {
  int64_t rows, in, out;
  bool bias;
};

/// The product's output against float(reference_sums) * source scale * weight scale (+ bias)
/// (+ a residual addend the tile tails add) on the source quantized as quantize_int8 does: the
/// same integers, so only the dequantizing store's rounding (one product, one add) may differ.
/// `nchw`: x, y and the addend as NCHW maps (two images when the rows split evenly), which the
/// product converts tile by tile.
void expect_pointwise_product_matches(const PointwiseCase& c, int threads, bool nchw) {
  SCOPED_TRACE("rows=" + std::to_string(c.rows) + " in=" + std::to_string(c.in) + " out=" + std::to_string(c.out) +
               (c.bias ? " bias" : "") + " threads=" + std::to_string(threads) + (nchw ? " nchw" : " channels-last"));
  std::mt19937 gen(1000 + static_cast<uint32_t>(c.rows * 7 + c.in * 3 + c.out));
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);  // beyond the calibrated range: clamps
  std::vector<float> x(static_cast<size_t>(c.rows * c.in)), bias(static_cast<size_t>(c.out)), scales(bias.size());
  std::vector<float> residual(static_cast<size_t>(c.rows * c.out));
  for (float& v : x) v = dist(gen);
  for (float& v : bias) v = dist(gen);
  for (float& v : residual) v = dist(gen);
  for (int64_t j = 0; j < c.out; ++j) scales[j] = 0.002f * float(1 + j % 5);
  const std::vector<int8_t> w = random_int8(c.out * c.in, 1001, -127, 127);
  const float source_scale = 1.0f / 127;
  std::vector<int8_t> xq(x.size());
  runtime::quantize_int8(x.data(), xq.data(), static_cast<int64_t>(x.size()), source_scale);
  std::vector<int32_t> sums(static_cast<size_t>(c.rows * c.out));
  ig::reference_sums(xq.data(), c.rows, w.data(), c.in, c.out, /*nk=*/true, sums.data());

  // Rows (pixels of all images) of `channels` values as NCHW planes, and back.
  const int64_t batch = nchw && c.rows % 2 == 0 ? 2 : 1, pixels = c.rows / batch;
  auto to_nchw = [&](const std::vector<float>& rows, int64_t channels) {
    std::vector<float> planes(rows.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t k = 0; k < channels; ++k) planes[(b * channels + k) * pixels + p] = rows[(b * pixels + p) * channels + k];
    return planes;
  };
  const std::vector<float> x_in = nchw ? to_nchw(x, c.in) : x, residual_in = nchw ? to_nchw(residual, c.out) : residual;

  runtime::nn::Int8PointwiseProduct product(w.data(), c.out, c.in, scales, testing::test_kernel_isa());
  product.set_source_scale(source_scale);
  ThreadsContext ctx(threads);
  std::vector<float> y(sums.size(), -7.0f);
  runtime::nn::Int8PointwiseProduct::Maps maps;
  maps.x = x_in.data();
  maps.x_nchw = maps.y_nchw = maps.residual_nchw = nchw;
  maps.y = y.data();
  maps.residual = residual_in.data();
  maps.batch = batch;
  maps.pixels = pixels;
  std::atomic<int64_t> finished{0};
  product.run(ctx, maps, c.bias ? bias.data() : nullptr, [&](float* tile, int64_t n, const float* addend) {
    ASSERT_NE(addend, nullptr);
    for (int64_t e = 0; e < n * c.out; ++e) tile[e] += addend[e];
    finished += n;
  });
  EXPECT_EQ(finished.load(), c.rows) << "every row finished once";
  std::vector<float> want(sums.size());
  for (int64_t i = 0; i < c.rows * c.out; ++i) {
    const int64_t j = i % c.out;
    const float dequantized = float(sums[i]) * (source_scale * scales[j]);
    want[i] = (c.bias ? dequantized + bias[j] : dequantized) + residual[i];
  }
  if (nchw) want = to_nchw(want, c.out);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(y[i], want[i], 1e-6f * (4.0f + std::fabs(want[i]))) << "element " << i;
}

TEST(Int8Gemm, PointwiseConvProductEqualsTheDequantizedReferenceSums) {
  // Odd channel counts (K and column-block tails, 8 x 8 transposes' remainders), row counts
  // below, at and above a tile and the share of two threads (rows split, or column blocks when
  // the rows are few).
  const std::vector<PointwiseCase> cases = {
      {1, 3, 1, true},      {7, 33, 17, false},   {49, 45, 37, true},   {49, 192, 1152, false},
      {60, 16, 16, true},   {61, 31, 33, false},  {130, 64, 24, true},  {500, 23, 19, true},
      {784, 96, 24, false}, {1000, 9, 7, true},   {960, 240, 240, true},
  };
  for (bool nchw : {false, true})
    for (int threads : {1, 2})
      for (const PointwiseCase& c : cases) expect_pointwise_product_matches(c, threads, nchw);
}

}  // namespace
}  // namespace parity
