#include "tools/bench/throughput.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <latch>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/logger.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"

namespace parity::tools::bench {

namespace {

using Clock = std::chrono::steady_clock;

// User + system CPU time of the whole process, every thread included.
double throughput_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Round {
  double per_second = 0;
  double cpu_seconds_per_inference = 0;
};

// `threads` threads running `session` on `feed` together: each runs until `min_time` passed and
// it made `min_runs` runs; the wall time ends with the last thread.
Round time_round(const runtime::Session& session, const TensorMap& feed, int threads, double min_time,
                 int64_t min_runs) {
  std::latch start(threads + 1);
  std::atomic<int64_t> runs{0};
  Clock::time_point begin;
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      // Each thread its own copy, as each request of a server has its own input: threads that
      // shared one would count references to the same buffers at every run.
      const TensorMap own_feed = feed.clone();
      start.arrive_and_wait();
      try {
        const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                              std::chrono::duration<double>(min_time));
        int64_t mine = 0;
        while (mine < min_runs || Clock::now() < deadline) {
          session.run(own_feed);
          ++mine;
        }
        runs += mine;
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  const double cpu_before = throughput_cpu_seconds();
  begin = Clock::now();
  start.arrive_and_wait();
  for (auto& thread : pool) thread.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  const double cpu = throughput_cpu_seconds() - cpu_before;
  if (error) std::rethrow_exception(error);
  const double total = static_cast<double>(runs.load());
  return {total / seconds, cpu / total};
}

}  // namespace

namespace {
double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}
}  // namespace

double ThroughputRow::median_per_second() const { return median(per_second); }

std::vector<ThroughputRow> bench_throughput(const std::string& model, Settings& settings,
                                            const runners::RunnerOptions& runner_options) {
  std::set<int> counts(settings.concurrent.begin(), settings.concurrent.end());
  counts.insert(1);
  std::vector<ThroughputRow> rows;
  for (int threads : counts) {
    ThroughputRow row;
    row.model = model;
    row.label = std::filesystem::path(model).stem().string();
    row.threads = threads;
    rows.push_back(row);
  }
  std::string listed;
  for (int threads : counts) listed += (listed.empty() ? "" : ", ") + std::to_string(threads);
  logger().start("Throughput of ", model, " with one Session shared by ", listed, " thread(s)");
  // The ref runner's own options (--kernels, --no-fusion, ...), its kernels on 1 thread.
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("ref");
  std::unique_ptr<runners::Runner> runner =
      info->create(runners::RunnerConfig{model, options_for_threads(runner_options, 1)});
  try {
    runner->activate();
  } catch (const Error& e) {
    if (e.is_internal()) throw;
    for (auto& row : rows) row.unavailable = std::string("cannot load: ") + e.what();
    return rows;
  }
  const runtime::Session& session = dynamic_cast<runners::RefRunner&>(*runner).session();
  const TensorMap feed = bench_feed(model, session.input_metadata(), settings);
  try {
    for (auto& row : rows) time_round(session, feed, row.threads, 0.0, std::max<int64_t>(settings.warm_up, 1));
    for (int round = 0; round < kThroughputRounds; ++round)
      for (auto& row : rows) {
        const Round timed = time_round(session, feed, row.threads, settings.min_time, settings.iterations);
        row.per_second.push_back(timed.per_second);
        row.cpu_seconds_per_inference.push_back(timed.cpu_seconds_per_inference);
      }
  } catch (const Error& e) {
    if (e.is_internal()) throw;
    for (auto& row : rows) {
      row.unavailable = std::string("failed: ") + e.what();
      row.per_second.clear();
      row.cpu_seconds_per_inference.clear();
    }
  }
  runner->deactivate();
  return rows;
}

namespace {

// The 1-thread row of the same model, when it has figures.
const ThroughputRow* baseline_of(const std::vector<ThroughputRow>& rows, const ThroughputRow& row) {
  for (const auto& r : rows)
    if (r.model == row.model && r.threads == 1 && r.unavailable.empty() && r.median_per_second() > 0) return &r;
  return nullptr;
}

}  // namespace

std::string throughput_text(const std::vector<ThroughputRow>& rows) {
  std::string text = "\nThroughput: one ref Session shared by N threads, 1 kernel thread each (median of " +
                     std::to_string(kThroughputRounds) + " rounds)\n";
  text += fmt::format("{:<24} {:>8} {:>14} {:>12} {:>18}\n", "model", "threads", "inferences/s", "vs 1 thread",
                      "CPU ms/inference");
  for (const auto& row : rows) {
    if (!row.unavailable.empty()) {
      text += fmt::format("{:<24} {:>8} n/a: {}\n", row.label, row.threads, row.unavailable);
      continue;
    }
    const ThroughputRow* base = baseline_of(rows, row);
    const std::string gain = base ? fmt::format("{:.2f}x", row.median_per_second() / base->median_per_second()) : "-";
    text += fmt::format("{:<24} {:>8} {:>14.1f} {:>12} {:>18.3f}\n", row.label, row.threads, row.median_per_second(),
                        gain, median(row.cpu_seconds_per_inference) * 1e3);
  }
  return text;
}

nlohmann::ordered_json throughput_json(const std::vector<ThroughputRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    nlohmann::ordered_json r = {{"model", row.model}, {"label", row.label}, {"threads", row.threads},
                                {"kernel_threads_per_run", 1}};
    if (!row.unavailable.empty()) {
      r["unavailable"] = row.unavailable;
    } else {
      r["inferences_per_second"] = row.median_per_second();
      r["rounds_per_second"] = row.per_second;
      r["cpu_seconds_per_inference"] = median(row.cpu_seconds_per_inference);
      if (const ThroughputRow* base = baseline_of(rows, row))
        r["speedup_over_1_thread"] = row.median_per_second() / base->median_per_second();
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace parity::tools::bench
