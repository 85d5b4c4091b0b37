// A small fixed-size thread pool for KernelContext::parallel_for.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace parity::runtime {

class ThreadPool {
 public:
  /// num_threads counts the calling thread: 1 means no worker threads (everything runs inline).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Splits [0, n) into contiguous chunks (at most one per thread; the ranges depend only on n
  /// and the thread count) and runs fn(begin, end) on them, the calling thread included; returns
  /// when all chunks are done. The caller runs the first chunk; the others are claimed, not
  /// assigned: a worker that is slow to wake (another process holds its core) leaves its chunk
  /// to the caller instead of stalling it.
  /// The first exception thrown by a chunk is rethrown here. Calls from inside a chunk run
  /// serially (no nested parallelism, no deadlock).
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  static void run_chunk(Job& job, int64_t c);
  static void run_claimed_chunks(Job& job);
  static void wait_until_done(Job& job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<Job>> queue_;  // one entry per worker a job wants
  std::atomic<size_t> queued_{0};            // queue_.size(), read by spinning workers without the lock
  bool stopping_ = false;
};

}  // namespace parity::runtime
