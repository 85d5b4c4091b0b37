#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <exception>

namespace parity::runtime {

namespace {
thread_local bool t_inside_parallel_region = false;

/// How long an idle worker keeps polling for the next job (and a caller for the other chunks to
/// finish) before it sleeps on a condition variable. Kernels call parallel_for once per node,
/// microseconds apart; a sleeping worker takes tens of microseconds (much longer on a loaded
/// machine) to wake, which made small nodes slower at 2 threads than at 1. The poll yields its
/// core, so it costs other processes little, and it ends soon after a run.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);
}  // namespace

/// One parallel_for call. Workers hold it by shared_ptr: a worker that wakes after every chunk
/// was claimed still reads `next` after the caller returned.
struct ThreadPool::Job {
  int64_t n = 0, chunks = 0;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;  // valid while a chunk is unfinished
  std::atomic<int64_t> next{1};                                // next chunk to claim (the caller runs 0)
  std::atomic<int64_t> done{0};                                // chunks finished
  std::mutex done_mutex;                                       // guards error and the caller's sleep
  std::condition_variable all_done;
  std::exception_ptr error;
};

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

void ThreadPool::run_chunk(Job& job, int64_t c) {
  std::exception_ptr error;
  t_inside_parallel_region = true;
  try {
    (*job.fn)(job.n * c / job.chunks, job.n * (c + 1) / job.chunks);
  } catch (...) {
    error = std::current_exception();
  }
  t_inside_parallel_region = false;
  if (error) {
    std::lock_guard<std::mutex> lock(job.done_mutex);
    if (!job.error) job.error = error;
  }
  if (job.done.fetch_add(1, std::memory_order_acq_rel) + 1 == job.chunks) {
    // Taking the mutex orders this notify after a caller that found work unfinished went to sleep.
    std::lock_guard<std::mutex> lock(job.done_mutex);
    job.all_done.notify_all();
  }
}

void ThreadPool::run_claimed_chunks(Job& job) {
  for (;;) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.chunks) return;
    run_chunk(job, c);
  }
}

void ThreadPool::wait_until_done(Job& job) {
  auto finished = [&job] { return job.done.load(std::memory_order_acquire) == job.chunks; };
  // The other chunks are usually running on other cores and end within microseconds of the
  // caller's own: polling for them skips a sleep and a wake-up per call (per time step in a
  // recurrent layer), which cost as much as a small chunk's work.
  const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  while (!finished() && std::chrono::steady_clock::now() < spin_until) std::this_thread::yield();
  if (finished()) return;
  std::unique_lock<std::mutex> lock(job.done_mutex);
  job.all_done.wait(lock, finished);
}

void ThreadPool::worker_loop() {
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
    while (queued_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < spin_until)
      std::this_thread::yield();
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_ && queue_.empty()) return;
      job = std::move(queue_.back());
      queue_.pop_back();
      queued_.store(queue_.size(), std::memory_order_release);
    }
    run_claimed_chunks(*job);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(n, num_threads());
  if (chunks <= 1 || t_inside_parallel_region) {
    fn(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->n = n;
  job->chunks = chunks;
  job->fn = &fn;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t c = 1; c < chunks; ++c) queue_.push_back(job);
    queued_.store(queue_.size(), std::memory_order_release);
  }
  wake_.notify_all();
  // The caller always takes the first chunk, so that a kernel called once per step (a recurrent
  // layer) finds the same slice of its data in the same core's cache at every step (a polling
  // worker could otherwise claim it first; 2 threads each re-reading 1.5 MB per call: 86 -> 79 us).
  run_chunk(*job, 0);
  run_claimed_chunks(*job);
  {
    // Entries no worker has taken yet have nothing left to claim: drop them.
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.erase(std::remove(queue_.begin(), queue_.end(), job), queue_.end());
    queued_.store(queue_.size(), std::memory_order_release);
  }
  wait_until_done(*job);
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace parity::runtime
