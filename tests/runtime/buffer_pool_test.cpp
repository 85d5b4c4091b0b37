#include "runtime/buffer_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "support/model_builder.h"
#include "runtime/session.h"

namespace parity::runtime {
namespace {

TEST(BufferPool, SizeClassesAreAtMostAnEighthLarger) {
  EXPECT_EQ(BufferPool::size_class(1), 4096u);
  EXPECT_EQ(BufferPool::size_class(4096), 4096u);
  for (size_t bytes : {size_t{4097}, size_t{300000}, size_t{1} << 20, (size_t{1} << 20) + 1, size_t{13107200}}) {
    const size_t c = BufferPool::size_class(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LE(c, bytes + bytes / 8 + 1) << bytes;
    EXPECT_EQ(BufferPool::size_class(c), c);  // classes are fixed points
  }
}

TEST(BufferPool, ReusesFreedBuffersOfTheSameClass) {
  BufferPool pool(size_t{64} << 20);
  std::byte* first = nullptr;
  {
    auto s = pool.acquire(size_t{1} << 20);
    first = s->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    EXPECT_EQ(s->size_bytes(), size_t{1} << 20);
    std::memset(first, 7, s->size_bytes());
  }
  EXPECT_EQ(pool.cached_bytes(), BufferPool::size_class(size_t{1} << 20));
  auto again = pool.acquire((size_t{1} << 20) - 100);  // same class
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool.hits(), 1u);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  auto other = pool.acquire(size_t{3} << 20);  // another class: fresh
  EXPECT_NE(other->data(), first);
  EXPECT_EQ(pool.hits(), 1u);
}

TEST(BufferPool, CachesNoMoreThanItsCapacity) {
  BufferPool pool(size_t{3} << 20);
  {
    std::vector<std::shared_ptr<Storage>> held;
    for (int i = 0; i < 5; ++i) held.push_back(pool.acquire(size_t{1} << 20));
  }
  EXPECT_LE(pool.cached_bytes(), size_t{3} << 20);
  EXPECT_EQ(pool.cached_bytes(), size_t{3} << 20);
  pool.release_cached();
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(BufferPool, ConcurrentUseIsSafe) {
  BufferPool pool(size_t{32} << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 200; ++i) {
        auto s = pool.acquire((size_t{256} << 10) * (1 + (i + t) % 3));
        std::memset(s->data(), t, 64);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_GT(pool.hits(), 0u);
}

TEST(BufferPool, SmallAndStringTensorsBypassThePool) {
  const uint64_t hits = BufferPool::instance().hits();
  Tensor small = pooled_uninitialized_tensor(DType::kFloat32, {16});
  EXPECT_EQ(small.numel(), 16);
  Tensor strings = pooled_uninitialized_tensor(DType::kString, {3});
  EXPECT_EQ(strings.data<std::string>()[2], "");
  EXPECT_EQ(BufferPool::instance().hits(), hits);
}

TEST(BufferPool, SessionOutputsReuseBuffersAndStayCorrect) {
  // Two large elementwise nodes: the second run's outputs come from buffers the first run freed,
  // and zero-filled outputs (allocate_output) are zero even in a reused buffer.
  testing::ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1, 64, 64, 64});
  m.node("Neg", {"x"}, {"a"});
  m.node("Neg", {"a"}, {"b"});
  m.node("Abs", {"b"}, {"y"});
  m.output("y", DType::kFloat32, {1, 64, 64, 64});
  SessionOptions options;
  options.fuse = false;
  auto session = Session::create(m.model(), options).value();
  Tensor x(DType::kFloat32, {1, 64, 64, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 97) - 48.0f;
  Tensor first = session.run({{"x", x}}).at("y");
  const uint64_t hits = BufferPool::instance().hits();
  Tensor second = session.run({{"x", x}}).at("y");
  EXPECT_GT(BufferPool::instance().hits(), hits);
  EXPECT_TRUE(second.bit_equal(first));
  EXPECT_NE(second.raw_data(), first.raw_data());  // the first result is still held
  for (int64_t i = 0; i < x.numel(); i += 997) EXPECT_EQ(second.data<float>()[i], std::fabs(x.data<float>()[i]));
}

}  // namespace
}  // namespace parity::runtime

namespace parity::runtime {
namespace {

/// Just enough of a KernelContext to call allocate_output on.
class OutputOnlyContext final : public KernelContext {
 public:
  size_t num_inputs() const override { return 0; }
  size_t num_outputs() const override { return 1; }
  bool has_input(size_t) const override { return false; }
  const Value& input_value(size_t) const override { fail("no inputs"); }
  bool has_output(size_t i) const override { return i == 0; }
  void set_output(size_t, Value value) override { out_ = std::move(value); }
  Value& output_value(size_t) override { return out_; }
  std::vector<Value> run_subgraph(const Subgraph&, std::vector<Value>) override { fail("no subgraphs"); }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { fn(0, n); }
  int num_threads() const override { return 1; }
  Precision precision() const override { return Precision::kFloat32; }
  uint64_t next_random_seed() override { return 0; }
  std::string node_label() const override { return "test"; }

 private:
  Value out_;
};

TEST(BufferPool, ZeroFilledOutputsAreZeroInAReusedBuffer) {
  const size_t bytes = 100 * 1000 * sizeof(float);
  {
    auto dirty = BufferPool::instance().acquire(bytes);
    std::memset(dirty->data(), 0xff, bytes);
  }
  const uint64_t hits = BufferPool::instance().hits();
  OutputOnlyContext ctx;
  const Tensor& y = ctx.allocate_output(0, DType::kFloat32, {100, 1000});
  EXPECT_GT(BufferPool::instance().hits(), hits);  // the dirty buffer came back
  for (float v : y.values<float>()) ASSERT_EQ(v, 0.0f);
  // allocate_output_uninitialized also draws from the pool.
  OutputOnlyContext other;
  const Tensor& z = other.allocate_output_uninitialized(0, DType::kFloat32, {1000, 100});
  EXPECT_EQ(z.shape(), (Shape{1000, 100}));
}

// Found by fuzz_plan_graph: a plan's ConstantOfShape of 20 GB went through the pool, which
// allocated without the size check every Tensor allocation makes (an out-of-memory, not one line).
TEST(BufferPool, PooledOutputsAreCheckedAgainstTheAllocationLimitFirst) {
  try {
    pooled_uninitialized_tensor(DType::kFloat32, {int64_t{1} << 50});  // 4 PiB
    ADD_FAILURE() << "a 4 PiB tensor was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parity may allocate"), std::string::npos) << e.what();
  }
  try {
    pooled_uninitialized_tensor(DType::kFloat64, {int64_t{1} << 31, int64_t{1} << 31});  // 2^62 x 8 bytes
    ADD_FAILURE() << "an unaddressable tensor was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too large to address"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pooled_uninitialized_tensor(DType::kFloat32, {1 << 18}).numel(), 1 << 18);  // 1 MiB: pooled, fine
}

}  // namespace
}  // namespace parity::runtime
