#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace parity::runtime {
namespace {

TEST(ThreadPool, CoversTheRangeExactlyOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(1000);
  pool.parallel_for(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, NestedCallsRunSeriallyAndExceptionsPropagate) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(6, [&](int64_t b, int64_t e) {
    pool.parallel_for(10, [&](int64_t ib, int64_t ie) { sum += (ie - ib) * (e - b); });
  });
  EXPECT_EQ(sum.load(), 60);
  EXPECT_THROW(pool.parallel_for(8, [](int64_t b, int64_t) {
    if (b == 0) throw std::runtime_error("boom");
  }),
               std::runtime_error);
}

}  // namespace
}  // namespace parity::runtime
