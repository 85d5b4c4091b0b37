// Helpers for the concurrency tests (*_concurrency_test.cpp, also built under ThreadSanitizer by
// `make test-tsan`): start threads together, collect what each saw, compare bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor_map.h"
#include "runners/runner.h"

namespace parity::testing {

/// Runs fn(thread_index) on `threads` threads released together (a latch), so their calls
/// overlap; rethrows the first exception a thread threw once all have ended.
inline void run_on_threads(int threads, const std::function<void(int)>& fn) {
  std::latch start(threads);
  std::mutex mutex;
  std::exception_ptr first_error;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        fn(t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::current_exception();
      }
    });
  for (auto& thread : pool) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

/// Expects `actual` to hold the same names as `expected`, each bit-identical (dtype, shape, bytes).
inline void expect_bit_identical(const TensorMap& expected, const TensorMap& actual, const std::string& context) {
  ASSERT_EQ(expected.names(), actual.names()) << context;
  for (const auto& [name, tensor] : expected)
    EXPECT_TRUE(tensor.bit_equal(actual.at(name))) << context << ": '" << name << "' differs from the serial run";
}

/// A runner whose infer_impl holds the calling thread inside the runner until release(): lets a
/// test make a second thread's call overlap the first one for certain. Outputs y = x.
class GateRunner : public runners::Runner {
 public:
  GateRunner() : Runner("gate-runner") {}
  /// Blocks until a thread is inside infer_impl.
  void wait_until_inside() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return inside_; });
  }
  /// Lets the thread inside infer_impl (and every later one) return.
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 protected:
  void activate_impl() override {}
  TensorMetadata input_metadata_impl() override {
    TensorMetadata meta;
    meta.add("x", DType::kFloat32, DimShape(Shape{2}));
    return meta;
  }
  TensorMap infer_impl(const TensorMap& feed) override {
    std::unique_lock<std::mutex> lock(mutex_);
    inside_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return released_; });
    return TensorMap{{"y", feed.at("x")}};
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool inside_ = false, released_ = false;
};

}  // namespace parity::testing
