#include "runtime/thread_pool.h"

#include <algorithm>
#include <exception>

namespace parity::runtime {

namespace {
thread_local bool t_inside_parallel_region = false;
}

ThreadPool::ThreadPool(int num_threads) {
  const int workers = std::max(0, num_threads - 1);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      task = std::move(queue_.back());
      queue_.pop_back();
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(n, num_threads());
  if (chunks <= 1 || t_inside_parallel_region) {
    fn(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  int remaining = static_cast<int>(chunks);
  std::mutex remaining_mutex;
  std::condition_variable all_done;
  auto run_chunk = [&](int64_t c) {
    const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    t_inside_parallel_region = true;
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    t_inside_parallel_region = false;
    std::lock_guard<std::mutex> lock(remaining_mutex);
    if (--remaining == 0) all_done.notify_all();
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t c = 1; c < chunks; ++c) queue_.push_back([&run_chunk, c] { run_chunk(c); });
  }
  wake_.notify_all();
  run_chunk(0);
  {
    std::unique_lock<std::mutex> lock(remaining_mutex);
    all_done.wait(lock, [&] { return remaining == 0; });
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace parity::runtime
