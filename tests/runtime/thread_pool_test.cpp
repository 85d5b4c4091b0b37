#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

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

TEST(ThreadPool, BackToBackCallsAndShortLivedPools) {
  // Workers may wake after the caller already ran every chunk (chunks are claimed, not
  // assigned); such late wake-ups must find nothing to do, also once the pool is gone.
  for (int round = 0; round < 50; ++round) {
    ThreadPool pool(2 + round % 3);
    std::atomic<int64_t> covered{0};
    for (int call = 0; call < 200; ++call)
      pool.parallel_for(1 + call % 5, [&](int64_t b, int64_t e) { covered += e - b; });
    int64_t expected = 0;
    for (int call = 0; call < 200; ++call) expected += 1 + call % 5;
    EXPECT_EQ(covered.load(), expected);
  }
}

TEST(ThreadPool, WaitsForChunksThatOutlastTheCallersPolling) {
  // The caller polls briefly for the other chunks, then sleeps until the last one ends; a chunk
  // far longer than the poll (and one that throws late) must still be waited for.
  ThreadPool pool(2);
  for (int round = 0; round < 3; ++round) {
    std::atomic<int> finished{0};
    pool.parallel_for(2, [&](int64_t b, int64_t) {
      if (b == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
    });
    EXPECT_EQ(finished.load(), 2);
  }
  EXPECT_THROW(pool.parallel_for(2, [](int64_t b, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(b == 1 ? 20 : 0));
    if (b == 1) throw std::runtime_error("late");
  }),
               std::runtime_error);
}

}  // namespace
}  // namespace parity::runtime
